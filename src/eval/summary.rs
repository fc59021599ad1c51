//! Metrics of a run, computed from `config.json` and the records alone
//! ([`compute`]), with a 95 % interval for every one (the crossed-design rule of
//! [`crate::stats`]: harness samples × the instances they share; tasks are fixed
//! strata), and their Markdown rendering ([`markdown`]).
//!
//! Per task and overall (the overall value is the mean over tasks):
//!
//! | metric | design | values |
//! | --- | --- | --- |
//! | `seed_test`, `final_test`, `curve[r]` | crossed: samples × test instances | test score after round 0, K, r |
//! | `gain` | crossed, paired | final − seed on the same sample and instance |
//! | `best_of_m` | crossed (bootstrap of a selection) | the test scores of the sample whose final harness has the best dev score |
//! | `invalid_rate` | nested: samples, their own candidates | 1 = invalid |
//! | `accepted_rate` | nested: samples, their rounds 1..K | 1 = a revision was kept |
//! | `executor_free_rate` | nested: samples, their final test rollouts (a count per sample) | 1 = no executor call |
//! | `executor_tokens`, `proposer_tokens` | nested: one value per sample | its tokens over all rounds |
//!
//! Scores and rates use the Wilson-type interval of [`crate::stats::Scale::Proportion`],
//! the gain [`crate::stats::Scale::Difference`], tokens
//! [`crate::stats::Scale::Unbounded`]. The intervals are functions of the data alone
//! (no random stream), so a round of the curve whose scores did not change keeps its
//! interval; only best-of-M's bootstrap is seeded (per metric and task).
//!
//! `best_of_m` selects by dev score, never by test score (selecting on the test set
//! would report the luckiest sample). Executor tokens count every set evaluation a
//! trajectory used once, as if it ran alone (work shared with other trajectories and
//! completion-cache hits included), so the figure does not depend on scheduling.
//!
//! `summary.json` = these metrics + `run_stats` (wall time, overhead, batch sizes,
//! cache hits, rollouts reused). Everything outside `run_stats` is a deterministic
//! function of the records: a resumed run equals an uninterrupted one there, and
//! [`comparable_part`] is what tests compare.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::config::EvalConfig;
use super::suite::SetSizes;
use crate::records::{CandidateRecord, CandidateStatus, RoundRecord};
use crate::stats::{self, HierEstimate, Scale};

/// Version of `summary.json`.
pub const SUMMARY_SCHEMA: u32 = 1;

/// Candidates by outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CandidateCounts {
    pub total: usize,
    pub scored: usize,
    pub duplicate: usize,
    pub unchanged: usize,
    pub invalid: usize,
    /// Rounds whose kept harness was a candidate.
    pub accepted: usize,
    /// Valid candidates by the form they were written in (toml, edits, python, ...).
    pub forms: BTreeMap<String, usize>,
}

/// The metrics of a task, or overall.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub seed_test: HierEstimate,
    pub final_test: HierEstimate,
    pub gain: HierEstimate,
    pub best_of_m: Option<HierEstimate>,
    /// Test score after round r = 0..K.
    pub curve: Vec<HierEstimate>,
    pub invalid_rate: HierEstimate,
    pub accepted_rate: HierEstimate,
    pub executor_free_rate: HierEstimate,
    pub executor_tokens: HierEstimate,
    pub proposer_tokens: HierEstimate,
    pub candidates: CandidateCounts,
}

/// One task's numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSummary {
    pub task: String,
    pub sets: SetSizes,
    /// Harness samples with every round recorded (only those count).
    pub samples_complete: usize,
    /// The proposer was trained on this task's family (`eval::seen`): not held out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub seen_in_training: bool,
    pub metrics: Metrics,
}

