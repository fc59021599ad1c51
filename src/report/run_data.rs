//! Everything a report reads, from a run directory's files alone: `config.json`,
//! `rounds.jsonl`, `candidates.jsonl`, `summary.json` (for its `run_stats` only, when
//! present), `harnesses/<hash>.{toml,py}` (as text) and a trainer's `train.jsonl`.
//! Nothing here opens a model, a sandbox or an executor, so a report renders on a
//! machine with no model installed. A directory with only `train.jsonl` (a trainer's
//! output) is a training-only report.

use std::collections::BTreeMap;
use std::path::Path;

use super::ReportError;
use crate::eval::config::EvalConfig;
use crate::eval::summary::{RunStats, Summary};
use crate::records::run_dir;
use crate::records::train::{self as train_log, TrainStep};
use crate::records::{self, CandidateRecord, RoundRecord};

/// A harness file of the run directory, as text.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HarnessText {
    /// `toml` or `py`.
    pub extension: String,
    pub text: String,
}

/// The evaluation part of a run directory.
#[derive(Debug, Clone)]
pub struct EvalData {
    pub config: EvalConfig,
    pub rounds: Vec<RoundRecord>,
    pub candidates: Vec<CandidateRecord>,
    pub run_stats: Option<RunStats>,
    /// Each task's role in a family split, when the run's config records one
    /// (a `role` field of the task).
    pub recorded_roles: BTreeMap<String, String>,
}

/// A run directory's contents.
#[derive(Debug, Clone)]
pub struct RunData {
    /// The directory's own name (not its path: the report must not depend on where
    /// the directory lies).
    pub name: String,
    pub eval: Option<EvalData>,
    pub harnesses: BTreeMap<String, HarnessText>,
    pub train: Option<Vec<TrainStep>>,
}

fn read_json_value(path: &Path) -> Result<serde_json::Value, ReportError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ReportError::Input(format!("{}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| ReportError::Input(format!("{}: {e}", path.display())))
}

/// Read the evaluation records of `dir` (`None` when it has no `config.json`).
pub fn read_eval(dir: &Path) -> Result<Option<EvalData>, ReportError> {
    let config_path = dir.join(run_dir::CONFIG);
    if !config_path.exists() {
        return Ok(None);
    }
    let raw = read_json_value(&config_path)?;
    let config: EvalConfig = serde_json::from_value(raw.clone())
        .map_err(|e| ReportError::Input(format!("{}: {e}", config_path.display())))?;
    let mut recorded_roles = BTreeMap::new();
    if let Some(tasks) = raw.get("tasks").and_then(|t| t.as_array()) {
        for t in tasks {
            if let (Some(id), Some(role)) = (
                t.get("id").and_then(|x| x.as_str()),
                t.get("role").and_then(|x| x.as_str()),
            ) {
                recorded_roles.insert(id.to_string(), role.to_string());
            }
        }
    }
    let rounds: Vec<RoundRecord> = records::read(&dir.join(run_dir::ROUNDS))?;
    let candidates: Vec<CandidateRecord> = records::read(&dir.join(run_dir::CANDIDATES))?;
    let summary_path = dir.join(run_dir::SUMMARY);
    let run_stats = if summary_path.exists() {
        let s: Summary = serde_json::from_value(read_json_value(&summary_path)?)
            .map_err(|e| ReportError::Input(format!("{}: {e}", summary_path.display())))?;
        Some(s.run_stats)
    } else {
        None
    };
    Ok(Some(EvalData {
        config,
        rounds,
        candidates,
        run_stats,
        recorded_roles,
    }))
}

/// The harness files of `dir/harnesses/` by hash (a missing folder is empty).
pub fn read_harnesses(dir: &Path) -> Result<BTreeMap<String, HarnessText>, ReportError> {
    let h = dir.join(run_dir::HARNESSES);
    let mut out = BTreeMap::new();
    let entries = match std::fs::read_dir(&h) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(ReportError::Io(format!("{}: {e}", h.display()))),
    };
    for entry in entries {
        let path = entry
            .map_err(|e| ReportError::Io(format!("{}: {e}", h.display())))?
            .path();
        let (Some(stem), Some(ext)) = (
            path.file_stem().and_then(|s| s.to_str()),
            path.extension().and_then(|s| s.to_str()),
        ) else {
            continue;
        };
        // Temporary files of an interrupted save are `<hash>.tmp-...`.
        if ext != "toml" && ext != "py" {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| ReportError::Io(format!("{}: {e}", path.display())))?;
        out.insert(
            stem.to_string(),
            HarnessText {
                extension: ext.to_string(),
                text,
            },
        );
    }
    Ok(out)
}

/// The sub-directories of `dir` that are evaluation run directories (an `hrl eval`
/// output directory of several proposers holds one per proposer), sorted.
fn run_dirs_inside(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(run_dir::CONFIG).is_file())
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    v.sort();
    v
}

/// Read a run directory (an evaluation's, a trainer's, or both).
pub fn load(dir: &Path) -> Result<RunData, ReportError> {
    if !dir.is_dir() {
        return Err(ReportError::Input(format!(
            "{}: not a directory",
            dir.display()
        )));
    }
    let eval = read_eval(dir)?;
    let train = train_log::read_train_log(&dir.join(train_log::TRAIN_LOG))?;
    if eval.is_none() && train.is_none() {
        let arms = run_dirs_inside(dir);
        if !arms.is_empty() {
            return Err(ReportError::Input(format!(
                "{}: holds the run directories of several proposers ({}) but no eval.json: report one of them",
                dir.display(),
                arms.join(", ")
            )));
        }
        return Err(ReportError::Input(format!(
            "{}: not a run directory (no {} and no {})",
            dir.display(),
            run_dir::CONFIG,
            train_log::TRAIN_LOG
        )));
    }
    let name = dir
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dir.display().to_string());
    Ok(RunData {
        name,
        eval,
        harnesses: read_harnesses(dir)?,
        train,
    })
}
