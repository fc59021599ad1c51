//! EXPERIMENT (issue 35): the HTTP and connection layers of `hrl serve` rebuilt on
//! hyper 1 (HTTP/1.1 server) and tokio, selected with `ServeConfig::hyper` (default
//! from `HRL_SERVE_BACKEND=hyper`), to measure against the hand-written `conn` +
//! `http` with the same fault tests and a 64-client throughput run.
//!
//! Shape: a multi-threaded tokio runtime on the acceptor thread; the connection cap is
//! a semaphore (one permit per connection, taken at accept, given back when hyper's
//! connection future ends; beyond it the same 503 and graceful close as `conn`);
//! hyper frames requests (keep-alive, chunked, `Expect: 100-continue`, header limits,
//! `header_read_timeout` = the idle timeout); bodies are collected through
//! `http_body_util::Limited` (413 over the limit) under the idle timeout (408); the
//! API (`api::handle`, which blocks on the batchers) runs on tokio's blocking pool.

use std::convert::Infallible;
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Duration;

use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::Value;
use tokio::sync::Semaphore;

use super::batcher::Job;
use super::http::{HttpError, HttpRequest};
use super::{Shared, api, conn};

struct Ctx {
    shared: Arc<Shared>,
    tx: mpsc::Sender<Job>,
    sem: Arc<Semaphore>,
    max: usize,
    settings: conn::Settings,
}

/// Serve on `listener` until the server stops (see `Server::stop`).
pub(super) fn run(
    listener: TcpListener,
    shared: Arc<Shared>,
    tx: mpsc::Sender<Job>,
    settings: conn::Settings,
) {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("hrl-serve-tokio")
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hrl serve: cannot start the tokio runtime: {e}");
            return;
        }
    };
    let max = shared.max_connections;
    let ctx = Arc::new(Ctx {
        shared: Arc::clone(&shared),
        tx,
        sem: Arc::new(Semaphore::new(max)),
        max,
        settings,
    });
    rt.block_on(async {
        let _ = listener.set_nonblocking(true);
        let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
            return;
        };
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            if shared.stop.load(Ordering::SeqCst) {
                break;
            }
            let _ = stream.set_nodelay(true);
            let Ok(permit) = Arc::clone(&ctx.sem).try_acquire_owned() else {
                shared
                    .stats
                    .connections_rejected
                    .fetch_add(1, Ordering::Relaxed);
                if let Ok(s) = stream.into_std() {
                    conn::refuse(s, max, &shared.linger);
                }
                continue;
            };
            shared.stats.connections.fetch_add(1, Ordering::Relaxed);
            shared
                .stats
                .connections_open
                .store((max - ctx.sem.available_permits()) as u64, Ordering::SeqCst);
            let ctx2 = Arc::clone(&ctx);
            let service = hyper::service::service_fn(move |rq| respond(rq, Arc::clone(&ctx2)));
            let mut b = hyper::server::conn::http1::Builder::new();
            b.timer(TokioTimer::new())
                .header_read_timeout(ctx.settings.idle_timeout)
                .max_headers(super::http::MAX_HEADERS);
            let conn = graceful.watch(b.serve_connection(TokioIo::new(stream), service));
            let ctx3 = Arc::clone(&ctx);
            tokio::spawn(async move {
                let _ = conn.await;
                drop(permit);
                ctx3.shared.stats.connections_open.store(
                    (ctx3.max - ctx3.sem.available_permits()) as u64,
                    Ordering::SeqCst,
                );
            });
        }
        graceful.shutdown().await;
    });
    drop(ctx);
    rt.shutdown_timeout(Duration::from_secs(5));
}

fn json_response(status: u16, body: &Value) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn error_response(e: &HttpError, shared: &Shared) -> Response<Full<Bytes>> {
    if e.status < 500 {
        shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
    }
    json_response(e.status, &e.body())
}

async fn respond(
    rq: Request<Incoming>,
    ctx: Arc<Ctx>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = rq.method().as_str().to_string();
    let path = rq.uri().path().to_string();
    let limit = ctx.settings.max_body_bytes;
    let collected = tokio::time::timeout(
        ctx.settings.idle_timeout,
        Limited::new(rq.into_body(), limit).collect(),
    )
    .await;
    let body = match collected {
        Ok(Ok(c)) => c.to_bytes().to_vec(),
        Ok(Err(e)) => {
            let e = if e.downcast_ref::<LengthLimitError>().is_some() {
                HttpError {
                    status: 413,
                    kind: "invalid_request_error",
                    message: format!("request body over {limit} bytes"),
                }
            } else {
                HttpError::bad(format!("reading the body: {e}"))
            };
            return Ok(error_response(&e, &ctx.shared));
        }
        Err(_) => {
            let e = HttpError {
                status: 408,
                kind: "invalid_request_error",
                message: "the client sent nothing for the idle timeout while reading the body"
                    .into(),
            };
            return Ok(error_response(&e, &ctx.shared));
        }
    };
    let rq = HttpRequest {
        method,
        path,
        body,
        keep_alive: true,
    };
    let c = Arc::clone(&ctx);
    let handled = tokio::task::spawn_blocking(move || {
        let open = || c.max - c.sem.available_permits();
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            api::handle(&rq, &c.shared, &c.tx, &open)
        }))
        .map_err(|p| {
            (
                rq.method.clone(),
                rq.path.clone(),
                conn::panic_message(p.as_ref()),
            )
        })
    })
    .await;
    Ok(match handled {
        Ok(Ok(Ok(body))) => json_response(200, &body),
        Ok(Ok(Err(e))) => error_response(&e, &ctx.shared),
        Ok(Err((m, p, msg))) => {
            ctx.shared.stats.panics.fetch_add(1, Ordering::Relaxed);
            eprintln!("hrl serve: {m} {p}: panic in request handling ({msg}); answered 500");
            json_response(
                500,
                &HttpError::server(500, ctx.settings.panic_message).body(),
            )
        }
        Err(_) => json_response(
            500,
            &HttpError::server(500, ctx.settings.panic_message).body(),
        ),
    })
}
