//! Estimates and intervals for the evaluator's designs: harness samples crossed with
//! instances inside each task, tasks as fixed strata. See the module doc of
//! [`super`] for the rule and the simulation that checks it.
//!
//! - [`crossed_table`]: the mean squares of one task's M × n table (rows = harness
//!   samples, columns = the test instances every sample is scored on).
//! - [`crossed_estimate`], [`stratified_crossed_estimate`],
//!   [`paired_crossed_estimate`]: a mean (or the paired difference `b − a`) with its
//!   interval, one task or several.
//! - [`nested_estimate`], [`stratified_nested_estimate`]: groups with units of their
//!   own (candidates of a trajectory, its rounds, one token count per trajectory).
//! - [`crossed_select_estimate`]: best-of-M by another score (a percentile bootstrap
//!   that draws harness samples and one shared draw of the instances).
//! - [`stratified_sign_flip_test`]: the paired permutation test beside the interval.
//! - [`VarianceComponents`]: the harness, instance and residual variances of a table
//!   (what [`super::power`] plans with).

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::dist::student_t_quantile;
use super::{DEFAULT_RESAMPLES, Interval, percentile, wilson};

/// A mean over the evaluator's data with its interval and sizes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HierEstimate {
    pub mean: f64,
    /// `None` when there is no data or nothing to estimate a variance from (a
    /// single value).
    pub ci: Option<Interval>,
    /// Groups (harness samples; summed over strata).
    pub groups: usize,
    /// Units over all groups (cells of the tables: samples × instances; candidates,
    /// rounds).
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

/// What the values are, which decides the interval's form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// Values in [0, 1] (scores, rates): the Wilson-type interval with the design's
    /// effective sample size, so a mean near 0 or 1 gets an asymmetric interval that
    /// stays inside [0, 1].
    Proportion,
    /// Differences of two values in [0, 1]: `mean ± t·se`, clipped to [−1, 1]. When
    /// every difference is +1 (or −1), the interval is `[1 − w, 1]` (`[−1, −1 + w]`)
    /// with `w` the Wilson bound for 0 of n: the share of instances on which one arm
    /// beats the other is n of n, not known exactly.
    Difference,
    /// Anything else (token counts): `mean ± t·se`.
    Unbounded,
}

/// One term of a variance estimate: a multiple of a mean square (negative for a
/// subtracted one) and that mean square's degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Term {
    value: f64,
    df: f64,
}

/// The estimated variance of an estimate as a sum of mean-square terms, with its
/// Satterthwaite degrees of freedom.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VarianceEstimate {
    terms: Vec<Term>,
}

impl VarianceEstimate {
    fn push(&mut self, value: f64, df: f64) {
        if df > 0.0 {
            self.terms.push(Term { value, df });
        }
    }

    /// Add `k` times every term of `other` (strata averaged: k = 1/T²).
    pub fn extend_scaled(&mut self, other: &VarianceEstimate, k: f64) {
        for t in &other.terms {
            self.push(t.value * k, t.df);
        }
    }

    /// The variance (never negative).
    pub fn value(&self) -> f64 {
        self.terms.iter().map(|t| t.value).sum::<f64>().max(0.0)
    }

    /// Satterthwaite's degrees of freedom `(Σ vₖ)² / Σ (vₖ² / dfₖ)` (at least 1;
    /// infinite for a variance estimated as 0); `None` without terms (a single value:
    /// nothing to estimate a variance from).
    pub fn df(&self) -> Option<f64> {
        if self.terms.is_empty() {
            return None;
        }
        let v = self.value();
        let d: f64 = self.terms.iter().map(|t| t.value * t.value / t.df).sum();
        if v <= 0.0 || d <= 0.0 {
            return Some(f64::INFINITY);
        }
        Some((v * v / d).max(1.0))
    }
}

/// The mean squares of a two-way crossed table with one value per cell: M harness
/// samples (rows) × n instances (columns).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CrossedTable {
    pub samples: usize,
    pub instances: usize,
    pub mean: f64,
    /// `n Σ (row mean − mean)² / (M − 1)`; 0 when M = 1.
    pub ms_harness: f64,
    /// `M Σ (column mean − mean)² / (n − 1)`; 0 when n = 1.
    pub ms_instance: f64,
    /// `Σ (y − row mean − column mean + mean)² / ((M − 1)(n − 1))`; 0 when M or n is 1.
    pub ms_residual: f64,
    /// Every cell holds the same value.
    pub constant: bool,
}

/// The mean squares of `rows` (each row one harness sample's values on the same
/// instances, in the same order). `None` without data or when the rows differ in
/// length (not a crossed table).
pub fn crossed_table(rows: &[Vec<f64>]) -> Option<CrossedTable> {
    let m = rows.len();
    let n = rows.first()?.len();
    if n == 0 || rows.iter().any(|r| r.len() != n) {
        return None;
    }
    let mf = m as f64;
    let nf = n as f64;
    let mean = rows.iter().flatten().sum::<f64>() / (mf * nf);
    let row_means: Vec<f64> = rows.iter().map(|r| r.iter().sum::<f64>() / nf).collect();
    let col_means: Vec<f64> = (0..n)
        .map(|i| rows.iter().map(|r| r[i]).sum::<f64>() / mf)
        .collect();
    let ms_harness = if m > 1 {
        nf * row_means.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (mf - 1.0)
    } else {
        0.0
    };
    let ms_instance = if n > 1 {
        mf * col_means.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (nf - 1.0)
    } else {
        0.0
    };
    let ms_residual = if m > 1 && n > 1 {
        let mut ss = 0.0;
        for (r, rm) in rows.iter().zip(&row_means) {
            for (y, cm) in r.iter().zip(&col_means) {
                ss += (y - rm - cm + mean).powi(2);
            }
        }
        ss / ((mf - 1.0) * (nf - 1.0))
    } else {
        0.0
    };
    let first = rows[0][0];
    Some(CrossedTable {
        samples: m,
        instances: n,
        mean,
        ms_harness,
        ms_instance,
        ms_residual,
        constant: rows.iter().flatten().all(|&y| y == first),
    })
}

