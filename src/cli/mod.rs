//! Subcommand implementations for the `hrl` binary: argument structs and the glue
//! that calls the library. No domain logic lives here.

pub mod cache;
pub mod endpoint;
#[cfg(feature = "llama")]
pub mod generate;
pub mod lcb;
pub mod models;
pub mod sandbox;
#[cfg(feature = "llama")]
pub mod serve;
pub mod tasks;

use std::io;

use harness_rl::executor::ExecutorError;
use harness_rl::families::FamilyError;
use harness_rl::lcb::LcbError;
use harness_rl::models::ModelError;
use harness_rl::sandbox::SandboxError;
use harness_rl::serve::ServeError;

/// An invalid request detected by the binary itself (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Map an error to the process exit code (see `src/main.rs`).
pub fn exit_code(err: &anyhow::Error) -> u8 {
    for cause in err.chain() {
        if cause.is::<UsageError>() || cause.is::<FamilyError>() {
            return 2;
        }
        if let Some(e) = cause.downcast_ref::<LcbError>() {
            return if e.is_input_error() { 2 } else { 1 };
        }
        if let Some(SandboxError::InvalidRequest(_)) = cause.downcast_ref::<SandboxError>() {
            return 2;
        }
        if let Some(ServeError::NotLoopback(_) | ServeError::Config(_)) = cause.downcast_ref() {
            return 2;
        }
        if let Some(ExecutorError::InvalidRequest(_)) = cause.downcast_ref() {
            return 2;
        }
        if let Some(e) = cause.downcast_ref::<ModelError>()
            && e.is_invalid_input()
        {
            return 2;
        }
        if let Some(e) = cause.downcast_ref::<io::Error>()
            && e.kind() == io::ErrorKind::BrokenPipe
        {
            // The reader went away (`hrl tasks gen ... | head`): not a failure.
            return 0;
        }
    }
    1
}
