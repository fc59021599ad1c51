//! The run directory and its records, in one place below every writer (`eval`,
//! `train`, the reward service) and every reader (`report`, `hrl compare`,
//! `hrl merge`, resuming runs): the layout and file names ([`run_dir`]), the record
//! types of an evaluation (here) and of a training run ([`train`]), and the one strict
//! JSON-lines reader ([`read`]).
//!
//! An evaluation's records (one JSON object per line, appended and flushed as the run
//! goes):
//!
//! - `rollouts.jsonl`: the harness runtime's [`crate::harness::rollout::Rollout`]
//!   records, unchanged (every executor and tool call), one per (item, harness);
//! - `proposals.jsonl`: [`ProposalRecord`], one per (task, sample, round): what the
//!   proposer returned, raw outputs included, written before any candidate is scored
//!   (a resumed run replays it instead of asking the proposer again);
//! - `candidates.jsonl`: [`CandidateRecord`], one per candidate, with its status and
//!   dev score, written when its round's dev scoring is done;
//! - `rounds.jsonl`: [`RoundRecord`], one per (task, sample, round) — round 0 is the
//!   seed harness — with the kept harness and its per-instance test scores.
//!
//! `summary.json` is a function of `config.json` and these records alone, which is
//! what makes resumed runs and re-rendered reports equal to uninterrupted ones.

pub mod run_dir;
pub mod train;

use serde::{Deserialize, Serialize};

use crate::harness::HarnessKind;
use crate::proposer::{RevisionForm, TokenUse};

/// The sets of a task (disjoint; see `eval::sets`): feedback, dev and test, and the
/// held-out validation set only the trainer's monitor scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SetName {
    Feedback,
    Dev,
    Test,
    Validation,
}

impl SetName {
    /// In building order: validation last, so that adding it leaves the instances of
    /// the other three sets as they were.
    pub const ALL: [SetName; 4] = [
        SetName::Feedback,
        SetName::Dev,
        SetName::Test,
        SetName::Validation,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SetName::Feedback => "feedback",
            SetName::Dev => "dev",
            SetName::Test => "test",
            SetName::Validation => "validation",
        }
    }

    /// The set's place in a family's instance stream (feedback 0, dev 1, test 2,
    /// validation 3).
    pub fn index(self) -> u64 {
        match self {
            SetName::Feedback => 0,
            SetName::Dev => 1,
            SetName::Test => 2,
            SetName::Validation => 3,
        }
    }
}

/// Errors of reading or writing a run directory.
#[derive(Debug, thiserror::Error)]
pub enum RecordsError {
    /// A request that does not fit the directory (locked by another process, not a
    /// run directory).
    #[error("{0}")]
    Usage(String),
    /// Reading or writing failed.
    #[error("{0}")]
    Io(String),
    /// A record or harness file is damaged (the message names file and line).
    #[error("{0}")]
    Damaged(String),
}

impl crate::error::Classify for RecordsError {
    fn kind(&self) -> crate::error::ErrorKind {
        use crate::error::ErrorKind::{Runtime, Usage};
        match self {
            RecordsError::Usage(_) | RecordsError::Damaged(_) => Usage,
            RecordsError::Io(_) => Runtime,
        }
    }
}

/// Version of the record layouts.
pub const RECORD_SCHEMA: u32 = 1;

/// What became of a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CandidateStatus {
    /// A new harness, scored on the dev set.
    Scored,
    /// Byte-identical (same hash) to an earlier candidate of the round: not re-scored.
    Duplicate,
    /// Identical to the parent.
    Unchanged,
    /// Did not parse, apply or validate (the reason says which).
    Invalid,
}

impl CandidateStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CandidateStatus::Scored => "scored",
            CandidateStatus::Duplicate => "duplicate",
            CandidateStatus::Unchanged => "unchanged",
            CandidateStatus::Invalid => "invalid",
        }
    }
}

/// One proposed candidate, as the proposer returned it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProposedCandidate {
    /// The harness's hash (its file is `harnesses/<hash>.<ext>`), when it parsed.
    pub hash: Option<String>,
    pub kind: Option<HarnessKind>,
    pub form: Option<RevisionForm>,
    /// Why it is invalid, when it is.
    pub reason: Option<String>,
    /// The raw proposer output.
    pub raw: Option<String>,
    pub tokens: TokenUse,
    pub cached: bool,
}