/// Measurements of how the run went (not part of the comparable result).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunStats {
    pub wall_s: f64,
    /// Wall time with no rollout and no proposer call in flight (the evaluator's own
    /// work: scheduling, records, reports) and its fraction of the wall time.
    pub idle_s: f64,
    pub overhead_fraction: f64,
    pub rollouts_run: u64,
    /// Taken from this directory's log of an earlier, interrupted run.
    pub rollouts_reused: u64,
    /// Set evaluations computed, and answered by the memo (shared across samples,
    /// rounds and proposers of this invocation).
    pub evaluations: u64,
    pub memo_hits: u64,
    /// The executor batches the dispatcher formed (all proposers of the invocation).
    pub executor_batches: u64,
    pub executor_batch_mean: f64,
    pub executor_batch_max: u64,
    /// Dev-scoring batches of this run: count, harnesses and rollouts per batch.
    pub dev_batches: usize,
    pub dev_batch_harnesses_mean: f64,
    pub dev_batch_rollouts_mean: f64,
    pub dev_batch_rollouts_max: usize,
    pub cache_hits: Option<u64>,
    pub cache_misses: Option<u64>,
    /// Sum of round wall times per task (rounds of different samples overlap).
    pub task_round_wall_s: BTreeMap<String, f64>,
    pub resumed: bool,
}

/// `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub schema: u32,
    pub suite: String,
    pub proposer: String,
    pub proposer_spec: String,
    pub executor_model: String,
    pub executor_model_id: String,
    pub rounds: u32,
    pub candidates: u32,
    pub samples: u32,
    pub select: String,
    /// `false` for `--limit` runs (sets cut short: not comparable to full runs).
    pub comparable: bool,
    /// Every trajectory finished.
    pub complete: bool,
    /// `--shard I/N`: the summary of one part of a run (absent for whole runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::Shard>,
    pub tasks: Vec<TaskSummary>,
    pub overall: Metrics,
    pub run_stats: RunStats,
}

/// The summary without `run_stats` (what a resumed run must reproduce exactly).
pub fn comparable_part(s: &Summary) -> serde_json::Value {
    let mut v = serde_json::to_value(s).expect("a summary serialises");
    if let Some(o) = v.as_object_mut() {
        o.remove("run_stats");
    }
    v
}

const LEVEL: f64 = 0.95;

/// A fixed bootstrap seed per (metric, task).
fn ci_seed(metric: &str, task: &str) -> u64 {
    let mut h = Sha256::new();
    h.update(b"harness-rl/summary-ci\0");
    h.update(metric.as_bytes());
    h.update([0]);
    h.update(task.as_bytes());
    u64::from_le_bytes(h.finalize()[..8].try_into().expect("8 bytes"))
}

/// The data of one task for every metric: `[sample][instance]` tables for the
/// crossed metrics, `[sample][unit]` groups for the nested ones.
#[derive(Default)]
struct TaskData {
    seed: Vec<Vec<f64>>,
    fin: Vec<Vec<f64>>,
    gain: Vec<Vec<f64>>,
    curve: Vec<Vec<Vec<f64>>>,
    final_dev: Vec<Option<f64>>,
    invalid: Vec<Vec<f64>>,
    accepted: Vec<Vec<f64>>,
    exfree: Vec<Vec<f64>>,
    etokens: Vec<Vec<f64>>,
    ptokens: Vec<Vec<f64>>,
    counts: CandidateCounts,
}

fn ones(k: usize, n: usize) -> Vec<f64> {
    let mut v = vec![1.0; k.min(n)];
    v.resize(n, 0.0);
    v
}

