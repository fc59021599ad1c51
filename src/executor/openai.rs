//! OpenAI-compatible HTTP executor: completes requests against any server that speaks
//! `/v1/chat/completions` and `/v1/completions` (vLLM, SGLang, llama-server, `hrl serve`,
//! hosted APIs).
//!
//! [`Prompt::Chat`] goes to `/v1/chat/completions`, [`Prompt::Raw`] to `/v1/completions`.
//! A batch is spread over at most `max_connections` requests in flight, a bound shared by
//! every caller of the same executor. Each attempt has a timeout; 429, 408, 5xx,
//! timeouts and failed connections are retried with capped exponential backoff (with
//! jitter, and honouring `Retry-After`); other 4xx fail at once with the server's
//! message. A response that is not the documented JSON shape is an
//! [`ExecutorError::MalformedResponse`] naming the endpoint and the field, and is not
//! retried. The API key comes from `HRL_API_KEY` or `OPENAI_API_KEY` (or the config) and
//! is sent as a bearer token.
//!
//! Beyond the standard fields, requests carry `top_k`, `min_p` (when set) and `grammar`
//! (GBNF, understood by llama-server and `hrl serve`), and responses may carry
//! llama-server style `timings` (`prompt_ms`, `predicted_ms`), which are used when
//! present. A response without `usage` gives zero token counts.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::{
    Completion, Executor, ExecutorError, FinishReason, Prompt, Request, Sampling, Timings, Usage,
};

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
        .and_then(|c| parse_models(&endpoint, &c.text))
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
        let (endpoint, body) = self.request_body(request)?;
        let body = body.to_string();
        let chat = matches!(request.prompt, Prompt::Chat(_));
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
            Attempt::Done(parse_completion(&endpoint, &text, chat, total_ms))
        })
    }

    fn request_body(&self, request: &Request) -> Result<(String, Value), ExecutorError> {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.cfg.model));
        let endpoint = match &request.prompt {
            Prompt::Chat(messages) => {
                if messages.is_empty() {
                    return Err(ExecutorError::InvalidRequest(
                        "chat prompt has no messages".into(),
                    ));
                }
                body.insert(
                    "messages".into(),
                    Value::Array(
                        messages
                            .iter()
                            .map(|m| json!({"role": m.role, "content": m.content}))
                            .collect(),
                    ),
                );
                format!("{}/chat/completions", self.base)
            }
            Prompt::Raw(text) => {
                body.insert("prompt".into(), json!(text));
                format!("{}/completions", self.base)
            }
        };
        sampling_fields(&mut body, &request.sampling);
        Ok((endpoint, Value::Object(body)))
    }
}

/// Write the sampling settings in OpenAI field names. Greedy requests send
/// `temperature: 0` and none of the sampler knobs that greedy decoding ignores.
pub(crate) fn sampling_fields(body: &mut Map<String, Value>, s: &Sampling) {
    body.insert("max_tokens".into(), json!(s.max_tokens));
    body.insert("n".into(), json!(1));
    body.insert("stream".into(), json!(false));
    if s.is_greedy() {
        body.insert("temperature".into(), json!(0.0));
    } else {
        body.insert("temperature".into(), json!(s.temperature));
        body.insert("top_p".into(), json!(s.top_p));
        if s.top_k > 0 {
            body.insert("top_k".into(), json!(s.top_k));
        }
        if s.min_p > 0.0 {
            body.insert("min_p".into(), json!(s.min_p));
        }
    }
    body.insert("seed".into(), json!(s.seed));
    if !s.stop.is_empty() {
        body.insert("stop".into(), json!(s.stop));
    }
    if let Some(g) = &s.grammar {
        body.insert("grammar".into(), json!(g));
    }
}

impl Executor for OpenAiExecutor {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>> {
        if requests.len() <= 1 {
            return requests.iter().map(|r| self.complete_one(r)).collect();
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
                        *results[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
                    }
                });
            }
        });
        results
            .into_iter()
            .map(|m| {
                m.into_inner()
                    .unwrap_or_else(|p| p.into_inner())
                    .unwrap_or_else(|| Err(ExecutorError::Http("worker thread panicked".into())))
            })
            .collect()
    }
}

/// One entry of `GET /models`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServedModel {
    pub id: String,
    /// The model identity an `hrl serve` endpoint reports.
    pub hrl_model_id: Option<String>,
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

fn parse_models(endpoint: &str, body: &str) -> Result<Vec<ServedModel>, ExecutorError> {
    let bad = |detail: String| ExecutorError::MalformedResponse {
        endpoint: endpoint.to_string(),
        detail,
    };
    let v: Value = serde_json::from_str(body)
        .map_err(|e| bad(format!("not JSON ({e}): {}", snippet(body))))?;
    let data = v
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(format!("no `data` array: {}", snippet(body))))?;
    data.iter()
        .enumerate()
        .map(|(i, m)| {
            let id = m
                .get("id")
                .and_then(Value::as_str)
                .ok_or_else(|| bad(format!("data[{i}].id is not a string")))?;
            Ok(ServedModel {
                id: id.to_string(),
                hrl_model_id: m
                    .get("hrl_model_id")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            })
        })
        .collect()
}

