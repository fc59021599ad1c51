//! `best-fixed` (`hrl best-fixed DIR`): the single seed harness with the best mean dev
//! score over the training families, chosen on training families only, to be applied
//! unchanged to every held-out task. A trained proposer that does not beat "always
//! use the best fixed harness" has learned nothing task-dependent.
//!
//! The choice is a function of an `hrl eval` run's records, never of a held-out
//! number: run the candidate harnesses as `file:` proposers (plus `identity`, which is
//! the seed harness itself) on a suite of **training** families with `rounds = 1` and
//! `select = "always"`, so that every arm's round-1 harness is its file. Each arm's
//! dev score is the mean over its trajectories of the kept harness's dev score
//! (`selected_dev` of round 1: the same dev sets for every arm); the arm with the
//! highest mean wins (ties: the first listed). [`choose`] writes `best-fixed.json`
//! (every arm's mean and the choice) and `best-fixed.toml` (the chosen harness,
//! byte-for-byte the harness the arm scored) into the directory; the held-out arm is
//! then `file:DIR/best-fixed.toml`, under `select = "always"` so the harness is
//! applied unchanged (under `best` it is kept only where it beats the seed on dev).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::config::{EvalConfig, EvalSettings};
use super::suite::Selection;
use super::{EvalError, INVOCATION, read_json};
use crate::proposer::ProposerSpec;
use crate::records::{self, RoundRecord, run_dir};

/// The file [`choose`] writes.
pub const CHOICE: &str = "best-fixed.json";
/// The chosen harness, written beside it (`.py` for a program harness).
pub const HARNESS_STEM: &str = "best-fixed";

/// One candidate arm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Arm {
    pub label: String,
    pub spec: String,
    /// Trajectories (task × sample) with a dev score.
    pub trajectories: usize,
    pub dev_mean: f64,
    /// Hash of the harness the arm kept (one per arm when it is a fixed harness).
    pub harnesses: Vec<String>,
}

/// `best-fixed.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    pub schema: u32,
    /// The training tasks the choice was made on.
    pub tasks: Vec<String>,
    pub arms: Vec<Arm>,
    /// The label of the chosen arm.
    pub chosen: String,
    /// Its harness hash.
    pub harness: String,
    /// The file holding it, relative to the run directory (`best-fixed.toml`).
    pub file: String,
}

fn usage(m: String) -> EvalError {
    EvalError::Usage(m)
}

/// Read the run in `dir`, choose, write [`CHOICE`] and the harness file (see the module doc).
pub fn choose(dir: &Path) -> Result<Choice, EvalError> {
    let settings: EvalSettings = if dir.join(INVOCATION).exists() {
        read_json(&dir.join(INVOCATION))?
    } else {
        read_json::<EvalConfig>(&dir.join(run_dir::CONFIG))?.settings
    };
    if settings.select != Selection::Always || settings.rounds != 1 {
        return Err(usage(format!(
            "{}: best-fixed reads a run with rounds = 1 and select = \"always\" (so each arm keeps its file harness); this one has rounds = {} and select = \"{}\"",
            dir.display(),
            settings.rounds,
            format!("{:?}", settings.select).to_lowercase()
        )));
    }
    let mut arms = Vec::new();
    let mut tasks: Vec<String> = Vec::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for spec in &settings.proposers {
        let parsed = ProposerSpec::parse(spec)?;
        if !matches!(parsed, ProposerSpec::File(_) | ProposerSpec::Identity) {
            return Err(usage(format!(
                "best-fixed compares fixed harnesses: `{spec}` is not identity or file:"
            )));
        }
        let label = parsed.label();
        let arm_dir = if settings.proposers.len() == 1 {
            dir.to_path_buf()
        } else {
            dir.join(&label)
        };
        let rounds: Vec<RoundRecord> = records::read(&arm_dir.join(run_dir::ROUNDS))
            .map_err(|e| EvalError::Records(e.to_string()))?;
        let last: Vec<&RoundRecord> = rounds.iter().filter(|r| r.round == 1).collect();
        let scores: Vec<f64> = last.iter().filter_map(|r| r.selected_dev).collect();
        if scores.is_empty() || scores.len() != last.len() {
            return Err(usage(format!(
                "{}: round 1 is not finished for every trajectory (run hrl eval --resume first)",
                arm_dir.display()
            )));
        }
        let mut harnesses: Vec<String> = last.iter().map(|r| r.selected.clone()).collect();
        harnesses.sort();
        harnesses.dedup();
        for r in &last {
            if !tasks.contains(&r.task) {
                tasks.push(r.task.clone());
            }
        }
        arms.push(Arm {
            label,
            spec: spec.clone(),
            trajectories: scores.len(),
            dev_mean: scores.iter().sum::<f64>() / scores.len() as f64,
            harnesses,
        });
        dirs.push(arm_dir);
    }
    let (best, _) = arms
        .iter()
        .enumerate()
        .fold((0, f64::NEG_INFINITY), |acc, (i, a)| {
            if a.dev_mean > acc.1 {
                (i, a.dev_mean)
            } else {
                acc
            }
        });
    let Some(arm) = arms.get(best) else {
        return Err(usage(format!("{}: the run has no arms", dir.display())));
    };
    if arm.harnesses.len() != 1 {
        return Err(usage(format!(
            "{}: arm {} kept {} different harnesses: not a fixed harness",
            dir.display(),
            arm.label,
            arm.harnesses.len()
        )));
    }
    let hash = arm.harnesses[0].clone();
    let h = run_dir::RunDir::open_readonly(&dirs[best])
        .and_then(|d| d.load_harness(&hash))
        .map_err(|e| EvalError::Records(e.to_string()))?;
    let file = format!("{HARNESS_STEM}.{}", h.kind().extension());
    let choice = Choice {
        schema: 1,
        tasks,
        chosen: arm.label.clone(),
        harness: hash,
        file: file.clone(),
        arms,
    };
    let write = |name: &str, text: String| {
        std::fs::write(dir.join(name), text)
            .map_err(|e| usage(format!("{}: {e}", dir.join(name).display())))
    };
    write(&file, h.canonical())?;
    write(
        CHOICE,
        serde_json::to_string_pretty(&choice).expect("serialises") + "\n",
    )?;
    Ok(choice)
}

/// The choice as a few lines of text.
pub fn render(c: &Choice) -> String {
    let mut s = format!(
        "best-fixed over {} training task(s): {}\n",
        c.tasks.len(),
        c.tasks.join(", ")
    );
    for a in &c.arms {
        s.push_str(&format!(
            "  {:<28} dev mean {:.3} ({} trajectories){}\n",
            a.label,
            a.dev_mean,
            a.trajectories,
            if a.label == c.chosen {
                "  <- chosen"
            } else {
                ""
            }
        ));
    }
    s
}
