//! `hrl serve`: exposes any [`Executor`] behind an OpenAI-compatible HTTP API on the
//! loopback interface, so several processes share one loaded model.
//!
//! Endpoints: `POST /v1/chat/completions`, `POST /v1/completions` (a `prompt` string or
//! an array of strings), `GET /v1/models` (with `hrl_model_id`, the executor's identity,
//! so clients can key caches on the model file rather than on the URL), `GET /health`
//! (with request and batch counts). No streaming; `n` must be 1. Errors use the OpenAI
//! shape `{"error": {"message", "type", "code"}}`.
//!
//! Transport: a small HTTP/1.1 server on `std::net` (one thread per connection, up to
//! `max_connections`; keep-alive, `Content-Length` or chunked bodies, `Expect:
//! 100-continue`), so many client processes can hold connections open at once.
//!
//! Batching: connection threads parse requests and queue them; a batcher takes whatever
//! is queued (waiting at most `batch_window` for more once the first arrives, up to
//! `max_batch` requests) and hands it to the executor's `complete_batch` in one call.
//! Up to `concurrent_batches` batchers run at once, so an executor that merges
//! concurrent calls (the llama.cpp executor's continuous batch) admits new requests
//! while earlier ones are still generating; with 1, new requests wait and form the
//! next batch. A panic in the executor fails that batch's requests with HTTP 500 and
//! the server keeps serving.
//!
//! Defaults follow the OpenAI API where it defines them (`temperature` 1, `top_p` 1);
//! `seed` defaults to 0, so an unseeded request is still reproducible.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::executor::{
    Completion, Executor, ExecutorError, FinishReason, Message, Prompt, Request, Sampling,
};

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
    /// Largest request body accepted.
    pub max_body_bytes: usize,
    /// An idle keep-alive connection is closed after this long.
    pub idle_timeout: Duration,
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

/// Counters of a running server.
#[derive(Debug, Default)]
pub struct ServeStats {
    /// Completion requests answered (each prompt of a multi-prompt request counts).
    pub requests: AtomicU64,
    /// `complete_batch` calls made.
    pub batches: AtomicU64,
    /// Largest batch handed to the executor.
    pub max_batch_seen: AtomicU64,
    /// HTTP requests rejected with a 4xx status.
    pub rejected: AtomicU64,
    /// Client connections accepted.
    pub connections: AtomicU64,
}

type Results = Vec<Result<Completion, ExecutorError>>;

struct Job {
    requests: Vec<Request>,
    reply: mpsc::Sender<Results>,
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
                    .spawn(move || batcher(&rx, executor, &shared.stats, max_batch, window))
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
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.acceptor.is_some() || !self.batchers.is_empty() {
            self.stop();
        }
    }
}

struct Shared {
    model_name: String,
    model_id: String,
    max_body_bytes: usize,
    max_connections: usize,
    idle_timeout: Duration,
    stats: ServeStats,
    next_id: AtomicU64,
    stop: AtomicBool,
    /// Open client connections (clones used to unblock them at shutdown).
    open: Mutex<HashMap<u64, TcpStream>>,
    next_conn: AtomicU64,
}

impl Shared {
    fn lock_open(&self) -> std::sync::MutexGuard<'_, HashMap<u64, TcpStream>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
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
        {
            let mut open = shared.lock_open();
            if open.len() >= shared.max_connections {
                drop(open);
                let mut w = stream;
                let e = HttpError {
                    status: 503,
                    kind: "server_error",
                    message: format!("too many connections (limit {})", shared.max_connections),
                };
                let _ = write_response(&mut w, e.status, &e.body(), false);
                continue;
            }
            match stream.try_clone() {
                Ok(clone) => {
                    open.insert(id, clone);
                }
                Err(_) => continue,
            }
        }
        shared.stats.connections.fetch_add(1, Ordering::Relaxed);
        let (conn_shared, tx) = (Arc::clone(&shared), tx.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("hrl-serve-conn-{id}"))
            .spawn(move || {
                connection(stream, &conn_shared, &tx);
                conn_shared.lock_open().remove(&id);
            });
        if spawned.is_err() {
            shared.lock_open().remove(&id);
        }
    }
}

