//! `hrl serve`: exposes any [`Executor`] behind an OpenAI-compatible HTTP API on the
//! loopback interface, so several processes share one loaded model.
//!
//! Layers (one module each):
//! - this module: [`Server`] (binding, the batchers, the acceptor thread, shutdown),
//!   [`ServeConfig`], [`ServeStats`];
//! - `conn`: the accept loop, the connection cap (an exact count of open connections)
//!   and the connection threads, shared with `hrl reward-server`;
//! - `http`: the HTTP/1.1 reader and writer, with checked sizes, and graceful close;
//! - `batcher`: queued requests become `complete_batch` calls;
//! - `api`: routing and the endpoints, through the OpenAI wire schema shared with the
//!   client ([`crate::executor::openai::schema`]).
//!
//! Endpoints: `POST /v1/chat/completions`, `POST /v1/completions` (a `prompt` string or
//! an array of strings), `GET /v1/models` (with `hrl_model_id`, the executor's identity,
//! so clients can key caches on the model file rather than on the URL), `GET /health`
//! (request, batch and connection counters). No streaming; `n` must be 1 (null is
//! fine). Errors use the OpenAI shape `{"error": {"message", "type", "code"}}`.
//!
//! Connections: one thread per connection, up to `max_connections` (keep-alive,
//! `Content-Length` or chunked bodies, `Expect: 100-continue`); beyond the cap a
//! connection is answered 503. A connection holds its slot from accept to close and
//! releases it once, however its thread ends (see `conn`; `/health`'s
//! `connections_open` is that exact count); a panic while handling a request is
//! contained (the client gets a 500, the panic is logged on stderr and counted in
//! `/health`), and the server keeps serving. Replies that close a connection the
//! client may still be writing to (the 503, an early 400 or 413) close it gracefully
//! (see `http`).
//!
//! Batching: a batcher takes whatever is queued (waiting at most `batch_window` for
//! more once the first arrives, up to `max_batch` requests) and hands it to the
//! executor's `complete_batch` in one call. Up to `concurrent_batches` batchers run at
//! once, so an executor that merges concurrent calls (the llama.cpp executor's
//! continuous batch) admits new requests while earlier ones are still generating. A
//! panic in the executor fails that batch's requests with HTTP 500 and the server
//! keeps serving.
//!
//! Defaults follow the OpenAI API where it defines them (`temperature` 1, `top_p` 1);
//! `seed` defaults to 0, so an unseeded request is still reproducible.

mod api;
mod batcher;
pub(crate) mod conn;
pub(crate) mod http;

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::executor::Executor;
use batcher::Job;
use conn::Connections;
use http::Linger;

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Must be a loopback address.
    pub host: IpAddr,
    /// 0 picks a free port (read it back with [`Server::addr`]).
    pub port: u16,
    /// The model name clients send and `/v1/models` lists.
    pub model_name: String,
    /// Most requests handed to `complete_batch` at once.
    pub max_batch: usize,
    /// How long the batcher waits for more requests after the first one arrives.
    pub batch_window: Duration,
    /// Batches that may run in the executor at once. Executors that schedule
    /// concurrent calls themselves (the llama.cpp executor feeds every call into one
    /// continuous batch) admit a new batch while an earlier one is still generating;
    /// with 1, a batch waits for the previous one to finish.
    pub concurrent_batches: usize,
    /// Most client connections open at once (one thread each); more are answered 503.
    pub max_connections: usize,
    /// Largest request body accepted (larger ones are answered 413).
    pub max_body_bytes: usize,
    /// A connection that sends nothing for this long (between requests, or in the
    /// middle of one) is closed.
    pub idle_timeout: Duration,
    /// How long a gracefully closed connection is drained before it is closed.
    pub linger: Duration,
}

impl ServeConfig {
    pub fn new(model_name: impl Into<String>) -> ServeConfig {
        ServeConfig {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 8080,
            model_name: model_name.into(),
            max_batch: 16,
            batch_window: Duration::from_millis(5),
            concurrent_batches: 8,
            max_connections: 256,
            max_body_bytes: 16 << 20,
            idle_timeout: Duration::from_secs(120),
            linger: Duration::from_secs(2),
        }
    }
}

/// Server start-up failures.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "refusing to listen on {0}: `hrl serve` binds loopback addresses only (127.0.0.1 or ::1)"
    )]
    NotLoopback(IpAddr),
    #[error("cannot listen on {addr}: {detail}")]
    Bind { addr: SocketAddr, detail: String },
    #[error("invalid server setting: {0}")]
    Config(String),
}

impl crate::error::Classify for ServeError {
    fn kind(&self) -> crate::error::ErrorKind {
        match self {
            ServeError::NotLoopback(_) | ServeError::Config(_) => crate::error::ErrorKind::Usage,
            ServeError::Bind { .. } => crate::error::ErrorKind::Runtime,
        }
    }
}

