//! Small statistics used by every report: means, confidence intervals, pass@k, and the
//! intervals and power of the evaluator's crossed design.
//!
//! A leaf module: pure functions over slices, no I/O, no other crate module imported.
//! Randomised procedures (bootstraps, simulations) take an explicit seed and use
//! ChaCha8, so the same inputs give the same answer on every machine.
//!
//! - [`mean`], [`percentile`] (linear interpolation between order statistics, the
//!   "type 7" rule of R and NumPy's default).
//! - [`bootstrap_mean_ci`]: percentile bootstrap of the mean.
//! - [`wilson`]: the Wilson score interval for a proportion (good coverage at small n
//!   and at rates near 0 or 1, where the normal approximation fails).
//! - [`mean_ci`]: the interval of independent values: Wilson when every value is 0
//!   or 1, otherwise the percentile bootstrap.
//! - [`pass_at_k`]: the unbiased pass@k estimator of the Codex paper (LiveCodeBench's;
//!   `lcb` and `humaneval` take it from here).
//! - [`dist`]: the normal and Student t CDFs and quantiles.
//! - [`design`]: estimates and intervals of the evaluator's data (below).
//! - [`power`]: the minimum detectable difference of a design, by simulation.
//!
//! # Intervals for the evaluator's design
//!
//! (docs/EVAL.md, "Intervals", has the same account with the measured coverage table.)
//!
//! **The design.** Per task, M harness samples (independent proposer trajectories) are
//! each scored on the *same* n test instances: a crossed table, not a nested one (the
//! evaluator's memo even makes samples with the same harness return the same row).
//! A score is `y = μ + a (harness sample) + b (instance) + e (their interaction)`, with
//! variance components σ²_h, σ²_i, σ²_e ([`VarianceComponents`]); the variance of the
//! task's mean is `σ²_h/M + σ²_i/n + σ²_e/(M n)`. Resampling samples and then,
//! independently inside each, the instances (the old two-stage bootstrap) treats an
//! instance's shared difficulty as fresh noise in every row: with M identical rows it
//! bootstraps 12 instances as if they were 36, and its 95 % interval covered the truth
//! 76–81 % of the time on the tables of
//! `coverage::the_old_nested_resampler_fails_the_coverage_test`.
//!
//! **The rule** ([`crossed_estimate`]): the two-way ANOVA mean squares of the table
//! give the variance of the mean,
//! `(max(MS_h, MS_e) + max(MS_i, MS_e) − MS_e) / (M n)`, and Satterthwaite's degrees
//! of freedom of that combination; the interval is `mean ± t·se` for differences
//! (clipped to [−1, 1]) and unbounded values, and for scores and rates in [0, 1] the
//! Wilson score interval with the effective sample size `p(1 − p)/var` and the t
//! quantile in place of z (after Korn and Graubard's intervals for proportions from
//! complex samples). The floors make two or three harness samples honest: when the
//! samples happen to agree, the harness term keeps the residual's size and its M − 1
//! degrees of freedom keep the t quantile wide, because the data cannot tell a small
//! harness variance from none (the instance floor does the same for the instances).
//! Without them (the unbiased `MS_h + MS_i − MS_e`) coverage at M = 2 fell to 86–91 %
//! when the harness dominates (a prototype of the coverage simulation); Owen's
//! pigeonhole bootstrap (percentile) covered 72–85 % there, and 80–92 % at M = 3. Degenerate tables come out as the one-dimensional
//! intervals: M identical rows give exactly the interval of one row (the
//! instance-only interval, n − 1 degrees of freedom), one instance gives the interval
//! of the M values (the harness-only interval, M − 1 degrees of freedom). A table whose
//! every value sits at a bound (scores all 0 or all 1, differences all −1 or +1) gets
//! the Wilson interval of 0 of n (n of n) instances.
//!
//! **Tasks are fixed strata** ([`stratified_crossed_estimate`]): an overall number is
//! the mean over the suite's listed tasks, its variance the sum of the tasks'
//! variances over T², its degrees of freedom pooled by Satterthwaite. The suite
//! chooses its tasks (families at chosen levels, heterogeneous by design); they are
//! not a random draw from a population of tasks, and with the 2–6 tasks of the shipped
//! suites a between-task variance would rest on 1–5 degrees of freedom. A claim about
//! families outside the suite is a different estimand that these runs do not carry an
//! interval for. A task whose values all sit at a bound contributes the variance of
//! its Wilson interval (it has none of its own).
//!
//! **Paired differences** ([`paired_crossed_estimate`]): `b − a` cell by cell (same
//! sample seed, same instance), then the same rule on the differences: the instance
//! draw is shared by both arms, so their common instance difficulty cancels.
//!
//! **Other metrics.** Units that are not shared across samples (a trajectory's
//! candidates, its rounds, its token count) are nested: [`nested_estimate`] uses the
//! variance of the sample means over M ("ultimate cluster"), M − 1 degrees of freedom,
//! floored at the within-sample noise. Best-of-M by dev score
//! ([`crossed_select_estimate`]) is a selection, not a mean: a percentile bootstrap
//! drawing samples and one shared instance draw per replicate, not calibrated.
//! The other intervals are deterministic functions of the data (no resampling), so
//! an unchanged round of the horizon curve keeps its interval exactly.
//!
//! **Coverage** (the `coverage` tests; the full grid is `#[ignore]`d, run it with
//! `cargo test --release --lib stats::coverage -- --ignored --nocapture`): 0/1 scores
//! from `y ~ Bernoulli(Φ(μ_t + a + b))` with normal harness and instance effects
//! (truth `Φ(μ_t / √(1 + σ²_a + σ²_b))` per task), M ∈ {2, 3, 5, 10}, n ∈ {6, 12, 24,
//! 48}, 1 or 3 tasks, harness-dominated, balanced, instance-dominated and
//! identical-harness (memo) tables, means and paired differences. Every cell with
//! n ≥ 12 covers at least 93 %. The rule is conservative (up to 99.9 %) where the
//! harness variance is small next to the noise and M ≤ 3, by the floors' design, and
//! for single tasks at n = 12, where the coverage of any interval for twelve 0/1
//! values swings with the truth. At truths near 0.13, single tasks with a dominant
//! harness effect cover 90–93 %.

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