fn task_data(
    task: &str,
    k: u32,
    samples: &[u32],
    rounds: &BTreeMap<(String, u32), BTreeMap<u32, &RoundRecord>>,
    cands: &BTreeMap<(String, u32), Vec<&CandidateRecord>>,
) -> TaskData {
    let mut d = TaskData {
        curve: vec![Vec::new(); k as usize + 1],
        ..TaskData::default()
    };
    for &m in samples {
        let Some(rs) = rounds.get(&(task.to_string(), m)) else {
            continue;
        };
        if (0..=k).any(|r| !rs.contains_key(&r)) {
            continue;
        }
        let seed = &rs[&0];
        let last = &rs[&k];
        d.seed.push(seed.test.scores.clone());
        d.fin.push(last.test.scores.clone());
        d.gain.push(
            last.test
                .scores
                .iter()
                .zip(&seed.test.scores)
                .map(|(b, a)| b - a)
                .collect(),
        );
        for r in 0..=k {
            d.curve[r as usize].push(rs[&r].test.scores.clone());
        }
        d.final_dev.push(last.selected_dev);
        let cs: Vec<&&CandidateRecord> = cands
            .get(&(task.to_string(), m))
            .map(|v| v.iter().filter(|c| c.round >= 1 && c.round <= k).collect())
            .unwrap_or_default();
        d.invalid.push(
            cs.iter()
                .map(|c| f64::from(c.status == CandidateStatus::Invalid))
                .collect(),
        );
        d.accepted
            .push((1..=k).map(|r| f64::from(rs[&r].accepted)).collect());
        d.exfree
            .push(ones(last.test.executor_free, last.test.scores.len()));
        d.etokens
            .push(vec![rs.values().map(|r| r.executor_tokens as f64).sum()]);
        d.ptokens.push(vec![
            rs.values()
                .map(|r| (r.proposer_tokens.prompt + r.proposer_tokens.completion) as f64)
                .sum(),
        ]);
        let c = &mut d.counts;
        for x in &cs {
            c.total += 1;
            match x.status {
                CandidateStatus::Scored => c.scored += 1,
                CandidateStatus::Duplicate => c.duplicate += 1,
                CandidateStatus::Unchanged => c.unchanged += 1,
                CandidateStatus::Invalid => c.invalid += 1,
            }
            if x.status != CandidateStatus::Invalid
                && let Some(f) = x.form
            {
                let name = serde_json::to_value(f)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                *c.forms.entry(name).or_default() += 1;
            }
        }
        c.accepted += (1..=k).filter(|r| rs[r].accepted).count();
    }
    d
}

/// A crossed estimate of one task's table; a table whose rows differ in length (records
/// that do not fit together) keeps its mean and gets no interval.
fn crossed(rows: &[Vec<f64>], scale: Scale) -> HierEstimate {
    stats::crossed_estimate(rows, scale, LEVEL).unwrap_or_else(|| without_interval(&[rows]))
}

/// The same over fixed strata.
fn stratified_crossed(strata: &[Vec<Vec<f64>>], scale: Scale) -> HierEstimate {
    stats::stratified_crossed_estimate(strata, scale, LEVEL)
        .unwrap_or_else(|| without_interval(&strata.iter().map(Vec::as_slice).collect::<Vec<_>>()))
}

fn without_interval(strata: &[&[Vec<f64>]]) -> HierEstimate {
    let means: Vec<f64> = strata
        .iter()
        .filter_map(|g| stats::mean_of_means(g))
        .collect();
    match stats::mean(&means) {
        None => HierEstimate::empty(),
        Some(mean) => HierEstimate {
            mean,
            ci: None,
            groups: strata.iter().map(|g| g.len()).sum(),
            n: strata.iter().flat_map(|g| g.iter()).map(Vec::len).sum(),
        },
    }
}

fn metrics_of(task: &str, d: &TaskData) -> Metrics {
    let nested = |g: &[Vec<f64>], scale| stats::nested_estimate(g, scale, LEVEL);
    let best_of_m = if d.final_dev.iter().all(Option::is_some) && !d.final_dev.is_empty() {
        let sel: Vec<f64> = d.final_dev.iter().map(|x| x.expect("checked")).collect();
        stats::crossed_select_estimate(&sel, &d.fin, LEVEL, ci_seed("best_of_m", task))
    } else {
        None
    };
    Metrics {
        seed_test: crossed(&d.seed, Scale::Proportion),
        final_test: crossed(&d.fin, Scale::Proportion),
        gain: crossed(&d.gain, Scale::Difference),
        best_of_m,
        curve: d
            .curve
            .iter()
            .map(|g| crossed(g, Scale::Proportion))
            .collect(),
        invalid_rate: nested(&d.invalid, Scale::Proportion),
        accepted_rate: nested(&d.accepted, Scale::Proportion),
        executor_free_rate: nested(&d.exfree, Scale::Proportion),
        executor_tokens: nested(&d.etokens, Scale::Unbounded),
        proposer_tokens: nested(&d.ptokens, Scale::Unbounded),
        candidates: d.counts.clone(),
    }
}

