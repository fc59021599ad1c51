//! The report model of one run directory ([`Report`]), built from [`RunData`] alone:
//!
//! - the run's settings and identity ([`Meta`]);
//! - the summary metrics per task and overall ([`crate::eval::summary::compute`]:
//!   seed and final test score, gain, the per-round horizon curve, best-of-M by dev
//!   score, invalid and accepted revision rates, executor-free rate, executor and
//!   proposer tokens, each with a 95 % crossed-design interval: harness samples ×
//!   the instances they share, see [`crate::stats`]);
//! - the same metrics per family and per role of a family split
//!   ([`crate::eval::summary::group_metrics`]: tasks are fixed strata);
//! - every harness tested on a task with its test score and executor tokens per
//!   instance, and whether it is on the task's Pareto front ([`HarnessPoint`]);
//! - every trajectory's rounds and candidates ([`super::trajectories`]);
//! - the trainer's steps, when the directory has a `train.jsonl`;
//! - the SVG plots ([`super::plots`]; not serialised: the JSON export carries the data).
//!
//! The split roles come from `--split NAME|FILE` ([`ReportOptions::split`]: a
//! built-in family split or a split file, see [`crate::families::splits`]), else from a
//! `role` the run's config records for its tasks; without either there is no split
//! table.

use std::collections::BTreeMap;

use serde::Serialize;

use super::ReportError;
use super::plots::{self, Plot};
use super::run_data::{EvalData, HarnessText, RunData};
use super::trajectories::{self, Trajectory};
use crate::eval::suite::TaskSource;
use crate::eval::summary::{self, Metrics, RunStats, Summary};
use crate::records::SetName;
use crate::records::train::TrainStep;

/// Version of the report model (the JSON export's `schema`).
pub const REPORT_SCHEMA: u32 = 1;

/// How to build a report.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// Group tasks by the roles of this family split (a built-in name or a file).
    pub split: Option<String>,
}

/// The settings and identity of the run.
#[derive(Debug, Clone, Serialize)]
pub struct Meta {
    pub suite: String,
    pub proposer: String,
    pub proposer_spec: String,
    pub executor_model: String,
    pub executor_model_id: String,
    pub executor_hash: String,
    pub rounds: u32,
    pub candidates: u32,
    pub samples: u32,
    pub select: String,
    pub seed: u64,
    pub limit: Option<usize>,
    pub crate_version: String,
    pub git_commit: String,
    /// `false` for `--limit` runs.
    pub comparable: bool,
    /// Every trajectory finished.
    pub complete: bool,
    /// The interval level of every estimate.
    pub level: f64,
}

/// The metrics of a group of tasks (a family or a split role).
#[derive(Debug, Clone, Serialize)]
pub struct GroupRow {
    pub name: String,
    pub tasks: Vec<String>,
    pub metrics: Metrics,
}

/// Tasks grouped by the roles of a family split.
#[derive(Debug, Clone, Serialize)]
pub struct SplitTable {
    /// Where the roles came from: `split NAME` or `recorded in config.json`.
    pub source: String,
    pub rows: Vec<GroupRow>,
}

/// One harness tested on one task (a point of the Pareto view).
#[derive(Debug, Clone, Serialize)]
pub struct HarnessPoint {
    pub task: String,
    pub hash: String,
    /// The task's seed harness (else a revision).
    pub seed: bool,
    /// Mean test score and the number of test instances.
    pub test: f64,
    pub instances: usize,
    /// Executor tokens (prompt + completion) per test instance.
    pub tokens_per_instance: f64,
    pub executor_free_rate: f64,
    /// (sample, round) slots that kept this harness.
    pub kept: usize,
    /// No other harness of the task scores at least as well with at most as many
    /// tokens (and strictly better on one of the two).
    pub pareto: bool,
}

/// The evaluation part of a report.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub meta: Meta,
    /// Per task and overall, with the run's `run_stats` when `summary.json` has them.
    pub summary: Summary,
    pub families: Vec<GroupRow>,
    pub split: Option<SplitTable>,
    pub harnesses: Vec<HarnessPoint>,
    pub trajectories: Vec<Trajectory>,
    /// The harness files the trajectories mention, by hash.
    pub harness_files: BTreeMap<String, HarnessText>,
    /// What the records call for a warning about ([`super::warnings`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The training part of a report.
#[derive(Debug, Clone, Serialize)]
pub struct TrainReport {
    pub steps: Vec<TrainStep>,
    pub last_step: Option<u64>,
    pub best_heldout: Option<(u64, f64)>,
    /// The set the held-out monitor scored (`validation`; `test` in logs written
    /// before the monitor had a validation set).
    pub heldout_set: Option<SetName>,
    pub wall_s: f64,
}

