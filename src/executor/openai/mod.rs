//! OpenAI-compatible HTTP executor: completes requests against any server that speaks
//! `/v1/chat/completions` and `/v1/completions` (vLLM, SGLang, llama-server, `hrl serve`,
//! hosted APIs).
//!
//! [`super::Prompt::Chat`] goes to `/v1/chat/completions`, [`super::Prompt::Raw`] to
//! `/v1/completions`.
//! A batch is spread over at most `max_connections` requests in flight, a bound shared by
//! every caller of the same executor. Each attempt has a timeout; 429, 408, 5xx,
//! timeouts and failed connections are retried with capped exponential backoff (with
//! jitter, and honouring `Retry-After`); other 4xx fail at once with the server's
//! message. A response that is not the documented JSON shape is an
//! [`ExecutorError::MalformedResponse`] naming the endpoint and the field, and is not
//! retried. The API key comes from `HRL_API_KEY` or `OPENAI_API_KEY` (or the config) and
//! is sent as a bearer token.
//!
//! The wire format (request fields, response parsing, `GET /models`, error bodies) is
//! [`schema`], shared with `hrl serve`. Beyond the standard fields, requests carry
//! `top_k`, `min_p` (when set) and `grammar` (GBNF, understood by llama-server and `hrl
//! serve`), and responses may carry llama-server style `timings` (`prompt_ms`,
//! `predicted_ms`), which are used when present. A response without `usage` gives zero
//! token counts. Requests with out-of-range sampling ([`super::Sampling::validate`])
//! fail before anything is sent.

pub mod schema;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::{Completion, Executor, ExecutorError, FinishReason, OnDone, Request, Timings, Usage};
pub use schema::ServedModel;

/// Environment variables read for the API key, in order.
pub const API_KEY_VARS: [&str; 2] = ["HRL_API_KEY", "OPENAI_API_KEY"];

/// Largest response body accepted (bytes).
const MAX_RESPONSE_BYTES: u64 = 64 << 20;

/// The API key from the environment (`HRL_API_KEY`, then `OPENAI_API_KEY`); empty
/// values count as unset.
pub fn api_key_from_env() -> Option<String> {
    API_KEY_VARS
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|v| !v.trim().is_empty())
}

/// Settings of an [`OpenAiExecutor`].
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Base URL up to and including `/v1`, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// Model name sent in every request.
    pub model: String,
    /// Bearer token; `None` sends no `Authorization` header.
    pub api_key: Option<String>,
    /// Most requests in flight at once, over all callers of this executor.
    pub max_connections: usize,
    /// Limit for one attempt (connect, send, wait, read the whole body).
    pub timeout: Duration,
    /// Limit for establishing a connection.
    pub connect_timeout: Duration,
    /// Retries after the first attempt (on 429, 408, 5xx, timeouts, connection failures).
    pub max_retries: u32,
    /// First backoff; doubles per retry up to `backoff_max`.
    pub backoff_initial: Duration,
    pub backoff_max: Duration,
    /// Identity used in cache keys and logs. `None`: the `hrl_model_id` that an
    /// `hrl serve` endpoint reports (see [`OpenAiExecutor::connect`]), else
    /// `openai:<base_url>#<model>`.
    pub model_id: Option<String>,
}

impl OpenAiConfig {
    /// Defaults: key from the environment, 8 connections, 600 s per attempt, 10 s to
    /// connect, 5 retries, backoff 0.5 s doubling to 30 s.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiConfig {
        OpenAiConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: api_key_from_env(),
            max_connections: 8,
            timeout: Duration::from_secs(600),
            connect_timeout: Duration::from_secs(10),
            max_retries: 5,
            backoff_initial: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            model_id: None,
        }
    }
}

/// Requests sent and retried by one executor (for logs and tests).
#[derive(Debug, Default)]
pub struct HttpCounters {
    /// HTTP attempts made (first tries and retries).
    pub attempts: AtomicU64,
    /// Attempts that were retries.
    pub retries: AtomicU64,
}

/// Counting semaphore bounding requests in flight.
struct Slots {
    free: Mutex<usize>,
    cv: Condvar,
}

impl Slots {
    fn acquire(&self) -> SlotGuard<'_> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.cv.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        SlotGuard(self)
    }
}

struct SlotGuard<'a>(&'a Slots);

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.0.cv.notify_one();
    }
}

/// An executor backed by an OpenAI-compatible endpoint.
pub struct OpenAiExecutor {
    cfg: OpenAiConfig,
    base: String,
    model_id: String,
    agent: ureq::Agent,
    slots: Slots,
    counters: HttpCounters,
}

