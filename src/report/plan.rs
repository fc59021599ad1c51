//! `hrl plan`: how large a paired comparison must be. From the variance components of
//! the differences `B − A` per task (harness, instance, residual; see
//! [`crate::stats::VarianceComponents`]) it gives the minimum detectable difference
//! (MDD) of a design (tasks × instances × harness samples) at power P and two-sided
//! level 1 − α, and, for a target difference D, the fewest instances per task (at the
//! design's samples) and the fewest harness samples (at the design's instances) whose
//! MDD is at most D. Every number is the seeded simulation of
//! [`crate::stats::power`], which applies the comparison's own interval rule.
//!
//! Where the components come from:
//! - **a pilot pair** (`hrl plan A B`): the components of `B − A` per task from two
//!   comparable run directories (as `hrl compare` pairs them), averaged over tasks;
//! - **one pilot run** (`hrl plan RUN`): the components of its final test scores per
//!   task, averaged, then doubled: two arms with independent harness samples and no
//!   shared instance effect. Real arms share instance difficulty, which pairing
//!   cancels, so this is conservative; a pilot pair measures it;
//! - **stated** (`--components H,I,R`): the components of one task's differences.
//!
//! A pilot task whose table is constant (every score 0 or every score 1; for a pair,
//! every difference the same) has no variance of its own to offer: it is planned
//! with the "plus four" variance `p̃(1 − p̃)`, `p̃ = (x + 2)/(n + 4)` with x of its n
//! instances at 1 (for a pair: differing), as its instance component
//! ([`super::compare::planning_components`]). Without it an all-zero pilot would
//! promise that any difference is detectable.
//!
//! The design defaults to the pilot's (its tasks, samples and mean test-set size);
//! with stated components `--tasks`, `--samples` and `--instances` are required.

use std::path::PathBuf;

use serde::Serialize;

use super::ReportError;
use super::compare::{self, derived_seed, load_eval, planning_components, scores};
use crate::stats::VarianceComponents;
use crate::stats::power::{self, TaskDesign};

/// What to plan.
#[derive(Debug, Clone)]
pub struct PlanOptions {
    /// Zero, one or two pilot run directories.
    pub pilots: Vec<PathBuf>,
    /// Stated components of one task's differences (instead of a pilot).
    pub components: Option<VarianceComponents>,
    pub tasks: Option<usize>,
    pub samples: Option<usize>,
    pub instances: Option<usize>,
    /// The difference to detect.
    pub detect: Option<f64>,
    /// The probability of detecting it.
    pub power: f64,
    /// Two-sided significance level (the interval's level is 1 − alpha).
    pub alpha: f64,
    pub seed: u64,
    pub simulations: usize,
    /// The largest size searched.
    pub max_size: usize,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            pilots: Vec::new(),
            components: None,
            tasks: None,
            samples: None,
            instances: None,
            detect: None,
            power: 0.8,
            alpha: 0.05,
            seed: 0,
            simulations: power::DEFAULT_SIMULATIONS,
            max_size: 10_000,
        }
    }
}

/// A design: tasks × instances per task × harness samples per task.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Design {
    pub tasks: usize,
    pub samples: usize,
    pub instances: usize,
}

/// The sizes needed to detect a target difference.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    pub difference: f64,
    /// The fewest instances per task at the design's samples (`None`: more than
    /// `max_size`, or never: the harness term alone exceeds the target).
    pub instances: Option<usize>,
    /// The fewest harness samples per task at the design's instances.
    pub samples: Option<usize>,
    pub max_size: usize,
}

/// The answer of `hrl plan`.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// Where the components came from, in words.
    pub source: String,
    /// The components of one task's differences used (averaged over the pilot's
    /// tasks).
    pub components: VarianceComponents,
    pub design: Design,
    pub power: f64,
    pub alpha: f64,
    pub mdd: Option<f64>,
    pub target: Option<Target>,
    pub simulations: usize,
    pub seed: u64,
}

fn usage(msg: impl Into<String>) -> ReportError {
    ReportError::Usage(msg.into())
}

/// The components and the pilot's design.
fn from_pilots(
    o: &PlanOptions,
) -> Result<(String, VarianceComponents, Option<Design>), ReportError> {
    match (o.pilots.as_slice(), o.components) {
        ([], Some(c)) => Ok(("stated on the command line".into(), c, None)),
        ([], None) => Err(usage(
            "no variance components: give a pilot run directory (or two) or --components H,I,R",
        )),
        (_, Some(_)) => Err(usage(
            "give either pilot run directories or --components, not both",
        )),
        ([one], None) => {
            let e = load_eval(one, "PILOT")?;
            let k = e.config.settings.rounds;
            let tables = scores("PILOT", one, &e, k)?;
            let per_task: Vec<VarianceComponents> = tables
                .iter()
                .filter_map(|t| planning_components(t))
                .collect();
            let c = VarianceComponents::average(&per_task);
            let doubled = VarianceComponents {
                harness: 2.0 * c.harness,
                instance: 2.0 * c.instance,
                residual: 2.0 * c.residual,
            };
            Ok((
                format!(
                    "the final test scores of the pilot run {} ({} tasks), doubled for two arms with independent harness samples and no shared instance effect (conservative: a pilot pair measures the pairing's gain)",
                    one.display(),
                    tables.len()
                ),
                doubled,
                Some(design_of(&tables)),
            ))
        }
        ([a, b], None) => {
            let ea = load_eval(a, "PILOT_A")?;
            let eb = load_eval(b, "PILOT_B")?;
            compare::check_comparable(&ea.config, &eb.config)?;
            let tables = scores("PILOT_A", a, &ea, ea.config.settings.rounds)?;
            let other = scores("PILOT_B", b, &eb, eb.config.settings.rounds)?;
            let comps: Vec<VarianceComponents> = tables
                .iter()
                .zip(&other)
                .filter_map(|(x, y)| planning_components(&crate::stats::paired_differences(x, y)?))
                .collect();
            Ok((
                format!(
                    "the paired differences B - A of the pilot runs {} and {} ({} tasks)",
                    a.display(),
                    b.display(),
                    comps.len()
                ),
                VarianceComponents::average(&comps),
                Some(design_of(&tables)),
            ))
        }
        (more, None) => Err(usage(format!(
            "at most two pilot run directories (A and B), got {}",
            more.len()
        ))),
    }
}

