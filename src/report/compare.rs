//! The paired comparison of two run directories (`hrl compare RUN_A RUN_B`): the
//! final test score of B minus that of A, on identical tasks, instances and harness
//! samples, from the records alone; and the regression gate built on it.
//!
//! **Comparable runs.** Two runs pair only when everything but the proposer is the
//! same ([`check_comparable`], in this order; the first difference is reported by
//! name): the config schema, the executor identity (backend, model sha256, LoRA, build,
//! GPU device, output-affecting settings: one hash), the rollout settings (limits,
//! their hash), K, G, M, the selection rule, the run seed, `--limit`, the grading
//! settings, the task list and, per task, its instance source, seed harness and
//! feedback/dev/test instance ids. Both runs must also have finished every trajectory.
//! Runs cut with `--limit` (marked not comparable by `hrl eval`) are refused unless
//! [`CompareOptions::allow_limited`].
//!
//! **Statistic and interval.** Per task: the mean over harness samples of the mean
//! over test instances of `B − A` on the same (sample, instance); overall: the mean
//! over tasks (fixed strata). Interval: the paired crossed-design interval of
//! [`crate::stats::paired_crossed_estimate`] at `--confidence` (a t interval with
//! Satterthwaite degrees of freedom from the variance components of the differences;
//! see docs/EVAL.md, "Intervals"). Tests beside it: two-sided paired sign-flip tests
//! of "A and B are exchangeable" ([`crate::stats::stratified_sign_flip_test`]),
//! flipping whole harness samples (`p_samples`: exact up to 2^20 patterns) and single
//! instances (`p_instances`: instance noise only, given the harnesses drawn).
//!
//! **Power.** The minimum detectable difference at 80 % power for the design the runs
//! have (tasks × instances × samples), simulated from the variance components of
//! their own differences ([`crate::stats::power`]; a task whose differences are all
//! equal, e.g. two identical runs, is planned with the plus-four variance of
//! [`planning_components`]).
//!
//! **Gate** ([`decide`], one rule for every mode): with `[lo, hi]` the two-sided
//! `--confidence` interval of the overall `B − A` and a margin δ ≥ 0:
//!
//! | interval | `--fail-if-worse δ` | `--non-inferior δ` |
//! | --- | --- | --- |
//! | `hi < −δ` (B worse by more than δ) | regression (exit 3) | regression (exit 3) |
//! | `lo > −δ` (B shown not worse by more than δ) | pass | pass |
//! | straddles −δ | pass; inconclusive (exit 4) with `--require-decision` | inconclusive (exit 4) |
//!
//! At 0.95 each bound is a one-sided 97.5 % statement. `--fail-if-worse` asks "is B
//! shown worse?" (too little data passes); `--non-inferior` asks "is B shown not
//! worse?" (too little data does not pass), the question a checkpoint release asks.
//! For context the comparison also shows other overall metrics of each run with the
//! run's own interval (seed score, best-of-M, revision rates, executor-free rate,
//! tokens).

use std::path::Path;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::ReportError;
use super::run_data::{self, EvalData};
use crate::eval::config::EvalConfig;
use crate::records::RoundRecord;
use crate::stats::power::{self, TaskDesign};
use crate::stats::{self, FlipUnit, HierEstimate, Interval, SignFlipTest, VarianceComponents};

/// Version of the comparison's JSON.
pub const COMPARE_SCHEMA: u32 = 1;

/// Monte Carlo sign-flip patterns when there are too many units to enumerate.
pub const FLIP_RESAMPLES: usize = 100_000;

/// What the gate asks of `B − A` (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateMode {
    /// `--fail-if-worse DELTA`: regression when B is shown worse by more than DELTA.
    FailIfWorse,
    /// `--non-inferior MARGIN`: pass only when B is shown not worse by more than
    /// MARGIN.
    NonInferior,
}

impl GateMode {
    /// The flag that asks for this mode.
    pub fn flag(self) -> &'static str {
        match self {
            GateMode::FailIfWorse => "--fail-if-worse",
            GateMode::NonInferior => "--non-inferior",
        }
    }
}

