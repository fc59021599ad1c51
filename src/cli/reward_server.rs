//! `hrl reward-server`: serve rewards of proposer completions on loopback for RL
//! engines (OpenRLHF's remote reward shape, a native JSON endpoint; TRL and verl
//! through the shims in examples/). Flags become library settings; the library serves.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use harness_rl::reward::score::RewardConfig;
use harness_rl::reward::server::{self, ServerConfig};

use super::UsageError;
use super::contexts::SuiteArgs;

#[derive(Args)]
pub struct RewardServerArgs {
    #[command(flatten)]
    pub suite: SuiteArgs,
    /// Loopback address and port to listen on (port 0 picks a free one; the URL is the
    /// first line on stdout once the contexts are built).
    #[arg(long, default_value = "127.0.0.1:8090")]
    pub addr: SocketAddr,
    /// Added to the score of a valid revision that executes.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub validity_bonus: f64,
    /// The reward of an invalid revision (and of a row without a known context).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub invalid_reward: f64,
    /// Write rollouts.jsonl, rewards.jsonl and harnesses/ here (reused on restart).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Most client connections open at once (more are answered 503).
    #[arg(long, default_value_t = 256)]
    pub max_connections: usize,
    /// Largest request body in MiB.
    #[arg(long, default_value_t = 64)]
    pub max_body_mib: usize,
    /// Seconds a connection may send nothing before it is closed.
    #[arg(long, default_value_t = 600.0)]
    pub idle_timeout_s: f64,
    /// Most (task, revised harness) evaluations kept in memory for repeats; older ones
    /// are dropped first and scored again if asked for (their model calls then come
    /// from the completion cache).
    #[arg(long, default_value_t = server::DEFAULT_MEMO_CAPACITY)]
    pub memo_capacity: usize,
}

pub fn run(a: RewardServerArgs) -> Result<()> {
    if !a.addr.ip().is_loopback() {
        return Err(UsageError(format!(
            "--addr {}: not a loopback address; `hrl reward-server` listens on 127.0.0.1 or ::1 only",
            a.addr
        ))
        .into());
    }
    for (name, v) in [
        ("--validity-bonus", a.validity_bonus),
        ("--invalid-reward", a.invalid_reward),
    ] {
        if !v.is_finite() {
            return Err(UsageError(format!("{name} must be a finite number")).into());
        }
    }
    if !(a.idle_timeout_s > 0.0 && a.idle_timeout_s.is_finite() && a.idle_timeout_s <= 1e9) {
        return Err(
            UsageError("--idle-timeout-s must be a positive number of seconds".into()).into(),
        );
    }
    let max_body_bytes = a
        .max_body_mib
        .checked_mul(1 << 20)
        .filter(|&b| b > 0)
        .ok_or_else(|| UsageError("--max-body-mib must be >= 1".into()))?;
    if a.memo_capacity == 0 {
        return Err(UsageError("--memo-capacity must be >= 1".into()).into());
    }
    if a.max_connections == 0 {
        return Err(UsageError("--max-connections must be >= 1".into()).into());
    }
    let settings = a.suite.settings()?;
    let cfg = ServerConfig {
        addr: a.addr,
        max_connections: a.max_connections,
        max_body_bytes,
        idle_timeout: Duration::from_secs_f64(a.idle_timeout_s),
        memo_capacity: a.memo_capacity,
    };
    let reward = RewardConfig {
        validity_bonus: a.validity_bonus,
        invalid_reward: a.invalid_reward,
    };
    eprintln!("hrl reward-server: building the contexts (the parents' feedback runs)...");
    let stop = AtomicBool::new(false);
    server::serve(
        &settings,
        reward,
        &cfg,
        a.out.as_deref(),
        &stop,
        &mut |ready| {
            // The first stdout line is the base URL, for scripts that start the server.
            println!("http://{}", ready.addr);
            let _ = std::io::stdout().flush();
            eprintln!(
                "hrl reward-server: {} contexts, executor {}, at http://{} (POST /get_reward, POST /score, GET /contexts, GET /health)",
                ready.contexts.len(),
                ready.executor_model_id,
                ready.addr
            );
            for c in ready.contexts {
                eprintln!("  {}  {}", c.id, c.task);
            }
        },
    )?;
    Ok(())
}