impl CrossedTable {
    /// The variance of the table's mean:
    /// `(max(MS_harness, MS_residual) + max(MS_instance, MS_residual) − MS_residual) / (M n)`.
    ///
    /// Its expectation is `σ²_harness/M + σ²_instance/n + σ²_residual/(M n)` whenever
    /// each main effect is at least as large as the residual noise makes it look.
    /// The floors keep a factor's term from vanishing when two or three harness
    /// samples (or the instances) happen to agree, and keep that factor's few degrees
    /// of freedom in the Satterthwaite count, so the t quantile stays wide when the
    /// data cannot tell a small harness variance from none; they also keep the
    /// estimate at least `MS_residual/(M n)`, a part of every cell mean's variance.
    /// Never negative. M identical rows give the variance of one row (`s²/n`, the
    /// instance-only variance); one column gives `s²/M` over the rows (the
    /// harness-only variance).
    pub fn variance(&self) -> VarianceEstimate {
        let k = 1.0 / (self.samples * self.instances) as f64;
        let df_h = (self.samples - 1) as f64;
        let df_i = (self.instances - 1) as f64;
        let mut v = VarianceEstimate::default();
        v.push(k * self.ms_harness.max(self.ms_residual), df_h);
        v.push(k * self.ms_instance.max(self.ms_residual), df_i);
        v.push(-k * self.ms_residual, df_h * df_i);
        v
    }

    /// The moment estimates of the variance components (each at least 0). With one
    /// harness sample the residual cannot be told from the instance component (both
    /// are counted as instance variance) and the harness component is unknown (0);
    /// with one instance the residual is counted as harness variance.
    pub fn components(&self) -> VarianceComponents {
        let (m, n) = (self.samples as f64, self.instances as f64);
        match (self.samples > 1, self.instances > 1) {
            (true, true) => VarianceComponents {
                harness: ((self.ms_harness - self.ms_residual) / n).max(0.0),
                instance: ((self.ms_instance - self.ms_residual) / m).max(0.0),
                residual: self.ms_residual,
            },
            (false, true) => VarianceComponents {
                harness: 0.0,
                instance: self.ms_instance,
                residual: 0.0,
            },
            (true, false) => VarianceComponents {
                harness: self.ms_harness,
                instance: 0.0,
                residual: 0.0,
            },
            (false, false) => VarianceComponents::default(),
        }
    }
}

/// The variance components of a crossed table: one harness sample's mean effect
/// (`harness`), one instance's (`instance`), and what is left of a cell
/// (`residual`, the harness × instance interaction). The variance of a task's mean
/// over M samples and n instances is `harness/M + instance/n + residual/(M n)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct VarianceComponents {
    pub harness: f64,
    pub instance: f64,
    pub residual: f64,
}

impl VarianceComponents {
    /// The variance of one task's mean over `samples` × `instances`.
    pub fn variance_of_mean(&self, samples: usize, instances: usize) -> f64 {
        let (m, n) = (samples.max(1) as f64, instances.max(1) as f64);
        self.harness / m + self.instance / n + self.residual / (m * n)
    }

    /// The mean of several tasks' components.
    pub fn average(all: &[VarianceComponents]) -> VarianceComponents {
        let k = all.len().max(1) as f64;
        VarianceComponents {
            harness: all.iter().map(|c| c.harness).sum::<f64>() / k,
            instance: all.iter().map(|c| c.instance).sum::<f64>() / k,
            residual: all.iter().map(|c| c.residual).sum::<f64>() / k,
        }
    }
}

fn valid_level(level: f64) -> bool {
    level > 0.0 && level < 1.0
}

/// The variance a stratum whose every value sits at a bound (0 or 1 for proportions,
/// ±1 for differences) contributes when it is averaged with others: the squared
/// distance from its mean to the far end of the Wilson interval of 0 of `units` (n of
/// n), in standard errors, with `units − 1` degrees of freedom. Such a stratum
/// carries no estimate of its own variance, and 0 would claim it is known exactly.
fn boundary_variance(units: usize, level: f64) -> VarianceEstimate {
    let mut v = VarianceEstimate::default();
    if let (Some(w), Some(z)) = (
        wilson(0, units as u64, level),
        super::normal_quantile(1.0 - (1.0 - level) / 2.0),
    ) {
        v.push((w.hi / z).powi(2), units.saturating_sub(1).max(1) as f64);
    }
    v
}

