//! The comparison of the proposers of one invocation (`hrl eval` with several
//! proposers, `hrl transfer`): every arm's final test score per task and overall, its
//! invalid- and accepted-revision rates, and each arm's paired difference to the
//! first arm on identical instances and harness samples, per task and over all tasks.
//! Rendered by `export::comparison` as `comparison.md` and `comparison.html`.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::ReportError;
use crate::eval::config::EvalConfig;
use crate::eval::summary::{self, Summary};
use crate::eval::{INVOCATION, read_json};
use crate::records::{self, RoundRecord, run_dir};
use crate::stats::HierEstimate;

/// One arm (proposer) of the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Arm {
    pub label: String,
    pub dir: PathBuf,
    pub summary: Summary,
}

/// One task's row.
#[derive(Debug, Clone, Serialize)]
pub struct TaskRow {
    pub task: String,
    /// The seed harness's test score (the same for every arm).
    pub seed: HierEstimate,
    /// Each arm's final test score.
    pub finals: Vec<Option<HierEstimate>>,
    /// Each later arm's paired difference to the first (`None`: not pairable).
    pub paired: Vec<Option<HierEstimate>>,
}

/// The comparison model.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub arms: Vec<Arm>,
    pub tasks: Vec<TaskRow>,
    /// The overall row: the seed score, each arm's final, each later arm's paired
    /// difference over all tasks (tasks fixed strata).
    pub overall: TaskRow,
}

/// The run directories of a multi-proposer output directory (`eval.json`), in
/// proposer order; `None` when `dir` is a single run directory.
pub fn arm_dirs(dir: &Path) -> Result<Option<Vec<PathBuf>>, ReportError> {
    let inv = dir.join(INVOCATION);
    if !inv.exists() {
        return Ok(None);
    }
    let settings: crate::eval::config::EvalSettings = read_json(&inv)?;
    let mut out = Vec::new();
    for p in &settings.proposers {
        let label = crate::proposer::ProposerSpec::parse(p)
            .map_err(crate::eval::EvalError::from)?
            .label();
        out.push(dir.join(label));
    }
    Ok(Some(out))
}

/// Build the comparison of the arms in `dirs` (the first is the baseline) from their
/// `config.json`, `summary.json` and `rounds.jsonl`.
pub fn build(dirs: &[PathBuf]) -> Result<Comparison, ReportError> {
    let mut arms = Vec::new();
    let mut configs: Vec<EvalConfig> = Vec::new();
    let mut rounds: Vec<Vec<RoundRecord>> = Vec::new();
    for d in dirs {
        let config: EvalConfig = read_json(&d.join(run_dir::CONFIG))?;
        let summary: Summary = read_json(&d.join(run_dir::SUMMARY))?;
        rounds.push(records::read(&d.join(run_dir::ROUNDS))?);
        arms.push(Arm {
            label: config.proposer.label.clone(),
            dir: d.clone(),
            summary,
        });
        configs.push(config);
    }
    let Some(first) = arms.first() else {
        return Err(ReportError::Usage(
            "a comparison needs at least one run".into(),
        ));
    };
    let k = configs[0].settings.rounds;
    let mut tasks = Vec::new();
    let mut all_a = Vec::new();
    let mut all_b: Vec<Vec<Vec<Vec<f64>>>> = vec![Vec::new(); arms.len().saturating_sub(1)];
    for (i, t) in first.summary.tasks.iter().enumerate() {
        let a = summary::test_scores(&configs[0], &rounds[0], &t.task, k);
        let mut paired = Vec::new();
        for (j, (cfg, rs)) in configs[1..].iter().zip(&rounds[1..]).enumerate() {
            let b = summary::test_scores(cfg, rs, &t.task, k);
            paired.push(crate::stats::paired_crossed_estimate(
                std::slice::from_ref(&a),
                std::slice::from_ref(&b),
                0.95,
            ));
            all_b[j].push(b);
        }
        all_a.push(a);
        tasks.push(TaskRow {
            task: t.task.clone(),
            seed: t.metrics.seed_test,
            finals: arms
                .iter()
                .map(|arm| arm.summary.tasks.get(i).map(|x| x.metrics.final_test))
                .collect(),
            paired,
        });
    }
    let overall = TaskRow {
        task: "overall".into(),
        seed: first.summary.overall.seed_test,
        finals: arms
            .iter()
            .map(|a| Some(a.summary.overall.final_test))
            .collect(),
        paired: all_b
            .iter()
            .map(|b| crate::stats::paired_crossed_estimate(&all_a, b, 0.95))
            .collect(),
    };
    Ok(Comparison {
        arms,
        tasks,
        overall,
    })
}
