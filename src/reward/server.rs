//! `hrl reward-server`: the reward service on a loopback HTTP port, for RL engines
//! that train proposer LLMs (shapes in [`super::wire`]).
//!
//! Endpoints: `POST /get_reward` (also `/reward`; OpenRLHF's remote reward shape),
//! `POST /score` (native), `GET /contexts` (the contexts: id, task, parent, dev items),
//! `GET /health` (counters). Errors of the request itself (a body that is not JSON,
//! not the shape) are 400 with `{"error": {...}}`; a bad *completion* is never an
//! error but an invalid revision with its reason.
//!
//! It uses the connection and HTTP/1.1 layers of `hrl serve` (`crate::serve::conn`:
//! the accept loop and the exact connection cap; `crate::serve::http`: bounded request
//! reading, keep-alive, chunked bodies, graceful close). One thread per connection up
//! to `max_connections` (more are answered 503; `/health` reports `connections_open`,
//! this request's connection included, and `max_connections`); every connection
//! thread scores through the same engine, so completions of concurrent requests share
//! executor batches. The server binds only after the contexts are built (the parents'
//! feedback runs), then calls `ready` with the bound address (port 0 picks a free
//! one).

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::RewardError;
use super::context::Context;
use super::score::RewardConfig;
use super::service::{self, Service};
use super::wire::{self, Row, Shape};
use crate::eval::config::EvalSettings;
use crate::serve::ServeError;
use crate::serve::conn::{self, Connections, Settings};
use crate::serve::http::{HttpError, HttpRequest, Linger};

/// The default of [`ServerConfig::memo_capacity`]: tens of thousands of distinct
/// revisions, each a few rollouts of a few KB.
pub const DEFAULT_MEMO_CAPACITY: usize = 20_000;

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Must be a loopback address; port 0 picks a free port.
    pub addr: SocketAddr,
    pub max_connections: usize,
    pub max_body_bytes: usize,
    /// A connection that sends nothing for this long is closed.
    pub idle_timeout: Duration,
    /// Most set evaluations the scoring memo keeps (oldest dropped first; see
    /// `eval::engine`): bounds the memory of a server that runs for days.
    pub memo_capacity: usize,
}

impl ServerConfig {
    pub fn new(addr: SocketAddr) -> ServerConfig {
        ServerConfig {
            addr,
            max_connections: 256,
            max_body_bytes: 64 << 20,
            idle_timeout: Duration::from_secs(600),
            memo_capacity: DEFAULT_MEMO_CAPACITY,
        }
    }
}

/// What `ready` is told once the server listens.
pub struct Ready<'a> {
    pub addr: SocketAddr,
    pub contexts: &'a [Context],
    pub executor_model_id: &'a str,
}