/// Gather one batch: block for the first job, then take more for up to `window` or
/// until `max_batch` requests. `None` once every sender is gone.
fn gather(rx: &Mutex<mpsc::Receiver<Job>>, max_batch: usize, window: Duration) -> Option<Vec<Job>> {
    // Holding the lock while gathering keeps batches from interleaving; the other
    // batchers are either executing or waiting for their turn to gather.
    let rx = rx.lock().unwrap_or_else(|p| p.into_inner());
    let first = rx.recv().ok()?;
    let mut n = first.requests.len();
    let mut jobs = vec![first];
    let deadline = Instant::now() + window;
    while n < max_batch {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(job) => {
                n += job.requests.len();
                jobs.push(job);
            }
            Err(_) => break,
        }
    }
    Some(jobs)
}

fn batcher(
    rx: &Mutex<mpsc::Receiver<Job>>,
    executor: Arc<dyn Executor>,
    stats: &ServeStats,
    max_batch: usize,
    window: Duration,
) {
    // Ends when the acceptor and every connection thread have dropped their senders.
    while let Some(jobs) = gather(rx, max_batch, window) {
        let all: Vec<Request> = jobs
            .iter()
            .flat_map(|j| j.requests.iter().cloned())
            .collect();
        stats.batches.fetch_add(1, Ordering::Relaxed);
        stats
            .max_batch_seen
            .fetch_max(all.len() as u64, Ordering::Relaxed);
        let results = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            executor.complete_batch(&all)
        }));
        let mut results: Results = match results {
            Ok(r) if r.len() == all.len() => r,
            Ok(r) => {
                let msg = format!(
                    "executor returned {} results for {} requests",
                    r.len(),
                    all.len()
                );
                all.iter()
                    .map(|_| Err(ExecutorError::Model(msg.clone())))
                    .collect()
            }
            Err(_) => all
                .iter()
                .map(|_| Err(ExecutorError::Model("executor panicked".into())))
                .collect(),
        };
        stats
            .requests
            .fetch_add(all.len() as u64, Ordering::Relaxed);
        // Hand each job its slice, in order.
        for job in jobs.into_iter().rev() {
            let mine = results.split_off(results.len() - job.requests.len());
            let _ = job.reply.send(mine);
        }
    }
}

/// An HTTP error answer.
struct HttpError {
    status: u16,
    kind: &'static str,
    message: String,
}

impl HttpError {
    fn bad(message: impl Into<String>) -> HttpError {
        HttpError {
            status: 400,
            kind: "invalid_request_error",
            message: message.into(),
        }
    }
    fn body(&self) -> Value {
        json!({"error": {"message": self.message, "type": self.kind, "code": self.status}})
    }
}

/// One parsed HTTP/1.x request.
struct HttpRequest {
    method: String,
    path: String,
    body: Vec<u8>,
    keep_alive: bool,
}

const MAX_HEAD_LINE: usize = 16 << 10;
const MAX_HEADERS: usize = 100;

/// Read one line (without CRLF) of at most `MAX_HEAD_LINE` bytes. `Ok(None)` on EOF
/// before any byte.
fn read_line(r: &mut impl BufRead) -> std::io::Result<Option<String>> {
    let mut buf = Vec::new();
    let n = r
        .take(MAX_HEAD_LINE as u64 + 1)
        .read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.len() > MAX_HEAD_LINE || buf.last() != Some(&b'\n') {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "header line too long or truncated",
        ));
    }
    while matches!(buf.last(), Some(b'\n' | b'\r')) {
        buf.pop();
    }
    String::from_utf8(buf)
        .map(Some)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "header is not UTF-8"))
}

enum ReadError {
    /// The client closed the connection (or went idle) between requests.
    Closed,
    /// A malformed request: answer it and close.
    Bad(HttpError),
}

