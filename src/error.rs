//! One classification of every library error: the caller's fault ([`ErrorKind::Usage`],
//! e.g. an unknown family, a malformed input row, a corrupt model file) or a failure at
//! run time ([`ErrorKind::Runtime`], e.g. a full disk, a dead server, a missing
//! isolation layer). The `hrl` binary turns the kind into its exit code (2 or 1) in one
//! exhaustive match (`src/cli/exit_codes.rs`).
//!
//! Every public error type of the library implements [`Classify`] with an exhaustive
//! `match` over its variants (no `_` arm), so a new variant must be classified where it
//! is written. The list of those types, which lets the binary recognise one anywhere in
//! an error chain, lives where exit codes are decided (`src/cli/exit_codes.rs`), so
//! this module is a leaf that names no other module of the crate.

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
