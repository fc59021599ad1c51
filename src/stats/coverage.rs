//! The coverage simulation of the crossed-design intervals ([`super::design`]): 0/1
//! scores with a known truth, the nominal 95 % interval, the share of replicates whose
//! interval covers the truth, per cell of a grid of designs; and the same for the
//! two-stage resampler it replaced, which fails.
//!
//! Model, per task t: `y[m][i] ~ Bernoulli(Φ(μ_t + a_m + b_i))` with `a_m ~ N(0,
//! σ²_h)` per harness sample and `b_i ~ N(0, σ²_i)` per instance, so the truth is
//! `Φ(μ_t / √(1 + σ²_h + σ²_i))`. The identical-harness cell is the memo case: one
//! fixed harness (a = 0), its row copied M times. A paired cell scores two arms on the
//! same instances: `b_i` shared, each arm with its own harness draws and its own
//! instance interaction `u_i ~ N(0, 0.5²)`, arm B shifted by 0.5 on the probit scale;
//! the truth is the difference of the two arms' means.
//!
//! `make test` runs a small grid (1,000 replicates a cell, seconds in release); the
//! full grid (4,000 replicates, n = 6 to 48) is `#[ignore]`d: `cargo test --release
//! --lib stats::coverage -- --ignored --nocapture` prints its table.

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::design::{Scale, paired_crossed_estimate, stratified_crossed_estimate};
use super::{normal_cdf, percentile};

/// How the variance splits.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ratio {
    name: &'static str,
    harness: f64,
    instance: f64,
    /// Every sample has the same harness (rows identical).
    identical: bool,
}

const HARNESS: Ratio = Ratio {
    name: "harness",
    harness: 1.0,
    instance: 0.3,
    identical: false,
};
const BALANCED: Ratio = Ratio {
    name: "balanced",
    harness: 0.6,
    instance: 0.6,
    identical: false,
};
const INSTANCE: Ratio = Ratio {
    name: "instance",
    harness: 0.2,
    instance: 1.2,
    identical: false,
};
const IDENTICAL: Ratio = Ratio {
    name: "identical",
    harness: 0.0,
    instance: 1.0,
    identical: true,
};

/// One cell of the grid.
#[derive(Debug, Clone, Copy)]
struct Cell {
    ratio: Ratio,
    samples: usize,
    instances: usize,
    tasks: usize,
    paired: bool,
    /// Task locations shifted by this much on the probit scale (−1.2: truths near
    /// 0.1, the low scores many real tasks have).
    shift: f64,
}

/// Task locations on the probit scale (truths about 0.2 to 0.6).
fn locations(tasks: usize) -> Vec<f64> {
    match tasks {
        1 => vec![-0.4],
        _ => (0..tasks)
            .map(|t| -1.0 + 1.3 * t as f64 / (tasks - 1) as f64)
            .collect(),
    }
}

const SHIFT: f64 = 0.5;
const INTERACTION: f64 = 0.5;

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn truth(cell: &Cell) -> f64 {
    let r = cell.ratio;
    let mean = |mu: f64, extra: f64| {
        let s = if r.identical {
            0.0
        } else {
            r.harness * r.harness
        };
        normal_cdf(mu / (1.0 + s + r.instance * r.instance + extra).sqrt())
    };
    let mus: Vec<f64> = locations(cell.tasks)
        .into_iter()
        .map(|m| m + cell.shift)
        .collect();
    let per: Vec<f64> = mus
        .iter()
        .map(|&mu| {
            if cell.paired {
                let e = INTERACTION * INTERACTION;
                mean(mu + SHIFT, e) - mean(mu, e)
            } else {
                mean(mu, 0.0)
            }
        })
        .collect();
    per.iter().sum::<f64>() / per.len() as f64
}

/// One arm's table of a task: `rows[sample][instance]`.
fn arm(
    cell: &Cell,
    mu: f64,
    instance: &[f64],
    interaction: Option<&[f64]>,
    rng: &mut ChaCha8Rng,
) -> Vec<Vec<f64>> {
    let r = cell.ratio;
    let row = |a: f64, rng: &mut ChaCha8Rng| -> Vec<f64> {
        instance
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let u = interaction.map_or(0.0, |u| u[i]);
                // P(x + Z > 0) = Φ(x) for a standard normal Z: one draw, no Φ.
                f64::from(mu + a + b + u + normal(rng) > 0.0)
            })
            .collect()
    };
    if r.identical {
        let one = row(0.0, rng);
        vec![one; cell.samples]
    } else {
        (0..cell.samples)
            .map(|_| {
                let a = r.harness * normal(rng);
                row(a, rng)
            })
            .collect()
    }
}

