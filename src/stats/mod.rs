//! Small statistics used by every report: means, confidence intervals, pass@k.
//!
//! A leaf module: pure functions over slices, no I/O, no other crate module imported.
//! Randomised procedures (the bootstrap) take an explicit seed and use ChaCha8, so the
//! same inputs give the same interval on every machine.
//!
//! - [`mean`], [`percentile`] (linear interpolation between order statistics, the
//!   "type 7" rule of R and NumPy's default).
//! - [`bootstrap_mean_ci`]: percentile bootstrap of the mean.
//! - [`wilson`]: the Wilson score interval for a proportion (good coverage at small n
//!   and at rates near 0 or 1, where the normal approximation fails).
//! - [`mean_ci`]: the interval every table uses: Wilson when every value is 0 or 1,
//!   otherwise the percentile bootstrap.
//! - [`pass_at_k`]: the unbiased pass@k estimator of the Codex paper (LiveCodeBench's).
//! - [`normal_quantile`]: the inverse standard normal CDF (Acklam's rational
//!   approximation refined by one Halley step; error below 1e-12 on (0, 1)).
//! - [`hierarchical_mean`], [`hierarchical_bootstrap_ci`]: two-stage data (groups,
//!   e.g. harness samples, each with its own units, e.g. test instances). The point
//!   estimate is the mean of the group means (each group weighs the same); the
//!   interval resamples groups with replacement, then units with replacement within
//!   each chosen group (the harness is a random variable, and so are the instances).
//!   [`stratified_hierarchical_ci`] does the same inside each stratum (task) and
//!   averages the strata, which are fixed, not resampled.
//! - [`paired_differences`] + the same bootstraps: paired comparisons on identical
//!   groups and units (`b - a` per unit), so shared instance difficulty cancels.
//! - [`paired_stratified_estimate`]: the paired difference over several tasks
//!   (strata fixed, groups then units resampled within each), and
//!   [`stratified_sign_flip_test`]: the paired permutation test of the same
//!   statistic, flipping whole harness samples or single instances (exact enumeration
//!   up to 2^20 patterns, seeded Monte Carlo above).
//! - [`hierarchical_select_estimate`]: the interval of a statistic that picks one group per
//!   resample (best-of-M selected by another score), resampling groups then units.

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

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

