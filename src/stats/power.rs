//! Power of the paired comparison: the minimum detectable difference (MDD) of a design
//! and the sizes a design needs to detect a given difference.
//!
//! The model is the crossed one of [`super::design`], per task, for the paired
//! differences `b − a`: `d = δ + harness effect + instance effect + residual`, normal,
//! with the [`VarianceComponents`] given. A comparison detects δ when its two-sided
//! interval ([`super::design::paired_crossed_estimate`]'s rule, at `level`) excludes
//! 0. In a balanced normal crossed table the grand mean and the three mean squares are
//! independent (the mean normal, each mean square a scaled χ²), so each simulated
//! comparison draws those four numbers per task — not the cells — and builds the
//! interval exactly as the evaluator does (floor, Satterthwaite degrees of freedom, t
//! quantile). The interval excludes 0 at a shift δ > 0 when `δ > h − ȳ₀` (`h` its
//! half-width, `ȳ₀` the mean without the shift; the half-width does not depend on δ),
//! so the MDD at power P is the P-quantile of `h − ȳ₀` over the simulations (the
//! other tail, an interval wholly below 0 at δ > 0, is left out: a slightly
//! conservative MDD). Seeded ChaCha8: one seed, one answer.

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::design::{CrossedTable, VarianceComponents, VarianceEstimate, half_width};
use super::percentile;

/// Default number of simulated comparisons.
pub const DEFAULT_SIMULATIONS: usize = 20_000;

/// One task of a design: its components (of the paired differences) and its size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TaskDesign {
    pub components: VarianceComponents,
    pub samples: usize,
    pub instances: usize,
}

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    // Box–Muller; u1 in (0, 1].
    let u1 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Gamma(shape, 1) by Marsaglia and Tsang (shape < 1 through Gamma(shape + 1)·U^(1/shape)).
fn gamma(shape: f64, rng: &mut ChaCha8Rng) -> f64 {
    if shape < 1.0 {
        let u = 1.0 - rng.random::<f64>();
        return gamma(shape + 1.0, rng) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u: f64 = rng.random();
        if u < 1.0 - 0.0331 * x.powi(4) || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
            return d * v;
        }
    }
}

/// A mean square with expectation `expected` on `df` degrees of freedom.
fn mean_square(expected: f64, df: usize, rng: &mut ChaCha8Rng) -> f64 {
    if df == 0 || expected <= 0.0 {
        return 0.0;
    }
    expected * 2.0 * gamma(df as f64 / 2.0, rng) / df as f64
}

