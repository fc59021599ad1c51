//! The OpenAI-compatible API of `hrl serve`: routing, `/v1/chat/completions` and
//! `/v1/completions` (request and response bodies through the shared wire schema,
//! [`crate::executor::openai::schema`]), `/v1/models` and `/health`.

use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::Shared;
use super::batcher::Job;
use super::conn::{Connections, Event, Service};
use super::http::{HttpError, HttpRequest};
use crate::executor::ExecutorError;
use crate::executor::openai::schema::{self, Endpoint, ResponseMeta, ServedModel};

/// The API as the connection layer's [`Service`]: the shared state and the queue to
/// the batchers.
pub(super) struct Api<'s> {
    pub shared: &'s Shared,
    pub tx: mpsc::Sender<Job>,
}

impl Service for Api<'_> {
    fn handle(&self, rq: &HttpRequest, conns: &Connections<'_>) -> Result<Value, HttpError> {
        handle(rq, self.shared, &self.tx, conns)
    }

    fn note(&self, event: Event) {
        let s = &self.shared.stats;
        match event {
            Event::Accepted => &s.connections,
            Event::RefusedAtCap => &s.connections_rejected,
            Event::Rejected => &s.rejected,
            Event::Panic => &s.panics,
        }
        .fetch_add(1, Ordering::Relaxed);
    }
}

/// Answer one request: the 200 body, or the error to send.
fn handle(
    rq: &HttpRequest,
    shared: &Shared,
    tx: &mpsc::Sender<Job>,
    conns: &Connections<'_>,
) -> Result<Value, HttpError> {
    let path = rq.path.as_str();
    // Fault injection for the tests of panic containment (not in release builds).
    #[cfg(test)]
    if path == "/test/panic" {
        panic!("injected panic in request handling");
    }
    match (rq.method.as_str(), path) {
        ("GET", "/health") => Ok(health(shared, conns)),
        ("GET", "/v1/models") => Ok(schema::encode_models(&[ServedModel {
            id: shared.model_name.clone(),
            hrl_model_id: Some(shared.model_id.clone()),
        }])),
        ("POST", "/v1/chat/completions") => completions(&rq.body, Endpoint::Chat, shared, tx),
        ("POST", "/v1/completions") => completions(&rq.body, Endpoint::Completions, shared, tx),
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

/// `GET /health`: identity and counters; `connections_open` is exact (this request's
/// connection included).
fn health(shared: &Shared, conns: &Connections<'_>) -> Value {
    let s = &shared.stats;
    let n = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    json!({
        "status": "ok",
        "model": shared.model_name,
        "hrl_model_id": shared.model_id,
        "requests": n(&s.requests),
        "requests_received": n(&s.received),
        "batches": n(&s.batches),
        "max_batch_seen": n(&s.max_batch_seen),
        "rejected_requests": n(&s.rejected),
        "connections_open": conns.open(),
        "connections_accepted": n(&s.connections),
        "connections_rejected": n(&s.connections_rejected),
        "max_connections": shared.max_connections,
        "handler_panics": n(&s.panics),
    })
}

fn completions(
    body: &[u8],
    endpoint: Endpoint,
    shared: &Shared,
    tx: &mpsc::Sender<Job>,
) -> Result<Value, HttpError> {
    let body: Value = serde_json::from_slice(body)
        .map_err(|e| HttpError::bad(format!("body is not JSON: {e}")))?;
    let api = schema::decode_request(&body, endpoint).map_err(HttpError::bad)?;
    if let Some(m) = &api.model
        && m != &shared.model_name
        && m != &shared.model_id
    {
        return Err(HttpError {
            status: 404,
            kind: "invalid_request_error",
            message: format!(
                "model {m:?} is not served here (this server serves {:?})",
                shared.model_name
            ),
        });
    }
    let requests = api.requests();
    let n_requests = requests.len() as u64;
    let (reply_tx, reply_rx) = mpsc::channel();
    tx.send(Job {
        requests,
        reply: reply_tx,
    })
    .map_err(|_| HttpError::server(503, "server is shutting down"))?;
    shared
        .stats
        .received
        .fetch_add(n_requests, Ordering::Relaxed);
    let results = reply_rx
        .recv()
        .map_err(|_| HttpError::server(500, "the batcher stopped before answering"))?;
    let completions = results
        .into_iter()
        .map(|r| {
            r.map_err(|e| match e {
                ExecutorError::PromptTooLong { .. } | ExecutorError::InvalidRequest(_) => {
                    HttpError::bad(e.to_string())
                }
                other => HttpError::server(500, other.to_string()),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let n = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let id = format!(
        "{}-hrl-{n}",
        match endpoint {
            Endpoint::Chat => "chatcmpl",
            Endpoint::Completions => "cmpl",
        }
    );
    let meta = ResponseMeta {
        id: &id,
        created,
        model: &shared.model_name,
    };
    Ok(schema::encode_response(endpoint, &meta, &completions))
}