/// Build the contexts, listen on `cfg.addr`, call `ready`, and serve until `stop` is
/// set (checked after every accepted connection) or the process ends. `out`: the
/// service's output directory (see [`service`]).
pub fn serve(
    settings: &EvalSettings,
    reward: RewardConfig,
    cfg: &ServerConfig,
    out: Option<&Path>,
    stop: &AtomicBool,
    ready: &mut dyn FnMut(&Ready<'_>),
) -> Result<(), RewardError> {
    if !cfg.addr.ip().is_loopback() {
        return Err(ServeError::NotLoopback(cfg.addr.ip()).into());
    }
    if cfg.max_connections == 0
        || cfg.max_body_bytes == 0
        || cfg.idle_timeout.is_zero()
        || cfg.memo_capacity == 0
    {
        return Err(ServeError::Config(
            "max_connections, max_body_bytes, idle_timeout and memo_capacity must be positive"
                .into(),
        )
        .into());
    }
    service::run(settings, reward, out, true, cfg.memo_capacity, |svc| {
        let listener = TcpListener::bind(cfg.addr).map_err(|e| ServeError::Bind {
            addr: cfg.addr,
            detail: e.to_string(),
        })?;
        let addr = listener.local_addr().map_err(|e| ServeError::Bind {
            addr: cfg.addr,
            detail: e.to_string(),
        })?;
        let linger = Linger::start(Duration::from_secs(2), cfg.max_connections.max(64))
            .map_err(|e| ServeError::Config(format!("spawning the linger thread: {e}")))?;
        ready(&Ready {
            addr,
            contexts: &svc.built.contexts,
            executor_model_id: &svc.backend.identity.model_id,
        });
        let gauge = AtomicU64::new(0);
        let conns = Connections::new(cfg.max_connections, &gauge);
        let settings = Settings {
            max_body_bytes: cfg.max_body_bytes,
            idle_timeout: cfg.idle_timeout,
            name: "hrl reward-server",
            panic_message: "internal error: the request handler panicked",
        };
        conn::serve(&listener, &conns, &linger, &settings, stop, &Rewards(svc));
        linger.stop();
        Ok(())
    })
}

/// The reward endpoints as the connection layer's service.
struct Rewards<'s, 'a, 'b, 'c>(&'s Service<'a, 'b, 'c>);

impl conn::Service for Rewards<'_, '_, '_, '_> {
    fn handle(&self, rq: &HttpRequest, conns: &Connections<'_>) -> Result<Value, HttpError> {
        handle(rq, self.0, conns)
    }
}

/// Route one request.
fn handle(
    rq: &HttpRequest,
    svc: &Service<'_, '_, '_>,
    conns: &Connections<'_>,
) -> Result<Value, HttpError> {
    let built = svc.built;
    match (rq.method.as_str(), rq.path.as_str()) {
        ("GET", "/health") => {
            let c = &svc.scorer.counters;
            let e = &svc.scorer.engine.counters;
            let b = svc.scorer.engine.batches();
            Ok(json!({
                "status": "ok",
                "contexts": built.contexts.len(),
                "executor": svc.backend.identity.spec,
                "executor_model_id": svc.backend.identity.model_id,
                "completions": c.completions.load(Ordering::Relaxed),
                "invalid": c.invalid.load(Ordering::Relaxed),
                "memo_hits": c.memo_hits.load(Ordering::Relaxed),
                "memo_entries": svc.scorer.engine.memo_len(),
                "memo_evictions": e.memo_evictions.load(Ordering::Relaxed),
                "rollouts_run": e.run.load(Ordering::Relaxed),
                "rollouts_reused": e.reused.load(Ordering::Relaxed),
                "executor_batches": b.batches,
                "executor_batch_mean": b.mean_size(),
                "executor_batch_max": b.max_size,
                "connections_open": conns.open(),
                "max_connections": conns.max(),
            }))
        }
        ("GET", "/contexts") => Ok(json!({
            "contexts": built.contexts.iter().map(|c| json!({
                "id": c.id, "task": c.task, "task_key": c.task_key,
                "parent_hash": c.parent_hash, "harness_kind": c.harness_kind,
                "feedback_score": c.feedback_score, "dev_items": c.dev_items,
            })).collect::<Vec<_>>(),
        })),
        ("POST", "/get_reward" | "/reward" | "/score") => {
            let body: Value = serde_json::from_slice(&rq.body)
                .map_err(|e| HttpError::bad(format!("the body is not JSON: {e}")))?;
            let shape = if rq.path == "/score" {
                Shape::Native
            } else {
                Shape::OpenRlhf
            };
            let rows = match shape {
                Shape::Native => wire::native_rows(&body, built),
                Shape::OpenRlhf => wire::openrlhf_rows(&body, built),
            }
            .map_err(HttpError::bad)?;
            let items: Vec<(usize, &str)> = rows
                .iter()
                .filter_map(|r| match r {
                    Row::Score {
                        context,
                        completion,
                    } => Some((*context, completion.as_str())),
                    Row::Unscorable { .. } => None,
                })
                .collect();
            let parts = svc
                .scorer
                .score(&items)
                .map_err(|e| HttpError::server(500, e.to_string()))?;
            Ok(wire::response(
                shape,
                &rows,
                &parts,
                svc.scorer.config.invalid_reward,
            ))
        }
        (_, "/health" | "/contexts" | "/get_reward" | "/reward" | "/score") => Err(HttpError {
            status: 405,
            kind: "invalid_request_error",
            message: format!("{} {}: method not allowed", rq.method, rq.path),
        }),
        _ => Err(HttpError {
            status: 404,
            kind: "invalid_request_error",
            message: format!(
                "{} {}: no such endpoint (POST /get_reward, POST /score, GET /contexts, GET /health)",
                rq.method, rq.path
            ),
        }),
    }
}