/// The interval of a mean with an estimated variance, by scale. `units` is the count
/// the Wilson interval uses when every value sits at a bound (the instances of the
/// estimate, not the cells: M identical harness samples are one sample).
fn interval(
    mean: f64,
    var: &VarianceEstimate,
    scale: Scale,
    units: usize,
    level: f64,
) -> Option<Interval> {
    if !valid_level(level) {
        return None;
    }
    if scale.at_bound(mean) {
        // Every value at the same bound: the Wilson interval of 0 of n (n of n).
        let w = wilson(0, units as u64, level)?.hi;
        let (lo, hi) = scale.bounds()?;
        return Some(if mean >= hi {
            Interval {
                lo: hi - w,
                hi,
                level,
            }
        } else {
            Interval {
                lo,
                hi: lo + w,
                level,
            }
        });
    }
    let v = var.value();
    let df = var.df()?;
    if v <= 0.0 {
        return Some(Interval {
            lo: mean,
            hi: mean,
            level,
        });
    }
    let q = student_t_quantile(1.0 - (1.0 - level) / 2.0, df)?;
    match scale {
        Scale::Proportion => {
            // Wilson's score interval with the effective sample size p(1 − p)/v and
            // the t quantile of the variance's degrees of freedom.
            let n = mean * (1.0 - mean) / v;
            let q2 = q * q;
            let denom = 1.0 + q2 / n;
            let centre = (mean + q2 / (2.0 * n)) / denom;
            let half = q * (mean * (1.0 - mean) / n + q2 / (4.0 * n * n)).sqrt() / denom;
            Some(Interval {
                lo: (centre - half).max(0.0),
                hi: (centre + half).min(1.0),
                level,
            })
        }
        Scale::Difference => Some(Interval {
            lo: (mean - q * v.sqrt()).max(-1.0),
            hi: (mean + q * v.sqrt()).min(1.0),
            level,
        }),
        Scale::Unbounded => Some(Interval {
            lo: mean - q * v.sqrt(),
            hi: mean + q * v.sqrt(),
            level,
        }),
    }
}

/// The half-width `t·se` of the [`Scale::Difference`] interval of this variance
/// (unclipped); `None` when there is nothing to estimate from or the level is invalid.
pub fn half_width(var: &VarianceEstimate, level: f64) -> Option<f64> {
    if !valid_level(level) {
        return None;
    }
    let q = student_t_quantile(1.0 - (1.0 - level) / 2.0, var.df()?)?;
    Some(q * var.value().sqrt())
}

impl Scale {
    /// The bounds the values lie within (`None`: unbounded).
    fn bounds(self) -> Option<(f64, f64)> {
        match self {
            Scale::Proportion => Some((0.0, 1.0)),
            Scale::Difference => Some((-1.0, 1.0)),
            Scale::Unbounded => None,
        }
    }

    /// Whether `x` sits at one of the bounds.
    fn at_bound(self, x: f64) -> bool {
        self.bounds().is_some_and(|(lo, hi)| x <= lo || x >= hi)
    }
}

/// One stratum's contribution: its mean, variance, groups, cells and the unit count
/// a boundary proportion uses.
struct Part {
    mean: f64,
    var: VarianceEstimate,
    groups: usize,
    cells: usize,
    units: usize,
}

fn combine(parts: &[Part], scale: Scale, level: f64) -> HierEstimate {
    if parts.is_empty() {
        return HierEstimate::empty();
    }
    let t = parts.len() as f64;
    let mean = parts.iter().map(|p| p.mean).sum::<f64>() / t;
    let mut var = VarianceEstimate::default();
    for p in parts {
        var.extend_scaled(&p.var, 1.0 / (t * t));
    }
    let units = parts.iter().map(|p| p.units).sum();
    HierEstimate {
        mean,
        ci: interval(mean, &var, scale, units, level),
        groups: parts.iter().map(|p| p.groups).sum(),
        n: parts.iter().map(|p| p.cells).sum(),
    }
}

fn crossed_part(rows: &[Vec<f64>], scale: Scale, level: f64, alone: bool) -> Option<Part> {
    let t = crossed_table(rows)?;
    let var = if t.constant && scale.at_bound(t.mean) && !alone {
        boundary_variance(t.instances, level)
    } else {
        t.variance()
    };
    Some(Part {
        mean: t.mean,
        var,
        groups: t.samples,
        cells: t.samples * t.instances,
        units: t.instances,
    })
}

/// One task's crossed table (`rows[sample][instance]`): the mean of every cell with
/// the interval of [`CrossedTable::variance`] (see the module doc of [`super`]).
/// `None` when the rows differ in length; no rows or no instances give
/// [`HierEstimate::empty`].
pub fn crossed_estimate(rows: &[Vec<f64>], scale: Scale, level: f64) -> Option<HierEstimate> {
    if rows.first().is_none_or(|r| r.is_empty()) {
        return Some(HierEstimate::empty());
    }
    let p = crossed_part(rows, scale, level, true)?;
    Some(combine(&[p], scale, level))
}

/// Several tasks, each a crossed table (`strata[task][sample][instance]`), as fixed
/// strata: the mean over the tasks that have data of each task's mean; the variance
/// is the sum of the tasks' variances over T² and its degrees of freedom come from
/// all their mean squares at once (Satterthwaite). `None` when a task's rows differ in
/// length.
pub fn stratified_crossed_estimate(
    strata: &[Vec<Vec<f64>>],
    scale: Scale,
    level: f64,
) -> Option<HierEstimate> {
    let with_data: Vec<&Vec<Vec<f64>>> = strata
        .iter()
        .filter(|rows| rows.first().is_some_and(|r| !r.is_empty()))
        .collect();
    let alone = with_data.len() == 1;
    let parts: Vec<Part> = with_data
        .into_iter()
        .map(|rows| crossed_part(rows, scale, level, alone))
        .collect::<Option<_>>()?;
    Some(combine(&parts, scale, level))
}