fn read_request(
    r: &mut BufReader<TcpStream>,
    w: &mut TcpStream,
    max_body: usize,
) -> Result<HttpRequest, ReadError> {
    let bad = |m: String| ReadError::Bad(HttpError::bad(m));
    let line = match read_line(r) {
        Ok(Some(l)) => l,
        Ok(None) | Err(_) => return Err(ReadError::Closed),
    };
    let mut parts = line.split(' ');
    let (method, target, version) = match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(m), Some(t), Some(v), None) if !m.is_empty() && t.starts_with('/') => (m, t, v),
        _ => return Err(bad(format!("malformed request line {line:?}"))),
    };
    let http10 = match version {
        "HTTP/1.1" => false,
        "HTTP/1.0" => true,
        v => return Err(bad(format!("unsupported protocol {v:?}"))),
    };
    let (mut length, mut chunked, mut expect_continue) = (None, false, false);
    let mut keep_alive = !http10;
    let mut count = 0;
    loop {
        let h = match read_line(r) {
            Ok(Some(h)) => h,
            Ok(None) => return Err(ReadError::Closed),
            Err(e) => return Err(bad(format!("reading headers: {e}"))),
        };
        if h.is_empty() {
            break;
        }
        count += 1;
        if count > MAX_HEADERS {
            return Err(bad("too many headers".into()));
        }
        let Some((name, value)) = h.split_once(':') else {
            return Err(bad(format!("malformed header {h:?}")));
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => {
                length = Some(
                    value
                        .parse::<usize>()
                        .map_err(|_| bad(format!("bad Content-Length {value:?}")))?,
                )
            }
            "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
            "expect" => expect_continue = value.eq_ignore_ascii_case("100-continue"),
            "connection" => {
                let v = value.to_ascii_lowercase();
                if v.contains("close") {
                    keep_alive = false;
                } else if v.contains("keep-alive") {
                    keep_alive = true;
                }
            }
            _ => {}
        }
    }
    let too_big = || {
        ReadError::Bad(HttpError {
            status: 413,
            kind: "invalid_request_error",
            message: format!("request body over {max_body} bytes"),
        })
    };
    if length.is_some_and(|n| n > max_body) {
        return Err(too_big());
    }
    if expect_continue && (chunked || length.is_some_and(|n| n > 0)) {
        let _ = w.write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let size_line = read_line(r)
                .map_err(|e| bad(format!("reading a chunk size: {e}")))?
                .ok_or_else(|| bad("body ended inside a chunk".into()))?;
            let size_hex = size_line.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size_hex, 16)
                .map_err(|_| bad(format!("bad chunk size {size_hex:?}")))?;
            if size == 0 {
                // Trailers, up to the blank line.
                while let Ok(Some(t)) = read_line(r) {
                    if t.is_empty() {
                        break;
                    }
                }
                break;
            }
            if body.len() + size > max_body {
                return Err(too_big());
            }
            let start = body.len();
            body.resize(start + size, 0);
            r.read_exact(&mut body[start..])
                .map_err(|e| bad(format!("reading a chunk: {e}")))?;
            let mut crlf = [0u8; 2];
            r.read_exact(&mut crlf)
                .map_err(|e| bad(format!("reading a chunk: {e}")))?;
        }
    } else if let Some(n) = length {
        body.resize(n, 0);
        r.read_exact(&mut body)
            .map_err(|e| bad(format!("body shorter than Content-Length {n}: {e}")))?;
    }
    Ok(HttpRequest {
        method: method.to_string(),
        path: target.split('?').next().unwrap_or("").to_string(),
        body,
        keep_alive,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Payload Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

fn write_response(
    w: &mut TcpStream,
    status: u16,
    body: &Value,
    keep_alive: bool,
) -> std::io::Result<()> {
    let body = body.to_string();
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: {}\r\n\r\n",
        reason(status),
        body.len(),
        if keep_alive { "keep-alive" } else { "close" }
    );
    let mut out = head.into_bytes();
    out.extend_from_slice(body.as_bytes());
    w.write_all(&out)?;
    w.flush()
}

/// Serve one client connection until it closes, errs, goes idle, or the server stops.
fn connection(stream: TcpStream, shared: &Shared, tx: &mpsc::Sender<Job>) {
    let _ = stream.set_read_timeout(Some(shared.idle_timeout));
    let Ok(mut w) = stream.try_clone() else {
        return;
    };
    let mut r = BufReader::new(stream);
    while !shared.stop.load(Ordering::SeqCst) {
        let rq = match read_request(&mut r, &mut w, shared.max_body_bytes) {
            Ok(rq) => rq,
            Err(ReadError::Closed) => return,
            Err(ReadError::Bad(e)) => {
                shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
                let _ = write_response(&mut w, e.status, &e.body(), false);
                return;
            }
        };
        let keep_alive = rq.keep_alive && !shared.stop.load(Ordering::SeqCst);
        let (status, body) = match handle(&rq, shared, tx) {
            Ok(body) => (200, body),
            Err(e) => {
                if e.status < 500 {
                    shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
                }
                (e.status, e.body())
            }
        };
        if write_response(&mut w, status, &body, keep_alive).is_err() || !keep_alive {
            return;
        }
    }
}

fn handle(rq: &HttpRequest, shared: &Shared, tx: &mpsc::Sender<Job>) -> Result<Value, HttpError> {
    let path = rq.path.as_str();
    match (rq.method.as_str(), path) {
        ("GET", "/health") => Ok(json!({
            "status": "ok",
            "model": shared.model_name,
            "hrl_model_id": shared.model_id,
            "requests": shared.stats.requests.load(Ordering::Relaxed),
            "batches": shared.stats.batches.load(Ordering::Relaxed),
            "max_batch_seen": shared.stats.max_batch_seen.load(Ordering::Relaxed),
        })),
        ("GET", "/v1/models") => Ok(json!({
            "object": "list",
            "data": [{
                "id": shared.model_name,
                "object": "model",
                "created": 0,
                "owned_by": "harness-rl",
                "hrl_model_id": shared.model_id,
            }],
        })),
        ("POST", "/v1/chat/completions") => completions(&parse_json(&rq.body)?, true, shared, tx),
        ("POST", "/v1/completions") => completions(&parse_json(&rq.body)?, false, shared, tx),
        (m, "/health" | "/v1/models" | "/v1/chat/completions" | "/v1/completions") => {
            Err(HttpError {
                status: 405,
                kind: "invalid_request_error",
                message: format!("method {m} not allowed on {path}"),
            })
        }
        _ => Err(HttpError {
            status: 404,
            kind: "invalid_request_error",
            message: format!("no endpoint {path}"),
        }),
    }
}

fn parse_json(body: &[u8]) -> Result<Value, HttpError> {
    serde_json::from_slice(body).map_err(|e| HttpError::bad(format!("body is not JSON: {e}")))
}

fn completions(
    body: &Value,
    chat: bool,
    shared: &Shared,
    tx: &mpsc::Sender<Job>,
) -> Result<Value, HttpError> {
    let obj = body
        .as_object()
        .ok_or_else(|| HttpError::bad("body must be a JSON object"))?;
    if let Some(m) = obj.get("model") {
        let m = m
            .as_str()
            .ok_or_else(|| HttpError::bad("`model` must be a string"))?;
        if m != shared.model_name && m != shared.model_id {
            return Err(HttpError {
                status: 404,
                kind: "invalid_request_error",
                message: format!(
                    "model {m:?} is not served here (this server serves {:?})",
                    shared.model_name
                ),
            });
        }
    }
    if obj.get("stream").is_some_and(|s| s != &Value::Bool(false)) {
        return Err(HttpError::bad("streaming is not supported"));
    }
    if let Some(n) = obj.get("n")
        && n != &json!(1)
    {
        return Err(HttpError::bad("only n = 1 is supported"));
    }
    let sampling = parse_sampling(obj)?;
    let prompts: Vec<Prompt> = if chat {
        vec![Prompt::Chat(parse_messages(obj.get("messages"))?)]
    } else {
        match obj.get("prompt") {
            Some(Value::String(s)) => vec![Prompt::Raw(s.clone())],
            Some(Value::Array(items)) if !items.is_empty() => items
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    p.as_str()
                        .map(|s| Prompt::Raw(s.to_string()))
                        .ok_or_else(|| {
                            HttpError::bad(format!(
                                "prompt[{i}] must be a string (token arrays are not supported)"
                            ))
                        })
                })
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(HttpError::bad(
                    "`prompt` must be a string or a non-empty array of strings",
                ));
            }
            None => return Err(HttpError::bad("missing `prompt`")),
        }
    };
    let requests: Vec<Request> = prompts
        .into_iter()
        .map(|prompt| Request {
            prompt,
            sampling: sampling.clone(),
        })
        .collect();
    let (reply_tx, reply_rx) = mpsc::channel();
    tx.send(Job {
        requests,
        reply: reply_tx,
    })
    .map_err(|_| HttpError {
        status: 503,
        kind: "server_error",
        message: "server is shutting down".into(),
    })?;
    let results = reply_rx.recv().map_err(|_| HttpError {
        status: 500,
        kind: "server_error",
        message: "the batcher stopped before answering".into(),
    })?;

    let mut choices = Vec::with_capacity(results.len());
    let (mut prompt_tokens, mut completion_tokens, mut cached_tokens) = (0u64, 0u64, 0u64);
    let (mut prompt_ms, mut predicted_ms) = (0f64, 0f64);
    for (index, r) in results.into_iter().enumerate() {
        let c = r.map_err(|e| match e {
            ExecutorError::PromptTooLong { .. } | ExecutorError::InvalidRequest(_) => {
                HttpError::bad(e.to_string())
            }
            other => HttpError {
                status: 500,
                kind: "server_error",
                message: other.to_string(),
            },
        })?;
        prompt_tokens += u64::from(c.usage.prompt_tokens);
        completion_tokens += u64::from(c.usage.completion_tokens);
        cached_tokens += u64::from(c.usage.cached_prompt_tokens);
        prompt_ms += c.timings.prompt_ms;
        predicted_ms += c.timings.generation_ms;
        let finish = match c.finish_reason {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
        };
        choices.push(if chat {
            json!({"index": index, "message": {"role": "assistant", "content": c.text}, "finish_reason": finish})
        } else {
            json!({"index": index, "text": c.text, "finish_reason": finish})
        });
    }
    let n = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    Ok(json!({
        "id": format!("{}-hrl-{n}", if chat { "chatcmpl" } else { "cmpl" }),
        "object": if chat { "chat.completion" } else { "text_completion" },
        "created": created,
        "model": shared.model_name,
        "choices": choices,
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        },
        "timings": {"prompt_ms": prompt_ms, "predicted_ms": predicted_ms},
    }))
}

