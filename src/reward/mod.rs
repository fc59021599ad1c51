//! The reward service: what RL engines that train large proposer LLMs (TRL, OpenRLHF,
//! verl) need from the instrument — the proposer prompts of training contexts as a
//! dataset, and the reward of a proposer completion in such a context.
//!
//! A **training context** is (task of a suite, parent harness = the task's seed
//! harness, the parent's execution report on the task's feedback set, the task's dev
//! — "scoring" — instances). Contexts are built by the evaluator's own parts: suite
//! and sets from [`crate::eval::suite`] / [`crate::eval::sets`], every rollout by the
//! evaluator's [`Engine`](crate::eval::engine::Engine) (one executor batch for
//! everything in flight, the (task, set, harness hash) memo), the report and the
//! prompt exactly as an `llm:` proposer sees them in round 1 ([`crate::eval::rounds`],
//! [`crate::proposer::llm::messages`]). There is no second scoring engine.
//!
//! - [`context`]: contexts, their stable ids, the exported dataset.
//! - [`score`]: a completion → a revision (parsed exactly as `llm:` proposers' replies
//!   are) → reward parts, memoised by (context, revised harness hash).
//! - [`service`]: the lifetime of one engine, its workers and the contexts.
//! - [`wire`]: the JSON shapes spoken (OpenRLHF's remote reward, the native one).
//! - [`server`]: the loopback HTTP server (`hrl reward-server`), on the HTTP layer of
//!   `hrl serve`.
//!
//! Nothing below this module imports it.

pub mod context;
pub mod score;
pub mod server;
pub mod service;
pub mod wire;

use crate::eval::EvalError;
use crate::eval::config::{EvalSettings, Overrides};
use crate::eval::suite::Suite;

/// Errors of the reward service (a bad completion is never one: it is an invalid
/// revision with a reason).
#[derive(Debug, thiserror::Error)]
pub enum RewardError {
    /// A bad request: flags, an output directory that does not fit.
    #[error("{0}")]
    Usage(String),
    /// Writing the dataset or the logs failed.
    #[error("{0}")]
    Io(String),
    #[error(transparent)]
    Eval(#[from] EvalError),
    #[error(transparent)]
    Serve(#[from] crate::serve::ServeError),
}

impl crate::error::Classify for RewardError {
    fn kind(&self) -> crate::error::ErrorKind {
        use crate::error::ErrorKind::{Runtime, Usage};
        match self {
            RewardError::Usage(_) => Usage,
            RewardError::Io(_) => Runtime,
            RewardError::Eval(e) => e.kind(),
            RewardError::Serve(e) => e.kind(),
        }
    }
}

/// The evaluator settings of a reward service: the suite with the command-line
/// overrides, resolved by the evaluator's one resolver. The proposer list is not used
/// (the prompts are those of the `llm:` template, `suite.proposer` settings apply), so
/// it is set to `identity` whatever the suite lists.
pub fn resolve(suite: &Suite, overrides: &Overrides) -> Result<EvalSettings, RewardError> {
    let o = Overrides {
        proposers: vec!["identity".into()],
        ..overrides.clone()
    };
    Ok(EvalSettings::resolve(suite, &o)?)
}

impl From<crate::records::RecordsError> for RewardError {
    fn from(e: crate::records::RecordsError) -> Self {
        RewardError::Eval(e.into())
    }
}
