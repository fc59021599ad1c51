//! The flags shared by the commands that run the evaluation engine, declared once
//! and flattened into each command's arguments (ripgrep's one flags → config place):
//! [`EngineArgs`] (executor, concurrency, sandbox, cache: `hrl eval`, `hrl transfer`,
//! `hrl train`, `hrl contexts export`, `hrl reward-server`) and [`ProtocolArgs`] (the
//! proposers and the design: `hrl eval`, `hrl transfer`). Each becomes its part of the
//! library's overrides in one function.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use harness_rl::eval::config::{EngineOverrides, Overrides};

/// How the engine runs: which executor, how many rollouts in flight, the sandbox and
/// the completion cache.
#[derive(Args, Clone, Debug)]
pub struct EngineArgs {
    /// Executor SPEC (overrides the suite's): llama:NAME|PATH[,...] or openai:URL#MODEL[,...].
    #[arg(long)]
    pub executor: Option<String>,
    /// Rollouts in flight [default: the suite's, else 2 x the executor's parallelism].
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Run sandboxed code without the isolation layers that are missing (trusted
    /// code only).
    #[arg(long)]
    pub unsafe_no_isolation: bool,
    /// The sandbox's Python interpreter (a path, or a name looked up on PATH); its
    /// version and installed packages are part of the results' identity.
    #[arg(long, value_name = "PYTHON")]
    pub python: Option<PathBuf>,
    #[command(flatten)]
    pub cache: super::cache::CacheArgs,
}

impl EngineArgs {
    pub fn overrides(&self) -> EngineOverrides {
        EngineOverrides {
            executor: self.executor.clone(),
            concurrency: self.concurrency,
            cache: self.cache.choice(),
            unsafe_no_isolation: self.unsafe_no_isolation,
            python: self.python.clone(),
        }
    }
}

/// Who proposes and the size of the design: proposers, G, M, the run seed, a subset
/// of tasks, `--limit` and `--shard`.
#[derive(Args, Clone, Debug)]
pub struct ProtocolArgs {
    /// Proposer SPEC, repeatable (overrides the suite's list): identity, file:PATH,
    /// llm:EXECUTOR_SPEC, cmd:PROGRAM [ARGS], policy:CKPT.
    #[arg(long)]
    pub proposer: Vec<String>,
    /// Candidates per round G.
    #[arg(long)]
    pub candidates: Option<u32>,
    /// Harness samples M (proposer seeds).
    #[arg(long)]
    pub samples: Option<u32>,
    /// The run seed (proposer seeds derive from it).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Only these tasks of the suite (task id like count_primes/L1, or a family name;
    /// repeatable).
    #[arg(long)]
    pub task: Vec<String>,
    /// Cut every set to N instances for a quick look (marked not comparable).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Run only shard I of N of the (task, harness sample) units (1-based, round-robin;
    /// combine the shards' directories with `hrl merge`).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
}

impl ProtocolArgs {
    /// These flags and the engine's as evaluator overrides (the rest left unset).
    pub fn overrides(&self, engine: &EngineArgs, out: Option<PathBuf>) -> Result<Overrides> {
        Ok(Overrides {
            engine: engine.overrides(),
            proposers: self.proposer.clone(),
            candidates: self.candidates,
            samples: self.samples,
            seed: self.seed,
            limit: self.limit,
            tasks: self.task.clone(),
            out,
            shard: self
                .shard
                .as_deref()
                .map(str::parse::<harness_rl::shard::Shard>)
                .transpose()?,
            ..Overrides::default()
        })
    }
}