/// The inverse of the standard normal CDF at `p` in `(0, 1)`.
pub fn normal_quantile(p: f64) -> Option<f64> {
    if !(p > 0.0 && p < 1.0) {
        return None;
    }
    // Acklam's coefficients.
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.383_577_518_672_69e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    let low = 0.02425;
    let x = if p < low {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - low {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    // One Halley step against the exact CDF (via erfc).
    let e = 0.5 * erfc(-x / std::f64::consts::SQRT_2) - p;
    let u = e * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
    Some(x - u / (1.0 + x * u / 2.0))
}

/// The complementary error function: 1 - the Maclaurin series of erf below 0.5,
/// Lentz's continued fraction above (both to double precision).
fn erfc(x: f64) -> f64 {
    // Use the high-precision continued-fraction / series split.
    let z = x.abs();
    let r = if z < 0.5 {
        1.0 - erf_series(z)
    } else {
        erfc_cf(z)
    };
    if x >= 0.0 { r } else { 2.0 - r }
}

/// erf by its Maclaurin series (converges fast for |x| < 0.5).
fn erf_series(x: f64) -> f64 {
    let mut sum = x;
    let mut term = x;
    let x2 = x * x;
    for k in 1..200 {
        let n = k as f64;
        term *= -x2 / n;
        let add = term / (2.0 * n + 1.0);
        sum += add;
        if add.abs() <= 1e-17 * sum.abs() {
            break;
        }
    }
    sum * 2.0 / std::f64::consts::PI.sqrt()
}

/// erfc by Lentz's continued fraction (x >= 0.5).
fn erfc_cf(x: f64) -> f64 {
    // erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + 1/2/(x + 1/(x + 3/2/(x + 2/(x + ...)))))
    let tiny = 1e-300;
    let mut f = x;
    if f == 0.0 {
        f = tiny;
    }
    let mut c = f;
    let mut d = 0.0;
    for k in 1..500 {
        let a = k as f64 / 2.0;
        d = x + a * d;
        if d == 0.0 {
            d = tiny;
        }
        c = x + a / c;
        if c == 0.0 {
            c = tiny;
        }
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() / std::f64::consts::PI.sqrt() / f
}

/// A mean over two-stage data with its interval and sizes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HierEstimate {
    pub mean: f64,
    /// `None` when there is no data (or no interval could be formed).
    pub ci: Option<Interval>,
    /// Groups (harness samples; summed over strata).
    pub groups: usize,
    /// Units over all groups (instances, candidates, rounds).
    pub n: usize,
}

impl HierEstimate {
    /// An estimate with no data.
    pub fn empty() -> HierEstimate {
        HierEstimate {
            mean: 0.0,
            ci: None,
            groups: 0,
            n: 0,
        }
    }
}

/// The groups that have at least one unit.
fn nonempty(groups: &[Vec<f64>]) -> Vec<&[f64]> {
    groups
        .iter()
        .filter(|g| !g.is_empty())
        .map(Vec::as_slice)
        .collect()
}

/// The mean of the group means over the groups that have units; `None` when none has.
pub fn hierarchical_mean(groups: &[Vec<f64>]) -> Option<f64> {
    let g = nonempty(groups);
    if g.is_empty() {
        return None;
    }
    Some(
        g.iter()
            .map(|x| x.iter().sum::<f64>() / x.len() as f64)
            .sum::<f64>()
            / g.len() as f64,
    )
}

/// One two-stage resample of `groups` (non-empty groups only): the mean of the
/// resampled group means.
fn resample_once(g: &[&[f64]], rng: &mut ChaCha8Rng) -> f64 {
    let m = g.len();
    let mut total = 0.0;
    for _ in 0..m {
        let grp = g[rng.random_range(0..m)];
        let n = grp.len();
        let mut s = 0.0;
        for _ in 0..n {
            s += grp[rng.random_range(0..n)];
        }
        total += s / n as f64;
    }
    total / m as f64
}

fn percentile_interval(mut stats: Vec<f64>, level: f64) -> Option<Interval> {
    stats.sort_by(f64::total_cmp);
    let alpha = (1.0 - level) / 2.0;
    Some(Interval {
        lo: percentile(&stats, alpha)?,
        hi: percentile(&stats, 1.0 - alpha)?,
        level,
    })
}

fn valid_level(level: f64) -> bool {
    level > 0.0 && level < 1.0
}

/// The two-stage (hierarchical) percentile bootstrap of [`hierarchical_mean`]: each
/// resample draws as many groups as there are (non-empty) groups, with replacement,
/// and within each drawn group as many units as it has, with replacement. Empty
/// groups are left out. ChaCha8 seeded with `seed`.
pub fn hierarchical_bootstrap_ci(
    groups: &[Vec<f64>],
    resamples: usize,
    level: f64,
    seed: u64,
) -> Option<Interval> {
    if nonempty(groups).is_empty() || resamples == 0 || !valid_level(level) {
        return None;
    }
    percentile_interval(hierarchical_stats(groups, resamples, seed), level)
}

/// The resampled statistics behind [`hierarchical_bootstrap_ci`].
fn hierarchical_stats(groups: &[Vec<f64>], resamples: usize, seed: u64) -> Vec<f64> {
    let g = nonempty(groups);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..resamples)
        .map(|_| resample_once(&g, &mut rng))
        .collect()
}

/// [`hierarchical_mean`] with its [`hierarchical_bootstrap_ci`] and sizes.
pub fn hierarchical_estimate(groups: &[Vec<f64>], level: f64, seed: u64) -> HierEstimate {
    let g = nonempty(groups);
    match hierarchical_mean(groups) {
        None => HierEstimate::empty(),
        Some(mean) => HierEstimate {
            mean,
            ci: hierarchical_bootstrap_ci(groups, DEFAULT_RESAMPLES, level, seed),
            groups: g.len(),
            n: g.iter().map(|x| x.len()).sum(),
        },
    }
}

/// Several strata (tasks), each two-stage data: the estimate is the mean over the
/// strata that have data of each stratum's [`hierarchical_mean`]; the interval
/// resamples within every stratum independently (strata are fixed), as
/// [`hierarchical_bootstrap_ci`] does, and averages.
pub fn stratified_hierarchical_estimate(
    strata: &[Vec<Vec<f64>>],
    level: f64,
    seed: u64,
) -> HierEstimate {
    let s: Vec<Vec<&[f64]>> = strata
        .iter()
        .map(|g| nonempty(g))
        .filter(|g| !g.is_empty())
        .collect();
    if s.is_empty() {
        return HierEstimate::empty();
    }
    let means: Vec<f64> = strata.iter().filter_map(|g| hierarchical_mean(g)).collect();
    let mean = means.iter().sum::<f64>() / means.len() as f64;
    let ci = if valid_level(level) {
        percentile_interval(stratified_stats(&s, DEFAULT_RESAMPLES, seed), level)
    } else {
        None
    };
    HierEstimate {
        mean,
        ci,
        groups: s.iter().map(Vec::len).sum(),
        n: s.iter().flatten().map(|x| x.len()).sum(),
    }
}

/// The resampled statistics behind [`stratified_hierarchical_estimate`].
fn stratified_stats(strata: &[Vec<&[f64]>], resamples: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..resamples)
        .map(|_| {
            strata
                .iter()
                .map(|g| resample_once(g, &mut rng))
                .sum::<f64>()
                / strata.len() as f64
        })
        .collect()
}