fn design_of(tables: &[Vec<Vec<f64>>]) -> Design {
    let n: Vec<f64> = tables
        .iter()
        .map(|t| t.first().map_or(0, Vec::len) as f64)
        .collect();
    Design {
        tasks: tables.len(),
        samples: tables.first().map_or(0, Vec::len),
        instances: crate::stats::mean(&n).unwrap_or(0.0).round() as usize,
    }
}

/// Plan a comparison (see the module doc).
pub fn plan(o: &PlanOptions) -> Result<Plan, ReportError> {
    if !(o.power > 0.0 && o.power < 1.0) {
        return Err(usage(format!(
            "--power {} must lie strictly between 0 and 1",
            o.power
        )));
    }
    if !(o.alpha > 0.0 && o.alpha < 1.0) {
        return Err(usage(format!(
            "--alpha {} must lie strictly between 0 and 1",
            o.alpha
        )));
    }
    if let Some(d) = o.detect
        && !(d.is_finite() && d > 0.0)
    {
        return Err(usage(format!("--detect {d} must be a number > 0")));
    }
    if o.simulations == 0 {
        return Err(usage("--simulations must be at least 1"));
    }
    if let Some(c) = o.components
        && [c.harness, c.instance, c.residual]
            .iter()
            .any(|x| !(x.is_finite() && *x >= 0.0))
    {
        return Err(usage(
            "--components: every variance must be a finite number >= 0",
        ));
    }
    let (source, components, pilot) = from_pilots(o)?;
    let pick = |given: Option<usize>, from: Option<usize>, flag: &str| {
        given.or(from).filter(|&x| x >= 1).ok_or_else(|| {
            usage(format!(
                "{flag} is needed (at least 1): there is no pilot run to take it from"
            ))
        })
    };
    let design = Design {
        tasks: pick(o.tasks, pilot.map(|d| d.tasks), "--tasks")?,
        samples: pick(o.samples, pilot.map(|d| d.samples), "--samples")?,
        instances: pick(o.instances, pilot.map(|d| d.instances), "--instances")?,
    };
    let tasks = |d: Design| {
        vec![
            TaskDesign {
                components,
                samples: d.samples,
                instances: d.instances,
            };
            d.tasks
        ]
    };
    let level = 1.0 - o.alpha;
    let seed = derived_seed(o.seed, "plan");
    let mdd = power::detectable_difference(&tasks(design), level, o.power, o.simulations, seed)
        .filter(|d| d.is_finite());
    let target = o.detect.map(|difference| Target {
        difference,
        instances: power::instances_needed(
            &tasks(design),
            difference,
            level,
            o.power,
            o.simulations,
            seed,
            o.max_size,
        ),
        samples: power::samples_needed(
            &tasks(design),
            difference,
            level,
            o.power,
            o.simulations,
            seed,
            o.max_size,
        ),
        max_size: o.max_size,
    });
    Ok(Plan {
        source,
        components,
        design,
        power: o.power,
        alpha: o.alpha,
        mdd,
        target,
        simulations: o.simulations,
        seed: o.seed,
    })
}

/// The plan as text.
pub fn render_text(p: &Plan) -> String {
    let c = &p.components;
    let d = &p.design;
    let mut out = format!(
        "Variance components of one task's differences B - A: harness {:.5}, instance {:.5}, residual {:.5} (from {}).\n",
        c.harness, c.instance, c.residual, p.source
    );
    out.push_str(&format!(
        "Design: {} tasks x {} instances x {} harness samples; a two-sided {:.0} % paired interval, power {:.0} % ({} simulations, seed {}).\n",
        d.tasks,
        d.instances,
        d.samples,
        100.0 * (1.0 - p.alpha),
        100.0 * p.power,
        p.simulations,
        p.seed
    ));
    out.push_str(&format!(
        "Minimum detectable difference: {}\n",
        p.mdd.map_or_else(
            || "not defined (no variance can be estimated with this design)".into(),
            |m| format!("{m:.3}")
        )
    ));
    if let Some(t) = &p.target {
        let size = |x: Option<usize>, what: &str, fixed: String| match x {
            Some(n) => format!("{n} {what} per task ({fixed})"),
            None => format!(
                "more than {} {what} per task ({fixed}), or never: the other terms alone exceed the target",
                t.max_size
            ),
        };
        out.push_str(&format!(
            "To detect {:.3}: {}; or {}.\n",
            t.difference,
            size(
                t.instances,
                "instances",
                format!("with {} samples", d.samples)
            ),
            size(
                t.samples,
                "harness samples",
                format!("with {} instances", d.instances)
            ),
        ));
    }
    out
}