pub mod design;
pub mod dist;
pub mod power;

#[cfg(test)]
mod coverage;

pub use design::{
    CrossedTable, FlipUnit, HierEstimate, MAX_EXACT_FLIP_UNITS, Scale, SignFlipTest,
    VarianceComponents, VarianceEstimate, crossed_estimate, crossed_select_estimate, crossed_table,
    mean_of_means, nested_estimate, paired_crossed_estimate, paired_differences,
    stratified_crossed_estimate, stratified_crossed_variance, stratified_nested_estimate,
    stratified_sign_flip_test,
};
pub use dist::{normal_cdf, normal_quantile, student_t_cdf, student_t_quantile};

/// Default number of bootstrap resamples.
pub const DEFAULT_RESAMPLES: usize = 10_000;

/// A two-sided confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
    /// Coverage, e.g. 0.95.
    pub level: f64,
}

/// How an interval was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CiMethod {
    Wilson,
    Bootstrap,
}

/// A mean with its sample size and confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub n: usize,
    pub mean: f64,
    /// `None` for an empty sample.
    pub ci: Option<Interval>,
    pub method: CiMethod,
}

/// Arithmetic mean; `None` for an empty slice.
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    Some(xs.iter().sum::<f64>() / xs.len() as f64)
}

/// The `q`-quantile (`0..=1`) of an ascending slice by linear interpolation between
/// order statistics (R type 7). `None` for an empty slice or `q` outside `0..=1`.
pub fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