/// The mean over fixed strata (`[task][sample][instance]`) and its variance estimate,
/// as [`stratified_crossed_estimate`] forms them on the [`Scale::Difference`] or
/// [`Scale::Unbounded`] scale (for reporting the standard error and degrees of
/// freedom beside an interval). `None` without data or when a table is ragged.
pub fn stratified_crossed_variance(strata: &[Vec<Vec<f64>>]) -> Option<(f64, VarianceEstimate)> {
    let parts: Vec<Part> = strata
        .iter()
        .filter(|rows| rows.first().is_some_and(|r| !r.is_empty()))
        .map(|rows| crossed_part(rows, Scale::Unbounded, 0.95, false))
        .collect::<Option<_>>()?;
    if parts.is_empty() {
        return None;
    }
    let t = parts.len() as f64;
    let mut var = VarianceEstimate::default();
    for p in &parts {
        var.extend_scaled(&p.var, 1.0 / (t * t));
    }
    Some((parts.iter().map(|p| p.mean).sum::<f64>() / t, var))
}

/// Cell-by-cell differences `b − a` of two tables measured on identical samples and
/// instances. `None` when the shapes differ: a paired comparison of different
/// instances is meaningless.
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

/// The paired difference `mean(b) − mean(a)` over tasks (`[task][sample][instance]`,
/// identical shapes): the [`stratified_crossed_estimate`] of the cell-by-cell
/// differences on the [`Scale::Difference`] scale. Both arms share the instance
/// effect of every column and the pairing of samples, so the same instance draw
/// enters both. `None` when any shape differs.
pub fn paired_crossed_estimate(
    a: &[Vec<Vec<f64>>],
    b: &[Vec<Vec<f64>>],
    level: f64,
) -> Option<HierEstimate> {
    if a.len() != b.len() {
        return None;
    }
    let d: Vec<Vec<Vec<f64>>> = a
        .iter()
        .zip(b)
        .map(|(x, y)| paired_differences(x, y))
        .collect::<Option<_>>()?;
    stratified_crossed_estimate(&d, Scale::Difference, level)
}