/// Counters of a running server (also reported by `GET /health`).
#[derive(Debug, Default)]
pub struct ServeStats {
    /// Completion requests answered (each prompt of a multi-prompt request counts).
    pub requests: AtomicU64,
    /// Completion requests queued for the executor (answered ones included).
    pub received: AtomicU64,
    /// `complete_batch` calls made.
    pub batches: AtomicU64,
    /// Largest batch handed to the executor.
    pub max_batch_seen: AtomicU64,
    /// HTTP requests rejected with a 4xx status.
    pub rejected: AtomicU64,
    /// Client connections accepted.
    pub connections: AtomicU64,
    /// Client connections open now.
    pub connections_open: AtomicU64,
    /// Connections refused with 503 because `max_connections` were open.
    pub connections_rejected: AtomicU64,
    /// Panics contained in connection threads (each answered 500 when possible).
    pub panics: AtomicU64,
}

/// A running server. Dropping it (or [`Server::shutdown`]) stops it.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
    batchers: Vec<JoinHandle<()>>,
}

impl Server {
    /// Bind and start serving `executor`.
    pub fn start(executor: Arc<dyn Executor>, cfg: ServeConfig) -> Result<Server, ServeError> {
        if !cfg.host.is_loopback() {
            return Err(ServeError::NotLoopback(cfg.host));
        }
        if cfg.max_batch == 0 || cfg.max_connections == 0 || cfg.concurrent_batches == 0 {
            return Err(ServeError::Config(
                "max_batch, max_connections and concurrent_batches must be at least 1".into(),
            ));
        }
        if cfg.idle_timeout.is_zero() {
            return Err(ServeError::Config("idle_timeout must be positive".into()));
        }
        if cfg.model_name.trim().is_empty() {
            return Err(ServeError::Config("model name is empty".into()));
        }
        let want = SocketAddr::new(cfg.host, cfg.port);
        let listener = TcpListener::bind(want).map_err(|e| ServeError::Bind {
            addr: want,
            detail: e.to_string(),
        })?;
        let addr = listener.local_addr().map_err(|e| ServeError::Bind {
            addr: want,
            detail: e.to_string(),
        })?;
        let linger = Linger::start(cfg.linger, cfg.max_connections.max(64))
            .map_err(|e| ServeError::Config(format!("spawning the linger thread: {e}")))?;
        let (tx, rx) = mpsc::channel::<Job>();
        let shared = Arc::new(Shared {
            model_name: cfg.model_name.clone(),
            model_id: executor.model_id().to_string(),
            max_connections: cfg.max_connections,
            stats: ServeStats::default(),
            next_id: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            linger,
        });
        let rx = Arc::new(Mutex::new(rx));
        let mut batchers = Vec::with_capacity(cfg.concurrent_batches);
        for i in 0..cfg.concurrent_batches {
            let (shared, rx, executor) =
                (Arc::clone(&shared), Arc::clone(&rx), Arc::clone(&executor));
            let (max_batch, window) = (cfg.max_batch, cfg.batch_window);
            batchers.push(
                std::thread::Builder::new()
                    .name(format!("hrl-serve-batcher-{i}"))
                    .spawn(move || batcher::run(&rx, executor, &shared.stats, max_batch, window))
                    .map_err(|e| ServeError::Config(format!("spawning a batcher: {e}")))?,
            );
        }
        let settings = conn::Settings {
            max_body_bytes: cfg.max_body_bytes,
            idle_timeout: cfg.idle_timeout,
            name: "hrl serve",
            panic_message: "internal error: the request handler panicked (see the server's log)",
        };
        let acceptor = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("hrl-serve-accept".into())
                .spawn(move || {
                    let conns =
                        Connections::new(shared.max_connections, &shared.stats.connections_open);
                    // Owns the last sender: the batchers end once it and the
                    // connection threads are gone.
                    let api = api::Api {
                        shared: &shared,
                        tx,
                    };
                    conn::serve(
                        &listener,
                        &conns,
                        &shared.linger,
                        &settings,
                        &shared.stop,
                        &api,
                    );
                })
                .map_err(|e| ServeError::Config(format!("spawning the acceptor: {e}")))?
        };
        Ok(Server {
            addr,
            shared,
            acceptor: Some(acceptor),
            batchers,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://HOST:PORT/v1`, the base URL for an OpenAI-compatible client.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn stats(&self) -> &ServeStats {
        &self.shared.stats
    }

    /// Sockets being drained after a graceful close (they hold no connection slot).
    pub fn lingering(&self) -> usize {
        self.shared.linger.lingering()
    }

    /// Serve until the process ends.
    pub fn wait(mut self) {
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
    }

    /// Stop accepting, close idle connections, let requests in flight finish, and join.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the acceptor, which blocks in accept(). Once out of its loop it closes
        // the reading side of every open connection (a thread waiting for a completion
        // keeps its connection until it has answered) and waits for their threads.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        // The batchers end once every sender is dropped (the acceptor's and the
        // connection threads' borrows of it are gone now).
        for b in self.batchers.drain(..) {
            let _ = b.join();
        }
        self.shared.linger.stop();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.acceptor.is_some() || !self.batchers.is_empty() {
            self.stop();
        }
    }
}

/// What the acceptor, the connection threads and the API share.
struct Shared {
    model_name: String,
    model_id: String,
    max_connections: usize,
    stats: ServeStats,
    next_id: AtomicU64,
    stop: AtomicBool,
    linger: Linger,
}

#[cfg(test)]
mod tests;