/// How to compare.
#[derive(Debug, Clone)]
pub struct CompareOptions {
    /// Interval level, in (0, 1).
    pub confidence: f64,
    /// Seed of the Monte Carlo tests and the power simulation.
    pub seed: u64,
    /// The gate: its mode and margin (≥ 0).
    pub gate: Option<(GateMode, f64)>,
    /// An interval that straddles the margin is inconclusive (exit 4), not a pass.
    pub require_decision: bool,
    /// Compare runs cut with `--limit` (refused otherwise).
    pub allow_limited: bool,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            confidence: 0.95,
            seed: 0,
            gate: None,
            require_decision: false,
            allow_limited: false,
        }
    }
}

/// The power the comparison reports.
pub const POWER: f64 = 0.8;

/// One side of the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    /// The run directory as given.
    pub dir: String,
    pub proposer: String,
    pub proposer_spec: String,
}

/// One task's paired difference.
#[derive(Debug, Clone, Serialize)]
pub struct TaskDiff {
    pub task: String,
    pub a: f64,
    pub b: f64,
    /// `B − A` with its paired interval.
    pub diff: HierEstimate,
    pub p_samples: Option<SignFlipTest>,
    /// The variance components of this task's differences (as planned with: see
    /// [`planning_components`]).
    pub components: VarianceComponents,
}

/// An overall metric of each run, each with its own interval (not paired).
#[derive(Debug, Clone, Serialize)]
pub struct SideBySide {
    pub metric: String,
    pub a: HierEstimate,
    pub b: HierEstimate,
}

/// The gate's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    /// B is worse than A by more than the margin with the stated confidence (exit 3).
    Regression,
    /// The interval straddles the margin and a decision was required (exit 4).
    Inconclusive,
}

/// The gate: the rule applied and its verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Gate {
    pub mode: GateMode,
    pub margin: f64,
    pub require_decision: bool,
    pub verdict: Verdict,
    /// The rule in words: interval, level, test.
    pub rule: String,
    /// Why this verdict, with the numbers.
    pub reason: String,
}

/// The gate's decision rule (see the module doc): the verdict for a two-sided
/// interval `ci` of `B − A` (`None`: no interval could be formed, which never
/// passes a required decision) and a margin.
pub fn decide(
    mode: GateMode,
    margin: f64,
    require_decision: bool,
    ci: Option<Interval>,
) -> Verdict {
    let Some(ci) = ci else {
        return if mode == GateMode::NonInferior || require_decision {
            Verdict::Inconclusive
        } else {
            Verdict::Pass
        };
    };
    if ci.hi < -margin {
        Verdict::Regression
    } else if ci.lo > -margin {
        Verdict::Pass
    } else if mode == GateMode::NonInferior || require_decision {
        Verdict::Inconclusive
    } else {
        Verdict::Pass
    }
}

/// The minimum detectable difference of the runs' design.
#[derive(Debug, Clone, Serialize)]
pub struct Power {
    /// The probability of detecting the difference (0.8).
    pub power: f64,
    /// The two-sided interval level the detection uses.
    pub level: f64,
    /// The smallest |B − A| whose interval excludes 0 with probability `power`;
    /// `None` when it cannot be formed (no variance to estimate from).
    pub mdd: Option<f64>,
    pub tasks: usize,
    pub samples: u32,
    /// Test instances per task (their mean when tasks differ).
    pub instances: f64,
    /// The differences' variance components, averaged over tasks.
    pub components: VarianceComponents,
    pub simulations: usize,
}

