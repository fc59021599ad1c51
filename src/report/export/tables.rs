//! The report's tables as cells (header + rows of text), shared by the Markdown and
//! HTML exporters so both show the same numbers.

use super::{est, opt, tokens};
use crate::eval::summary::Metrics;
use crate::report::model::{EvalReport, GroupRow, TrainReport};
use crate::report::trajectories::short;

/// A table of text cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// One row per (name, metrics, n): scores and rates with intervals.
pub fn metrics(first: &str, rows: &[(String, &Metrics, String)]) -> Table {
    Table {
        header: strings(&[
            first,
            "seed test",
            "final test",
            "gain",
            "best-of-M",
            "invalid rate",
            "accepted rate",
            "executor-free",
            "n",
        ]),
        rows: rows
            .iter()
            .map(|(name, m, n)| {
                vec![
                    name.clone(),
                    est(&m.seed_test),
                    est(&m.final_test),
                    est(&m.gain),
                    m.best_of_m.as_ref().map(est).unwrap_or_else(|| "-".into()),
                    est(&m.invalid_rate),
                    est(&m.accepted_rate),
                    est(&m.executor_free_rate),
                    n.clone(),
                ]
            })
            .collect(),
    }
}

/// Per task and overall.
pub fn tasks(e: &EvalReport) -> Table {
    let mut rows: Vec<(String, &Metrics, String)> = e
        .summary
        .tasks
        .iter()
        .map(|t| {
            (
                t.task.clone(),
                &t.metrics,
                format!("{} x {}", t.samples_complete, t.sets.test),
            )
        })
        .collect();
    rows.push((
        "overall".into(),
        &e.summary.overall,
        format!("{} tasks", e.summary.tasks.len()),
    ));
    metrics("task", &rows)
}

/// Per group (family or split role).
pub fn groups(first: &str, groups: &[GroupRow]) -> Table {
    let rows: Vec<(String, &Metrics, String)> = groups
        .iter()
        .map(|g| {
            (
                g.name.clone(),
                &g.metrics,
                format!("{} tasks", g.tasks.len()),
            )
        })
        .collect();
    metrics(first, &rows)
}

/// The horizon curve: one row per task and overall, one column per round.
pub fn curve(e: &EvalReport) -> Table {
    let mut header = vec!["task".to_string()];
    header.extend((0..=e.meta.rounds).map(|r| format!("round {r}")));
    let row = |name: &str, m: &Metrics| {
        let mut v = vec![name.to_string()];
        v.extend(m.curve.iter().map(est));
        v
    };
    let mut rows: Vec<Vec<String>> = e
        .summary
        .tasks
        .iter()
        .map(|t| row(&t.task, &t.metrics))
        .collect();
    rows.push(row("overall", &e.summary.overall));
    Table { header, rows }
}

/// Tokens and candidate counts per task.
pub fn cost(e: &EvalReport) -> Table {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut push = |name: &str, m: &Metrics| {
        let c = &m.candidates;
        rows.push(vec![
            name.to_string(),
            tokens(&m.executor_tokens),
            tokens(&m.proposer_tokens),
            c.total.to_string(),
            c.scored.to_string(),
            c.duplicate.to_string(),
            c.unchanged.to_string(),
            c.invalid.to_string(),
            c.accepted.to_string(),
            c.forms
                .iter()
                .map(|(f, n)| format!("{f} {n}"))
                .collect::<Vec<_>>()
                .join(", "),
        ]);
    };
    for t in &e.summary.tasks {
        push(&t.task, &t.metrics);
    }
    push("overall", &e.summary.overall);
    Table {
        header: strings(&[
            "task",
            "executor tokens / sample",
            "proposer tokens / sample",
            "candidates",
            "scored",
            "duplicate",
            "unchanged",
            "invalid",
            "accepted rounds",
            "valid forms",
        ]),
        rows,
    }
}

/// Every harness tested, with its Pareto status.
pub fn harnesses(e: &EvalReport) -> Table {
    Table {
        header: strings(&[
            "task",
            "harness",
            "role",
            "test",
            "instances",
            "executor tokens / instance",
            "executor-free",
            "kept (sample-rounds)",
            "Pareto front",
        ]),
        rows: e
            .harnesses
            .iter()
            .map(|p| {
                vec![
                    p.task.clone(),
                    short(&p.hash).to_string(),
                    if p.seed { "seed" } else { "revision" }.to_string(),
                    format!("{:.3}", p.test),
                    p.instances.to_string(),
                    format!("{:.1}", p.tokens_per_instance),
                    format!("{:.3}", p.executor_free_rate),
                    p.kept.to_string(),
                    if p.pareto { "yes" } else { "" }.to_string(),
                ]
            })
            .collect(),
    }
}

/// The most rows of the training table; longer logs show evenly spaced steps (the
/// first and the last always).
pub const MAX_TRAIN_ROWS: usize = 40;

/// The training log, thinned to [`MAX_TRAIN_ROWS`] rows.
pub fn training(t: &TrainReport) -> Table {
    let n = t.steps.len();
    let picks: Vec<usize> = if n <= MAX_TRAIN_ROWS {
        (0..n).collect()
    } else {
        let mut v: Vec<usize> = (0..MAX_TRAIN_ROWS)
            .map(|i| i * (n - 1) / (MAX_TRAIN_ROWS - 1))
            .collect();
        v.dedup();
        v
    };
    let hit = |h: u64, m: u64| {
        if h + m == 0 {
            "-".to_string()
        } else {
            format!("{:.3}", h as f64 / (h + m) as f64)
        }
    };
    Table {
        header: strings(&[
            "step",
            "reward mean",
            "reward sd",
            "held-out",
            "entropy",
            "invalid",
            "valid",
            "memo hits",
            "cache hits",
            "wall s",
        ]),
        rows: picks
            .into_iter()
            .map(|i| {
                let s = &t.steps[i];
                vec![
                    s.step.to_string(),
                    format!("{:.3}", s.reward_mean),
                    format!("{:.3}", s.reward_std),
                    opt(s.heldout_score),
                    format!("{:.3}", s.entropy),
                    format!("{:.3}", s.invalid_rate),
                    format!("{:.3}", s.valid_rate),
                    hit(s.memo_hits, s.memo_misses),
                    hit(s.cache_hits, s.cache_misses),
                    format!("{:.1}", s.wall_s),
                ]
            })
            .collect(),
    }
}

/// Whether a family table says more than the task table (some family has several
/// tasks).
pub fn families_differ(e: &EvalReport) -> bool {
    e.families.iter().any(|f| f.tasks.len() > 1)
}