impl TrainReport {
    /// "0.750 at step 55 (held-out validation set)", or "not measured": the one text
    /// of the best held-out score, which names the set it was measured on.
    pub fn best_heldout_text(&self) -> String {
        match self.best_heldout {
            None => "not measured".into(),
            Some((s, h)) => match self.heldout_set {
                Some(set) => format!("{h:.3} at step {s} (held-out {} set)", set.as_str()),
                None => format!(
                    "{h:.3} at step {s} (held-out test set: a log written before the monitor scored a validation set)"
                ),
            },
        }
    }
}

/// A run directory's report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: u32,
    /// The run directory's name.
    pub run: String,
    pub eval: Option<EvalReport>,
    pub train: Option<TrainReport>,
    /// The SVG plots, in display order.
    #[serde(skip)]
    pub plots: Vec<Plot>,
}

/// The family a task belongs to (`lcb` for LiveCodeBench selections).
pub fn family_of(source: &TaskSource) -> String {
    match source {
        TaskSource::Family { family, .. } => family.clone(),
        TaskSource::Lcb { .. } => "lcb".into(),
    }
}

fn group_rows(e: &EvalData, groups: &BTreeMap<String, Vec<String>>) -> Vec<GroupRow> {
    groups
        .iter()
        .map(|(name, tasks)| GroupRow {
            name: name.clone(),
            tasks: tasks.clone(),
            metrics: summary::group_metrics(&e.config, &e.rounds, &e.candidates, tasks),
        })
        .collect()
}

fn split_table(e: &EvalData, options: &ReportOptions) -> Result<Option<SplitTable>, ReportError> {
    let mut roles: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let source = if let Some(name) = &options.split {
        let split = crate::families::splits::load(name)?;
        for t in &e.config.tasks {
            let role = match &t.def.source {
                TaskSource::Family { family, .. } => split
                    .role_of(family)
                    .map(|r| r.name.clone())
                    .unwrap_or_else(|| "unassigned".into()),
                TaskSource::Lcb { .. } => "lcb".into(),
            };
            roles.entry(role).or_default().push(t.def.id.clone());
        }
        format!("split {}", split.name)
    } else if !e.recorded_roles.is_empty() {
        for t in &e.config.tasks {
            let role = e
                .recorded_roles
                .get(&t.def.id)
                .cloned()
                .unwrap_or_else(|| "unassigned".into());
            roles.entry(role).or_default().push(t.def.id.clone());
        }
        "recorded in config.json".into()
    } else {
        return Ok(None);
    };
    Ok(Some(SplitTable {
        source,
        rows: group_rows(e, &roles),
    }))
}

/// Mark the Pareto front of each task (maximise test, minimise tokens).
fn mark_pareto(points: &mut [HarnessPoint]) {
    let snapshot: Vec<(String, f64, f64)> = points
        .iter()
        .map(|p| (p.task.clone(), p.test, p.tokens_per_instance))
        .collect();
    for p in points.iter_mut() {
        p.pareto = !snapshot.iter().any(|(t, s, k)| {
            *t == p.task
                && *s >= p.test
                && *k <= p.tokens_per_instance
                && (*s > p.test || *k < p.tokens_per_instance)
        });
    }
}

/// One point per (task, harness) tested (the first test record of a harness holds its
/// scores: a set evaluation is memoised, so later ones are equal).
fn harness_points(e: &EvalData) -> Vec<HarnessPoint> {
    let seeds: BTreeMap<&str, &str> = e
        .config
        .tasks
        .iter()
        .map(|t| (t.def.id.as_str(), t.seed_harness_ref.hash.as_str()))
        .collect();
    let order: BTreeMap<&str, usize> = e
        .config
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.def.id.as_str(), i))
        .collect();
    let mut by_key: BTreeMap<(usize, String), HarnessPoint> = BTreeMap::new();
    let mut seen_slots: std::collections::BTreeSet<(String, u32, u32)> = Default::default();
    for r in &e.rounds {
        let Some(&ti) = order.get(r.task.as_str()) else {
            continue;
        };
        // The first record of a (task, sample, round) wins, as in the summary.
        if !seen_slots.insert((r.task.clone(), r.sample, r.round)) {
            continue;
        }
        let n = r.test.scores.len();
        let entry = by_key
            .entry((ti, r.test.harness.clone()))
            .or_insert_with(|| HarnessPoint {
                task: r.task.clone(),
                hash: r.test.harness.clone(),
                seed: seeds.get(r.task.as_str()) == Some(&r.test.harness.as_str()),
                test: r.test.mean,
                instances: n,
                tokens_per_instance: if n == 0 {
                    0.0
                } else {
                    r.test.tokens as f64 / n as f64
                },
                executor_free_rate: if n == 0 {
                    0.0
                } else {
                    r.test.executor_free as f64 / n as f64
                },
                kept: 0,
                pareto: false,
            });
        entry.kept += 1;
    }
    let mut points: Vec<HarnessPoint> = by_key.into_values().collect();
    mark_pareto(&mut points);
    points
}