/// What one attempt means for the retry loop.
enum Attempt {
    Done(Result<Completion, ExecutorError>),
    Retry {
        error: String,
        after: Option<Duration>,
    },
}

impl OpenAiExecutor {
    /// Build the client without contacting the server.
    pub fn new(cfg: OpenAiConfig) -> Result<OpenAiExecutor, ExecutorError> {
        let base = cfg.base_url.trim_end_matches('/').to_string();
        let scheme_ok = base.starts_with("http://") || base.starts_with("https://");
        if !scheme_ok {
            return Err(ExecutorError::InvalidRequest(format!(
                "endpoint URL {:?} must start with http:// or https://",
                cfg.base_url
            )));
        }
        if base.starts_with("https://") && !cfg!(feature = "https") {
            return Err(ExecutorError::InvalidRequest(format!(
                "endpoint {base} needs TLS, but this build has no `https` feature (rebuild with --features https)"
            )));
        }
        if cfg.model.trim().is_empty() {
            return Err(ExecutorError::InvalidRequest(
                "model name for the HTTP endpoint is empty".into(),
            ));
        }
        if cfg.max_connections == 0 {
            return Err(ExecutorError::InvalidRequest(
                "max_connections must be at least 1".into(),
            ));
        }
        let mut builder = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(cfg.timeout))
            .timeout_connect(Some(cfg.connect_timeout))
            .max_idle_connections(cfg.max_connections)
            .max_idle_connections_per_host(cfg.max_connections)
            .user_agent(concat!("harness-rl/", env!("CARGO_PKG_VERSION")));
        if is_loopback_url(&base) {
            builder = builder.proxy(None);
        }
        let agent: ureq::Agent = builder.build().into();
        let model_id = cfg
            .model_id
            .clone()
            .unwrap_or_else(|| format!("openai:{base}#{}", cfg.model));
        Ok(OpenAiExecutor {
            slots: Slots {
                free: Mutex::new(cfg.max_connections),
                cv: Condvar::new(),
            },
            base,
            model_id,
            agent,
            counters: HttpCounters::default(),
            cfg,
        })
    }

    /// Build the client and check the endpoint: `GET /models` must list the model. When
    /// the listing carries an `hrl_model_id` for it (as `hrl serve` does: the GGUF's
    /// identity), that becomes this executor's `model_id` unless the config sets one, so
    /// a served model and the same model in-process share cache entries.
    pub fn connect(cfg: OpenAiConfig) -> Result<OpenAiExecutor, ExecutorError> {
        let mut exec = Self::new(cfg)?;
        let models = exec.list_models()?;
        let Some(entry) = models.iter().find(|m| m.id == exec.cfg.model) else {
            let names: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
            return Err(ExecutorError::InvalidRequest(format!(
                "endpoint {} does not serve model {:?} (it serves: {})",
                exec.base,
                exec.cfg.model,
                if names.is_empty() {
                    "nothing".to_string()
                } else {
                    names.join(", ")
                }
            )));
        };
        if exec.cfg.model_id.is_none()
            && let Some(id) = &entry.hrl_model_id
        {
            exec.model_id = id.clone();
        }
        Ok(exec)
    }

    pub fn config(&self) -> &OpenAiConfig {
        &self.cfg
    }

    pub fn counters(&self) -> &HttpCounters {
        &self.counters
    }

    /// `GET /models`, with the same retry policy as completions.
    pub fn list_models(&self) -> Result<Vec<ServedModel>, ExecutorError> {
        let endpoint = format!("{}/models", self.base);
        self.with_retries(|| {
            let _slot = self.slots.acquire();
            let mut req = self.agent.get(&endpoint);
            if let Some(key) = &self.cfg.api_key {
                req = req.header("Authorization", &format!("Bearer {key}"));
            }
            let (status, retry_after, body) = match req.call() {
                Ok(resp) => match read_response(resp, &endpoint, self.cfg.timeout) {
                    Ok(r) => r,
                    Err(a) => return a,
                },
                Err(e) => return transport_attempt(&endpoint, &e, self.cfg.timeout),
            };
            if status == 200 {
                return Attempt::Done(Ok(Completion {
                    text: body,
                    finish_reason: FinishReason::Stop,
                    usage: Usage::default(),
                    timings: Timings::default(),
                    cached: false,
                }));
            }
            status_attempt(&endpoint, status, retry_after, &body)
        })
        .and_then(|c| schema::decode_models(&endpoint, &c.text))
    }

    fn backoff(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let exp = self
            .cfg
            .backoff_initial
            .saturating_mul(1u32 << (attempt - 1).min(20));
        let base = exp.min(self.cfg.backoff_max);
        // Jitter in [0.5, 1.0] of the step spreads a fleet of clients apart. It never
        // influences a completion, only when the next attempt starts.
        let jittered = base.mul_f64(0.5 + 0.5 * rand::random::<f64>());
        match retry_after {
            Some(ra) => ra.min(self.cfg.backoff_max).max(jittered),
            None => jittered,
        }
    }

    fn with_retries(
        &self,
        mut attempt: impl FnMut() -> Attempt,
    ) -> Result<Completion, ExecutorError> {
        let mut last = String::new();
        let mut retry_after = None;
        for n in 0..=self.cfg.max_retries {
            if n > 0 {
                self.counters.retries.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(self.backoff(n, retry_after));
            }
            self.counters.attempts.fetch_add(1, Ordering::Relaxed);
            match attempt() {
                Attempt::Done(r) => return r,
                Attempt::Retry { error, after } => {
                    last = error;
                    retry_after = after;
                }
            }
        }
        Err(ExecutorError::Http(format!(
            "{last} (gave up after {} attempts)",
            self.cfg.max_retries + 1
        )))
    }

    fn complete_one(&self, request: &Request) -> Result<Completion, ExecutorError> {
        let (kind, body) = schema::encode_request(&self.cfg.model, request)?;
        let endpoint = format!("{}{}", self.base, kind.path());
        let body = body.to_string();
        self.with_retries(|| {
            let _slot = self.slots.acquire();
            let started = Instant::now();
            let mut req = self
                .agent
                .post(&endpoint)
                .header("Content-Type", "application/json");
            if let Some(key) = &self.cfg.api_key {
                req = req.header("Authorization", &format!("Bearer {key}"));
            }
            let (status, retry_after, text) = match req.send(&body) {
                Ok(resp) => match read_response(resp, &endpoint, self.cfg.timeout) {
                    Ok(r) => r,
                    Err(a) => return a,
                },
                Err(e) => return transport_attempt(&endpoint, &e, self.cfg.timeout),
            };
            let total_ms = started.elapsed().as_secs_f64() * 1e3;
            if status != 200 {
                return status_attempt(&endpoint, status, retry_after, &text);
            }
            Attempt::Done(schema::decode_response(&endpoint, &text, kind, total_ms))
        })
    }
}