/// The metrics of several tasks together (tasks are fixed strata).
fn overall_of(data: &[TaskData]) -> Metrics {
    let crossed = |f: &dyn Fn(&TaskData) -> Vec<Vec<f64>>, scale| {
        let strata: Vec<Vec<Vec<f64>>> = data.iter().map(f).collect();
        stratified_crossed(&strata, scale)
    };
    let nested = |f: &dyn Fn(&TaskData) -> Vec<Vec<f64>>, scale| {
        let strata: Vec<Vec<Vec<f64>>> = data.iter().map(f).collect();
        stats::stratified_nested_estimate(&strata, scale, LEVEL)
    };
    let k = data.first().map_or(0, |d| d.curve.len());
    // Best-of-M overall: the mean over tasks of each task's best-of-M point estimate
    // (no pooled interval: the selection is per task).
    let per_task: Vec<Option<HierEstimate>> =
        data.iter().map(|d| metrics_of("", d).best_of_m).collect();
    let best_of_m = if !per_task.is_empty() && per_task.iter().all(Option::is_some) {
        let v: Vec<HierEstimate> = per_task.into_iter().map(|x| x.expect("checked")).collect();
        Some(HierEstimate {
            mean: v.iter().map(|e| e.mean).sum::<f64>() / v.len() as f64,
            ci: None,
            groups: v.iter().map(|e| e.groups).sum(),
            n: v.iter().map(|e| e.n).sum(),
        })
    } else {
        None
    };
    let mut counts = CandidateCounts::default();
    for d in data {
        let c = &d.counts;
        counts.total += c.total;
        counts.scored += c.scored;
        counts.duplicate += c.duplicate;
        counts.unchanged += c.unchanged;
        counts.invalid += c.invalid;
        counts.accepted += c.accepted;
        for (f, n) in &c.forms {
            *counts.forms.entry(f.clone()).or_default() += n;
        }
    }
    Metrics {
        seed_test: crossed(&|d| d.seed.clone(), Scale::Proportion),
        final_test: crossed(&|d| d.fin.clone(), Scale::Proportion),
        gain: crossed(&|d| d.gain.clone(), Scale::Difference),
        best_of_m,
        curve: (0..k)
            .map(|r| crossed(&|d: &TaskData| d.curve[r].clone(), Scale::Proportion))
            .collect(),
        invalid_rate: nested(&|d| d.invalid.clone(), Scale::Proportion),
        accepted_rate: nested(&|d| d.accepted.clone(), Scale::Proportion),
        executor_free_rate: nested(&|d| d.exfree.clone(), Scale::Proportion),
        executor_tokens: nested(&|d| d.etokens.clone(), Scale::Unbounded),
        proposer_tokens: nested(&|d| d.ptokens.clone(), Scale::Unbounded),
        candidates: counts,
    }
}

/// Group records by (task, sample) (the first record of each round wins, as on
/// resume).
type RoundsBySample<'a> = BTreeMap<(String, u32), BTreeMap<u32, &'a RoundRecord>>;
type CandidatesBySample<'a> = BTreeMap<(String, u32), Vec<&'a CandidateRecord>>;

fn index<'a>(
    rounds: &'a [RoundRecord],
    candidates: &'a [CandidateRecord],
) -> (RoundsBySample<'a>, CandidatesBySample<'a>) {
    let mut r: BTreeMap<(String, u32), BTreeMap<u32, &RoundRecord>> = BTreeMap::new();
    for x in rounds {
        r.entry((x.task.clone(), x.sample))
            .or_default()
            .entry(x.round)
            .or_insert(x);
    }
    let mut c: BTreeMap<(String, u32), Vec<&CandidateRecord>> = BTreeMap::new();
    for x in candidates {
        let v = c.entry((x.task.clone(), x.sample)).or_default();
        if !v.iter().any(|y| y.round == x.round && y.index == x.index) {
            v.push(x);
        }
    }
    for v in c.values_mut() {
        v.sort_by_key(|x| (x.round, x.index));
    }
    (r, c)
}

