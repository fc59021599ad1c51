//! The distribution functions the intervals need: the standard normal CDF and its
//! inverse, and Student's t CDF and its inverse for any (also fractional) degrees of
//! freedom, which the Satterthwaite intervals of [`super::design`] use.
//!
//! - [`normal_quantile`]: Acklam's rational approximation refined by one Halley step
//!   against the exact CDF (error below 1e-12 on (0, 1)).
//! - [`normal_cdf`]: through the complementary error function (a Maclaurin series
//!   below 0.5, Lentz's continued fraction above; both to double precision).
//! - [`student_t_cdf`]: `1 − I_x(ν/2, 1/2)/2` with `x = ν/(ν + t²)`, the regularized
//!   incomplete beta function by its continued fraction (modified Lentz) and the log
//!   gamma function by the Lanczos approximation (g = 7, 9 terms).
//! - [`student_t_quantile`]: Newton steps on the CDF from the normal quantile,
//!   safeguarded by bisection, to a relative 1e-12.

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
    let e = normal_cdf(x) - p;
    let u = e * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
    Some(x - u / (1.0 + x * u / 2.0))
}

/// The standard normal CDF.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// The complementary error function: 1 - the Maclaurin series of erf below 0.5,
/// Lentz's continued fraction above (both to double precision).
fn erfc(x: f64) -> f64 {
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

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 coefficients; relative error about 1e-15).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection.
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let mut a = G[0];
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    let tiny = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < tiny {
        d = tiny;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..10_000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < tiny {
            d = tiny;
        }
        c = 1.0 + aa / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < tiny {
            d = tiny;
        }
        c = 1.0 + aa / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function `I_x(a, b)` (a, b > 0, x in [0, 1]).
fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    // The continued fraction converges fast on the side of the mean it is used on.
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_cf(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_cf(b, a, 1.0 - x) / b
    }
}

/// Student's t CDF with `df > 0` degrees of freedom (`df = ∞` is the normal CDF).
/// `None` for a degrees of freedom that is not positive or a `t` that is NaN.
pub fn student_t_cdf(t: f64, df: f64) -> Option<f64> {
    if df.is_nan() || df <= 0.0 || t.is_nan() {
        return None;
    }
    if df.is_infinite() {
        return Some(normal_cdf(t));
    }
    if t.is_infinite() {
        return Some(if t > 0.0 { 1.0 } else { 0.0 });
    }
    let tail = 0.5 * inc_beta(df / 2.0, 0.5, df / (df + t * t));
    Some(if t >= 0.0 { 1.0 - tail } else { tail })
}

/// Student's t density (for the Newton steps of the quantile).
fn student_t_pdf(t: f64, df: f64) -> f64 {
    let ln = ln_gamma((df + 1.0) / 2.0)
        - ln_gamma(df / 2.0)
        - 0.5 * (df * std::f64::consts::PI).ln()
        - (df + 1.0) / 2.0 * (1.0 + t * t / df).ln();
    ln.exp()
}

/// The `p`-quantile of Student's t with `df > 0` degrees of freedom (fractional df
/// allowed; above 1e7 or infinite, the normal quantile). `None` for `p` outside
/// `(0, 1)` or a degrees of freedom that is not positive.
pub fn student_t_quantile(p: f64, df: f64) -> Option<f64> {
    if !(p > 0.0 && p < 1.0) || df.is_nan() || df <= 0.0 {
        return None;
    }
    if df > 1e7 {
        return normal_quantile(p);
    }
    if p < 0.5 {
        return student_t_quantile(1.0 - p, df).map(|q| -q);
    }
    if p == 0.5 {
        return Some(0.0);
    }
    let cdf = |t: f64| student_t_cdf(t, df).expect("df > 0");
    // Bracket [lo, hi] with cdf(lo) < p <= cdf(hi).
    let mut lo = 0.0;
    let mut hi = normal_quantile(p)?.max(1.0);
    while cdf(hi) < p {
        lo = hi;
        hi *= 2.0;
        if hi > 1e300 {
            return Some(f64::INFINITY);
        }
    }
    let mut t = (lo + hi) / 2.0;
    for _ in 0..200 {
        let f = cdf(t) - p;
        if f < 0.0 {
            lo = t;
        } else {
            hi = t;
        }
        // A Newton step, kept only when it stays inside the bracket.
        let step = f / student_t_pdf(t, df);
        let next = t - step;
        t = if step.is_finite() && next > lo && next < hi {
            next
        } else {
            (lo + hi) / 2.0
        };
        if (hi - lo) <= 1e-12 * t.abs().max(1.0) || step.abs() <= 1e-13 * t.abs().max(1.0) {
            break;
        }
    }
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
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
        assert!(close(normal_cdf(1.959963984540054), 0.975, 1e-12));
    }

    #[test]
    fn t_quantiles_match_tables() {
        // Two-sided 95 %, 90 % and 99 % points from Student's tables (to 1e-7).
        let table = [
            (0.975, 1.0, 12.706_204_736),
            (0.975, 2.0, 4.302_652_730),
            (0.975, 3.0, 3.182_446_305),
            (0.975, 5.0, 2.570_581_836),
            (0.975, 10.0, 2.228_138_852),
            (0.975, 30.0, 2.042_272_456),
            (0.975, 120.0, 1.979_930_405),
            (0.95, 4.0, 2.131_846_786),
            (0.9, 1.0, 3.077_683_537),
            (0.995, 3.0, 5.840_909_310),
            (0.8, 7.0, 0.896_029_644),
        ];
        for (p, df, want) in table {
            let q = student_t_quantile(p, df).unwrap();
            assert!(close(q, want, 1e-7), "t({p}, {df}) = {q}, want {want}");
            assert!(close(student_t_quantile(1.0 - p, df).unwrap(), -want, 1e-7));
            assert!(close(student_t_cdf(want, df).unwrap(), p, 1e-9));
        }
        // df = 1 is the Cauchy distribution: F(t) = 1/2 + atan(t)/π; df = 2 has
        // F(t) = 1/2 + t / (2 sqrt(2 + t²)).
        for t in [-30.0, -2.5, -0.3, 0.0, 0.7, 4.0, 100.0] {
            let cauchy = 0.5 + f64::atan(t) / std::f64::consts::PI;
            assert!(close(student_t_cdf(t, 1.0).unwrap(), cauchy, 1e-12), "{t}");
            let two = 0.5 + t / (2.0 * (2.0 + t * t).sqrt());
            assert!(close(student_t_cdf(t, 2.0).unwrap(), two, 1e-12), "{t}");
        }
        // Fractional degrees of freedom lie between their integer neighbours and
        // invert their own CDF.
        let q = student_t_quantile(0.975, 2.5).unwrap();
        assert!(q < 4.302_652_730 && q > 3.182_446_305, "{q}");
        assert!(close(student_t_cdf(q, 2.5).unwrap(), 0.975, 1e-10));
        let q = student_t_quantile(0.975, 0.5).unwrap();
        assert!(close(student_t_cdf(q, 0.5).unwrap(), 0.975, 1e-9), "{q}");
        // Large df tends to the normal.
        assert!(close(
            student_t_quantile(0.975, 1e8).unwrap(),
            1.959963984540054,
            1e-9
        ));
        assert!(close(
            student_t_quantile(0.975, f64::INFINITY).unwrap(),
            1.959963984540054,
            1e-9
        ));
        assert_eq!(student_t_quantile(0.975, 0.0), None);
        assert_eq!(student_t_quantile(1.0, 3.0), None);
        assert_eq!(student_t_cdf(1.0, -1.0), None);
    }
}