/// The minimum detectable difference of `tasks` (fixed strata, averaged) at two-sided
/// `level` with probability `power`, from `sims` simulated comparisons seeded with
/// `seed` (see the module doc). `None` without tasks, with an empty task, a level or
/// power outside (0, 1), or zero simulations.
pub fn detectable_difference(
    tasks: &[TaskDesign],
    level: f64,
    power: f64,
    sims: usize,
    seed: u64,
) -> Option<f64> {
    if tasks.is_empty()
        || sims == 0
        || !(power > 0.0 && power < 1.0)
        || !(level > 0.0 && level < 1.0)
        || tasks.iter().any(|t| t.samples == 0 || t.instances == 0)
    {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let k = 1.0 / (tasks.len() * tasks.len()) as f64;
    let mut x = Vec::with_capacity(sims);
    for _ in 0..sims {
        let mut mean = 0.0;
        let mut var = VarianceEstimate::default();
        for t in tasks {
            let c = &t.components;
            let (m, n) = (t.samples, t.instances);
            let (mf, nf) = (m as f64, n as f64);
            mean += c.variance_of_mean(m, n).sqrt() * normal(&mut rng);
            let table = CrossedTable {
                samples: m,
                instances: n,
                mean: 0.0,
                ms_harness: mean_square(c.residual + nf * c.harness, m - 1, &mut rng),
                ms_instance: mean_square(c.residual + mf * c.instance, n - 1, &mut rng),
                ms_residual: mean_square(c.residual, (m - 1) * (n - 1), &mut rng),
                constant: false,
            };
            var.extend_scaled(&table.variance(), k);
        }
        mean /= tasks.len() as f64;
        // Without a variance to estimate (one sample of one instance) nothing is
        // ever detected.
        let h = half_width(&var, level).unwrap_or(f64::INFINITY);
        x.push(h - mean);
    }
    x.sort_by(f64::total_cmp);
    percentile(&x, power).map(|d| d.max(0.0))
}

/// The smallest size in `2..=max` at which `mdd(size)` is at most `target`, by
/// bisection (the MDD falls as the size grows); `None` when even `max` is not enough.
fn smallest(max: usize, target: f64, mdd: impl Fn(usize) -> Option<f64>) -> Option<usize> {
    if mdd(max)? > target {
        return None;
    }
    let (mut lo, mut hi) = (1usize, max);
    // Invariant: mdd(hi) <= target; lo is too small (or below the range).
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if mdd(mid).is_some_and(|d| d <= target) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// Every task's design changed by `f`.
fn resized(tasks: &[TaskDesign], f: impl Fn(TaskDesign) -> TaskDesign) -> Vec<TaskDesign> {
    tasks.iter().map(|t| f(*t)).collect()
}

/// The fewest instances per task (keeping each task's samples) at which the MDD of
/// `tasks` is at most `target`, searched up to `max`; `None` when `max` does not
/// reach it (the harness term, which more instances do not shrink, may keep the MDD
/// above the target at any size).
pub fn instances_needed(
    tasks: &[TaskDesign],
    target: f64,
    level: f64,
    power: f64,
    sims: usize,
    seed: u64,
    max: usize,
) -> Option<usize> {
    smallest(max, target, |n| {
        let t = resized(tasks, |t| TaskDesign { instances: n, ..t });
        detectable_difference(&t, level, power, sims, seed)
    })
}

/// The fewest harness samples per task (keeping each task's instances) at which the
/// MDD is at most `target`, searched up to `max`; `None` when `max` does not reach it.
pub fn samples_needed(
    tasks: &[TaskDesign],
    target: f64,
    level: f64,
    power: f64,
    sims: usize,
    seed: u64,
    max: usize,
) -> Option<usize> {
    smallest(max, target, |m| {
        let t = resized(tasks, |t| TaskDesign { samples: m, ..t });
        detectable_difference(&t, level, power, sims, seed)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn design(h: f64, i: f64, r: f64, tasks: usize, m: usize, n: usize) -> Vec<TaskDesign> {
        vec![
            TaskDesign {
                components: VarianceComponents {
                    harness: h,
                    instance: i,
                    residual: r,
                },
                samples: m,
                instances: n,
            };
            tasks
        ]
    }

    #[test]
    fn doubling_instances_shrinks_the_mdd_by_about_root_two_when_instances_dominate() {
        // Instance variance dominates: the MDD ∝ 1/√n (t quantiles barely move at
        // these sizes).
        let a = detectable_difference(&design(0.0005, 0.2, 0.01, 3, 5, 50), 0.95, 0.8, 20_000, 1)
            .unwrap();
        let b = detectable_difference(&design(0.0005, 0.2, 0.01, 3, 5, 100), 0.95, 0.8, 20_000, 1)
            .unwrap();
        let ratio = a / b;
        assert!(
            (ratio - std::f64::consts::SQRT_2).abs() < 0.06,
            "{a} {b} {ratio}"
        );
        // The normal-theory value: (z_.975 + z_.8) · se with se² = Σ V_t / T².
        let se = (0.2f64 / 50.0 + 0.0005 / 5.0 + 0.01 / 250.0).sqrt() / 3f64.sqrt();
        let want = (1.959_964 + 0.841_621) * se;
        assert!((a / want - 1.0).abs() < 0.05, "{a} vs {want}");
        // When the harness term dominates, more instances barely help.
        let h1 = detectable_difference(&design(0.05, 0.001, 0.01, 3, 5, 50), 0.95, 0.8, 20_000, 1)
            .unwrap();
        let h2 = detectable_difference(&design(0.05, 0.001, 0.01, 3, 5, 100), 0.95, 0.8, 20_000, 1)
            .unwrap();
        assert!(h1 / h2 < 1.05, "{h1} {h2}");
        // Seeded: the same answer twice.
        assert_eq!(
            detectable_difference(&design(0.01, 0.1, 0.1, 2, 3, 12), 0.95, 0.8, 5_000, 9),
            detectable_difference(&design(0.01, 0.1, 0.1, 2, 3, 12), 0.95, 0.8, 5_000, 9)
        );
    }

    #[test]
    fn the_mdd_is_what_the_simulated_power_says() {
        // At the MDD, a direct simulation of the comparison rejects about `power` of
        // the time: draw the cells of crossed tables with the shift, form the paired
        // interval the evaluator forms, count intervals above 0.
        let tasks = design(0.004, 0.03, 0.05, 2, 3, 16);
        let mdd = detectable_difference(&tasks, 0.95, 0.8, 40_000, 3).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let sims = 3000;
        let mut hits = 0;
        for _ in 0..sims {
            let strata: Vec<Vec<Vec<f64>>> = tasks
                .iter()
                .map(|t| {
                    let c = t.components;
                    let b: Vec<f64> = (0..t.instances)
                        .map(|_| c.instance.sqrt() * normal(&mut rng))
                        .collect();
                    (0..t.samples)
                        .map(|_| {
                            let a = c.harness.sqrt() * normal(&mut rng);
                            b.iter()
                                .map(|bi| mdd + a + bi + c.residual.sqrt() * normal(&mut rng))
                                .collect()
                        })
                        .collect()
                })
                .collect();
            let e = crate::stats::stratified_crossed_estimate(
                &strata,
                crate::stats::Scale::Unbounded,
                0.95,
            )
            .unwrap();
            if e.ci.unwrap().lo > 0.0 {
                hits += 1;
            }
        }
        let p = hits as f64 / sims as f64;
        assert!((p - 0.8).abs() < 0.03, "power at the MDD {mdd}: {p}");
    }

    #[test]
    fn sizes_needed_reach_the_target() {
        let tasks = design(0.002, 0.15, 0.02, 3, 3, 12);
        let now = detectable_difference(&tasks, 0.95, 0.8, 5_000, 2).unwrap();
        let target = now / 2.0;
        let n = instances_needed(&tasks, target, 0.95, 0.8, 5_000, 2, 10_000).unwrap();
        // About four times the instances for half the MDD (instance term dominant).
        assert!((40..=60).contains(&n), "{n}");
        let with_n: Vec<TaskDesign> = tasks
            .iter()
            .map(|t| TaskDesign { instances: n, ..*t })
            .collect();
        assert!(detectable_difference(&with_n, 0.95, 0.8, 5_000, 2).unwrap() <= target);
        // A harness-dominated design cannot reach a tiny target by instances alone,
        // but more samples do.
        let h = design(0.05, 0.001, 0.01, 3, 3, 12);
        assert_eq!(instances_needed(&h, 0.05, 0.95, 0.8, 2_000, 2, 5_000), None);
        let m = samples_needed(&h, 0.15, 0.95, 0.8, 2_000, 2, 1_000).unwrap();
        assert!(m > 3, "{m}");
        assert!(detectable_difference(&[], 0.95, 0.8, 100, 1).is_none());
        assert!(detectable_difference(&tasks, 1.5, 0.8, 100, 1).is_none());
    }
}
