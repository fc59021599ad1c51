//! Exit codes of `hrl`: the documented table, the one exhaustive match that maps an
//! outcome to its code, and the list of the library's error types (each classified by
//! `harness_rl::error::Classify`) that decides which library error a failure is.
//!
//! | code | meaning |
//! | --- | --- |
//! | 0 | success (also: the reader of our output went away, e.g. `hrl tasks gen … \| head`) |
//! | 1 | runtime failure: the request was valid but running it failed (I/O, a dead server, a missing isolation layer, a solution that could not be graded) |
//! | 2 | invalid usage or input: bad flags (clap's own usage errors use 2 as well), an unknown family or model, a malformed input file, a corrupt model file, two runs `hrl compare` cannot pair (the message names the field that differs), a run cut with `--limit` given to `hrl compare` without `--allow-limited` |
//! | 3 | regression: `hrl compare`'s gate (`--fail-if-worse DELTA` or `--non-inferior MARGIN`) found B worse than A by more than the margin with the stated confidence |
//! | 4 | inconclusive: `hrl compare --require-decision` (or `--non-inferior`), and the interval of B − A contains −margin, so the data decide neither way |

use std::error::Error as StdError;
use std::io;

use harness_rl::error::ErrorKind;

use super::{Inconclusive, Regression, UsageError};

macro_rules! classified_types {
    ($($ty:path),* $(,)?) => {
        /// The kind of the first library error found in `err`'s chain of causes
        /// (`err` itself first), or `None` when no cause is a library error.
        pub fn classify(err: &(dyn StdError + 'static)) -> Option<ErrorKind> {
            let mut cur: Option<&(dyn StdError + 'static)> = Some(err);
            while let Some(e) = cur {
                $(
                    if let Some(x) = e.downcast_ref::<$ty>() {
                        return Some(harness_rl::error::Classify::kind(x));
                    }
                )*
                cur = e.source();
            }
            None
        }

        /// The type names [`classify`] recognises (checked by a test against `src/`).
        #[cfg(test)]
        pub const CLASSIFIED: &[&str] = &[$(stringify!($ty)),*];
    };
}

classified_types!(
    harness_rl::families::FamilyError,
    harness_rl::families::kit::template::TemplateError,
    harness_rl::families::kit::variant::VariantParseError,
    harness_rl::families::splits::SplitError,
    harness_rl::lcb::LcbError,
    harness_rl::humaneval::HumanEvalError,
    harness_rl::lcb::pickle::PickleError,
    harness_rl::lcb::loader::PrivateTestsError,
    harness_rl::sandbox::SandboxError,
    harness_rl::executor::ExecutorError,
    harness_rl::executor::cache::CacheError,
    harness_rl::executor::prompts::PromptFileError,
    harness_rl::models::ModelError,
    harness_rl::models::gguf::GgufError,
    harness_rl::models::zip::ZipError,
    harness_rl::serve::ServeError,
    harness_rl::task::TaskError,
    harness_rl::harness::HarnessError,
    harness_rl::harness::runtime::RunError,
    harness_rl::proposer::ProposerError,
    harness_rl::records::RecordsError,
    harness_rl::eval::EvalError,
    harness_rl::train::TrainError,
    harness_rl::report::ReportError,
    harness_rl::shard::ShardError,
    harness_rl::reward::RewardError,
);

pub const SUCCESS: u8 = 0;
pub const RUNTIME_FAILURE: u8 = 1;
pub const USAGE: u8 = 2;
pub const REGRESSION: u8 = 3;
pub const INCONCLUSIVE: u8 = 4;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    /// The downstream reader closed its end of a pipe: not a failure.
    BrokenPipe,
    Failed(ErrorKind),
    /// `hrl compare`'s gate: B is worse than A beyond the margin.
    Regression,
    /// `hrl compare`'s gate could not decide and a decision was required.
    Inconclusive,
    /// An error that no library type claims: treated as a runtime failure.
    Unclassified,
}

/// The exit code of an outcome.
pub fn process_exit_code(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Success | Outcome::BrokenPipe => SUCCESS,
        Outcome::Failed(ErrorKind::Usage) => USAGE,
        Outcome::Failed(ErrorKind::Runtime) | Outcome::Unclassified => RUNTIME_FAILURE,
        Outcome::Regression => REGRESSION,
        Outcome::Inconclusive => INCONCLUSIVE,
    }
}