fn parse_messages(v: Option<&Value>) -> Result<Vec<Message>, HttpError> {
    let items = v
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| HttpError::bad("`messages` must be a non-empty array"))?;
    items
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let role = m
                .get("role")
                .and_then(Value::as_str)
                .ok_or_else(|| HttpError::bad(format!("messages[{i}].role must be a string")))?;
            if !matches!(role, "system" | "user" | "assistant" | "developer") {
                return Err(HttpError::bad(format!(
                    "messages[{i}].role {role:?} is not supported (system, user, assistant)"
                )));
            }
            let role = if role == "developer" { "system" } else { role };
            let content = match m.get("content") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(parts)) => {
                    let mut text = String::new();
                    for (j, p) in parts.iter().enumerate() {
                        match (
                            p.get("type").and_then(Value::as_str),
                            p.get("text").and_then(Value::as_str),
                        ) {
                            (Some("text"), Some(t)) => text.push_str(t),
                            _ => {
                                return Err(HttpError::bad(format!(
                                    "messages[{i}].content[{j}] is not a text part"
                                )));
                            }
                        }
                    }
                    text
                }
                _ => {
                    return Err(HttpError::bad(format!(
                        "messages[{i}].content must be a string or an array of text parts"
                    )));
                }
            };
            Ok(Message::new(role, content))
        })
        .collect()
}