/// One replicate's data: per task, arm A (and arm B when paired).
type Replicate = Vec<(Vec<Vec<f64>>, Option<Vec<Vec<f64>>>)>;

fn replicate(cell: &Cell, rng: &mut ChaCha8Rng) -> Replicate {
    locations(cell.tasks)
        .into_iter()
        .map(|mu| mu + cell.shift)
        .map(|mu| {
            let b: Vec<f64> = (0..cell.instances)
                .map(|_| cell.ratio.instance * normal(rng))
                .collect();
            if cell.paired {
                let ua: Vec<f64> = (0..cell.instances)
                    .map(|_| INTERACTION * normal(rng))
                    .collect();
                let ub: Vec<f64> = (0..cell.instances)
                    .map(|_| INTERACTION * normal(rng))
                    .collect();
                let a = arm(cell, mu, &b, Some(&ua), rng);
                let bb = arm(cell, mu + SHIFT, &b, Some(&ub), rng);
                (a, Some(bb))
            } else {
                (arm(cell, mu, &b, None, rng), None)
            }
        })
        .collect()
}

/// The interval rule under test.
fn rule(data: &Replicate) -> (f64, f64) {
    let a: Vec<Vec<Vec<f64>>> = data.iter().map(|(a, _)| a.clone()).collect();
    let e = match data[0].1 {
        Some(_) => {
            let b: Vec<Vec<Vec<f64>>> = data
                .iter()
                .map(|(_, b)| b.clone().expect("paired"))
                .collect();
            paired_crossed_estimate(&a, &b, 0.95)
        }
        None => stratified_crossed_estimate(&a, Scale::Proportion, 0.95),
    }
    .expect("crossed tables");
    let ci = e.ci.expect("an interval");
    (ci.lo, ci.hi)
}

/// The replaced rule: the two-stage percentile bootstrap (samples with replacement,
/// then instances with replacement independently inside each drawn sample; tasks
/// fixed), `resamples` replicates.
fn nested_bootstrap(data: &Replicate, resamples: usize, rng: &mut ChaCha8Rng) -> (f64, f64) {
    let tables: Vec<Vec<Vec<f64>>> = data
        .iter()
        .map(|(a, b)| match b {
            Some(b) => a
                .iter()
                .zip(b)
                .map(|(x, y)| x.iter().zip(y).map(|(p, q)| q - p).collect())
                .collect(),
            None => a.clone(),
        })
        .collect();
    let mut stats: Vec<f64> = (0..resamples)
        .map(|_| {
            let mut total = 0.0;
            for rows in &tables {
                let m = rows.len();
                let mut s = 0.0;
                for _ in 0..m {
                    let row = &rows[rng.random_range(0..m)];
                    let n = row.len();
                    s += (0..n).map(|_| row[rng.random_range(0..n)]).sum::<f64>() / n as f64;
                }
                total += s / m as f64;
            }
            total / tables.len() as f64
        })
        .collect();
    stats.sort_by(f64::total_cmp);
    (
        percentile(&stats, 0.025).expect("data"),
        percentile(&stats, 0.975).expect("data"),
    )
}

fn seed_of(cell: &Cell) -> u64 {
    let r = match cell.ratio.name {
        "harness" => 1,
        "balanced" => 2,
        "instance" => 3,
        _ => 4,
    };
    ((r * 100 + cell.samples as u64) * 1000 + cell.instances as u64) * 10
        + cell.tasks as u64
        + if cell.paired { 1 << 40 } else { 0 }
        + if cell.shift != 0.0 { 1 << 41 } else { 0 }
}

/// The share of `reps` replicates whose interval (by `rule`) covers the truth.
fn coverage(cell: &Cell, reps: usize, rule: &mut dyn FnMut(&Replicate) -> (f64, f64)) -> f64 {
    let t = truth(cell);
    let mut rng = ChaCha8Rng::seed_from_u64(seed_of(cell));
    let mut hit = 0;
    for _ in 0..reps {
        let data = replicate(cell, &mut rng);
        let (lo, hi) = rule(&data);
        if lo <= t && t <= hi {
            hit += 1;
        }
    }
    hit as f64 / reps as f64
}

fn grid(ms: &[usize], ns: &[usize], ts: &[usize], ratios: &[Ratio], paired: bool) -> Vec<Cell> {
    shifted(ms, ns, ts, ratios, paired, 0.0)
}