/// Unit-by-unit differences `b - a` of two two-stage data sets measured on identical
/// groups and units. `None` (naming nothing) when the shapes differ: a paired
/// comparison of different instances is meaningless.
pub fn paired_differences(a: &[Vec<f64>], b: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    if a.len() != b.len() || a.iter().zip(b).any(|(x, y)| x.len() != y.len()) {
        return None;
    }
    Some(
        a.iter()
            .zip(b)
            .map(|(x, y)| x.iter().zip(y).map(|(p, q)| q - p).collect())
            .collect(),
    )
}

/// The paired hierarchical estimate of `mean(b) - mean(a)`: the
/// [`hierarchical_estimate`] of the unit-by-unit differences (groups, then units
/// within groups, resampled together for both sides). `None` when the shapes differ.
pub fn paired_hierarchical_estimate(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    level: f64,
    seed: u64,
) -> Option<HierEstimate> {
    paired_differences(a, b).map(|d| hierarchical_estimate(&d, level, seed))
}

/// The paired estimate of `mean(b) - mean(a)` over several strata (tasks): the
/// [`stratified_hierarchical_estimate`] of the unit-by-unit differences of every
/// stratum (strata fixed; within each, groups then units resampled, both sides
/// together). `None` when the number of strata or any stratum's shape differs.
pub fn paired_stratified_estimate(
    a: &[Vec<Vec<f64>>],
    b: &[Vec<Vec<f64>>],
    level: f64,
    seed: u64,
) -> Option<HierEstimate> {
    if a.len() != b.len() {
        return None;
    }
    let d: Vec<Vec<Vec<f64>>> = a
        .iter()
        .zip(b)
        .map(|(x, y)| paired_differences(x, y))
        .collect::<Option<_>>()?;
    Some(stratified_hierarchical_estimate(&d, level, seed))
}

/// What a sign-flip test exchanges between the two sides of a paired comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlipUnit {
    /// Whole groups (harness samples): the two sides' trajectories of one sample are
    /// swapped or not. The harness sample is the exchangeable unit, so the p-value
    /// accounts for harness-to-harness variation.
    Groups,
    /// Single units (instances) within groups: conditional on the harnesses drawn, it
    /// measures instance noise only (more power, narrower claim).
    Units,
}

/// The result of a paired sign-flip (permutation) test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SignFlipTest {
    pub unit: FlipUnit,
    /// The observed statistic: the stratified hierarchical mean of `b - a`.
    pub statistic: f64,
    /// Two-sided p-value: the share of sign patterns whose |statistic| is at least the
    /// observed one (exact), or `(1 + hits) / (1 + draws)` (Monte Carlo).
    pub p_value: f64,
    /// Exchangeable units with a non-zero difference (zeros cannot change the
    /// statistic and are left out).
    pub units: usize,
    /// Every one of the `2^units` patterns was enumerated.
    pub exact: bool,
    /// Patterns evaluated (`2^units` when exact).
    pub draws: u64,
}

/// The most non-zero units [`stratified_sign_flip_test`] enumerates exactly
/// (2^20 patterns); above it, Monte Carlo.
pub const MAX_EXACT_FLIP_UNITS: usize = 20;

