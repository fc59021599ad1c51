//! Training the compact proposer (`hrl train`, `policy:CKPT`): the "RL" of Harness RL.
//!
//! - [`features`]: task-agnostic features of a proposal context (report, answers,
//!   harness) — never the family name.
//! - [`policy`]: the log-linear policy over typed edits, seeded sampling with
//!   masking, the analytic gradient of the GRPO objective, Adam.
//! - [`checkpoint`]: versioned JSON checkpoints that load back bit-exactly.
//! - [`proposer`]: the `policy:CKPT` proposer for `hrl eval`.
//! - [`config`]: the library config of `hrl train`.
//! - [`trainer`]: the GRPO-style training loop, reusing the evaluator's sets and
//!   scoring engine (with its reward memo).
//!
//! This module reads `proposer` and `eval`; nothing below it imports it. The
//! `policy:` proposer kind is opened through the registration hook of
//! `proposer` ([`register`]), which the `hrl` binary calls at start-up.

pub mod checkpoint;
pub mod config;
pub mod features;
pub mod policy;
pub mod proposer;
pub mod trainer;

use crate::eval::EvalError;

/// Errors of training and of loading checkpoints.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// A bad request: flags, a suite without `[train]`, a run directory that does not fit.
    #[error("{0}")]
    Usage(String),
    /// A checkpoint that cannot be read or does not fit this build.
    #[error("{path}: {message}")]
    Checkpoint { path: String, message: String },
    /// Reading or writing the output directory failed.
    #[error("{0}")]
    Io(String),
    /// A damaged log of the output directory.
    #[error("{0}")]
    Records(String),
    #[error(transparent)]
    Eval(#[from] EvalError),
}

impl From<crate::harness::HarnessError> for TrainError {
    fn from(e: crate::harness::HarnessError) -> Self {
        TrainError::Eval(EvalError::Harness(e))
    }
}

impl crate::error::Classify for TrainError {
    fn kind(&self) -> crate::error::ErrorKind {
        use crate::error::ErrorKind::{Runtime, Usage};
        match self {
            TrainError::Usage(_) | TrainError::Checkpoint { .. } | TrainError::Records(_) => Usage,
            TrainError::Io(_) => Runtime,
            TrainError::Eval(e) => e.kind(),
        }
    }
}

/// Register the `policy:CKPT` opener with the proposer module (idempotent: returns
/// whether this call registered it). Library users call it once before opening
/// `policy:` proposers; the `hrl` binary does at start-up.
pub fn register() -> bool {
    crate::proposer::register_policy_opener(proposer::opener)
}

impl From<crate::records::RecordsError> for TrainError {
    fn from(e: crate::records::RecordsError) -> Self {
        TrainError::Eval(e.into())
    }
}