/// Percentile-bootstrap interval of the mean: `resamples` resamples with replacement
/// drawn from ChaCha8 seeded with `seed`. `None` for an empty slice, zero resamples or
/// a level outside `(0, 1)`.
pub fn bootstrap_mean_ci(xs: &[f64], resamples: usize, level: f64, seed: u64) -> Option<Interval> {
    if xs.is_empty() || resamples == 0 || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = xs.len();
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| {
            let mut s = 0.0;
            for _ in 0..n {
                s += xs[rng.random_range(0..n)];
            }
            s / n as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let alpha = (1.0 - level) / 2.0;
    Some(Interval {
        lo: percentile(&means, alpha)?,
        hi: percentile(&means, 1.0 - alpha)?,
        level,
    })
}

/// Wilson score interval for `successes` out of `n`. `None` when `n == 0`,
/// `successes > n` or the level is outside `(0, 1)`.
pub fn wilson(successes: u64, n: u64, level: f64) -> Option<Interval> {
    if n == 0 || successes > n || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let z = normal_quantile(1.0 - (1.0 - level) / 2.0)?;
    let n_f = n as f64;
    let p = successes as f64 / n_f;
    let z2 = z * z;
    let denom = 1.0 + z2 / n_f;
    let centre = (p + z2 / (2.0 * n_f)) / denom;
    let half = z * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt() / denom;
    // At 0 or n successes the bound is exactly 0 or 1 (the formula leaves rounding).
    Some(Interval {
        lo: if successes == 0 {
            0.0
        } else {
            (centre - half).max(0.0)
        },
        hi: if successes == n {
            1.0
        } else {
            (centre + half).min(1.0)
        },
        level,
    })
}

/// The normal-approximation interval of a mean: `mean ± z·s/√n` with the sample
/// standard deviation `s` (0 for one value), clipped to `[lo_clip, hi_clip]`. `None`
/// for an empty sample or a level outside `(0, 1)`.
pub fn normal_mean_ci(xs: &[f64], level: f64, lo_clip: f64, hi_clip: f64) -> Option<Interval> {
    let m = mean(xs)?;
    let z = normal_quantile(1.0 - (1.0 - level) / 2.0)?;
    let n = xs.len() as f64;
    let var = if xs.len() > 1 {
        xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    let half = z * (var / n).sqrt();
    Some(Interval {
        lo: (m - half).max(lo_clip),
        hi: (m + half).min(hi_clip),
        level,
    })
}

/// The mean of `xs` with a confidence interval at `level`: Wilson when every value is
/// exactly 0 or 1 (a proportion), the percentile bootstrap (`DEFAULT_RESAMPLES`,
/// `seed`) otherwise.
pub fn mean_ci(xs: &[f64], level: f64, seed: u64) -> Estimate {
    let binary = xs.iter().all(|&x| x == 0.0 || x == 1.0);
    let m = mean(xs).unwrap_or(0.0);
    if binary {
        let k = xs.iter().filter(|&&x| x == 1.0).count() as u64;
        Estimate {
            n: xs.len(),
            mean: m,
            ci: wilson(k, xs.len() as u64, level),
            method: CiMethod::Wilson,
        }
    } else {
        Estimate {
            n: xs.len(),
            mean: m,
            ci: bootstrap_mean_ci(xs, DEFAULT_RESAMPLES, level, seed),
            method: CiMethod::Bootstrap,
        }
    }
}

/// The unbiased pass@k estimator for `n` samples of which `c` pass:
/// `1 - prod_{i=n-c+1..=n} (1 - k/i)` (pass@1 is exactly `c/n`); `None` when `k` is 0,
/// `k > n` or `c > n`.
pub fn pass_at_k(n: u64, c: u64, k: u64) -> Option<f64> {
    if k == 0 || k > n || c > n {
        return None;
    }
    if n - c < k {
        return Some(1.0);
    }
    if k == 1 {
        return Some(c as f64 / n as f64); // the product telescopes to c/n exactly
    }
    let mut prod = 1.0f64;
    for i in (n - c + 1)..=n {
        prod *= 1.0 - k as f64 / i as f64;
    }
    Some(1.0 - prod)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_mean_ci_by_hand() {
        // mean 0.625, sample variance 0.3125 / 3, n = 4: half = 1.959964 * sqrt(var / 4).
        let i = normal_mean_ci(&[0.5, 0.25, 0.75, 1.0], 0.95, 0.0, 1.0).unwrap();
        let half = 1.959_963_984_540_054 * (0.3125f64 / 3.0 / 4.0).sqrt();
        assert!((i.lo - (0.625 - half)).abs() < 1e-9, "{i:?}");
        assert!((i.hi - (0.625 + half)).abs() < 1e-9, "{i:?}");
        // Clipped to the bounds given: mean 0.95, half 1.96 * 0.05.
        let c = normal_mean_ci(&[1.0, 0.9], 0.95, 0.0, 1.0).unwrap();
        assert_eq!(c.hi, 1.0, "{c:?}");
        assert!(
            (c.lo - (0.95 - 1.959_963_984_540_054 * 0.05)).abs() < 1e-9,
            "{c:?}"
        );
        let one = normal_mean_ci(&[0.3], 0.95, 0.0, 1.0).unwrap();
        assert_eq!((one.lo, one.hi), (0.3, 0.3));
        assert!(normal_mean_ci(&[], 0.95, 0.0, 1.0).is_none());
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn mean_and_percentile_by_hand() {
        assert_eq!(mean(&[]), None);
        assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
        let s = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&s, 0.0), Some(1.0));
        assert_eq!(percentile(&s, 1.0), Some(4.0));
        // h = 3 * 0.5 = 1.5 → 2 + 0.5 * (3 - 2)
        assert_eq!(percentile(&s, 0.5), Some(2.5));
        // h = 3 * 0.25 = 0.75 → 1 + 0.75
        assert_eq!(percentile(&s, 0.25), Some(1.75));
        assert_eq!(percentile(&s, 1.5), None);
    }

    #[test]
    fn wilson_matches_hand_computation() {
        // 8 of 10 at 95 %: centre = (0.8 + 1.92073/10) / 1.384146 = 0.716730...,
        // half = 1.959964 * sqrt(0.016 + 0.00960365) / 1.384146 = 0.226645...
        let w = wilson(8, 10, 0.95).unwrap();
        assert!(close(w.lo, 0.4901624, 1e-6), "{w:?}");
        assert!(close(w.hi, 0.9433178, 1e-6), "{w:?}");
        // 0 of 20: lower bound exactly 0, upper z²/(n+z²).
        let w = wilson(0, 20, 0.95).unwrap();
        assert_eq!(w.lo, 0.0);
        let z2 = 1.959963984540054f64.powi(2);
        assert!(close(w.hi, z2 / (20.0 + z2), 1e-9), "{w:?}");
        assert_eq!(wilson(1, 0, 0.95), None);
        assert_eq!(wilson(3, 2, 0.95), None);
    }

    #[test]
    fn bootstrap_is_seeded_and_brackets_the_mean() {
        let xs: Vec<f64> = (0..50).map(|i| (i % 7) as f64 / 6.0).collect();
        let a = bootstrap_mean_ci(&xs, 2000, 0.95, 7).unwrap();
        let b = bootstrap_mean_ci(&xs, 2000, 0.95, 7).unwrap();
        assert_eq!(a, b);
        let c = bootstrap_mean_ci(&xs, 2000, 0.95, 8).unwrap();
        assert_ne!(a, c);
        let m = mean(&xs).unwrap();
        assert!(a.lo < m && m < a.hi, "{a:?} {m}");
        // Standard error of the mean ≈ sd/sqrt(n); the 95 % interval is about ±1.96 se.
        let sd = (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt();
        let se = sd / (xs.len() as f64).sqrt();
        let half = (a.hi - a.lo) / 2.0;
        assert!(half > 1.6 * se && half < 2.3 * se, "half {half} se {se}");
        // A constant sample has a zero-width interval.
        let k = bootstrap_mean_ci(&[0.5; 9], 100, 0.95, 1).unwrap();
        assert_eq!((k.lo, k.hi), (0.5, 0.5));
        assert_eq!(bootstrap_mean_ci(&[], 100, 0.95, 1), None);
    }

    #[test]
    fn mean_ci_picks_wilson_for_proportions() {
        let e = mean_ci(&[1.0, 0.0, 1.0, 1.0], 0.95, 0);
        assert_eq!(e.method, CiMethod::Wilson);
        assert_eq!(e.mean, 0.75);
        assert_eq!(e.n, 4);
        let e = mean_ci(&[1.0, 0.5, 0.0], 0.95, 0);
        assert_eq!(e.method, CiMethod::Bootstrap);
        let e = mean_ci(&[], 0.95, 0);
        assert_eq!(e.n, 0);
        assert_eq!(e.ci, None);
    }

    #[test]
    fn pass_at_k_by_hand() {
        assert_eq!(pass_at_k(10, 3, 1), Some(0.3));
        // 1 - C(7,2)/C(10,2) = 1 - 21/45
        assert!(close(
            pass_at_k(10, 3, 2).unwrap(),
            1.0 - 21.0 / 45.0,
            1e-12
        ));
        assert_eq!(pass_at_k(5, 5, 3), Some(1.0));
        assert_eq!(pass_at_k(5, 0, 3), Some(0.0));
        assert_eq!(pass_at_k(3, 1, 4), None);
        assert_eq!(pass_at_k(3, 1, 0), None);
    }
}