impl Executor for OpenAiExecutor {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>> {
        self.complete_batch_progress(requests, &|_, _| {})
    }

    /// Each request is reported as soon as its HTTP exchange has ended.
    fn complete_batch_progress(
        &self,
        requests: &[Request],
        on_done: &OnDone<'_>,
    ) -> Vec<Result<Completion, ExecutorError>> {
        if requests.len() <= 1 {
            return requests
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let out = self.complete_one(r);
                    on_done(i, &out);
                    out
                })
                .collect();
        }
        let workers = requests.len().min(self.cfg.max_connections);
        let next = AtomicUsize::new(0);
        let results: Vec<Mutex<Option<Result<Completion, ExecutorError>>>> =
            requests.iter().map(|_| Mutex::new(None)).collect();
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= requests.len() {
                            break;
                        }
                        let r = self.complete_one(&requests[i]);
                        on_done(i, &r);
                        *results[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
                    }
                });
            }
        });
        results
            .into_iter()
            .enumerate()
            .map(|(i, m)| {
                m.into_inner()
                    .unwrap_or_else(|p| p.into_inner())
                    .unwrap_or_else(|| {
                        let r = Err(ExecutorError::Http("worker thread panicked".into()));
                        on_done(i, &r);
                        r
                    })
            })
            .collect()
    }
}

/// Status, `Retry-After`, and body of a response; a body that cannot be read is an
/// attempt outcome of its own.
fn read_response(
    mut resp: ureq::http::Response<ureq::Body>,
    endpoint: &str,
    timeout: Duration,
) -> Result<(u16, Option<Duration>, String), Attempt> {
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64);
    match resp
        .body_mut()
        .with_config()
        .limit(MAX_RESPONSE_BYTES)
        .read_to_string()
    {
        Ok(t) => Ok((status, retry_after, t)),
        Err(e) => Err(transport_attempt(endpoint, &e, timeout)),
    }
}

fn transport_attempt(endpoint: &str, e: &ureq::Error, timeout: Duration) -> Attempt {
    let error = transport_message(endpoint, e, timeout);
    if retryable_transport(e) {
        Attempt::Retry { error, after: None }
    } else {
        Attempt::Done(Err(ExecutorError::Http(error)))
    }
}

