//! `hrl serve`: load a model once and expose it on loopback through the
//! OpenAI-compatible API (`harness_rl::serve`), so several processes can share it.

use std::io::Write;
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use harness_rl::executor::Executor;
use harness_rl::serve::{ServeConfig, Server};

use super::UsageError;
use super::cache::CacheArgs;
use super::generate::ModelArgs;

#[derive(Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Port to listen on (0 picks a free one; the address is printed on stdout).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Loopback address to bind (127.0.0.1 or ::1; other addresses are refused).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: IpAddr,
    /// Model name clients send [default: the --model name, or the file stem of a path].
    #[arg(long)]
    pub name: Option<String>,
    /// Most requests handed to the executor in one batch.
    #[arg(long, default_value_t = 64)]
    pub max_batch: usize,
    /// Milliseconds to wait for more requests once one arrives.
    #[arg(long, default_value_t = 5)]
    pub batch_window_ms: u64,
    /// Batches that may run in the executor at once (llama.cpp merges them into its
    /// continuous batch; 1 makes each batch wait for the previous one).
    #[arg(long, default_value_t = 8)]
    pub concurrent_batches: usize,
    /// Most client connections open at once (more are answered 503).
    #[arg(long, default_value_t = 256)]
    pub max_connections: usize,
    /// Largest request body in MiB (larger ones are answered 413).
    #[arg(long, default_value_t = 16)]
    pub max_body_mib: usize,
    /// Seconds a connection may send nothing before it is closed.
    #[arg(long, default_value_t = 120.0)]
    pub idle_timeout_s: f64,
    #[command(flatten)]
    pub cache: CacheArgs,
}

pub fn run(a: ServeArgs) -> Result<()> {
    if !a.host.is_loopback() {
        return Err(UsageError(format!(
            "--host {} is not a loopback address; `hrl serve` listens on 127.0.0.1 or ::1 only",
            a.host
        ))
        .into());
    }
    if a.max_batch == 0 || a.max_connections == 0 || a.concurrent_batches == 0 {
        return Err(UsageError(
            "--max-batch, --max-connections and --concurrent-batches must be >= 1".into(),
        )
        .into());
    }
    let max_body_bytes = a
        .max_body_mib
        .checked_mul(1 << 20)
        .filter(|&b| b > 0)
        .ok_or_else(|| UsageError("--max-body-mib must be >= 1 and fit in memory".into()))?;
    if !(a.idle_timeout_s > 0.0 && a.idle_timeout_s.is_finite() && a.idle_timeout_s <= 1e9) {
        return Err(
            UsageError("--idle-timeout-s must be a positive number of seconds".into()).into(),
        );
    }
    let name = a.name.clone().unwrap_or_else(|| {
        let p = Path::new(&a.model.model);
        if a.model.model.ends_with(".gguf") {
            p.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| a.model.model.clone())
        } else {
            a.model.model.clone()
        }
    });
    let exec: Arc<dyn Executor> = Arc::new(a.model.load()?);
    let (exec, _cached) = a.cache.wrap(exec)?;
    let mut cfg = ServeConfig::new(name.clone());
    cfg.host = a.host;
    cfg.port = a.port;
    cfg.max_batch = a.max_batch;
    cfg.batch_window = Duration::from_millis(a.batch_window_ms);
    cfg.max_connections = a.max_connections;
    cfg.concurrent_batches = a.concurrent_batches;
    cfg.max_body_bytes = max_body_bytes;
    cfg.idle_timeout = Duration::from_secs_f64(a.idle_timeout_s);
    let model_id = exec.model_id().to_string();
    let server = Server::start(exec, cfg)?;
    // The first stdout line is the base URL, for scripts that start the server.
    println!("{}", server.base_url());
    std::io::stdout().flush()?;
    eprintln!(
        "hrl serve: model {name} ({model_id}) at {} (endpoints /v1/chat/completions, /v1/completions, /v1/models, /health)",
        server.base_url()
    );
    server.wait();
    Ok(())
}