/// The paired sign-flip test of "no difference between the two sides" on stratified
/// two-stage differences `diffs[stratum][group][unit]` (`b - a`), for the statistic
/// of [`paired_stratified_estimate`]: the mean over strata of the mean over groups of
/// the group's mean difference. Under the null hypothesis the two sides of each
/// exchangeable unit ([`FlipUnit`]) are exchangeable, so each unit's contribution
/// keeps or flips its sign with probability 1/2. Every pattern is enumerated when at
/// most `max_exact` units have a non-zero difference, else `resamples` patterns are
/// drawn (ChaCha8 seeded with `seed`). `None` without data.
pub fn stratified_sign_flip_test(
    diffs: &[Vec<Vec<f64>>],
    unit: FlipUnit,
    max_exact: usize,
    resamples: usize,
    seed: u64,
) -> Option<SignFlipTest> {
    let strata: Vec<Vec<&[f64]>> = diffs
        .iter()
        .map(|g| nonempty(g))
        .filter(|g| !g.is_empty())
        .collect();
    if strata.is_empty() {
        return None;
    }
    // Each unit's contribution to the statistic: weight × value.
    let s = strata.len() as f64;
    let mut terms: Vec<f64> = Vec::new();
    for groups in &strata {
        let m = groups.len() as f64;
        for g in groups {
            let n = g.len() as f64;
            match unit {
                FlipUnit::Groups => terms.push(g.iter().sum::<f64>() / n / m / s),
                FlipUnit::Units => terms.extend(g.iter().map(|x| x / n / m / s)),
            }
        }
    }
    let statistic: f64 = terms.iter().sum();
    let scale: f64 = terms.iter().map(|t| t.abs()).sum();
    terms.retain(|t| *t != 0.0);
    let units = terms.len();
    // Patterns as extreme as the observed one, with a tolerance for rounding (the
    // identity pattern must count).
    let bar = statistic.abs() - 1e-12 * scale.max(1e-300);
    let (hits, draws, exact) = if units <= max_exact.min(30) {
        let total = 1u64 << units;
        let mut hits = 0u64;
        for mask in 0..total {
            let t: f64 = terms
                .iter()
                .enumerate()
                .map(|(i, x)| if mask >> i & 1 == 1 { -x } else { *x })
                .sum();
            if t.abs() >= bar {
                hits += 1;
            }
        }
        (hits, total, true)
    } else {
        if resamples == 0 {
            return None;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut hits = 0u64;
        for _ in 0..resamples {
            let t: f64 = terms
                .iter()
                .map(|x| if rng.random::<bool>() { -x } else { *x })
                .sum();
            if t.abs() >= bar {
                hits += 1;
            }
        }
        (hits, resamples as u64, false)
    };
    let p_value = if exact {
        hits as f64 / draws as f64
    } else {
        (1 + hits) as f64 / (1 + draws) as f64
    };
    Some(SignFlipTest {
        unit,
        statistic,
        p_value,
        units,
        exact,
        draws,
    })
}

/// The index with the highest `select` among `idx` (ascending); ties: the first.
fn best_group(select: &[f64], idx: impl Iterator<Item = usize>) -> usize {
    let mut b: Option<usize> = None;
    for i in idx {
        if b.is_none_or(|j| select[i] > select[j]) {
            b = Some(i);
        }
    }
    b.expect("at least one group")
}

/// The resampled statistics behind [`hierarchical_select_estimate`].
fn select_stats(select: &[f64], values: &[Vec<f64>], resamples: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let m = select.len();
    (0..resamples)
        .map(|_| {
            let mut drawn: Vec<usize> = (0..m).map(|_| rng.random_range(0..m)).collect();
            // Ties go to the lowest index, as for the point estimate.
            drawn.sort_unstable();
            let g = &values[best_group(select, drawn.into_iter())];
            let n = g.len();
            (0..n).map(|_| g[rng.random_range(0..n)]).sum::<f64>() / n as f64
        })
        .collect()
}

/// A statistic that chooses one group: `select[g]` scores each group (e.g. its dev
/// score) and `values[g]` holds its units (e.g. test scores). The estimate is the
/// mean of the units of the group with the highest `select` (ties: the first). The
/// interval resamples groups with replacement, picks the best of the drawn groups by
/// `select`, and resamples that group's units. `None` without groups, on a length
/// mismatch or an empty chosen group.
pub fn hierarchical_select_estimate(
    select: &[f64],
    values: &[Vec<f64>],
    level: f64,
    seed: u64,
) -> Option<HierEstimate> {
    if select.is_empty() || select.len() != values.len() || values.iter().any(Vec::is_empty) {
        return None;
    }
    let chosen = best_group(select, 0..select.len());
    let v = &values[chosen];
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let ci = if valid_level(level) {
        percentile_interval(select_stats(select, values, DEFAULT_RESAMPLES, seed), level)
    } else {
        None
    };
    Some(HierEstimate {
        mean,
        ci,
        groups: select.len(),
        n: values.iter().map(Vec::len).sum(),
    })
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
    fn normal_quantiles_match_tables() {
        // Values from standard normal tables (to 1e-9).
        assert!(close(
            normal_quantile(0.975).unwrap(),
            1.959963984540054,
            1e-9
        ));
        assert!(close(normal_quantile(0.5).unwrap(), 0.0, 1e-12));
        assert!(close(
            normal_quantile(0.995).unwrap(),
            2.5758293035489,
            1e-9
        ));
        assert!(close(
            normal_quantile(0.01).unwrap(),
            -2.3263478740408,
            1e-9
        ));
        assert!(close(
            normal_quantile(1e-6).unwrap(),
            -4.753424308822899,
            1e-8
        ));
        assert_eq!(normal_quantile(0.0), None);
        assert_eq!(normal_quantile(1.0), None);
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

    fn moments(xs: &[f64]) -> (f64, f64) {
        let m = xs.iter().sum::<f64>() / xs.len() as f64;
        let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / xs.len() as f64;
        (m, v)
    }

    /// Groups of unequal size: A = 0,0,0,1; B = 1,1,0,1,1,1; C = 0,1.
    fn three_groups() -> Vec<Vec<f64>> {
        vec![
            vec![0.0, 0.0, 0.0, 1.0],
            vec![1.0, 1.0, 0.0, 1.0, 1.0, 1.0],
            vec![0.0, 1.0],
        ]
    }

    #[test]
    fn hierarchical_mean_weighs_groups_equally() {
        // Group means 1/4, 5/6, 1/2: their mean is 19/36, not the pooled 8/12.
        let g = three_groups();
        assert!(close(hierarchical_mean(&g).unwrap(), 19.0 / 36.0, 1e-15));
        // Empty groups are left out; no data is no estimate.
        let mut h = g.clone();
        h.push(Vec::new());
        assert_eq!(hierarchical_mean(&h), hierarchical_mean(&g));
        assert_eq!(hierarchical_mean(&[Vec::new()]), None);
        let e = hierarchical_estimate(&h, 0.95, 1);
        assert_eq!((e.groups, e.n), (3, 12));
        assert_eq!(hierarchical_estimate(&[], 0.95, 1), HierEstimate::empty());
    }

    #[test]
    fn two_stage_bootstrap_has_the_hand_computed_variance() {
        // The resampled statistic is the mean of m draws, each a random group's
        // resampled mean. By hand (plug-in variances, dividing by n):
        //   group means 0.25, 0.8333, 0.5 (mean 0.52778)
        //   between = mean of squared deviations of group means  = 0.0570988
        //   within  = mean over groups of var_g / n_g
        //           = (0.1875/4 + 0.138889/6 + 0.25/2) / 3     = 0.0650077
        //   Var(statistic) = (between + within) / m = 0.1221065 / 3 = 0.0407022.
        // Resampling only groups would give 0.0190329, only units 0.0216692.
        let stats = hierarchical_stats(&three_groups(), 40_000, 11);
        let (m, v) = moments(&stats);
        assert!(close(m, 0.527_777_8, 0.004), "mean {m}");
        assert!((v / 0.040_702_2 - 1.0).abs() < 0.04, "variance {v}");
        // The interval is the percentile interval of these statistics.
        let ci = hierarchical_bootstrap_ci(&three_groups(), 40_000, 0.95, 11).unwrap();
        let mut sorted = stats.clone();
        sorted.sort_by(f64::total_cmp);
        assert_eq!(ci.lo, percentile(&sorted, 0.025).unwrap());
        assert_eq!(ci.hi, percentile(&sorted, 0.975).unwrap());
    }

    #[test]
    fn two_stage_bootstrap_matches_an_enumerated_case() {
        // Two groups of one unit, 0 and 1: a resample is the mean of two draws, so
        // exactly 0 (p 1/4), 0.5 (p 1/2) or 1 (p 1/4).
        let stats = hierarchical_stats(&[vec![0.0], vec![1.0]], 20_000, 3);
        let freq = |x: f64| stats.iter().filter(|&&s| s == x).count() as f64 / 20_000.0;
        assert!(close(freq(0.0), 0.25, 0.015), "{}", freq(0.0));
        assert!(close(freq(0.5), 0.5, 0.015), "{}", freq(0.5));
        assert!(close(freq(1.0), 0.25, 0.015), "{}", freq(1.0));
        assert_eq!(stats.len(), 20_000);
        let ci = hierarchical_bootstrap_ci(&[vec![0.0], vec![1.0]], 20_000, 0.95, 3).unwrap();
        assert_eq!((ci.lo, ci.hi), (0.0, 1.0));
        // Constant data: a zero-width interval; the same seed repeats exactly.
        let k = hierarchical_estimate(&[vec![0.5; 3], vec![0.5; 5]], 0.95, 2);
        assert_eq!(k.ci.map(|c| (c.lo, c.hi)), Some((0.5, 0.5)));
        assert_eq!(
            hierarchical_estimate(&three_groups(), 0.95, 9),
            hierarchical_estimate(&three_groups(), 0.95, 9)
        );
    }

    #[test]
    fn strata_are_fixed_and_averaged() {
        // Stratum 1: the three groups above (variance 0.0407022); stratum 2:
        // groups 1,0 and 0,0,1: means 0.5, 1/3; between 0.0069444; within
        // (0.25/2 + 0.222222/3)/2 = 0.0995370; variance (0.0069444+0.0995370)/2
        // = 0.0532407. The average of two independent strata: (0.0407022 +
        // 0.0532407)/4 = 0.0234857; point estimate (19/36 + 5/12)/2 = 0.4722222.
        let s2 = vec![vec![1.0, 0.0], vec![0.0, 0.0, 1.0]];
        let strata = vec![three_groups(), s2];
        let e = stratified_hierarchical_estimate(&strata, 0.95, 4);
        assert!(close(e.mean, 0.472_222_2, 1e-7), "{e:?}");
        assert_eq!((e.groups, e.n), (5, 17));
        let refs: Vec<Vec<&[f64]>> = strata.iter().map(|g| nonempty(g)).collect();
        let (m, v) = moments(&stratified_stats(&refs, 40_000, 5));
        assert!(close(m, 0.472_222_2, 0.004), "{m}");
        assert!((v / 0.023_485_7 - 1.0).abs() < 0.04, "variance {v}");
        // A stratum with no data is left out of the average.
        let with_empty = vec![three_groups(), vec![Vec::new()]];
        let e = stratified_hierarchical_estimate(&with_empty, 0.95, 4);
        assert!(close(e.mean, 19.0 / 36.0, 1e-12));
    }

    #[test]
    fn paired_differences_cancel_shared_difficulty() {
        let a = vec![vec![0.0, 1.0, 1.0, 0.0], vec![1.0, 1.0, 0.0, 0.0]];
        let b: Vec<Vec<f64>> = a
            .iter()
            .map(|g| g.iter().map(|x| x + 0.25).collect())
            .collect();
        let e = paired_hierarchical_estimate(&a, &b, 0.95, 1).unwrap();
        assert!(close(e.mean, 0.25, 1e-15));
        let ci = e.ci.unwrap();
        assert!(
            close(ci.lo, 0.25, 1e-15) && close(ci.hi, 0.25, 1e-15),
            "{ci:?}"
        );
        // Unpaired, the same data would give a wide interval for each side.
        let wa = hierarchical_estimate(&a, 0.95, 1).ci.unwrap();
        assert!(wa.hi - wa.lo > 0.3, "{wa:?}");
        // b - a by hand.
        let d = paired_differences(&[vec![1.0, 0.0]], &[vec![0.0, 0.0]]).unwrap();
        assert_eq!(d, vec![vec![-1.0, 0.0]]);
        // Different shapes are not comparable.
        assert!(paired_differences(&a, &a[..1]).is_none());
        assert!(paired_differences(&[vec![1.0]], &[vec![1.0, 0.0]]).is_none());
    }

    #[test]
    fn best_of_groups_selected_by_another_score() {
        // Select scores 0.2, 0.9, 0.9: the point estimate takes group 1 (the first
        // of the tie), mean 3/4. In a resample of three groups the choice is group 1
        // when it was drawn (p 1 - (2/3)^3 = 19/27), else group 2 when drawn
        // (p (2/3)^3 - (1/3)^3 = 7/27), else group 0 (p 1/27); units are resampled
        // without changing expectations: E = 19/27*0.75 + 7/27*1 + 1/27*0 = 0.787037.
        let select = [0.2, 0.9, 0.9];
        let values = vec![vec![0.0, 0.0], vec![1.0, 0.0, 1.0, 1.0], vec![1.0, 1.0]];
        let e = hierarchical_select_estimate(&select, &values, 0.95, 2).unwrap();
        assert_eq!(e.mean, 0.75);
        let (m, _) = moments(&select_stats(&select, &values, 40_000, 6));
        assert!(close(m, 0.787_037, 0.006), "{m}");
        assert!(hierarchical_select_estimate(&[], &[], 0.95, 1).is_none());
        assert!(hierarchical_select_estimate(&[1.0], &[vec![]], 0.95, 1).is_none());
        assert!(hierarchical_select_estimate(&[1.0, 2.0], &[vec![1.0]], 0.95, 1).is_none());
    }

    /// Strata of groups of units.
    type Strata = Vec<Vec<Vec<f64>>>;

    /// Two tasks (strata), harness samples (groups) of unequal sizes, sides a and b.
    fn paired_case() -> (Strata, Strata) {
        let a = vec![
            vec![
                vec![0.0, 1.0, 0.0],
                vec![1.0, 1.0, 0.0],
                vec![0.0, 0.0, 0.0],
            ],
            vec![vec![1.0, 0.0], vec![0.0, 0.5]],
        ];
        let b = vec![
            vec![
                vec![1.0, 1.0, 0.0],
                vec![1.0, 1.0, 1.0],
                vec![0.0, 1.0, 0.0],
            ],
            vec![vec![1.0, 0.0], vec![0.0, 0.0]],
        ];
        (a, b)
    }

    /// The statistic computed the long way: the mean over strata of the hierarchical
    /// mean of b minus that of a.
    fn direct_statistic(a: &[Vec<Vec<f64>>], b: &[Vec<Vec<f64>>]) -> f64 {
        let mut s = 0.0;
        for (x, y) in a.iter().zip(b) {
            s += hierarchical_mean(y).unwrap() - hierarchical_mean(x).unwrap();
        }
        s / a.len() as f64
    }

    #[test]
    fn sign_flip_over_samples_matches_swapping_trajectories() {
        let (a, b) = paired_case();
        // Independent computation: enumerate every way of swapping whole (task,
        // sample) trajectories between the sides and recompute the statistic from the
        // swapped data sets.
        let slots: Vec<(usize, usize)> = a
            .iter()
            .enumerate()
            .flat_map(|(t, g)| (0..g.len()).map(move |m| (t, m)))
            .collect();
        let observed = direct_statistic(&a, &b);
        let mut hits = 0;
        for mask in 0..(1u32 << slots.len()) {
            let (mut x, mut y) = (a.clone(), b.clone());
            for (i, &(t, m)) in slots.iter().enumerate() {
                if mask >> i & 1 == 1 {
                    std::mem::swap(&mut x[t][m], &mut y[t][m]);
                }
            }
            if direct_statistic(&x, &y).abs() >= observed.abs() - 1e-12 {
                hits += 1;
            }
        }
        let d: Vec<Vec<Vec<f64>>> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| paired_differences(x, y).unwrap())
            .collect();
        let t = stratified_sign_flip_test(&d, FlipUnit::Groups, 20, 0, 0).unwrap();
        assert!(close(t.statistic, observed, 1e-12), "{t:?} {observed}");
        // The task-2 sample 1 difference is -0.25, sample 0 is 0: zero units are left
        // out, which leaves the p-value unchanged (each doubles hits and patterns).
        assert_eq!(t.units, 4);
        assert!(t.exact);
        assert_eq!(t.draws, 16);
        assert!(close(t.p_value, hits as f64 / 32.0, 1e-15), "{t:?} {hits}");
        // The statistic equals the paired stratified estimate.
        let e = paired_stratified_estimate(&a, &b, 0.95, 3).unwrap();
        assert!(close(e.mean, observed, 1e-12));
        // Monte Carlo (forced) agrees with the exact p-value.
        let mc = stratified_sign_flip_test(&d, FlipUnit::Groups, 0, 40_000, 9).unwrap();
        assert!(!mc.exact);
        assert!(close(mc.p_value, t.p_value, 0.01), "{mc:?} {t:?}");
        assert_eq!(
            mc,
            stratified_sign_flip_test(&d, FlipUnit::Groups, 0, 40_000, 9).unwrap()
        );
    }

    #[test]
    fn sign_flip_over_instances_matches_swapping_scores() {
        let (a, b) = paired_case();
        let cells: Vec<(usize, usize, usize)> = a
            .iter()
            .enumerate()
            .flat_map(|(t, g)| {
                g.iter()
                    .enumerate()
                    .flat_map(move |(m, u)| (0..u.len()).map(move |i| (t, m, i)))
            })
            .collect();
        assert_eq!(cells.len(), 13);
        let observed = direct_statistic(&a, &b);
        let mut hits = 0u32;
        for mask in 0..(1u32 << cells.len()) {
            let (mut x, mut y) = (a.clone(), b.clone());
            for (k, &(t, m, i)) in cells.iter().enumerate() {
                if mask >> k & 1 == 1 {
                    std::mem::swap(&mut x[t][m][i], &mut y[t][m][i]);
                }
            }
            if direct_statistic(&x, &y).abs() >= observed.abs() - 1e-12 {
                hits += 1;
            }
        }
        let d: Vec<Vec<Vec<f64>>> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| paired_differences(x, y).unwrap())
            .collect();
        let t = stratified_sign_flip_test(&d, FlipUnit::Units, 20, 0, 0).unwrap();
        assert_eq!(t.units, 4);
        assert!(
            close(t.p_value, hits as f64 / 8192.0, 1e-15),
            "{t:?} {hits}"
        );
        // No difference at all: the statistic is 0 and every pattern is as extreme.
        let zero = vec![vec![vec![0.0, 0.0]]];
        let z = stratified_sign_flip_test(&zero, FlipUnit::Units, 20, 0, 0).unwrap();
        assert_eq!((z.statistic, z.p_value, z.units), (0.0, 1.0, 0));
        assert!(stratified_sign_flip_test(&[], FlipUnit::Groups, 20, 0, 0).is_none());
    }

    #[test]
    fn paired_stratified_bootstrap_has_the_hand_computed_variance() {
        // Differences: one stratum = the three groups above, shifted: a constant
        // shift adds nothing to the variance, so the variance is 0.0407022 (see
        // two_stage_bootstrap_has_the_hand_computed_variance) for one stratum and a
        // quarter of the sum for two identical independent strata.
        let a = vec![three_groups(), three_groups()];
        let b: Vec<Vec<Vec<f64>>> = a
            .iter()
            .map(|s| {
                s.iter()
                    .map(|g| g.iter().map(|x| 2.0 * x + 0.5).collect())
                    .collect()
            })
            .collect();
        // b - a = x + 0.5 per unit.
        let d: Vec<Vec<Vec<f64>>> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| paired_differences(x, y).unwrap())
            .collect();
        let refs: Vec<Vec<&[f64]>> = d.iter().map(|g| nonempty(g)).collect();
        let (m, v) = moments(&stratified_stats(&refs, 40_000, 21));
        assert!(close(m, 19.0 / 36.0 + 0.5, 0.004), "{m}");
        assert!((v / (0.040_702_2 / 2.0) - 1.0).abs() < 0.04, "variance {v}");
        let e = paired_stratified_estimate(&a, &b, 0.95, 21).unwrap();
        assert!(close(e.mean, 19.0 / 36.0 + 0.5, 1e-12));
        assert_eq!((e.groups, e.n), (6, 24));
        // Shapes must agree.
        assert!(paired_stratified_estimate(&a, &b[..1], 0.95, 1).is_none());
        let mut c = b.clone();
        c[1][0].pop();
        assert!(paired_stratified_estimate(&a, &c, 0.95, 1).is_none());
    }
}