/// The mean of the group means over the groups that have units; `None` when none has.
pub fn mean_of_means(groups: &[Vec<f64>]) -> Option<f64> {
    let g: Vec<&Vec<f64>> = groups.iter().filter(|g| !g.is_empty()).collect();
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

fn nested_part(groups: &[Vec<f64>], scale: Scale, level: f64, alone: bool) -> Option<Part> {
    let g: Vec<&Vec<f64>> = groups.iter().filter(|g| !g.is_empty()).collect();
    let mean = mean_of_means(groups)?;
    let units: usize = g.iter().map(|x| x.len()).sum();
    let means: Vec<f64> = g
        .iter()
        .map(|x| x.iter().sum::<f64>() / x.len() as f64)
        .collect();
    let mut within_ss = 0.0;
    let mut within_df = 0usize;
    for (x, gm) in g.iter().zip(&means) {
        within_ss += x.iter().map(|y| (y - gm).powi(2)).sum::<f64>();
        within_df += x.len() - 1;
    }
    let within = if within_df > 0 {
        within_ss / within_df as f64
    } else {
        0.0
    };
    let m = g.len();
    let constant = g.iter().flat_map(|x| x.iter()).all(|&y| y == g[0][0]);
    let mut var = VarianceEstimate::default();
    if constant && scale.at_bound(mean) && !alone {
        var = boundary_variance(units, level);
    } else if m > 1 {
        // Between-group variance of the means (the harness sample is the unit),
        // floored at what within-group noise alone gives a group mean.
        let between = means.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (m - 1) as f64;
        let floor = g.iter().map(|x| within / x.len() as f64).sum::<f64>() / m as f64;
        var.push(between.max(floor) / m as f64, (m - 1) as f64);
    } else if within_df > 0 {
        // One group: its units only (conditional on that harness sample).
        var.push(within / units as f64, within_df as f64);
    }
    Some(Part {
        mean,
        var,
        groups: m,
        cells: units,
        units,
    })
}

/// Groups with units of their own (`groups[sample][unit]`, sizes may differ; empty
/// groups left out): the mean of the group means with the harness-sample
/// ("ultimate cluster") variance `s²(group means)/M` on M − 1 degrees of freedom,
/// floored at the within-group noise of a group mean. One group: its units' variance
/// over their count (the harness sample taken as given).
pub fn nested_estimate(groups: &[Vec<f64>], scale: Scale, level: f64) -> HierEstimate {
    match nested_part(groups, scale, level, true) {
        Some(p) => combine(&[p], scale, level),
        None => HierEstimate::empty(),
    }
}

/// [`nested_estimate`] over fixed strata (`strata[task][sample][unit]`): the mean of
/// the strata means, the variances summed over T².
pub fn stratified_nested_estimate(
    strata: &[Vec<Vec<f64>>],
    scale: Scale,
    level: f64,
) -> HierEstimate {
    let with_data: Vec<&Vec<Vec<f64>>> = strata
        .iter()
        .filter(|g| g.iter().any(|x| !x.is_empty()))
        .collect();
    let alone = with_data.len() == 1;
    let parts: Vec<Part> = with_data
        .into_iter()
        .filter_map(|g| nested_part(g, scale, level, alone))
        .collect();
    combine(&parts, scale, level)
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

/// The resampled statistics behind [`crossed_select_estimate`].
fn select_stats(select: &[f64], rows: &[Vec<f64>], resamples: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let m = select.len();
    let n = rows[0].len();
    (0..resamples)
        .map(|_| {
            let mut drawn: Vec<usize> = (0..m).map(|_| rng.random_range(0..m)).collect();
            // Ties go to the lowest index, as for the point estimate.
            drawn.sort_unstable();
            let r = &rows[best_group(select, drawn.into_iter())];
            // One draw of the instances, shared by every sample of the replicate.
            (0..n).map(|_| r[rng.random_range(0..n)]).sum::<f64>() / n as f64
        })
        .collect()
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

/// A statistic that chooses one harness sample: `select[m]` scores each sample (e.g.
/// its dev score) and `rows[m]` holds its values on the shared instances (e.g. test
/// scores). The estimate is the mean of the row with the highest `select` (ties: the
/// first). The interval is a percentile bootstrap of the crossed design: each
/// replicate draws M samples with replacement, picks the best drawn one by
/// `select`, and draws the instances once (with replacement). A selection is not a
/// mean, so [`crossed_estimate`]'s rule does not apply; with M = 2 or 3 the sample
/// draw is coarse and the interval is a description, not a calibrated one. `None`
/// without samples, on a length mismatch, or rows of different or zero length.
pub fn crossed_select_estimate(
    select: &[f64],
    rows: &[Vec<f64>],
    level: f64,
    seed: u64,
) -> Option<HierEstimate> {
    let n = rows.first()?.len();
    if select.len() != rows.len() || n == 0 || rows.iter().any(|r| r.len() != n) {
        return None;
    }
    let chosen = best_group(select, 0..select.len());
    let v = &rows[chosen];
    let mean = v.iter().sum::<f64>() / n as f64;
    let ci = if valid_level(level) {
        percentile_interval(select_stats(select, rows, DEFAULT_RESAMPLES, seed), level)
    } else {
        None
    };
    Some(HierEstimate {
        mean,
        ci,
        groups: rows.len(),
        n: rows.len() * n,
    })
}

/// What a sign-flip test exchanges between the two sides of a paired comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlipUnit {
    /// Whole groups (harness samples): the two sides' trajectories of one sample are
    /// swapped or not. The harness sample is the exchangeable unit, so the p-value
    /// accounts for harness-to-harness variation (given the instances).
    Groups,
    /// Single units (instances) within groups: conditional on the harnesses drawn, it
    /// measures instance noise only (more power, narrower claim).
    Units,
}

/// The result of a paired sign-flip (permutation) test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SignFlipTest {
    pub unit: FlipUnit,
    /// The observed statistic: the mean over strata of the mean over groups of the
    /// group's mean of `b − a`.
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
/// differences `diffs[stratum][group][unit]` (`b − a`), for the statistic of
/// [`paired_crossed_estimate`] (with equal group sizes; the mean over strata of the
/// mean over groups of the group's mean difference). Under the null hypothesis the
/// two sides of each exchangeable unit ([`FlipUnit`]) are exchangeable, so each
/// unit's contribution keeps or flips its sign with probability 1/2. Every pattern is
/// enumerated when at most `max_exact` units have a non-zero difference, else
/// `resamples` patterns are drawn (ChaCha8 seeded with `seed`). `None` without data.
pub fn stratified_sign_flip_test(
    diffs: &[Vec<Vec<f64>>],
    unit: FlipUnit,
    max_exact: usize,
    resamples: usize,
    seed: u64,
) -> Option<SignFlipTest> {
    let strata: Vec<Vec<&[f64]>> = diffs
        .iter()
        .map(|g| {
            g.iter()
                .filter(|x| !x.is_empty())
                .map(Vec::as_slice)
                .collect::<Vec<_>>()
        })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{DEFAULT_RESAMPLES, student_t_quantile};

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    fn moments(xs: &[f64]) -> (f64, f64) {
        let m = xs.iter().sum::<f64>() / xs.len() as f64;
        let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / xs.len() as f64;
        (m, v)
    }

    #[test]
    fn crossed_mean_squares_by_hand() {
        // Rows 1 0 1 / 0 0 1: mean 1/2, row means 2/3 1/3, column means 1/2 0 1.
        // MS_h = 3 (2 (1/6)²) / 1 = 1/6; MS_i = 2 (0 + 1/4 + 1/4) / 2 = 1/2;
        // residuals ±1/3, ∓1/6, ∓1/6: SS 1/3 on 2 df, MS_e = 1/6.
        let rows = vec![vec![1.0, 0.0, 1.0], vec![0.0, 0.0, 1.0]];
        let t = crossed_table(&rows).unwrap();
        assert!(close(t.mean, 0.5, 1e-15));
        assert!(close(t.ms_harness, 1.0 / 6.0, 1e-15), "{t:?}");
        assert!(close(t.ms_instance, 0.5, 1e-15), "{t:?}");
        assert!(close(t.ms_residual, 1.0 / 6.0, 1e-15), "{t:?}");
        // Variance (max(1/6, 1/6) + 1/2 − 1/6) / 6 = 1/12; Satterthwaite df
        // (1/12)² / ((1/36)²/1 + (1/12)²/2 + (1/36)²/2) = 1.5.
        let v = t.variance();
        assert!(close(v.value(), 1.0 / 12.0, 1e-15));
        assert!(close(v.df().unwrap(), 1.5, 1e-12), "{v:?}");
        let c = t.components();
        assert!(close(c.harness, 0.0, 1e-15) && close(c.instance, 1.0 / 6.0, 1e-15));
        assert!(close(c.residual, 1.0 / 6.0, 1e-15));
        assert!(close(
            c.variance_of_mean(2, 3),
            1.0 / 18.0 + 1.0 / 36.0,
            1e-15
        ));
        // The difference-scale interval is mean ± t(0.975, 1.5)·√(1/12).
        let e = crossed_estimate(&rows, Scale::Unbounded, 0.95).unwrap();
        let half = student_t_quantile(0.975, 1.5).unwrap() * (1.0f64 / 12.0).sqrt();
        let ci = e.ci.unwrap();
        assert!(close(ci.lo, 0.5 - half, 1e-12) && close(ci.hi, 0.5 + half, 1e-12));
        assert_eq!((e.groups, e.n), (2, 6));
        // Rows of different lengths are not a crossed table; no rows is no data.
        assert!(crossed_table(&[vec![1.0], vec![1.0, 0.0]]).is_none());
        assert!(crossed_estimate(&[vec![1.0], vec![]], Scale::Proportion, 0.95).is_none());
        assert_eq!(
            crossed_estimate(&[], Scale::Proportion, 0.95),
            Some(HierEstimate::empty())
        );
    }

    #[test]
    fn identical_samples_give_the_instance_only_interval() {
        // The memo case: M samples with the same harness return the same row.
        let row = vec![1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0];
        let one = crossed_estimate(std::slice::from_ref(&row), Scale::Proportion, 0.95).unwrap();
        for m in [2, 3, 10] {
            let rows = vec![row.clone(); m];
            let e = crossed_estimate(&rows, Scale::Proportion, 0.95).unwrap();
            let (a, b) = (e.ci.unwrap(), one.ci.unwrap());
            assert!(
                close(a.lo, b.lo, 1e-12) && close(a.hi, b.hi, 1e-12),
                "{m}: {a:?} {b:?}"
            );
            assert_eq!(e.mean, one.mean);
        }
        // The instance-only interval by hand: p = 3/12, s² = (12/11) p (1 − p), var
        // s²/12 on 11 df; Wilson with n_eff = p(1 − p)/var = 11 and q = t(0.975, 11).
        let p = 0.25;
        let n = 11.0;
        let q = student_t_quantile(0.975, 11.0).unwrap();
        let denom = 1.0 + q * q / n;
        let centre = (p + q * q / (2.0 * n)) / denom;
        let half = q * (p * (1.0 - p) / n + q * q / (4.0 * n * n)).sqrt() / denom;
        let ci = one.ci.unwrap();
        assert!(
            close(ci.lo, centre - half, 1e-12) && close(ci.hi, centre + half, 1e-12),
            "{ci:?}"
        );
        // On the difference scale it is the t interval of the row.
        let d = crossed_estimate(&vec![row.clone(); 3], Scale::Difference, 0.95).unwrap();
        let s = (12.0f64 / 11.0 * p * (1.0 - p) / 12.0).sqrt();
        let ci = d.ci.unwrap();
        assert!(
            close(ci.lo, p - q * s, 1e-12) && close(ci.hi, p + q * s, 1e-12),
            "{ci:?}"
        );
        // All zero: the Wilson interval of 0 of 12 instances, however many samples.
        let zero = crossed_estimate(&vec![vec![0.0; 12]; 3], Scale::Proportion, 0.95).unwrap();
        assert_eq!(zero.ci, crate::stats::wilson(0, 12, 0.95));
        let all = crossed_estimate(&vec![vec![1.0; 12]; 2], Scale::Proportion, 0.95).unwrap();
        assert_eq!(all.ci, crate::stats::wilson(12, 12, 0.95));
    }

    #[test]
    fn one_instance_gives_the_harness_only_interval() {
        // M samples of one instance: the interval of the M values (M − 1 df), the
        // same as M groups of one unit each.
        let values = [1.0, 0.0, 1.0, 1.0, 0.0];
        let rows: Vec<Vec<f64>> = values.iter().map(|&x| vec![x]).collect();
        for scale in [Scale::Proportion, Scale::Difference, Scale::Unbounded] {
            let crossed = crossed_estimate(&rows, scale, 0.95).unwrap();
            let nested = nested_estimate(&rows, scale, 0.95);
            assert_eq!(crossed.mean, nested.mean);
            let (a, b) = (crossed.ci.unwrap(), nested.ci.unwrap());
            assert!(
                close(a.lo, b.lo, 1e-12) && close(a.hi, b.hi, 1e-12),
                "{a:?} {b:?}"
            );
        }
        // By hand on the unbounded scale: mean 0.6, s² = 0.3, var 0.06 on 4 df.
        let e = crossed_estimate(&rows, Scale::Unbounded, 0.95).unwrap();
        let half = student_t_quantile(0.975, 4.0).unwrap() * 0.06f64.sqrt();
        let ci = e.ci.unwrap();
        assert!(close(ci.lo, 0.6 - half, 1e-12) && close(ci.hi, 0.6 + half, 1e-12));
        // One cell: nothing to estimate a variance from.
        assert_eq!(
            crossed_estimate(&[vec![0.5]], Scale::Unbounded, 0.95)
                .unwrap()
                .ci,
            None
        );
    }

    #[test]
    fn the_floors_keep_two_agreeing_samples_honest() {
        // Two samples with the same mean on different instances, every instance mean
        // 1/2: MS_h = MS_i = 0, MS_e = 4/7. Unfloored, the variance would be
        // (0 + 0 − 4/7)/16 < 0. Floored, it is (4/7 + 4/7 − 4/7)/16 and the
        // harness term's single degree of freedom keeps the t quantile at t(1).
        let rows = vec![
            vec![1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0],
            vec![0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0],
        ];
        let t = crossed_table(&rows).unwrap();
        assert_eq!((t.ms_harness, t.ms_instance), (0.0, 0.0));
        assert!(close(t.ms_residual, 4.0 / 7.0, 1e-15));
        let v = t.variance();
        assert!(close(v.value(), 4.0 / 7.0 / 16.0, 1e-15));
        assert_eq!(v.df(), Some(1.0));
        let e = crossed_estimate(&rows, Scale::Difference, 0.95).unwrap();
        let ci = e.ci.unwrap();
        assert_eq!((ci.lo, ci.hi), (-1.0, 1.0));
    }

    #[test]
    fn strata_are_fixed_and_averaged() {
        let a = vec![vec![1.0, 0.0, 1.0], vec![0.0, 0.0, 1.0]];
        let b = vec![
            vec![1.0, 1.0, 0.0, 1.0],
            vec![0.0, 1.0, 1.0, 1.0],
            vec![1.0, 1.0, 0.0, 0.0],
        ];
        let ta = crossed_table(&a).unwrap();
        let tb = crossed_table(&b).unwrap();
        let e =
            stratified_crossed_estimate(&[a.clone(), b.clone()], Scale::Unbounded, 0.95).unwrap();
        assert!(close(e.mean, (ta.mean + tb.mean) / 2.0, 1e-15));
        assert_eq!((e.groups, e.n), (5, 18));
        // Variance (var_a + var_b) / 4 with the df of all six mean squares.
        let mut v = VarianceEstimate::default();
        v.extend_scaled(&ta.variance(), 0.25);
        v.extend_scaled(&tb.variance(), 0.25);
        let half = student_t_quantile(0.975, v.df().unwrap()).unwrap() * v.value().sqrt();
        let ci = e.ci.unwrap();
        assert!(close(ci.hi - ci.lo, 2.0 * half, 1e-12), "{ci:?}");
        assert!(close(
            v.value(),
            (ta.variance().value() + tb.variance().value()) / 4.0,
            1e-15
        ));
        // A task without data is left out; one task alone is its own estimate.
        let with_empty = vec![a.clone(), Vec::new()];
        assert_eq!(
            stratified_crossed_estimate(&with_empty, Scale::Proportion, 0.95),
            crossed_estimate(&a, Scale::Proportion, 0.95)
        );
        // An all-zero task next to another contributes its Wilson variance, so the
        // average is not claimed exact.
        let zeros = vec![vec![0.0; 12]; 2];
        let ones = vec![vec![1.0; 12]; 2];
        let mixed = stratified_crossed_estimate(&[zeros, ones], Scale::Proportion, 0.95).unwrap();
        let ci = mixed.ci.unwrap();
        assert_eq!(mixed.mean, 0.5);
        assert!(ci.lo < 0.45 && ci.hi > 0.55, "{ci:?}");
    }

    #[test]
    fn paired_differences_cancel_shared_difficulty() {
        let a = vec![vec![vec![0.0, 1.0, 1.0, 0.0], vec![1.0, 1.0, 0.0, 0.0]]];
        let b: Vec<Vec<Vec<f64>>> = a
            .iter()
            .map(|t| {
                t.iter()
                    .map(|g| g.iter().map(|x| x + 0.25).collect())
                    .collect()
            })
            .collect();
        let e = paired_crossed_estimate(&a, &b, 0.95).unwrap();
        assert!(close(e.mean, 0.25, 1e-15));
        let ci = e.ci.unwrap();
        assert!(
            close(ci.lo, 0.25, 1e-15) && close(ci.hi, 0.25, 1e-15),
            "{ci:?}"
        );
        // Unpaired, each side alone has a wide interval.
        let wa = crossed_estimate(&a[0], Scale::Proportion, 0.95)
            .unwrap()
            .ci
            .unwrap();
        assert!(wa.hi - wa.lo > 0.3, "{wa:?}");
        // Every difference −1 (an oracle against an empty answer on 4 instances): the
        // share of instances B loses is 4 of 4, whose Wilson bound is w = z²/(4 + z²).
        let ones = vec![vec![vec![1.0; 4]; 2]];
        let zeros = vec![vec![vec![0.0; 4]; 2]];
        let worse = paired_crossed_estimate(&ones, &zeros, 0.95).unwrap();
        let w = crate::stats::wilson(0, 4, 0.95).unwrap().hi;
        assert_eq!(worse.mean, -1.0);
        assert_eq!(worse.ci.map(|c| (c.lo, c.hi)), Some((-1.0, -1.0 + w)));
        // Identical arms: exactly 0 with a zero-width interval.
        let z = paired_crossed_estimate(&a, &a, 0.95).unwrap();
        assert_eq!(
            (z.mean, z.ci.unwrap().lo, z.ci.unwrap().hi),
            (0.0, 0.0, 0.0)
        );
        // b − a by hand.
        let d = paired_differences(&[vec![1.0, 0.0]], &[vec![0.0, 0.0]]).unwrap();
        assert_eq!(d, vec![vec![-1.0, 0.0]]);
        // Different shapes are not comparable.
        assert!(paired_differences(&a[0], &a[0][..1]).is_none());
        assert!(paired_crossed_estimate(&a, &[], 0.95).is_none());
        let mut c = b.clone();
        c[0][1].pop();
        assert!(paired_crossed_estimate(&a, &c, 0.95).is_none());
    }

    #[test]
    fn nested_groups_by_hand() {
        // Groups 0,0,0,1 / 1,1,0,1,1,1 / 0,1: means 1/4, 5/6, 1/2 (mean 19/36);
        // between-group variance 0.171296/2 = 0.085648; within SS 0.75 + 0.8333 + 0.5
        // on 9 df = 0.231481, its share of a group mean (0.231481/4 + /6 + /2)/3 =
        // 0.070730 < 0.085648, so var = 0.085648/3 on 2 df.
        let g = vec![
            vec![0.0, 0.0, 0.0, 1.0],
            vec![1.0, 1.0, 0.0, 1.0, 1.0, 1.0],
            vec![0.0, 1.0],
            Vec::new(),
        ];
        let e = nested_estimate(&g, Scale::Unbounded, 0.95);
        assert!(close(e.mean, 19.0 / 36.0, 1e-15));
        assert_eq!((e.groups, e.n), (3, 12));
        let between = ((0.25f64 - 19.0 / 36.0).powi(2)
            + (5.0f64 / 6.0 - 19.0 / 36.0).powi(2)
            + (0.5f64 - 19.0 / 36.0).powi(2))
            / 2.0;
        let half = student_t_quantile(0.975, 2.0).unwrap() * (between / 3.0).sqrt();
        let ci = e.ci.unwrap();
        assert!(close(ci.lo, 19.0 / 36.0 - half, 1e-12), "{ci:?}");
        // Equal group means but noisy units: the floor (within noise) applies.
        let f = vec![vec![0.0, 1.0], vec![1.0, 0.0]];
        let e = nested_estimate(&f, Scale::Unbounded, 0.95);
        // within = 0.5 on 2 df; floor 0.25 per group mean; var 0.25/2 on 1 df.
        let half = student_t_quantile(0.975, 1.0).unwrap() * 0.125f64.sqrt();
        let ci = e.ci.unwrap();
        assert!(close(ci.hi, 0.5 + half, 1e-12), "{ci:?}");
        // One group: its units (4 values, 3 df).
        let one = nested_estimate(&[vec![1.0, 2.0, 3.0, 4.0]], Scale::Unbounded, 0.95);
        let half = student_t_quantile(0.975, 3.0).unwrap() * (5.0f64 / 3.0 / 4.0).sqrt();
        assert!(close(one.ci.unwrap().hi, 2.5 + half, 1e-12));
        // One value: no interval. Nothing: empty.
        assert_eq!(
            nested_estimate(&[vec![7.0]], Scale::Unbounded, 0.95).ci,
            None
        );
        assert_eq!(
            nested_estimate(&[], Scale::Unbounded, 0.95),
            HierEstimate::empty()
        );
        // Strata average the means and add the variances over T².
        let s = stratified_nested_estimate(&[g.clone(), f.clone()], Scale::Unbounded, 0.95);
        assert!(close(s.mean, (19.0 / 36.0 + 0.5) / 2.0, 1e-15));
    }

    #[test]
    fn best_of_samples_selected_by_another_score() {
        // Select scores 0.2, 0.9, 0.9: the point estimate takes sample 1 (the first
        // of the tie), mean 3/4. In a replicate the choice is sample 1 when it was
        // drawn (p 1 − (2/3)³ = 19/27), else sample 2 when drawn (p (2/3)³ − (1/3)³ =
        // 7/27), else sample 0 (p 1/27); the instance draw keeps expectations:
        // E = 19/27·0.75 + 7/27·1 + 1/27·0 = 0.787037.
        let select = [0.2, 0.9, 0.9];
        let rows = vec![
            vec![0.0, 0.0, 0.0, 0.0],
            vec![1.0, 0.0, 1.0, 1.0],
            vec![1.0, 1.0, 1.0, 1.0],
        ];
        let e = crossed_select_estimate(&select, &rows, 0.95, 2).unwrap();
        assert_eq!(e.mean, 0.75);
        assert_eq!((e.groups, e.n), (3, 12));
        let (m, _) = moments(&select_stats(&select, &rows, 40_000, 6));
        assert!(close(m, 0.787_037, 0.006), "{m}");
        assert_eq!(
            select_stats(&select, &rows, DEFAULT_RESAMPLES, 2).len(),
            DEFAULT_RESAMPLES
        );
        assert!(crossed_select_estimate(&[], &[], 0.95, 1).is_none());
        assert!(crossed_select_estimate(&[1.0], &[vec![]], 0.95, 1).is_none());
        assert!(crossed_select_estimate(&[1.0, 2.0], &[vec![1.0]], 0.95, 1).is_none());
        assert!(
            crossed_select_estimate(&[1.0, 2.0], &[vec![1.0], vec![1.0, 0.0]], 0.95, 1).is_none()
        );
    }

    #[test]
    fn unchanged_data_keeps_its_interval() {
        // The horizon curve: a round whose kept harnesses did not change has the
        // same table, so the same interval (no per-round random stream).
        let rows = vec![vec![1.0, 0.0, 1.0, 1.0, 0.0], vec![0.0, 0.0, 1.0, 1.0, 1.0]];
        let strata = vec![rows.clone(), rows.clone()];
        let a = stratified_crossed_estimate(&strata, Scale::Proportion, 0.95);
        let b = stratified_crossed_estimate(&strata.clone(), Scale::Proportion, 0.95);
        assert_eq!(a, b);
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
            s += mean_of_means(y).unwrap() - mean_of_means(x).unwrap();
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
        // The statistic equals the paired crossed estimate.
        let e = paired_crossed_estimate(&a, &b, 0.95).unwrap();
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
}