/// A paired comparison of two runs.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub schema: u32,
    pub metric: String,
    pub a: Side,
    pub b: Side,
    pub confidence: f64,
    pub seed: u64,
    pub samples: u32,
    pub instances: usize,
    pub tasks: Vec<TaskDiff>,
    /// Overall means of A and B and `B − A`.
    pub a_mean: f64,
    pub b_mean: f64,
    pub diff: HierEstimate,
    /// The standard error of the overall `B − A` and its Satterthwaite degrees of
    /// freedom (`None`: infinite or nothing to estimate from).
    pub diff_se: f64,
    pub diff_df: Option<f64>,
    pub p_samples: Option<SignFlipTest>,
    pub p_instances: Option<SignFlipTest>,
    /// Test instances whose seed-harness (round 0) score differs between the runs
    /// (with one executor and one seed harness these should be none: a non-zero
    /// count points at a non-deterministic executor, e.g. a different thread count).
    pub seed_round_mismatches: usize,
    pub power: Power,
    pub gate: Option<Gate>,
    /// Other overall metrics of both runs (seed score, rates, tokens), for context.
    pub other: Vec<SideBySide>,
    /// Caveats about the evidence.
    pub notes: Vec<String>,
}

fn not_comparable(field: impl Into<String>, detail: impl Into<String>) -> ReportError {
    ReportError::NotComparable {
        field: field.into(),
        detail: detail.into(),
    }
}

fn json<T: Serialize>(x: &T) -> serde_json::Value {
    serde_json::to_value(x).unwrap_or(serde_json::Value::Null)
}

/// `A: x, B: y` with long values cut.
fn ab(a: &impl std::fmt::Display, b: &impl std::fmt::Display) -> String {
    let cut = |s: String| {
        if s.chars().count() > 120 {
            s.chars().take(117).collect::<String>() + "..."
        } else {
            s
        }
    };
    format!("A: {}, B: {}", cut(a.to_string()), cut(b.to_string()))
}

/// The first instance id that differs between two lists, described.
fn first_difference(a: &[String], b: &[String]) -> String {
    if a.len() != b.len() {
        return format!("A has {} instances, B has {}", a.len(), b.len());
    }
    match a.iter().zip(b).enumerate().find(|(_, (x, y))| x != y) {
        Some((i, (x, y))) => format!("instance {i}: A `{x}`, B `{y}`"),
        None => "same".into(),
    }
}