/// `proposals.jsonl`: one proposer call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProposalRecord {
    pub schema: u32,
    pub task: String,
    pub sample: u32,
    pub round: u32,
    pub parent: String,
    pub seed: u64,
    /// The prompt a prompted proposer was shown.
    pub prompt: Option<String>,
    pub candidates: Vec<ProposedCandidate>,
    pub wall_ms: u64,
}

/// `candidates.jsonl`: one candidate and what the round made of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateRecord {
    pub schema: u32,
    pub task: String,
    pub sample: u32,
    pub round: u32,
    pub index: usize,
    pub parent: String,
    pub status: CandidateStatus,
    pub hash: Option<String>,
    pub kind: Option<HarnessKind>,
    pub form: Option<RevisionForm>,
    /// Mean dev score (scored and duplicate candidates).
    pub dev: Option<f64>,
    pub reason: Option<String>,
    pub raw: Option<String>,
    pub tokens: TokenUse,
    /// This candidate was the one the round kept.
    pub selected: bool,
}

/// A harness's score on one set, per instance in the set's item order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetScore {
    pub set: SetName,
    pub harness: String,
    pub mean: f64,
    pub scores: Vec<f64>,
    /// Rollouts that made no executor call.
    pub executor_free: usize,
    /// Prompt plus completion tokens of the set's rollouts.
    pub tokens: u64,
}

/// `rounds.jsonl`: one round of one trajectory (round 0: the seed harness).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundRecord {
    pub schema: u32,
    pub task: String,
    pub sample: u32,
    pub round: u32,
    pub parent: String,
    /// The parent's feedback-set score (when the proposer read a report).
    pub parent_feedback: Option<f64>,
    /// The parent's dev score (when candidates were scored, and in the last round).
    pub parent_dev: Option<f64>,
    pub candidates: usize,
    pub scored: usize,
    pub duplicate: usize,
    pub unchanged: usize,
    pub invalid: usize,
    /// The harness kept.
    pub selected: String,
    pub selected_kind: HarnessKind,
    /// A candidate replaced the parent.
    pub accepted: bool,
    /// The kept harness's dev score, when known (always in the last round).
    pub selected_dev: Option<f64>,
    /// The kept harness's test scores (never used for selection).
    pub test: SetScore,
    /// Executor tokens of every set evaluation this round used, counted once per
    /// trajectory (as if the trajectory ran alone; shared and cached work included).
    pub executor_tokens: u64,
    pub proposer_tokens: TokenUse,
    /// Sizes of the dev-scoring batches: harnesses scored together and their rollouts.
    pub dev_batch: Option<DevBatch>,
    pub wall_ms: u64,
}

/// One round's dev scoring: all candidates (and the parent) submitted at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DevBatch {
    /// Harnesses in the batch (the new candidates, plus the parent when its dev score
    /// was not known yet).
    pub harnesses: usize,
    /// Rollouts the batch needed before memoisation and the completion cache.
    pub rollouts: usize,
    /// Rollouts actually run (not answered by an earlier evaluation).
    pub run: usize,
}

/// Read a JSON-lines file of records. A torn last line (a process killed while
/// writing) is ignored; any other bad line is an error naming it. A missing file is
/// empty.
pub fn read<T: for<'de> Deserialize<'de>>(path: &std::path::Path) -> Result<Vec<T>, RecordsError> {
    Ok(read_checked(path, |_: &T| Ok(()))?.unwrap_or_default())
}

/// [`read`] with a check of every parsed record (`Err(reason)` names what is wrong,
/// reported as `file:line: reason`); `None` when there is no such file.
pub fn read_checked<T: for<'de> Deserialize<'de>>(
    path: &std::path::Path,
    check: impl Fn(&T) -> Result<(), String>,
) -> Result<Option<Vec<T>>, RecordsError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(RecordsError::Io(format!("{}: {e}", path.display()))),
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let last = lines.len().saturating_sub(1);
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let damaged = |reason: String| {
            RecordsError::Damaged(format!("{}:{}: {reason}", path.display(), i + 1))
        };
        match serde_json::from_str::<T>(line) {
            Ok(r) => {
                check(&r).map_err(damaged)?;
                out.push(r);
            }
            // A torn last line: the writer was killed while writing it.
            Err(_) if i == last => {}
            Err(e) => return Err(damaged(e.to_string())),
        }
    }
    Ok(Some(out))
}