/// Per-sample test scores of a task after round `round` (complete samples only, in
/// sample order), for paired comparisons.
pub fn test_scores(
    config: &EvalConfig,
    rounds: &[RoundRecord],
    task: &str,
    round: u32,
) -> Vec<Vec<f64>> {
    let (r, _) = index(rounds, &[]);
    let k = config.settings.rounds;
    (0..config.settings.samples)
        .filter_map(|m| {
            let rs = r.get(&(task.to_string(), m))?;
            if (0..=k).any(|x| !rs.contains_key(&x)) {
                return None;
            }
            Some(rs[&round].test.scores.clone())
        })
        .collect()
}

/// Compute the metrics of a run from its config and records (`run_stats` left
/// default; the runner fills it).
pub fn compute(
    config: &EvalConfig,
    rounds: &[RoundRecord],
    candidates: &[CandidateRecord],
) -> Summary {
    let s = &config.settings;
    let (r, c) = index(rounds, candidates);
    let mut tasks = Vec::new();
    let mut data = Vec::new();
    let mut complete = true;
    for (ti, t) in config.tasks.iter().enumerate() {
        // A shard's summary counts the harness samples it runs.
        let mine: Vec<u32> = (0..s.samples).filter(|&m| s.runs_unit(ti, m)).collect();
        let d = task_data(&t.def.id, s.rounds, &mine, &r, &c);
        let done = d.fin.len();
        if done < mine.len() {
            complete = false;
        }
        tasks.push(TaskSummary {
            task: t.def.id.clone(),
            sets: super::sets::limited(t.def.sets, s.limit),
            samples_complete: done,
            seen_in_training: config.seen_in_training.contains(&t.def.id),
            metrics: metrics_of(&t.def.id, &d),
        });
        data.push(d);
    }
    Summary {
        schema: SUMMARY_SCHEMA,
        suite: s.suite.name.clone(),
        proposer: config.proposer.label.clone(),
        proposer_spec: config.proposer.spec.clone(),
        executor_model: config.executor.model.clone(),
        executor_model_id: config.executor.model_id.clone(),
        rounds: s.rounds,
        candidates: s.candidates,
        samples: s.samples,
        select: serde_json::to_value(s.select)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        comparable: config.comparable,
        complete,
        shard: s.shard,
        tasks,
        overall: overall_of(&data),
        run_stats: RunStats::default(),
    }
}

/// The metrics of a group of the run's tasks (a family, a split role) computed as the
/// overall metrics are, over these tasks only (each a fixed stratum; tasks the config
/// does not list are ignored).
pub fn group_metrics(
    config: &EvalConfig,
    rounds: &[RoundRecord],
    candidates: &[CandidateRecord],
    tasks: &[String],
) -> Metrics {
    let s = &config.settings;
    let (r, c) = index(rounds, candidates);
    let data: Vec<TaskData> = config
        .tasks
        .iter()
        .enumerate()
        .filter(|(_, t)| tasks.contains(&t.def.id))
        .map(|(ti, t)| {
            // A shard's groups count the harness samples it runs, as its summary does.
            let mine: Vec<u32> = (0..s.samples).filter(|&m| s.runs_unit(ti, m)).collect();
            task_data(&t.def.id, s.rounds, &mine, &r, &c)
        })
        .collect();
    overall_of(&data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ones_and_seeds() {
        assert_eq!(ones(2, 4), vec![1.0, 1.0, 0.0, 0.0]);
        assert_eq!(ones(5, 3), vec![1.0, 1.0, 1.0]);
        assert_ne!(ci_seed("a", "t"), ci_seed("b", "t"));
        assert_eq!(ci_seed("a", "t"), ci_seed("a", "t"));
    }
}