/// Refuse two runs that cannot be paired, naming the first field that differs.
pub fn check_comparable(a: &EvalConfig, b: &EvalConfig) -> Result<(), ReportError> {
    if a.schema != b.schema {
        return Err(not_comparable("config schema", ab(&a.schema, &b.schema)));
    }
    if a.executor.hash != b.executor.hash {
        let ea = &a.executor;
        let eb = &b.executor;
        let detail = if ea.model_id != eb.model_id {
            format!("model sha256 {}", ab(&ea.model_id, &eb.model_id))
        } else if ea.backend != eb.backend {
            format!("backend {}", ab(&ea.backend, &eb.backend))
        } else if json(&ea.lora) != json(&eb.lora) {
            format!("LoRA {}", ab(&json(&ea.lora), &json(&eb.lora)))
        } else if json(&ea.build) != json(&eb.build) {
            format!("build {}", ab(&json(&ea.build), &json(&eb.build)))
        } else if json(&ea.device) != json(&eb.device) {
            format!("device {}", ab(&json(&ea.device), &json(&eb.device)))
        } else if ea.output_settings != eb.output_settings {
            format!(
                "output-affecting settings {}",
                ab(&ea.output_settings, &eb.output_settings)
            )
        } else {
            format!("identity hash {}", ab(&ea.hash, &eb.hash))
        };
        return Err(not_comparable("executor", detail));
    }
    if a.run_config_hash != b.run_config_hash {
        return Err(not_comparable(
            "rollout settings",
            ab(&json(&a.run), &json(&b.run)),
        ));
    }
    let (sa, sb) = (&a.settings, &b.settings);
    let scalar: [(&str, serde_json::Value, serde_json::Value); 8] = [
        ("rounds", json(&sa.rounds), json(&sb.rounds)),
        ("candidates", json(&sa.candidates), json(&sb.candidates)),
        ("samples", json(&sa.samples), json(&sb.samples)),
        ("select", json(&sa.select), json(&sb.select)),
        ("seed", json(&sa.seed), json(&sb.seed)),
        ("limit", json(&sa.limit), json(&sb.limit)),
        (
            "grade timeout",
            json(&sa.grade_timeout_s),
            json(&sb.grade_timeout_s),
        ),
        (
            "grade clock",
            json(&sa.grade_cpu_clock),
            json(&sb.grade_cpu_clock),
        ),
    ];
    for (name, x, y) in scalar {
        if x != y {
            return Err(not_comparable(name, ab(&x, &y)));
        }
    }
    let ids =
        |c: &EvalConfig| -> Vec<String> { c.tasks.iter().map(|t| t.def.id.clone()).collect() };
    let (ia, ib) = (ids(a), ids(b));
    if ia != ib {
        let only_a: Vec<&String> = ia.iter().filter(|x| !ib.contains(x)).collect();
        let only_b: Vec<&String> = ib.iter().filter(|x| !ia.contains(x)).collect();
        let detail = if only_a.is_empty() && only_b.is_empty() {
            format!(
                "same tasks in another order: {}",
                ab(&ia.join(", "), &ib.join(", "))
            )
        } else {
            format!(
                "only in A: [{}]; only in B: [{}]",
                only_a
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                only_b
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return Err(not_comparable("tasks", detail));
    }
    for (x, y) in a.tasks.iter().zip(&b.tasks) {
        let id = &x.def.id;
        if json(&x.def.source) != json(&y.def.source) {
            return Err(not_comparable(
                format!("tasks[{id}].source"),
                ab(&json(&x.def.source), &json(&y.def.source)),
            ));
        }
        if x.seed_harness_ref.hash != y.seed_harness_ref.hash {
            return Err(not_comparable(
                format!("tasks[{id}].seed_harness"),
                ab(&x.seed_harness_ref.hash, &y.seed_harness_ref.hash),
            ));
        }
        for (set, p, q) in [
            ("test", &x.set_ids.test, &y.set_ids.test),
            ("dev", &x.set_ids.dev, &y.set_ids.dev),
            ("feedback", &x.set_ids.feedback, &y.set_ids.feedback),
        ] {
            if p != q {
                return Err(not_comparable(
                    format!("tasks[{id}].sets.{set} instance ids"),
                    first_difference(p, q),
                ));
            }
        }
    }
    // The evaluator's own pairing rule must agree (a field it adds later is caught).
    if let Some(field) = a.incompatibility(b) {
        return Err(not_comparable(field, "see config.json of both runs"));
    }
    Ok(())
}

/// Every (task, sample) → round → record (the first record of a round wins).
type Index<'a> =
    std::collections::BTreeMap<(&'a str, u32), std::collections::BTreeMap<u32, &'a RoundRecord>>;

fn index(rounds: &[RoundRecord]) -> Index<'_> {
    let mut m: Index = Default::default();
    for r in rounds {
        m.entry((r.task.as_str(), r.sample))
            .or_default()
            .entry(r.round)
            .or_insert(r);
    }
    m
}

/// Test scores `[task][sample][instance]` after round `round`; every trajectory must
/// be complete.
pub(super) fn scores(
    side: &str,
    dir: &Path,
    e: &EvalData,
    round: u32,
) -> Result<Vec<Vec<Vec<f64>>>, ReportError> {
    let idx = index(&e.rounds);
    let k = e.config.settings.rounds;
    let mut out = Vec::new();
    for t in &e.config.tasks {
        let id = t.def.id.as_str();
        let mut per_sample = Vec::new();
        for m in 0..e.config.settings.samples {
            let missing = idx
                .get(&(id, m))
                .map_or(Some(0), |rs| (0..=k).find(|r| !rs.contains_key(r)));
            if let Some(r) = missing {
                return Err(ReportError::Incomplete(format!(
                    "{side} ({}) is incomplete: task {id} sample {m} has no round {r} record; finish it with `{}`",
                    dir.display(),
                    crate::eval::resume_command(dir)
                )));
            }
            let rec = idx[&(id, m)][&round];
            if rec.test.scores.len() != t.set_ids.test.len() {
                return Err(ReportError::Input(format!(
                    "{}: task {id} sample {m} round {round} has {} test scores for {} test instances",
                    dir.join(crate::records::run_dir::ROUNDS).display(),
                    rec.test.scores.len(),
                    t.set_ids.test.len()
                )));
            }
            per_sample.push(rec.test.scores.clone());
        }
        out.push(per_sample);
    }
    Ok(out)
}

pub(super) fn derived_seed(seed: u64, what: &str) -> u64 {
    let mut h = Sha256::new();
    h.update(b"harness-rl/compare\0");
    h.update(seed.to_le_bytes());
    h.update(what.as_bytes());
    u64::from_le_bytes(h.finalize()[..8].try_into().expect("8 bytes"))
}

pub(super) fn load_eval(dir: &Path, side: &str) -> Result<EvalData, ReportError> {
    if !dir.is_dir() {
        return Err(ReportError::Input(format!(
            "{side}: {}: not a directory",
            dir.display()
        )));
    }
    run_data::read_eval(dir)?.ok_or_else(|| {
        ReportError::Input(format!(
            "{side}: {}: not an evaluation run directory (no {})",
            dir.display(),
            crate::records::run_dir::CONFIG
        ))
    })
}

/// The variance components a table offers for planning (the power `hrl compare`
/// prints, `hrl plan`): its moment estimates, except that a constant table (every
/// score 0 or every score 1; for differences, every difference the same) has no
/// variance of its own to offer and gets the "plus four" variance `p̃(1 − p̃)`,
/// `p̃ = (x + 2)/(n + 4)` with x of its n instances at 1 (for differences: differing),
/// as its instance component. Without it two identical runs would claim to detect
/// any difference.
pub(super) fn planning_components(rows: &[Vec<f64>]) -> Option<VarianceComponents> {
    let t = stats::crossed_table(rows)?;
    if !t.constant {
        return Some(t.components());
    }
    let n = t.instances as f64;
    let x = t.mean.abs().min(1.0) * n;
    let p = (x + 2.0) / (n + 4.0);
    Some(VarianceComponents {
        harness: 0.0,
        instance: p * (1.0 - p),
        residual: 0.0,
    })
}

/// Refuse a run cut with `--limit` unless allowed.
fn check_limit(side: &str, dir: &Path, e: &EvalData, allow: bool) -> Result<(), ReportError> {
    if e.config.comparable || allow {
        return Ok(());
    }
    Err(ReportError::Usage(format!(
        "{side} ({}) was cut with --limit {} (marked not comparable by hrl eval): its sets are shorter than the suite's, so a gate on it says nothing about the full sets; pass --allow-limited to compare it anyway",
        dir.display(),
        e.config
            .settings
            .limit
            .map_or_else(|| "N".into(), |l| l.to_string())
    )))
}

/// Compare run B against run A.
pub fn compare(a_dir: &Path, b_dir: &Path, o: &CompareOptions) -> Result<Comparison, ReportError> {
    if !(o.confidence > 0.0 && o.confidence < 1.0) {
        return Err(ReportError::Usage(format!(
            "--confidence {} must lie strictly between 0 and 1",
            o.confidence
        )));
    }
    if let Some((mode, d)) = o.gate
        && !(d.is_finite() && d >= 0.0)
    {
        return Err(ReportError::Usage(format!(
            "{} {d} must be a finite number >= 0",
            mode.flag()
        )));
    }
    if o.require_decision && o.gate.is_none() {
        return Err(ReportError::Usage(
            "--require-decision needs a gate: --fail-if-worse DELTA or --non-inferior MARGIN"
                .into(),
        ));
    }
    let a = load_eval(a_dir, "RUN_A")?;
    let b = load_eval(b_dir, "RUN_B")?;
    check_comparable(&a.config, &b.config)?;
    check_limit("RUN_A", a_dir, &a, o.allow_limited)?;
    check_limit("RUN_B", b_dir, &b, o.allow_limited)?;
    let k = a.config.settings.rounds;
    let fa = scores("RUN_A", a_dir, &a, k)?;
    let fb = scores("RUN_B", b_dir, &b, k)?;
    let s0a = scores("RUN_A", a_dir, &a, 0)?;
    let s0b = scores("RUN_B", b_dir, &b, 0)?;
    let seed_round_mismatches = s0a
        .iter()
        .flatten()
        .flatten()
        .zip(s0b.iter().flatten().flatten())
        .filter(|(x, y)| x != y)
        .count();
    let level = o.confidence;
    let mut tasks = Vec::new();
    let mut diffs: Vec<Vec<Vec<f64>>> = Vec::new();
    for (i, t) in a.config.tasks.iter().enumerate() {
        let d = stats::paired_differences(&fa[i], &fb[i]).ok_or_else(|| {
            ReportError::Input(format!(
                "task {}: the runs' test scores have different shapes",
                t.def.id
            ))
        })?;
        let id = &t.def.id;
        let diff = stats::crossed_estimate(&d, stats::Scale::Difference, level)
            .unwrap_or(HierEstimate::empty());
        tasks.push(TaskDiff {
            task: id.clone(),
            a: stats::mean_of_means(&fa[i]).unwrap_or(0.0),
            b: stats::mean_of_means(&fb[i]).unwrap_or(0.0),
            diff,
            p_samples: stats::stratified_sign_flip_test(
                std::slice::from_ref(&d),
                FlipUnit::Groups,
                stats::MAX_EXACT_FLIP_UNITS,
                FLIP_RESAMPLES,
                derived_seed(o.seed, &format!("flip-samples:{id}")),
            ),
            components: planning_components(&d).unwrap_or_default(),
        });
        diffs.push(d);
    }
    let strata_mean = |x: &[Vec<Vec<f64>>]| {
        let v: Vec<f64> = x.iter().filter_map(|g| stats::mean_of_means(g)).collect();
        stats::mean(&v).unwrap_or(0.0)
    };
    let diff = stats::paired_crossed_estimate(&fa, &fb, level)
        .ok_or_else(|| ReportError::Input("the runs' test scores have different shapes".into()))?;
    let (diff_se, diff_df) = match stats::stratified_crossed_variance(&diffs) {
        Some((_, v)) => (v.value().sqrt(), v.df().filter(|d| d.is_finite())),
        None => (0.0, None),
    };
    let p_samples = stats::stratified_sign_flip_test(
        &diffs,
        FlipUnit::Groups,
        stats::MAX_EXACT_FLIP_UNITS,
        FLIP_RESAMPLES,
        derived_seed(o.seed, "flip-samples"),
    );
    let p_instances = stats::stratified_sign_flip_test(
        &diffs,
        FlipUnit::Units,
        stats::MAX_EXACT_FLIP_UNITS,
        FLIP_RESAMPLES,
        derived_seed(o.seed, "flip-instances"),
    );
    let samples = a.config.settings.samples;
    let designs: Vec<TaskDesign> = tasks
        .iter()
        .zip(&diffs)
        .map(|(t, d)| TaskDesign {
            components: t.components,
            samples: d.len(),
            instances: d.first().map_or(0, Vec::len),
        })
        .collect();
    let power = Power {
        power: POWER,
        level,
        mdd: power::detectable_difference(
            &designs,
            level,
            POWER,
            power::DEFAULT_SIMULATIONS,
            derived_seed(o.seed, "power"),
        )
        .filter(|d| d.is_finite()),
        tasks: designs.len(),
        samples,
        instances: stats::mean(
            &designs
                .iter()
                .map(|d| d.instances as f64)
                .collect::<Vec<_>>(),
        )
        .unwrap_or(0.0),
        components: VarianceComponents::average(
            &tasks.iter().map(|t| t.components).collect::<Vec<_>>(),
        ),
        simulations: power::DEFAULT_SIMULATIONS,
    };
    let p_text = p_samples.as_ref().map_or_else(
        || "no sign-flip test (no data)".to_string(),
        |t| {
            format!(
                "paired sign-flip test of no difference (harness samples flipped): p = {:.4}",
                t.p_value
            )
        },
    );
    let gate = o.gate.map(|(mode, margin)| {
        let verdict = decide(mode, margin, o.require_decision, diff.ci);
        let pct = 100.0 * level;
        let rule = match mode {
            GateMode::FailIfWorse => format!(
                "regression when the upper bound of the two-sided {pct:.0} % paired crossed-design interval of B - A (t, Satterthwaite df, tasks fixed) is below -{margin}; {}",
                if o.require_decision {
                    "an interval that contains -margin is inconclusive (--require-decision)"
                } else {
                    "otherwise pass"
                }
            ),
            GateMode::NonInferior => format!(
                "pass when the lower bound of the two-sided {pct:.0} % paired crossed-design interval of B - A (t, Satterthwaite df, tasks fixed) is above -{margin} (B shown not worse by more than {margin}); regression when its upper bound is below -{margin}; otherwise inconclusive"
            ),
        };
        let bounds = diff.ci.map_or_else(
            || "no interval".to_string(),
            |c| format!("[{:+.3}, {:+.3}]", c.lo, c.hi),
        );
        let reason = format!(
            "B - A = {:+.3} {bounds} at {pct:.0} %; {p_text}",
            diff.mean
        );
        Gate {
            mode,
            margin,
            require_decision: o.require_decision,
            verdict,
            rule,
            reason,
        }
    });
    let sa = crate::eval::summary::compute(&a.config, &a.rounds, &a.candidates).overall;
    let sb = crate::eval::summary::compute(&b.config, &b.rounds, &b.candidates).overall;
    let other = [
        ("seed test score", sa.seed_test, sb.seed_test),
        (
            "best-of-M (by dev)",
            sa.best_of_m.unwrap_or(HierEstimate::empty()),
            sb.best_of_m.unwrap_or(HierEstimate::empty()),
        ),
        ("invalid-revision rate", sa.invalid_rate, sb.invalid_rate),
        ("accepted-revision rate", sa.accepted_rate, sb.accepted_rate),
        (
            "executor-free rate",
            sa.executor_free_rate,
            sb.executor_free_rate,
        ),
        (
            "executor tokens / sample",
            sa.executor_tokens,
            sb.executor_tokens,
        ),
        (
            "proposer tokens / sample",
            sa.proposer_tokens,
            sb.proposer_tokens,
        ),
    ]
    .into_iter()
    .map(|(m, x, y)| SideBySide {
        metric: m.to_string(),
        a: x,
        b: y,
    })
    .collect();
    let mut notes = Vec::new();
    if !a.config.comparable || !b.config.comparable {
        notes.push(
            "a run was cut with --limit and is compared only because --allow-limited was given: the sets are shorter than the suite's".to_string(),
        );
    }
    if let (Some(ci), Some(t)) = (diff.ci, &p_samples)
        && (ci.lo > 0.0 || ci.hi < 0.0)
        && t.p_value > 1.0 - level
    {
        notes.push(format!(
            "the interval excludes 0 but the harness-sample sign-flip test does not reject at this level (p = {:.4} over {} trajectory pair(s) with a difference; with {} pair(s) its smallest attainable p is {:.4}): the test conditions on these instances and has little resolution with few harness samples",
            t.p_value,
            t.units,
            t.units,
            if t.units == 0 { 1.0 } else { 2.0 / 2f64.powi(t.units as i32) }
        ));
    }
    let side = |dir: &Path, e: &EvalData| Side {
        dir: dir.display().to_string(),
        proposer: e.config.proposer.label.clone(),
        proposer_spec: e.config.proposer.spec.clone(),
    };
    Ok(Comparison {
        schema: COMPARE_SCHEMA,
        metric: format!("final test score (after round {k})"),
        a: side(a_dir, &a),
        b: side(b_dir, &b),
        confidence: level,
        seed: o.seed,
        samples,
        instances: a.config.tasks.iter().map(|t| t.set_ids.test.len()).sum(),
        a_mean: strata_mean(&fa),
        b_mean: strata_mean(&fb),
        diff,
        diff_se,
        diff_df,
        p_samples,
        p_instances,
        seed_round_mismatches,
        tasks,
        power,
        gate,
        other,
        notes,
    })
}

fn interval(e: &HierEstimate) -> String {
    match e.ci {
        Some(c) => format!("{:+.3} [{:+.3}, {:+.3}]", e.mean, c.lo, c.hi),
        None => format!("{:+.3}", e.mean),
    }
}

fn p(t: &Option<SignFlipTest>) -> String {
    match t {
        Some(t) => format!(
            "{:.4}{}",
            t.p_value,
            if t.exact { "" } else { " (Monte Carlo)" }
        ),
        None => "-".into(),
    }
}

/// The comparison as Markdown: one row per task, the overall row, the tests, the
/// power and the verdict.
pub fn render_text(c: &Comparison) -> String {
    let pct = 100.0 * c.confidence;
    let mut out = format!(
        "# Paired comparison: B `{}` vs A `{}`\n\nMetric: {}; B - A on identical instances and harness samples ({} samples, {} test instances over {} tasks); {pct:.0} % paired crossed-design interval (t with Satterthwaite df from the variance components of the differences, tasks fixed; docs/EVAL.md, \"Intervals\").\n\nA: {}\nB: {}\n\n| task | A | B | B - A [{pct:.0} % interval] | p (samples flipped) |\n| --- | --- | --- | --- | --- |\n",
        c.b.proposer,
        c.a.proposer,
        c.metric,
        c.samples,
        c.instances,
        c.tasks.len(),
        c.a.dir,
        c.b.dir,
    );
    for t in &c.tasks {
        out.push_str(&format!(
            "| {} | {:.3} | {:.3} | {} | {} |\n",
            t.task,
            t.a,
            t.b,
            interval(&t.diff),
            p(&t.p_samples)
        ));
    }
    out.push_str(&format!(
        "| **overall** | {:.3} | {:.3} | {} | {} |\n\nOverall B - A: standard error {:.4}, {} degrees of freedom. Paired sign-flip tests of no difference: harness samples flipped p = {}; instances flipped p = {} (instance noise only).\n",
        c.a_mean,
        c.b_mean,
        interval(&c.diff),
        p(&c.p_samples),
        c.diff_se,
        c.diff_df.map_or_else(|| "infinite".into(), |d| format!("{d:.1}")),
        p(&c.p_samples),
        p(&c.p_instances),
    ));
    let pw = &c.power;
    out.push_str(&format!(
        "\nPower: the smallest difference this design ({} tasks x {:.0} instances x {} samples) detects with {:.0} % probability at {:.0} % is {} (simulated from the differences' variance components: harness {:.4}, instance {:.4}, residual {:.4}; {} simulations).\n",
        pw.tasks,
        pw.instances,
        pw.samples,
        100.0 * pw.power,
        100.0 * pw.level,
        pw.mdd.map_or_else(|| "not defined (no variance to estimate from)".into(), |d| format!("{d:.3}")),
        pw.components.harness,
        pw.components.instance,
        pw.components.residual,
        pw.simulations
    ));
    out.push_str("\nOther overall metrics (each run with its own 95 % interval, not paired):\n\n| metric | A | B |\n| --- | --- | --- |\n");
    for o in &c.other {
        let f = if o.metric.contains("tokens") {
            super::export::tokens
        } else {
            super::export::est
        };
        out.push_str(&format!("| {} | {} | {} |\n", o.metric, f(&o.a), f(&o.b)));
    }
    if c.seed_round_mismatches > 0 {
        out.push_str(&format!(
            "\nWarning: the seed harness (round 0) scored differently on {} test instance(s) between the runs, although executor and seed harness are the same: the executor is not deterministic here (e.g. another thread count), which adds noise to B - A.\n",
            c.seed_round_mismatches
        ));
    }
    for n in &c.notes {
        out.push_str(&format!("\nNote: {n}.\n"));
    }
    if let Some(g) = &c.gate {
        out.push_str(&format!(
            "\nGate ({} {}{}): {}.\nRule: {}.\nEvidence: {}.\n",
            g.mode.flag(),
            g.margin,
            if g.require_decision {
                " --require-decision"
            } else {
                ""
            },
            match g.verdict {
                Verdict::Pass => "PASS",
                Verdict::Regression =>
                    "REGRESSION: B is worse than A by more than the margin (exit 3)",
                Verdict::Inconclusive => "INCONCLUSIVE: the interval contains -margin (exit 4)",
            },
            g.rule,
            g.reason
        ));
    }
    out
}
