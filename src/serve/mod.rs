//! `hrl serve`: exposes any [`Executor`] behind an OpenAI-compatible HTTP API on the
//! loopback interface, so several processes share one loaded model.
//!
//! Layers (one module each):
//! - this module: [`Server`] (binding, the acceptor, the connection cap, connection
//!   threads, shutdown), [`ServeConfig`], [`ServeStats`];
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
//! connection is answered 503. A connection's slot and socket are released by a drop
//! guard however its thread ends; a panic while handling a request is contained (the
//! client gets a 500, the panic is logged on stderr and counted in `/health`), and the
//! server keeps serving. Replies that close a connection the client may still be
//! writing to (the 503, an early 400 or 413) close it gracefully (see `http`).
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
pub(crate) mod http;

use std::collections::HashMap;
use std::io::BufReader;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::executor::Executor;
use batcher::Job;
use http::{HttpError, Linger, ReadError};

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
            max_body_bytes: cfg.max_body_bytes,
            max_connections: cfg.max_connections,
            idle_timeout: cfg.idle_timeout,
            stats: ServeStats::default(),
            next_id: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            open: Mutex::new(HashMap::new()),
            next_conn: AtomicU64::new(0),
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
        let acceptor = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("hrl-serve-accept".into())
                .spawn(move || accept_loop(listener, shared, tx))
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
        // Wake the acceptor, which blocks in accept().
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        // Unblock connection threads waiting for their next request; a thread waiting
        // for a completion keeps its connection until it has answered.
        for s in self.shared.lock_open().values() {
            let _ = s.shutdown(std::net::Shutdown::Read);
        }
        // The batchers end once every connection thread has dropped its sender.
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
    max_body_bytes: usize,
    max_connections: usize,
    idle_timeout: Duration,
    stats: ServeStats,
    next_id: AtomicU64,
    stop: AtomicBool,
    /// Open client connections (clones used to unblock them at shutdown). Its size is
    /// what the connection cap counts.
    open: Mutex<HashMap<u64, TcpStream>>,
    next_conn: AtomicU64,
    linger: Linger,
}

impl Shared {
    fn lock_open(&self) -> std::sync::MutexGuard<'_, HashMap<u64, TcpStream>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A connection's place under the cap. Dropping it (however the connection's thread
/// ends, a panic included, or when the thread cannot be spawned) frees the slot and
/// the registry's handle on the socket.
struct ConnectionSlot {
    shared: Arc<Shared>,
    id: u64,
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        if self.shared.lock_open().remove(&self.id).is_some() {
            self.shared
                .stats
                .connections_open
                .fetch_sub(1, Ordering::SeqCst);
        }
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>, tx: mpsc::Sender<Job>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        let _ = stream.set_nodelay(true);
        let id = shared.next_conn.fetch_add(1, Ordering::Relaxed);
        let slot = {
            let mut open = shared.lock_open();
            if open.len() >= shared.max_connections {
                drop(open);
                reject_at_cap(stream, &shared);
                continue;
            }
            let Ok(clone) = stream.try_clone() else {
                continue;
            };
            open.insert(id, clone);
            shared.stats.connections_open.fetch_add(1, Ordering::SeqCst);
            ConnectionSlot {
                shared: Arc::clone(&shared),
                id,
            }
        };
        shared.stats.connections.fetch_add(1, Ordering::Relaxed);
        let tx = tx.clone();
        // If the spawn fails the closure (and with it the slot) is dropped: the slot
        // is released either way.
        let _ = std::thread::Builder::new()
            .name(format!("hrl-serve-conn-{id}"))
            .spawn(move || {
                let shared = Arc::clone(&slot.shared);
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    connection(stream, &shared, &tx)
                }));
                if let Err(panic) = result {
                    shared.stats.panics.fetch_add(1, Ordering::Relaxed);
                    eprintln!(
                        "hrl serve: connection {id}: panic while reading a request ({}); connection closed, slot released",
                        panic_message(panic.as_ref())
                    );
                }
                drop(slot);
            });
    }
}

/// Answer 503 without taking a slot or blocking the acceptor, then close gracefully.
fn reject_at_cap(stream: TcpStream, shared: &Shared) {
    shared
        .stats
        .connections_rejected
        .fetch_add(1, Ordering::Relaxed);
    let e = HttpError::server(
        503,
        format!(
            "too many connections (limit {}); retry later",
            shared.max_connections
        ),
    );
    // A fresh connection's send buffer takes the small response at once; never wait
    // for a client that does not read.
    if stream.set_nonblocking(true).is_ok() {
        let _ = std::io::Write::write(
            &mut &stream,
            &http::response_bytes(e.status, &e.body(), false),
        );
    }
    shared.linger.close(stream);
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".into())
}

/// Serve one client connection until it closes, errs, goes idle, or the server stops.
fn connection(stream: TcpStream, shared: &Shared, tx: &mpsc::Sender<Job>) {
    let _ = stream.set_read_timeout(Some(shared.idle_timeout));
    let Ok(mut w) = stream.try_clone() else {
        return;
    };
    let mut r = BufReader::new(stream);
    while !shared.stop.load(Ordering::SeqCst) {
        let rq = match http::read_request(&mut r, &mut w, shared.max_body_bytes) {
            Ok(rq) => rq,
            Err(ReadError::Closed) => return,
            Err(ReadError::Bad(e)) => {
                shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
                // The client may still be sending the rest of this request.
                let _ = http::write_response(&mut w, e.status, &e.body(), false);
                shared.linger.close(w);
                return;
            }
        };
        let keep_alive = rq.keep_alive && !shared.stop.load(Ordering::SeqCst);
        let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            api::handle(&rq, shared, tx)
        }));
        let (status, body, keep_alive) = match handled {
            Ok(Ok(body)) => (200, body, keep_alive),
            Ok(Err(e)) => {
                if e.status < 500 {
                    shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
                }
                (e.status, e.body(), keep_alive)
            }
            Err(panic) => {
                shared.stats.panics.fetch_add(1, Ordering::Relaxed);
                eprintln!(
                    "hrl serve: {} {}: panic in request handling ({}); answered 500, connection closed",
                    rq.method,
                    rq.path,
                    panic_message(panic.as_ref())
                );
                let e = HttpError::server(
                    500,
                    "internal error: the request handler panicked (see the server's log)",
                );
                (e.status, e.body(), false)
            }
        };
        if http::write_response(&mut w, status, &body, keep_alive).is_err() {
            return;
        }
        if !keep_alive {
            if status >= 400 {
                shared.linger.close(w);
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests;