/// Parse a 200 response of `/chat/completions` (`chat`) or `/completions`.
pub(crate) fn parse_completion(
    endpoint: &str,
    body: &str,
    chat: bool,
    total_ms: f64,
) -> Result<Completion, ExecutorError> {
    let bad = |detail: String| ExecutorError::MalformedResponse {
        endpoint: endpoint.to_string(),
        detail,
    };
    let v: Value = serde_json::from_str(body)
        .map_err(|e| bad(format!("not JSON ({e}): {}", snippet(body))))?;
    if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
        return Err(ExecutorError::Http(format!(
            "{endpoint}: server reported an error with status 200: {}",
            snippet(&err.to_string())
        )));
    }
    let choice = v
        .get("choices")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(format!("no `choices` array: {}", snippet(body))))?
        .first()
        .ok_or_else(|| bad("`choices` is empty".into()))?;
    let text = if chat {
        let content = choice
            .get("message")
            .ok_or_else(|| bad("choices[0] has no `message`".into()))?
            .get("content")
            .ok_or_else(|| bad("choices[0].message has no `content`".into()))?;
        content.as_str().ok_or_else(|| {
            bad(format!(
                "choices[0].message.content is {content}, not a string"
            ))
        })?
    } else {
        let t = choice
            .get("text")
            .ok_or_else(|| bad("choices[0] has no `text`".into()))?;
        t.as_str()
            .ok_or_else(|| bad(format!("choices[0].text is {t}, not a string")))?
    };
    let finish_reason = match choice.get("finish_reason").and_then(Value::as_str) {
        Some("stop") | Some("eos") => FinishReason::Stop,
        Some("length") => FinishReason::Length,
        other => {
            return Err(bad(format!(
                "choices[0].finish_reason is {}, expected \"stop\" or \"length\"",
                other.map_or("missing".to_string(), |s| format!("{s:?}"))
            )));
        }
    };
    let count = |v: Option<&Value>, name: &str| -> Result<u32, ExecutorError> {
        match v {
            None | Some(Value::Null) => Ok(0),
            Some(n) => n
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| bad(format!("{name} is {n}, not a token count"))),
        }
    };
    let usage = match v.get("usage") {
        None | Some(Value::Null) => Usage::default(),
        Some(u) => Usage {
            prompt_tokens: count(u.get("prompt_tokens"), "usage.prompt_tokens")?,
            completion_tokens: count(u.get("completion_tokens"), "usage.completion_tokens")?,
            cached_prompt_tokens: count(
                u.get("prompt_tokens_details")
                    .and_then(|d| d.get("cached_tokens")),
                "usage.prompt_tokens_details.cached_tokens",
            )?,
        },
    };
    let t = v.get("timings");
    let ms = |name: &str| t.and_then(|t| t.get(name)).and_then(Value::as_f64);
    let timings = match (ms("prompt_ms"), ms("predicted_ms")) {
        (Some(p), Some(g)) => Timings {
            prompt_ms: p,
            generation_ms: g,
            total_ms,
        },
        _ => Timings {
            prompt_ms: 0.0,
            generation_ms: total_ms,
            total_ms,
        },
    };
    Ok(Completion {
        text: text.to_string(),
        finish_reason,
        usage,
        timings,
        cached: false,
    })
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
    let detail = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v.get("error")
                .map(|e| {
                    e.get("message")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .unwrap_or_else(|| e.to_string())
                })
                .or_else(|| v.get("detail").map(|d| d.to_string()))
        })
        .unwrap_or_else(|| snippet(body));
    let hint = match status {
        401 | 403 => format!(
            " (check the API key in {} or {})",
            API_KEY_VARS[0], API_KEY_VARS[1]
        ),
        _ => String::new(),
    };
    format!("{endpoint}: HTTP {status}: {detail}{hint}")
}

/// The first 300 characters of a body, for error messages.
fn snippet(body: &str) -> String {
    const MAX: usize = 300;
    let body = body.trim();
    if body.is_empty() {
        return "(empty body)".into();
    }
    match body.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &body[..i]),
        None => body.to_string(),
    }
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

    #[test]
    fn malformed_bodies_name_the_field() {
        let e = parse_completion(
            "E",
            r#"{"choices":[{"message":{"content":null},"finish_reason":"stop"}]}"#,
            true,
            1.0,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("choices[0].message.content is null"), "{e}");
        let e = parse_completion(
            "E",
            r#"{"choices":[{"text":"x","finish_reason":"tool_calls"}]}"#,
            false,
            1.0,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("finish_reason is \"tool_calls\""), "{e}");
        let e = parse_completion(
            "E",
            r#"{"choices":[{"text":"x","finish_reason":"stop"}],"usage":{"prompt_tokens":-3}}"#,
            false,
            1.0,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("usage.prompt_tokens is -3"), "{e}");
    }

    #[test]
    fn greedy_requests_send_temperature_zero_and_no_sampler_knobs() {
        let mut m = Map::new();
        let s = Sampling {
            top_k: 40,
            min_p: 0.1,
            ..Sampling::default()
        };
        sampling_fields(&mut m, &s);
        assert_eq!(m["temperature"], json!(0.0));
        assert!(!m.contains_key("top_k") && !m.contains_key("min_p"));
        let mut m = Map::new();
        sampling_fields(
            &mut m,
            &Sampling {
                temperature: 0.7,
                ..s
            },
        );
        assert_eq!(m["top_k"], json!(40));
    }
}
