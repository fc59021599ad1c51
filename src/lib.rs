//! harness-rl: an instrument for measuring whether a *proposer* model has learned to
//! improve the harness of a frozen *executor* model, and whether that skill transfers
//! to unseen task families, later problems and longer revision horizons.
//!
//! The library is split into modules that each own one concept; `src/main.rs` (the
//! `hrl` binary) only parses arguments and dispatches here. See `docs/ARCHITECTURE.md`
//! for the code map and the invariants each module keeps.

pub mod error;
pub mod eval;
pub mod executor;
pub mod families;
pub mod grading;
pub mod harness;
pub mod home;
pub mod humaneval;
pub mod jsonl;
pub mod lcb;
pub mod models;
pub mod parallel;
pub mod proposer;
pub mod records;
pub mod report;
pub mod reward;
pub mod sandbox;
pub mod serve;
pub mod shard;
pub mod stats;
pub mod suggest;
pub mod task;
pub mod throughput;
pub mod train;