fn status_attempt(
    endpoint: &str,
    status: u16,
    retry_after: Option<Duration>,
    body: &str,
) -> Attempt {
    let error = status_message(endpoint, status, body);
    if retryable_status(status) {
        Attempt::Retry {
            error,
            after: retry_after,
        }
    } else if matches!(status, 400 | 413 | 422) {
        Attempt::Done(Err(ExecutorError::InvalidRequest(error)))
    } else {
        Attempt::Done(Err(ExecutorError::Http(error)))
    }
}

fn retryable_status(status: u16) -> bool {
    status == 429 || status == 408 || (500..=599).contains(&status)
}

fn retryable_transport(e: &ureq::Error) -> bool {
    use ureq::Error as E;
    match e {
        E::Timeout(_) | E::ConnectionFailed | E::HostNotFound | E::BodyStalled => true,
        E::Io(io) => !matches!(
            io.kind(),
            std::io::ErrorKind::InvalidInput | std::io::ErrorKind::InvalidData
        ),
        E::Protocol(_) => true,
        _ => false,
    }
}

fn transport_message(endpoint: &str, e: &ureq::Error, timeout: Duration) -> String {
    match e {
        ureq::Error::Timeout(which) => format!(
            "{endpoint}: timed out ({which}) with a limit of {:.1} s per attempt",
            timeout.as_secs_f64()
        ),
        other => format!("{endpoint}: {other}"),
    }
}

fn status_message(endpoint: &str, status: u16, body: &str) -> String {
    let detail = schema::decode_error(body);
    let hint = match status {
        401 | 403 => format!(
            " (check the API key in {} or {})",
            API_KEY_VARS[0], API_KEY_VARS[1]
        ),
        // Most servers mount the API under /v1; a base URL without it finds nothing.
        404 if !endpoint.contains("/v1/") => {
            " (the base URL has no `/v1`: most OpenAI-compatible servers, `hrl serve` too, answer under BASE/v1, e.g. http://127.0.0.1:8080/v1)".to_string()
        }
        _ => String::new(),
    };
    format!("{endpoint}: HTTP {status}: {detail}{hint}")
}

fn is_loopback_url(url: &str) -> bool {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .unwrap_or(url);
    let host = rest.split('/').next().unwrap_or("");
    let host = if let Some(h) = host.strip_prefix('[') {
        h.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(h, _)| h)
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .map(|ip| ip.is_loopback())
            .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_detection() {
        assert!(is_loopback_url("http://127.0.0.1:8080/v1"));
        assert!(is_loopback_url("http://localhost/v1"));
        assert!(is_loopback_url("http://[::1]:9/v1"));
        assert!(!is_loopback_url("http://10.0.0.2:8080/v1"));
        assert!(!is_loopback_url("https://example.org/v1"));
    }

    /// The backoff doubles from `backoff_initial`, is jittered into [0.5, 1] of the
    /// step, and never exceeds `backoff_max`, not even when a server asks for a longer
    /// `Retry-After`.
    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let mut cfg = OpenAiConfig::new("http://127.0.0.1:9/v1", "m");
        cfg.backoff_initial = Duration::from_millis(500);
        cfg.backoff_max = Duration::from_secs(30);
        let exec = OpenAiExecutor::new(cfg).unwrap();
        for attempt in 1..=40u32 {
            let step = Duration::from_millis(500)
                .saturating_mul(1u32 << (attempt - 1).min(20))
                .min(Duration::from_secs(30));
            for _ in 0..50 {
                let b = exec.backoff(attempt, None);
                assert!(
                    b <= step && b >= step / 2,
                    "attempt {attempt}: {b:?} vs {step:?}"
                );
                let b = exec.backoff(attempt, Some(Duration::from_secs(3600)));
                assert_eq!(b, Duration::from_secs(30), "Retry-After beyond the cap");
                let b = exec.backoff(attempt, Some(Duration::from_secs(20)));
                assert!(b >= Duration::from_secs(20) && b <= Duration::from_secs(30));
            }
        }
    }

    /// A 404 from a base URL without `/v1` says to add it; other 404s and other
    /// statuses do not.
    #[test]
    fn a_404_without_v1_hints_at_v1() {
        let m = status_message("http://127.0.0.1:8080/models", 404, "");
        assert!(m.contains("HTTP 404") && m.contains("no `/v1`"), "{m}");
        let m = status_message("http://127.0.0.1:8080/v1/models", 404, "");
        assert!(!m.contains("no `/v1`"), "{m}");
        let m = status_message("http://127.0.0.1:8080/models", 500, "");
        assert!(!m.contains("/v1"), "{m}");
    }
}
