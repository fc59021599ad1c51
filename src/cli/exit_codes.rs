//! Exit codes of `hrl`: the documented table and the one exhaustive match that maps an
//! outcome to its code.
//!
//! | code | meaning |
//! | --- | --- |
//! | 0 | success (also: the reader of our output went away, e.g. `hrl tasks gen … \| head`) |
//! | 1 | runtime failure: the request was valid but running it failed (I/O, a dead server, a missing isolation layer, a solution that could not be graded); also `hrl compare --fail-if-worse DELTA` when B is worse than A by more than DELTA with confidence (the gate failed) |
//! | 2 | invalid usage or input: bad flags (clap's own usage errors use 2 as well), an unknown family or model, a malformed input file, a corrupt model file, two runs `hrl compare` cannot pair (the message names the field that differs) |

use std::io;

use harness_rl::error::{ErrorKind, classify};

use super::{GateFailed, UsageError};

pub const SUCCESS: u8 = 0;
pub const RUNTIME_FAILURE: u8 = 1;
pub const USAGE: u8 = 2;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    /// The downstream reader closed its end of a pipe: not a failure.
    BrokenPipe,
    Failed(ErrorKind),
    /// `hrl compare --fail-if-worse`: the regression gate failed.
    GateFailed,
    /// An error that no library type claims: treated as a runtime failure.
    Unclassified,
}

/// The exit code of an outcome.
pub fn process_exit_code(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Success | Outcome::BrokenPipe => SUCCESS,
        Outcome::Failed(ErrorKind::Usage) => USAGE,
        Outcome::Failed(ErrorKind::Runtime) | Outcome::GateFailed | Outcome::Unclassified => {
            RUNTIME_FAILURE
        }
    }
}

/// Classify a command's error: the binary's own usage errors, then the first library
/// error in the chain, then a broken pipe.
pub fn outcome_of(err: &anyhow::Error) -> Outcome {
    for cause in err.chain() {
        if cause.is::<UsageError>() {
            return Outcome::Failed(ErrorKind::Usage);
        }
        if cause.is::<GateFailed>() {
            return Outcome::GateFailed;
        }
        if let Some(kind) = classify(cause) {
            return Outcome::Failed(kind);
        }
        if let Some(e) = cause.downcast_ref::<io::Error>()
            && e.kind() == io::ErrorKind::BrokenPipe
        {
            return Outcome::BrokenPipe;
        }
    }
    Outcome::Unclassified
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_rl::families::FamilyError;

    #[test]
    fn codes() {
        let usage = anyhow::Error::new(FamilyError::ZeroCount).context("generating");
        assert_eq!(process_exit_code(outcome_of(&usage)), USAGE);
        let bin = anyhow::Error::new(UsageError("bad flag".into()));
        assert_eq!(process_exit_code(outcome_of(&bin)), USAGE);
        let pipe = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe));
        assert_eq!(process_exit_code(outcome_of(&pipe)), SUCCESS);
        let gate = anyhow::Error::new(GateFailed("worse".into()));
        assert_eq!(outcome_of(&gate), Outcome::GateFailed);
        assert_eq!(process_exit_code(outcome_of(&gate)), RUNTIME_FAILURE);
        let not_comparable = anyhow::Error::new(harness_rl::report::ReportError::NotComparable {
            field: "seed".into(),
            detail: "A: 0, B: 1".into(),
        });
        assert_eq!(process_exit_code(outcome_of(&not_comparable)), USAGE);
        let other = anyhow::anyhow!("something else");
        assert_eq!(outcome_of(&other), Outcome::Unclassified);
        assert_eq!(process_exit_code(outcome_of(&other)), RUNTIME_FAILURE);
    }
}