/// Classify a command's error: the binary's own usage errors, then the first library
/// error in the chain, then a broken pipe.
/// The error and its causes, joined by `: ` (as `{:#}` prints them), leaving out a
/// cause whose text the message already ends with (an error that prints its source
/// as part of its own text would otherwise say everything twice).
pub fn message(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if out.ends_with(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

pub fn outcome_of(err: &anyhow::Error) -> Outcome {
    for cause in err.chain() {
        if cause.is::<UsageError>() {
            return Outcome::Failed(ErrorKind::Usage);
        }
        if cause.is::<Regression>() {
            return Outcome::Regression;
        }
        if cause.is::<Inconclusive>() {
            return Outcome::Inconclusive;
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
    use std::path::Path;

    /// Every `pub enum XxxError` / `pub struct XxxError` under `src/` (outside the
    /// binary's `cli/`) must be in [`CLASSIFIED`].
    #[test]
    fn every_public_error_type_is_classified() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut missing = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    if path != root.join("cli") {
                        stack.push(path);
                    }
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                for line in text.lines() {
                    let l = line.trim_start();
                    let rest = l
                        .strip_prefix("pub enum ")
                        .or_else(|| l.strip_prefix("pub struct "));
                    let Some(rest) = rest else { continue };
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if name.ends_with("Error")
                        && !CLASSIFIED.iter().any(|t| t.ends_with(&format!("::{name}")))
                    {
                        missing.push(format!("{name} ({})", path.display()));
                    }
                }
            }
        }
        assert!(
            missing.is_empty(),
            "error types not listed in exit_codes::classified_types!: {missing:?}"
        );
    }

    #[test]
    fn classify_walks_the_cause_chain() {
        #[derive(Debug, thiserror::Error)]
        #[error("outer")]
        struct Outer(#[source] harness_rl::families::FamilyError);
        let e = Outer(harness_rl::families::FamilyError::ZeroCount);
        assert_eq!(classify(&e), Some(ErrorKind::Usage));
        let io = std::io::Error::other("x");
        assert_eq!(classify(&io), None);
        let s = harness_rl::sandbox::SandboxError::IsolationUnavailable("bwrap".into());
        assert_eq!(classify(&s), Some(ErrorKind::Runtime));
    }

    #[test]
    fn codes() {
        let usage = anyhow::Error::new(FamilyError::ZeroCount).context("generating");
        assert_eq!(process_exit_code(outcome_of(&usage)), USAGE);
        let bin = anyhow::Error::new(UsageError("bad flag".into()));
        assert_eq!(process_exit_code(outcome_of(&bin)), USAGE);
        let pipe = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe));
        assert_eq!(process_exit_code(outcome_of(&pipe)), SUCCESS);
        let gate = anyhow::Error::new(Regression("worse".into())).context("comparing");
        assert_eq!(outcome_of(&gate), Outcome::Regression);
        assert_eq!(process_exit_code(outcome_of(&gate)), REGRESSION);
        let open = anyhow::Error::new(Inconclusive("straddles".into()));
        assert_eq!(outcome_of(&open), Outcome::Inconclusive);
        assert_eq!(process_exit_code(outcome_of(&open)), INCONCLUSIVE);
        // Every code is distinct.
        let codes = [SUCCESS, RUNTIME_FAILURE, USAGE, REGRESSION, INCONCLUSIVE];
        for (i, a) in codes.iter().enumerate() {
            assert!(codes[i + 1..].iter().all(|b| a != b));
        }
        let not_comparable = anyhow::Error::new(harness_rl::report::ReportError::NotComparable {
            field: "seed".into(),
            detail: "A: 0, B: 1".into(),
        });
        assert_eq!(process_exit_code(outcome_of(&not_comparable)), USAGE);
        let other = anyhow::anyhow!("something else");
        assert_eq!(outcome_of(&other), Outcome::Unclassified);
        assert_eq!(process_exit_code(outcome_of(&other)), RUNTIME_FAILURE);
    }

    /// An error whose text already includes its source is printed once.
    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let inner = harness_rl::executor::ExecutorError::InvalidRequest("unknown model".into());
        let e = anyhow::Error::from(harness_rl::proposer::ProposerError::Executor(inner));
        assert_eq!(
            message(&e),
            "proposer model: invalid request: unknown model"
        );
        let e = anyhow::anyhow!("inner").context("outer");
        assert_eq!(message(&e), "outer: inner");
    }
}
