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

#[cfg(test)]
mod tests {
    use super::*;

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
}