fn eval_report(
    data: &RunData,
    e: &EvalData,
    options: &ReportOptions,
) -> Result<EvalReport, ReportError> {
    let c = &e.config;
    let mut s = summary::compute(c, &e.rounds, &e.candidates);
    if let Some(rs) = &e.run_stats {
        s.run_stats = rs.clone();
    } else {
        s.run_stats = RunStats::default();
    }
    let mut families: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for t in &c.tasks {
        families
            .entry(family_of(&t.def.source))
            .or_default()
            .push(t.def.id.clone());
    }
    let meta = Meta {
        suite: c.settings.suite.name.clone(),
        proposer: c.proposer.label.clone(),
        proposer_spec: c.proposer.spec.clone(),
        executor_model: c.executor.model.clone(),
        executor_model_id: c.executor.model_id.clone(),
        executor_hash: c.executor.hash.clone(),
        rounds: c.settings.rounds,
        candidates: c.settings.candidates,
        samples: c.settings.samples,
        select: s.select.clone(),
        seed: c.settings.seed,
        limit: c.settings.limit,
        crate_version: c.crate_version.clone(),
        git_commit: c.git_commit.clone(),
        comparable: c.comparable,
        complete: s.complete,
        level: 0.95,
    };
    Ok(EvalReport {
        meta,
        families: group_rows(e, &families),
        split: split_table(e, options)?,
        harnesses: harness_points(e),
        trajectories: trajectories::build(e, &data.harnesses),
        harness_files: data.harnesses.clone(),
        warnings: super::warnings::invalid_revisions(&c.proposer.label, &e.candidates)
            .into_iter()
            .collect(),
        summary: s,
    })
}

fn train_report(steps: &[TrainStep]) -> TrainReport {
    let mut best: Option<(u64, f64)> = None;
    for s in steps {
        if let Some(h) = s.heldout_score
            && best.is_none_or(|(_, b)| h > b)
        {
            best = Some((s.step, h));
        }
    }
    TrainReport {
        steps: steps.to_vec(),
        last_step: steps.iter().map(|s| s.step).max(),
        heldout_set: best.and_then(|(b, _)| {
            steps
                .iter()
                .find(|s| s.step == b)
                .and_then(|s| s.heldout_set)
        }),
        best_heldout: best,
        wall_s: steps.iter().map(|s| s.wall_s).sum(),
    }
}

/// Build the report of a run directory's data.
pub fn build(data: &RunData, options: &ReportOptions) -> Result<Report, ReportError> {
    let eval = data
        .eval
        .as_ref()
        .map(|e| eval_report(data, e, options))
        .transpose()?;
    let train = data.train.as_deref().map(train_report);
    let mut report = Report {
        schema: REPORT_SCHEMA,
        run: data.name.clone(),
        eval,
        train,
        plots: Vec::new(),
    };
    report.plots = plots::all(&report)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(task: &str, test: f64, tokens: f64) -> HarnessPoint {
        HarnessPoint {
            task: task.into(),
            hash: format!("{task}{test}{tokens}"),
            seed: false,
            test,
            instances: 4,
            tokens_per_instance: tokens,
            executor_free_rate: 0.0,
            kept: 1,
            pareto: false,
        }
    }

    #[test]
    fn pareto_front_per_task() {
        let mut p = vec![
            point("a", 0.5, 100.0),
            point("a", 0.7, 200.0),
            point("a", 0.6, 250.0), // dominated by (0.7, 200)
            point("a", 0.5, 150.0), // dominated by (0.5, 100)
            point("b", 0.1, 900.0), // alone in its task
            point("a", 0.7, 200.0), // a tie with an equal point: not dominated
        ];
        mark_pareto(&mut p);
        let front: Vec<bool> = p.iter().map(|x| x.pareto).collect();
        assert_eq!(front, vec![true, true, false, false, true, true]);
    }
}