fn shifted(
    ms: &[usize],
    ns: &[usize],
    ts: &[usize],
    ratios: &[Ratio],
    paired: bool,
    shift: f64,
) -> Vec<Cell> {
    let mut cells = Vec::new();
    for &ratio in ratios {
        for &samples in ms {
            for &instances in ns {
                for &tasks in ts {
                    cells.push(Cell {
                        ratio,
                        samples,
                        instances,
                        tasks,
                        paired,
                        shift,
                    });
                }
            }
        }
    }
    cells
}

fn name(c: &Cell) -> String {
    format!(
        "{} {} M={} n={} T={}",
        match (c.paired, c.shift != 0.0) {
            (true, _) => "paired",
            (false, true) => "low",
            (false, false) => "mean",
        },
        c.ratio.name,
        c.samples,
        c.instances,
        c.tasks
    )
}

/// Whether the upper bound (97.5 %) is expected of a cell: the rule is deliberately
/// conservative where the harness variance is hard to estimate (M ≤ 5), and at n = 12
/// the coverage of any interval for 0/1 data swings with the truth (12 independent
/// 0/1 scores at p = 0.389: the classic Wilson interval covers 92.8 %, ours 98.5 %;
/// at p = 0.5 both 96.1 %). See the module doc of [`super`].
fn upper_bound_applies(c: &Cell) -> bool {
    if c.ratio.identical {
        // Identical rows are one row whatever M is.
        c.instances >= 24
    } else {
        c.samples >= 10
    }
}

fn check(cells: &[Cell], reps: usize) -> Vec<String> {
    let mut failures = Vec::new();
    for c in cells {
        let cov = coverage(c, reps, &mut rule);
        println!(
            "{:<36} truth {:.3}  coverage {:.1} %",
            name(c),
            truth(c),
            100.0 * cov
        );
        if c.instances >= 12 {
            if cov < 0.93 {
                failures.push(format!("{}: {:.1} % < 93 %", name(c), 100.0 * cov));
            }
            if upper_bound_applies(c) && cov > 0.975 {
                failures.push(format!("{}: {:.1} % > 97.5 %", name(c), 100.0 * cov));
            }
        }
    }
    failures
}

#[test]
fn the_crossed_interval_covers_the_truth() {
    let mut cells = grid(
        &[2, 3, 5, 10],
        &[12, 24],
        &[1, 3],
        &[HARNESS, BALANCED, INSTANCE, IDENTICAL],
        false,
    );
    cells.extend(grid(
        &[2, 5],
        &[12, 24],
        &[1, 3],
        &[HARNESS, INSTANCE],
        true,
    ));
    let failures = check(&cells, 1000);
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn the_old_nested_resampler_fails_the_coverage_test() {
    // The memo case and a crossed table with instance variance: the two-stage
    // bootstrap counts the shared instances once per sample.
    let cells = [
        Cell {
            ratio: IDENTICAL,
            samples: 3,
            instances: 12,
            tasks: 1,
            paired: false,
            shift: 0.0,
        },
        Cell {
            ratio: INSTANCE,
            samples: 5,
            instances: 24,
            tasks: 1,
            paired: false,
            shift: 0.0,
        },
        Cell {
            ratio: IDENTICAL,
            samples: 3,
            instances: 12,
            tasks: 1,
            paired: true,
            shift: 0.0,
        },
    ];
    for c in &cells {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let old = coverage(c, 300, &mut |d| nested_bootstrap(d, 1000, &mut rng));
        let new = coverage(c, 300, &mut rule);
        println!(
            "{}: nested {:.1} %, crossed {:.1} %",
            name(c),
            100.0 * old,
            100.0 * new
        );
        assert!(old < 0.9, "{}: the nested resampler covered {old}", name(c));
        assert!(new >= 0.93, "{}: {new}", name(c));
    }
}

#[test]
#[ignore = "the full grid: about a minute; run by hand for docs/EVAL.md"]
fn full_coverage_grid() {
    let mut cells = grid(
        &[2, 3, 5, 10],
        &[6, 12, 24, 48],
        &[1, 3],
        &[HARNESS, BALANCED, INSTANCE, IDENTICAL],
        false,
    );
    cells.extend(grid(
        &[2, 3, 5, 10],
        &[6, 12, 24, 48],
        &[1, 3],
        &[HARNESS, BALANCED, INSTANCE, IDENTICAL],
        true,
    ));
    // Low truths (about 0.1): reported, not required (see the module doc of super).
    cells.extend(shifted(
        &[2, 3, 5, 10],
        &[12, 24, 48],
        &[1, 3],
        &[HARNESS, BALANCED, INSTANCE, IDENTICAL],
        false,
        -1.2,
    ));
    let failures = check(&cells, 4000);
    for f in &failures {
        println!("outside the band: {f}");
    }
}