fn parse_sampling(obj: &serde_json::Map<String, Value>) -> Result<Sampling, HttpError> {
    let num = |name: &str| -> Result<Option<f64>, HttpError> {
        match obj.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|x| x.is_finite())
                .map(Some)
                .ok_or_else(|| HttpError::bad(format!("`{name}` must be a number"))),
        }
    };
    let uint = |name: &str| -> Result<Option<u64>, HttpError> {
        match obj.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| HttpError::bad(format!("`{name}` must be a non-negative integer"))),
        }
    };
    let mut s = Sampling {
        temperature: 1.0,
        ..Sampling::default()
    };
    if let Some(t) = num("temperature")? {
        if !(0.0..=100.0).contains(&t) {
            return Err(HttpError::bad("`temperature` must be >= 0"));
        }
        s.temperature = t as f32;
    }
    if let Some(p) = num("top_p")? {
        if !(p > 0.0 && p <= 1.0) {
            return Err(HttpError::bad("`top_p` must be in (0, 1]"));
        }
        s.top_p = p as f32;
    }
    if let Some(p) = num("min_p")? {
        if !(0.0..=1.0).contains(&p) {
            return Err(HttpError::bad("`min_p` must be in [0, 1]"));
        }
        s.min_p = p as f32;
    }
    if let Some(k) = uint("top_k")? {
        s.top_k = u32::try_from(k).map_err(|_| HttpError::bad("`top_k` is too large"))?;
    }
    if let Some(seed) = uint("seed")? {
        s.seed = seed;
    }
    let max_tokens = match uint("max_completion_tokens")? {
        Some(m) => Some(m),
        None => uint("max_tokens")?,
    };
    if let Some(m) = max_tokens {
        if m == 0 {
            return Err(HttpError::bad("`max_tokens` must be at least 1"));
        }
        s.max_tokens = u32::try_from(m).map_err(|_| HttpError::bad("`max_tokens` is too large"))?;
    }
    s.stop = match obj.get("stop") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(x)) => vec![x.clone()],
        Some(Value::Array(xs)) => xs
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| HttpError::bad("`stop` entries must be strings"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(HttpError::bad("`stop` must be a string or an array")),
    };
    if s.stop.iter().any(String::is_empty) {
        return Err(HttpError::bad("`stop` strings must not be empty"));
    }
    s.grammar = match obj.get("grammar") {
        None | Some(Value::Null) => None,
        Some(Value::String(g)) => Some(g.clone()),
        Some(_) => return Err(HttpError::bad("`grammar` must be a GBNF string")),
    };
    Ok(s)
}
