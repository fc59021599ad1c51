//! Subcommand implementations for the `hrl` binary: argument structs and the glue
//! that calls the library. No domain logic lives here.

pub mod best_fixed;
pub mod cache;
pub mod contexts;
#[cfg(feature = "llama")]
pub mod doctor;
pub mod endpoint;
pub mod engine_args;
pub mod eval;
pub mod exit_codes;
#[cfg(feature = "llama")]
pub mod generate;
pub mod grading;
pub mod harness;
pub mod humaneval;
pub mod interrupt;
pub mod lcb;
pub mod merge;
pub mod models;
pub mod report;
pub mod reward_server;
pub mod run;
pub mod sandbox;
#[cfg(feature = "llama")]
pub mod serve;
pub mod tasks;
pub mod train;
pub mod transfer;

/// An invalid request detected by the binary itself (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// `hrl compare`'s gate found a regression: B is worse than A by more than the margin
/// with the stated confidence (exit code 3; not an error of the request or of running
/// it).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Regression(pub String);

/// `hrl compare --require-decision` (or `--non-inferior`): the interval straddles the
/// margin, so the gate cannot decide (exit code 4).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Inconclusive(pub String);
