//! One classification of every library error: the caller's fault ([`ErrorKind::Usage`],
//! e.g. an unknown family, a malformed input row, a corrupt model file) or a failure at
//! run time ([`ErrorKind::Runtime`], e.g. a full disk, a dead server, a missing
//! isolation layer). The `hrl` binary turns the kind into its exit code (2 or 1) in one
//! exhaustive match (`src/cli/exit_codes.rs`).
//!
//! Every public error type of the library implements [`Classify`] with an exhaustive
//! `match` over its variants (no `_` arm), so a new variant must be classified where it
//! is written, and is listed in [`classify`], so the binary recognises it anywhere in an
//! error chain. A test reads `src/` and fails when a public `...Error` type is missing
//! from that list.

use std::error::Error as StdError;

/// Whose fault an error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Invalid usage or input: the request cannot succeed as given (exit code 2).
    Usage,
    /// The request was valid but running it failed (exit code 1).
    Runtime,
}

/// Implemented by every public library error type.
pub trait Classify {
    fn kind(&self) -> ErrorKind;
}

macro_rules! classified_types {
    ($($ty:path),* $(,)?) => {
        /// The kind of the first library error found in `err`'s chain of causes
        /// (`err` itself first), or `None` when no cause is a library error.
        pub fn classify(err: &(dyn StdError + 'static)) -> Option<ErrorKind> {
            let mut cur: Option<&(dyn StdError + 'static)> = Some(err);
            while let Some(e) = cur {
                $(
                    if let Some(x) = e.downcast_ref::<$ty>() {
                        return Some(Classify::kind(x));
                    }
                )*
                cur = e.source();
            }
            None
        }

        /// The type names [`classify`] recognises (checked by a test against `src/`).
        pub const CLASSIFIED: &[&str] = &[$(stringify!($ty)),*];
    };
}

classified_types!(
    crate::families::FamilyError,
    crate::families::kit::template::TemplateError,
    crate::families::kit::variant::VariantParseError,
    crate::families::splits::SplitError,
    crate::lcb::LcbError,
    crate::humaneval::HumanEvalError,
    crate::lcb::pickle::PickleError,
    crate::lcb::loader::PrivateTestsError,
    crate::sandbox::SandboxError,
    crate::executor::ExecutorError,
    crate::executor::cache::CacheError,
    crate::executor::prompts::PromptFileError,
    crate::models::ModelError,
    crate::models::gguf::GgufError,
    crate::models::zip::ZipError,
    crate::serve::ServeError,
    crate::task::TaskError,
    crate::harness::HarnessError,
    crate::harness::runtime::RunError,
    crate::proposer::ProposerError,
    crate::eval::EvalError,
    crate::train::TrainError,
    crate::report::ReportError,
    crate::shard::ShardError,
    crate::reward::RewardError,
);

#[cfg(test)]
mod tests {
    use super::*;
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
            "error types not listed in error::classify: {missing:?}"
        );
    }

    #[test]
    fn classify_walks_the_cause_chain() {
        #[derive(Debug, thiserror::Error)]
        #[error("outer")]
        struct Outer(#[source] crate::families::FamilyError);
        let e = Outer(crate::families::FamilyError::ZeroCount);
        assert_eq!(classify(&e), Some(ErrorKind::Usage));
        let io = std::io::Error::other("x");
        assert_eq!(classify(&io), None);
        let s = crate::sandbox::SandboxError::IsolationUnavailable("bwrap".into());
        assert_eq!(classify(&s), Some(ErrorKind::Runtime));
    }
}
