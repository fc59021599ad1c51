//! The OpenAI-compatible HTTP executor and `hrl serve`.
//!
//! Client behaviour (retries, backoff, timeouts, bounded concurrency, API key, malformed
//! responses) is tested against `ScriptedServer`, a test double of a remote endpoint: a
//! raw TCP server on 127.0.0.1 that answers each request with the response a test
//! script computes and records what it received. The server side is tested by running
//! `harness_rl::serve::Server` around `SimulatedExecutor` (a deterministic test double
//! of a model) and talking to it with the real client. Tests against the real model
//! (llama.cpp behind `hrl serve`) are at the end, behind the `llama` feature.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use harness_rl::executor::openai::{OpenAiConfig, OpenAiExecutor};
use harness_rl::executor::{
    Completion, Executor, ExecutorError, FinishReason, Message, Prompt, Request, Sampling, Timings,
    Usage,
};
use harness_rl::serve::{ServeConfig, ServeError, Server};
use serde_json::{Value, json};

#[path = "common/mod.rs"]
mod common;
use common::cap;

// ---------------------------------------------------------------------------------
// ScriptedServer: a test double of a remote OpenAI-compatible endpoint.

#[derive(Debug, Clone)]
struct Recorded {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Recorded {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("client sent JSON")
    }
}

/// A one-way latch: threads wait until a test opens it.
#[derive(Clone, Default)]
struct Gate(Arc<(Mutex<bool>, std::sync::Condvar)>);

impl Gate {
    fn open(&self) {
        *self.0.0.lock().unwrap() = true;
        self.0.1.notify_all();
    }
    /// Wait until open; false if `limit` passed first (a safety net so a broken test
    /// fails instead of hanging).
    fn wait(&self, limit: Duration) -> bool {
        let (m, cv) = &*self.0;
        let (open, _) = cv
            .wait_timeout_while(m.lock().unwrap(), limit, |open| !*open)
            .unwrap();
        *open
    }
}

/// How long a synchronisation point waits before the test gives up on it. Far above
/// anything a loaded machine needs; only a broken implementation reaches it.
const SYNC_LIMIT: Duration = Duration::from_secs(60);

/// Poll `cond` until it holds; fail after `SYNC_LIMIT`.
fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < SYNC_LIMIT,
            "timed out waiting until {what}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    /// Answer only once this gate is open.
    gate: Option<Gate>,
    /// Answer only once this many requests have been in flight at the same time.
    in_flight_barrier: Option<usize>,
}

impl Reply {
    fn ok(body: Value) -> Reply {
        Reply::status(200, body.to_string())
    }
    fn status(status: u16, body: impl Into<String>) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: body.into(),
            gate: None,
            in_flight_barrier: None,
        }
    }
    fn header(mut self, k: &str, v: &str) -> Reply {
        self.headers.push((k.into(), v.into()));
        self
    }
    fn when_open(mut self, gate: &Gate) -> Reply {
        self.gate = Some(gate.clone());
        self
    }
    fn once_in_flight(mut self, n: usize) -> Reply {
        self.in_flight_barrier = Some(n);
        self
    }
}

type Script = dyn Fn(usize, &Recorded) -> Reply + Send + Sync;

struct ScriptedServer {
    port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
    max_in_flight: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl ScriptedServer {
    /// `script(n, request)` answers the n-th request (0-based, in arrival order).
    fn start(script: impl Fn(usize, &Recorded) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let max_in_flight = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let script: Arc<Script> = Arc::new(script);
        {
            let (requests, stop) = (requests.clone(), stop.clone());
            let (in_flight, max_in_flight) = (in_flight.clone(), max_in_flight.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let (requests, script) = (requests.clone(), script.clone());
                            let (in_flight, max_in_flight) =
                                (in_flight.clone(), max_in_flight.clone());
                            std::thread::spawn(move || {
                                serve_connection(
                                    stream,
                                    &requests,
                                    &*script,
                                    &in_flight,
                                    &max_in_flight,
                                )
                            });
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
            });
        }
        ScriptedServer {
            port,
            requests,
            max_in_flight,
            stop,
        }
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn serve_connection(
    stream: TcpStream,
    requests: &Mutex<Vec<Recorded>>,
    script: &Script,
    in_flight: &AtomicUsize,
    max_in_flight: &AtomicUsize,
) {
    stream.set_nonblocking(false).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    // Keep-alive: serve requests on this connection until the client closes it.
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let path = parts.next().unwrap_or("").to_string();
        let mut headers = Vec::new();
        let mut len = 0usize;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                let (k, v) = (k.trim().to_string(), v.trim().to_string());
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.parse().unwrap();
                }
                headers.push((k, v));
            }
        }
        let mut body = vec![0u8; len];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let rec = Recorded {
            method,
            path,
            headers,
            body: String::from_utf8(body).unwrap(),
        };
        let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        max_in_flight.fetch_max(now, Ordering::SeqCst);
        let n = {
            let mut r = requests.lock().unwrap();
            r.push(rec.clone());
            r.len() - 1
        };
        let reply = script(n, &rec);
        if let Some(gate) = &reply.gate {
            gate.wait(SYNC_LIMIT);
        }
        if let Some(n) = reply.in_flight_barrier {
            let start = Instant::now();
            // The high-water mark latches: once n were in flight together, every
            // request held here may go.
            while max_in_flight.load(Ordering::SeqCst) < n && start.elapsed() < SYNC_LIMIT {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        in_flight.fetch_sub(1, Ordering::SeqCst);
        let mut out = format!(
            "HTTP/1.1 {} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
            reply.status,
            reply.body.len()
        );
        for (k, v) in &reply.headers {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        out.push_str("\r\n");
        out.push_str(&reply.body);
        if writer.write_all(out.as_bytes()).is_err() {
            return;
        }
    }
}

fn chat_reply(text: &str) -> Reply {
    Reply::ok(json!({
        "id": "x", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
    }))
}

/// A client with a fixed key and fast retries, for scripted tests.
fn config(url: &str) -> OpenAiConfig {
    let mut c = OpenAiConfig::new(url, "m");
    c.api_key = Some("test-key".into());
    c.backoff_initial = Duration::from_millis(5);
    c.backoff_max = Duration::from_millis(20);
    c.max_retries = 3;
    c.timeout = Duration::from_secs(10);
    c
}

fn chat(text: &str) -> Request {
    Request {
        prompt: Prompt::Chat(vec![Message::system("be brief"), Message::user(text)]),
        sampling: Sampling::default(),
    }
}

fn raw(text: &str) -> Request {
    Request {
        prompt: Prompt::Raw(text.into()),
        sampling: Sampling::default(),
    }
}

// ---------------------------------------------------------------------------------
// Client against the scripted remote.

#[test]
fn chat_request_shape_and_response_parsing() {
    let server = ScriptedServer::start(|_, _| chat_reply("forty-two"));
    let exec = OpenAiExecutor::new(config(&server.base_url())).unwrap();
    let mut req = chat("what is six times seven?");
    req.sampling.stop = vec!["\n\n".into()];
    req.sampling.max_tokens = 17;
    req.sampling.seed = 99;
    let c = exec.complete(&req).unwrap();
    assert_eq!(c.text, "forty-two");
    assert_eq!(c.finish_reason, FinishReason::Stop);
    assert_eq!(c.usage.prompt_tokens, 11);
    assert_eq!(c.usage.completion_tokens, 3);
    assert!(!c.cached);

    let rec = &server.requests()[0];
    assert_eq!(rec.method, "POST");
    assert_eq!(rec.path, "/v1/chat/completions");
    assert_eq!(rec.header("authorization"), Some("Bearer test-key"));
    let body = rec.json();
    assert_eq!(body["model"], "m");
    assert_eq!(
        body["messages"],
        json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "what is six times seven?"}])
    );
    assert_eq!(body["temperature"], json!(0.0));
    assert_eq!(body["max_tokens"], 17);
    assert_eq!(body["seed"], 99);
    assert_eq!(body["stop"], json!(["\n\n"]));
    assert_eq!(body["stream"], false);
}

#[test]
fn raw_prompts_use_the_completions_endpoint() {
    let server = ScriptedServer::start(|_, rec| {
        let body = rec.json();
        Reply::ok(json!({
            "choices": [{"index": 0, "text": format!("<{}>", body["prompt"].as_str().unwrap()), "finish_reason": "length"}],
            "usage": {"prompt_tokens": 2, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 1}},
            "timings": {"prompt_ms": 1.5, "predicted_ms": 7.25}
        }))
    });
    let exec = OpenAiExecutor::new(config(&server.base_url())).unwrap();
    let mut req = raw("abc");
    req.sampling.temperature = 0.8;
    req.sampling.top_k = 40;
    req.sampling.grammar = Some("root ::= \"x\"".into());
    let c = exec.complete(&req).unwrap();
    assert_eq!(c.text, "<abc>");
    assert_eq!(c.finish_reason, FinishReason::Length);
    assert_eq!(c.usage.cached_prompt_tokens, 1);
    assert_eq!(c.timings.prompt_ms, 1.5);
    assert_eq!(c.timings.generation_ms, 7.25);
    let rec = &server.requests()[0];
    assert_eq!(rec.path, "/v1/completions");
    let body = rec.json();
    assert!((body["temperature"].as_f64().unwrap() - 0.8).abs() < 1e-6);
    assert_eq!(body["top_k"], 40);
    assert_eq!(body["grammar"], "root ::= \"x\"");
}

#[test]
fn retries_429_and_5xx_then_succeeds() {
    let server = ScriptedServer::start(|n, _| match n {
        0 => Reply::status(429, r#"{"error":{"message":"slow down"}}"#).header("Retry-After", "0"),
        1 => Reply::status(503, "overloaded"),
        2 => Reply::status(502, ""),
        _ => chat_reply("finally"),
    });
    let exec = OpenAiExecutor::new(config(&server.base_url())).unwrap();
    let c = exec.complete(&chat("x")).unwrap();
    assert_eq!(c.text, "finally");
    assert_eq!(server.count(), 4);
    assert_eq!(exec.counters().attempts.load(Ordering::Relaxed), 4);
    assert_eq!(exec.counters().retries.load(Ordering::Relaxed), 3);
}

#[test]
fn gives_up_after_max_retries_with_the_last_error() {
    let server = ScriptedServer::start(|_, _| {
        Reply::status(500, r#"{"error":{"message":"CUDA out of memory"}}"#)
    });
    let mut cfg = config(&server.base_url());
    cfg.max_retries = 2;
    let exec = OpenAiExecutor::new(cfg).unwrap();
    let err = exec.complete(&chat("x")).unwrap_err().to_string();
    assert!(err.contains("HTTP 500"), "{err}");
    assert!(err.contains("CUDA out of memory"), "{err}");
    assert!(err.contains("gave up after 3 attempts"), "{err}");
    assert_eq!(server.count(), 3);
}

#[test]
fn retry_after_is_honoured() {
    let server = ScriptedServer::start(|n, _| {
        if n == 0 {
            Reply::status(429, "").header("Retry-After", "1")
        } else {
            chat_reply("ok")
        }
    });
    let mut cfg = config(&server.base_url());
    cfg.backoff_max = Duration::from_secs(5);
    let exec = OpenAiExecutor::new(cfg).unwrap();
    let t = Instant::now();
    exec.complete(&chat("x")).unwrap();
    // The configured backoff is 5 ms; only the header can make the client wait 1 s.
    assert!(
        t.elapsed() >= Duration::from_millis(950),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn client_errors_are_not_retried_and_401_names_the_key_variables() {
    let server = ScriptedServer::start(|_, _| {
        Reply::status(401, r#"{"error":{"message":"invalid api key"}}"#)
    });
    let exec = OpenAiExecutor::new(config(&server.base_url())).unwrap();
    let err = exec.complete(&chat("x")).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ExecutorError::Http(_)), "{err:?}");
    assert!(
        msg.contains("HTTP 401") && msg.contains("invalid api key"),
        "{msg}"
    );
    assert!(
        msg.contains("HRL_API_KEY") && msg.contains("OPENAI_API_KEY"),
        "{msg}"
    );
    assert_eq!(server.count(), 1);

    let server = ScriptedServer::start(|_, _| {
        Reply::status(400, r#"{"error":{"message":"max_tokens too large"}}"#)
    });
    let exec = OpenAiExecutor::new(config(&server.base_url())).unwrap();
    let err = exec.complete(&chat("x")).unwrap_err();
    assert!(matches!(err, ExecutorError::InvalidRequest(_)), "{err:?}");
    assert!(err.to_string().contains("max_tokens too large"));
    assert_eq!(server.count(), 1);
}

#[test]
fn a_408_is_retried() {
    let server = ScriptedServer::start(|n, _| match n {
        0 => Reply::status(408, r#"{"error":{"message":"request timeout"}}"#),
        _ => chat_reply("after 408"),
    });
    let exec = OpenAiExecutor::new(config(&server.base_url())).unwrap();
    assert_eq!(exec.complete(&chat("x")).unwrap().text, "after 408");
    assert_eq!(server.count(), 2);
    assert_eq!(exec.counters().retries.load(Ordering::Relaxed), 1);
}

#[test]
fn a_413_or_422_is_an_invalid_request_and_not_retried() {
    for (status, message) in [
        (413, "request entity too large"),
        (422, "unprocessable field"),
    ] {
        let body = format!(r#"{{"error":{{"message":"{message}"}}}}"#);
        let server = ScriptedServer::start(move |_, _| Reply::status(status, body.clone()));
        let exec = OpenAiExecutor::new(config(&server.base_url())).unwrap();
        let err = exec.complete(&chat("x")).unwrap_err();
        assert!(
            matches!(err, ExecutorError::InvalidRequest(_)),
            "{status}: {err:?}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("HTTP {status}")) && msg.contains(message),
            "{msg}"
        );
        assert_eq!(server.count(), 1, "{status} was retried");
    }
}

#[test]
fn a_403_names_the_key_variables_and_is_not_retried() {
    let server =
        ScriptedServer::start(|_, _| Reply::status(403, r#"{"error":{"message":"forbidden"}}"#));
    let exec = OpenAiExecutor::new(config(&server.base_url())).unwrap();
    let err = exec.complete(&chat("x")).unwrap_err();
    assert!(matches!(err, ExecutorError::Http(_)), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("HTTP 403") && msg.contains("forbidden"),
        "{msg}"
    );
    assert!(
        msg.contains("check the API key in HRL_API_KEY or OPENAI_API_KEY"),
        "{msg}"
    );
    assert_eq!(server.count(), 1);
}

#[test]
fn a_retry_after_beyond_the_backoff_cap_is_capped() {
    // The server asks for an hour; the client's cap is 20 ms. Without the cap the
    // call would sleep an hour, far beyond the synchronisation limit.
    let server = ScriptedServer::start(|n, _| {
        if n < 2 {
            Reply::status(503, "busy").header("Retry-After", "3600")
        } else {
            chat_reply("ok")
        }
    });
    let exec = OpenAiExecutor::new(config(&server.base_url())).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(exec.complete(&chat("x")).map(|c| c.text));
    });
    let got = rx
        .recv_timeout(SYNC_LIMIT)
        .expect("the client slept for Retry-After beyond backoff_max");
    assert_eq!(got.unwrap(), "ok");
    assert_eq!(server.count(), 3);
}

#[test]
fn timeouts_are_retried_then_reported() {
    // The server answers only after the client has returned: every attempt must end
    // by the client's own timeout, whatever the machine's load.
    let answered = Gate::default();
    let gate = answered.clone();
    let server = ScriptedServer::start(move |_, _| chat_reply("late").when_open(&gate));
    let mut cfg = config(&server.base_url());
    cfg.timeout = Duration::from_millis(200);
    cfg.max_retries = 1;
    let exec = OpenAiExecutor::new(cfg).unwrap();
    let err = exec.complete(&chat("x")).unwrap_err().to_string();
    answered.open();
    assert!(err.contains("timed out"), "{err}");
    assert!(err.contains("0.2 s per attempt"), "{err}");
    assert!(err.contains("gave up after 2 attempts"), "{err}");
    assert_eq!(server.count(), 2);
}

#[test]
fn a_timeout_then_a_fast_answer_succeeds() {
    let answered = Gate::default();
    let gate = answered.clone();
    let server = ScriptedServer::start(move |n, _| {
        if n == 0 {
            chat_reply("late").when_open(&gate)
        } else {
            chat_reply("fast")
        }
    });
    let mut cfg = config(&server.base_url());
    cfg.timeout = Duration::from_millis(300);
    let exec = OpenAiExecutor::new(cfg).unwrap();
    let text = exec.complete(&chat("x")).unwrap().text;
    answered.open();
    assert_eq!(text, "fast");
}

#[test]
fn connection_refused_is_a_clear_error() {
    // Bind then drop to get a port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut cfg = config(&format!("http://127.0.0.1:{port}/v1"));
    cfg.max_retries = 1;
    let exec = OpenAiExecutor::new(cfg).unwrap();
    let err = exec.complete(&chat("x")).unwrap_err().to_string();
    assert!(
        err.contains(&format!("127.0.0.1:{port}/v1/chat/completions")),
        "{err}"
    );
    assert!(err.contains("gave up after 2 attempts"), "{err}");
}

#[test]
fn concurrency_is_bounded_by_max_connections_and_order_is_kept() {
    // The first three requests are answered only once three are in flight at once:
    // the client must reach its bound (by synchronisation, not by a lucky schedule),
    // and may never exceed it.
    let server = ScriptedServer::start(|n, rec| {
        let body = rec.json();
        let q = body["messages"][1]["content"].as_str().unwrap().to_string();
        let reply = chat_reply(&format!("answer to {q}"));
        if n < 3 {
            reply.once_in_flight(3)
        } else {
            reply
        }
    });
    let mut cfg = config(&server.base_url());
    cfg.max_connections = 3;
    let exec = OpenAiExecutor::new(cfg).unwrap();
    let reqs: Vec<Request> = (0..12).map(|i| chat(&format!("q{i}"))).collect();
    let out = exec.complete_batch(&reqs);
    for (i, r) in out.iter().enumerate() {
        assert_eq!(r.as_ref().unwrap().text, format!("answer to q{i}"));
    }
    let max = server.max_in_flight.load(Ordering::SeqCst);
    assert!(max <= 3, "{max} requests in flight with max_connections 3");
    assert_eq!(max, 3, "the client never had 3 requests in flight");
    assert_eq!(exec.counters().retries.load(Ordering::Relaxed), 0);

    // The bound holds across concurrent callers of one executor too.
    let server2 = ScriptedServer::start(|n, _| {
        if n < 2 {
            chat_reply("x").once_in_flight(2)
        } else {
            chat_reply("x")
        }
    });
    let mut cfg = config(&server2.base_url());
    cfg.max_connections = 2;
    let exec = Arc::new(OpenAiExecutor::new(cfg).unwrap());
    std::thread::scope(|s| {
        for _ in 0..3 {
            let exec = exec.clone();
            s.spawn(move || {
                let reqs: Vec<Request> = (0..4).map(|i| chat(&format!("{i}"))).collect();
                assert!(exec.complete_batch(&reqs).iter().all(|r| r.is_ok()));
            });
        }
    });
    assert_eq!(server2.count(), 12);
    let max = server2.max_in_flight.load(Ordering::SeqCst);
    assert!(max <= 2, "{max} requests in flight with max_connections 2");
    assert_eq!(max, 2);
    assert_eq!(exec.counters().retries.load(Ordering::Relaxed), 0);
}

#[test]
fn one_failing_request_does_not_discard_the_batch() {
    let server = ScriptedServer::start(|_, rec| {
        let body = rec.json();
        let q = body["messages"][1]["content"].as_str().unwrap().to_string();
        if q == "bad" {
            Reply::status(400, r#"{"error":{"message":"prompt too long"}}"#)
        } else {
            chat_reply(&q)
        }
    });
    let exec = OpenAiExecutor::new(config(&server.base_url())).unwrap();
    let out = exec.complete_batch(&[chat("a"), chat("bad"), chat("c")]);
    assert_eq!(out[0].as_ref().unwrap().text, "a");
    assert!(
        out[1]
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("prompt too long")
    );
    assert_eq!(out[2].as_ref().unwrap().text, "c");
}

#[test]
fn malformed_responses_are_named_and_not_retried() {
    let cases: Vec<(&str, &str)> = vec![
        ("this is not json", "not JSON"),
        (r#"{"object":"chat.completion"}"#, "no `choices` array"),
        (r#"{"choices":[]}"#, "`choices` is empty"),
        (
            r#"{"choices":[{"finish_reason":"stop"}]}"#,
            "choices[0] has no `message`",
        ),
        (
            r#"{"choices":[{"message":{"content":7},"finish_reason":"stop"}]}"#,
            "choices[0].message.content is 7, not a string",
        ),
        (
            r#"{"choices":[{"message":{"content":"x"}}]}"#,
            "finish_reason is missing",
        ),
        (
            r#"{"choices":[{"message":{"content":"x"},"finish_reason":"stop"}],"usage":{"completion_tokens":"many"}}"#,
            "usage.completion_tokens is \"many\"",
        ),
    ];
    for (body, want) in cases {
        let body = body.to_string();
        let server = ScriptedServer::start(move |_, _| Reply::status(200, body.clone()));
        let exec = OpenAiExecutor::new(config(&server.base_url())).unwrap();
        let err = exec.complete(&chat("x")).unwrap_err();
        assert!(
            matches!(err, ExecutorError::MalformedResponse { .. }),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(msg.contains(want), "{msg:?} should contain {want:?}");
        assert!(msg.contains("/v1/chat/completions"), "{msg}");
        assert_eq!(server.count(), 1, "malformed response retried: {want}");
    }
}

#[test]
fn invalid_configs_are_rejected_up_front() {
    assert!(OpenAiExecutor::new(OpenAiConfig::new("localhost:8080", "m")).is_err());
    assert!(OpenAiExecutor::new(OpenAiConfig::new("http://localhost:8080/v1", " ")).is_err());
    let mut c = OpenAiConfig::new("http://localhost:8080/v1", "m");
    c.max_connections = 0;
    let err = OpenAiExecutor::new(c).err().unwrap().to_string();
    assert!(err.contains("max_connections"), "{err}");
}

/// Runs in a child process (see `api_key_comes_from_the_environment`), where the
/// environment is set before the process starts.
#[test]
fn child_api_key_from_env() {
    let Ok(url) = std::env::var("HRL_TEST_CHILD_URL") else {
        return;
    };
    let exec = OpenAiExecutor::new(OpenAiConfig::new(url, "m")).unwrap();
    exec.complete(&chat("x")).unwrap();
}

#[test]
fn api_key_comes_from_the_environment() {
    let server = ScriptedServer::start(|_, _| chat_reply("ok"));
    let run = |vars: &[(&str, &str)]| {
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.args(["--exact", "child_api_key_from_env", "--test-threads", "1"])
            .env("HRL_TEST_CHILD_URL", server.base_url())
            .env_remove("HRL_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .stdout(std::process::Stdio::null());
        for (k, v) in vars {
            cmd.env(k, v);
        }
        assert!(cmd.status().unwrap().success());
    };
    run(&[("OPENAI_API_KEY", "from-openai")]);
    run(&[
        ("HRL_API_KEY", "from-hrl"),
        ("OPENAI_API_KEY", "from-openai"),
    ]);
    run(&[("HRL_API_KEY", ""), ("OPENAI_API_KEY", "fallback")]);
    run(&[]);
    let auth: Vec<Option<String>> = server
        .requests()
        .iter()
        .map(|r| r.header("authorization").map(str::to_string))
        .collect();
    assert_eq!(
        auth,
        vec![
            Some("Bearer from-openai".to_string()),
            Some("Bearer from-hrl".to_string()),
            Some("Bearer fallback".to_string()),
            None
        ]
    );
}

// ---------------------------------------------------------------------------------
// The server around a test double of a model.

/// Deterministic stand-in for a model: the completion is a function of the prompt and
/// sampling settings. Records the size of every `complete_batch` call and sleeps
/// `delay` per call. Synchronisation hooks: `hold_first_batch` makes the first call
/// wait for a gate; a request whose prompt contains `SLOW` opens `slow.0` and waits
/// for `slow.1`.
struct SimulatedExecutor {
    delay: Duration,
    batches: Mutex<Vec<usize>>,
    hold_first: Mutex<Option<Gate>>,
    slow: Option<(Gate, Gate)>,
    /// Whether each slow request was released by its gate (false: it timed out).
    slow_released: Mutex<Vec<bool>>,
}

impl SimulatedExecutor {
    fn new(delay: Duration) -> Self {
        SimulatedExecutor {
            delay,
            batches: Mutex::new(Vec::new()),
            hold_first: Mutex::new(None),
            slow: None,
            slow_released: Mutex::new(Vec::new()),
        }
    }
    fn hold_first_batch(self, gate: &Gate) -> Self {
        *self.hold_first.lock().unwrap() = Some(gate.clone());
        self
    }
    fn slow_requests(mut self, started: &Gate, release: &Gate) -> Self {
        self.slow = Some((started.clone(), release.clone()));
        self
    }
    fn answer(r: &Request) -> Result<Completion, ExecutorError> {
        let text = match &r.prompt {
            Prompt::Raw(p) => format!("raw:{p}"),
            Prompt::Chat(ms) => ms
                .iter()
                .map(|m| format!("{}={}", m.role, m.content))
                .collect::<Vec<_>>()
                .join("|"),
        };
        if text.contains("PANIC") {
            panic!("simulated executor panic");
        }
        if text.contains("TOO LONG") {
            return Err(ExecutorError::PromptTooLong {
                tokens: 9999,
                n_ctx: 2048,
            });
        }
        let text = format!(
            "{text} t={} seed={}",
            r.sampling.temperature, r.sampling.seed
        );
        Ok(Completion {
            usage: Usage {
                prompt_tokens: text.len() as u32,
                completion_tokens: r.sampling.max_tokens.min(7),
                cached_prompt_tokens: 0,
            },
            text,
            finish_reason: FinishReason::Stop,
            timings: Timings::default(),
            cached: false,
        })
    }
}

impl Executor for SimulatedExecutor {
    fn model_id(&self) -> &str {
        "sha256:simulated"
    }
    fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>> {
        self.batches.lock().unwrap().push(requests.len());
        std::thread::sleep(self.delay);
        let first = self.hold_first.lock().unwrap().take();
        if let Some(gate) = first {
            gate.wait(SYNC_LIMIT);
        }
        if let Some((started, release)) = &self.slow
            && requests
                .iter()
                .any(|r| format!("{:?}", r.prompt).contains("SLOW"))
        {
            started.open();
            let released = release.wait(SYNC_LIMIT);
            self.slow_released.lock().unwrap().push(released);
        }
        requests.iter().map(Self::answer).collect()
    }
}

fn serve(exec: Arc<SimulatedExecutor>) -> Server {
    serve_with(exec, |_| ())
}

fn serve_with(exec: Arc<SimulatedExecutor>, tweak: impl FnOnce(&mut ServeConfig)) -> Server {
    let mut cfg = ServeConfig::new("sim");
    cfg.port = 0;
    tweak(&mut cfg);
    Server::start(exec, cfg).unwrap()
}

fn serve_one_batch_at_a_time(exec: Arc<SimulatedExecutor>) -> Server {
    let mut cfg = ServeConfig::new("sim");
    cfg.port = 0;
    cfg.concurrent_batches = 1;
    Server::start(exec, cfg).unwrap()
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

fn post(url: &str, body: &str) -> (u16, Value) {
    let mut resp = agent()
        .post(url)
        .header("Content-Type", "application/json")
        .send(body)
        .unwrap();
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn get_json(url: &str) -> Value {
    let text = agent()
        .get(url)
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn served_executor_matches_in_process_executor() {
    let sim = Arc::new(SimulatedExecutor::new(Duration::ZERO));
    let server = serve(sim.clone());
    let client = OpenAiExecutor::connect(OpenAiConfig::new(server.base_url(), "sim")).unwrap();
    // connect() adopts the identity the server reports, for shared cache keys.
    assert_eq!(client.model_id(), "sha256:simulated");
    let mut sampled = chat("hello");
    sampled.sampling.temperature = 0.5;
    sampled.sampling.seed = 7;
    let reqs = vec![chat("hello"), raw("once upon"), sampled];
    let over_http = client.complete_batch(&reqs);
    for (r, got) in reqs.iter().zip(over_http) {
        let got = got.unwrap();
        let want = SimulatedExecutor::answer(r).unwrap();
        assert_eq!(got.text, want.text);
        assert_eq!(got.usage, want.usage);
        assert_eq!(got.finish_reason, want.finish_reason);
    }
}

#[test]
fn concurrent_requests_are_batched() {
    // The first batch is held in the executor until all 8 requests have reached the
    // server's queue; everything that queued meanwhile must then go in one batch.
    let release = Gate::default();
    let sim = Arc::new(SimulatedExecutor::new(Duration::ZERO).hold_first_batch(&release));
    let server = serve_one_batch_at_a_time(sim.clone());
    let mut cfg = OpenAiConfig::new(server.base_url(), "sim");
    cfg.max_connections = 8;
    cfg.timeout = Duration::from_secs(120);
    let client = OpenAiExecutor::new(cfg).unwrap();
    let reqs: Vec<Request> = (0..8).map(|i| chat(&format!("q{i}"))).collect();
    let out = std::thread::scope(|s| {
        let h = s.spawn(|| client.complete_batch(&reqs));
        wait_until("all 8 requests are queued", || {
            server.stats().received.load(Ordering::SeqCst) == 8
        });
        release.open();
        h.join().unwrap()
    });
    for (r, got) in reqs.iter().zip(&out) {
        assert_eq!(
            got.as_ref().unwrap().text,
            SimulatedExecutor::answer(r).unwrap().text
        );
    }
    let batches = sim.batches.lock().unwrap().clone();
    assert_eq!(batches.iter().sum::<usize>(), 8, "{batches:?}");
    assert!(
        batches.len() <= 2,
        "queued requests were not batched: {batches:?}"
    );
    assert_eq!(server.stats().requests.load(Ordering::Relaxed), 8);

    // A multi-prompt /v1/completions request is one job, answered in order.
    let (status, resp) = post(
        &format!("{}/completions", server.base_url()),
        &json!({"prompt": ["a", "b", "c"], "temperature": 0}).to_string(),
    );
    assert_eq!(status, 200, "{resp}");
    let texts: Vec<&str> = resp["choices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        vec!["raw:a t=0 seed=0", "raw:b t=0 seed=0", "raw:c t=0 seed=0"]
    );
    assert_eq!(sim.batches.lock().unwrap().last(), Some(&3));
}

#[test]
fn a_long_batch_does_not_hold_back_a_later_one() {
    // The slow request stays in the executor until the quick one has been answered; a
    // server that made the quick request wait for the slow batch would finish the slow
    // one first (after SYNC_LIMIT), and the order below would be reversed.
    let (slow_started, quick_done) = (Gate::default(), Gate::default());
    let sim =
        Arc::new(SimulatedExecutor::new(Duration::ZERO).slow_requests(&slow_started, &quick_done));
    let server = serve(sim.clone());
    let url = server.base_url();
    let order = Arc::new(Mutex::new(Vec::new()));
    std::thread::scope(|s| {
        let (o1, u1) = (order.clone(), url.clone());
        s.spawn(move || {
            let c = OpenAiExecutor::new(OpenAiConfig::new(u1, "sim")).unwrap();
            c.complete(&chat("SLOW")).unwrap();
            o1.lock().unwrap().push("slow");
        });
        assert!(
            slow_started.wait(SYNC_LIMIT),
            "the slow request never started"
        );
        let c = OpenAiExecutor::new(OpenAiConfig::new(url.clone(), "sim")).unwrap();
        c.complete(&chat("quick")).unwrap();
        order.lock().unwrap().push("quick");
        quick_done.open();
    });
    assert_eq!(
        *sim.slow_released.lock().unwrap(),
        vec![true],
        "the quick request was not answered while the slow batch ran"
    );
    assert_eq!(*order.lock().unwrap(), vec!["quick", "slow"]);
    assert_eq!(server.stats().batches.load(Ordering::Relaxed), 2);
}

#[test]
fn server_rejects_bad_requests_with_openai_errors() {
    let server = serve(Arc::new(SimulatedExecutor::new(Duration::ZERO)));
    let chat_url = format!("{}/chat/completions", server.base_url());
    let user = r#""messages": [{"role": "user", "content": "x"}]"#;
    let cases: Vec<(String, u16, &str)> = vec![
        ("{not json".into(), 400, "not JSON"),
        (
            r#"{"messages": []}"#.into(),
            400,
            "`messages` must be a non-empty array",
        ),
        (
            r#"{"messages": [{"role": "tool", "content": "x"}]}"#.into(),
            400,
            "messages[0].role \"tool\"",
        ),
        (
            r#"{"messages": [{"role": "user"}]}"#.into(),
            400,
            "messages[0].content",
        ),
        (
            format!(r#"{{"model": "gpt-9", {user}}}"#),
            404,
            "\"gpt-9\" is not served",
        ),
        (format!(r#"{{"n": 2, {user}}}"#), 400, "n = 1"),
        (format!(r#"{{"stream": true, {user}}}"#), 400, "streaming"),
        (
            format!(r#"{{"temperature": -1, {user}}}"#),
            400,
            "temperature = -1 is out of range: must be between 0 and 100",
        ),
        (
            format!(r#"{{"temperature": 150, {user}}}"#),
            400,
            "temperature = 150 is out of range: must be between 0 and 100",
        ),
        (format!(r#"{{"top_p": 0, {user}}}"#), 400, "top_p = 0"),
        (
            format!(r#"{{"presence_penalty": 0.5, {user}}}"#),
            400,
            "`presence_penalty` = 0.5 is not supported",
        ),
        (format!(r#"{{"max_tokens": 0, {user}}}"#), 400, "max_tokens"),
        (format!(r#"{{"stop": 3, {user}}}"#), 400, "stop"),
        (
            r#"{"messages": [{"role": "user", "content": "TOO LONG"}]}"#.into(),
            400,
            "does not fit the context",
        ),
    ];
    for (body, status, want) in &cases {
        let (got_status, got) = post(&chat_url, body);
        assert_eq!(got_status, *status, "{body}: {got}");
        let msg = got["error"]["message"].as_str().unwrap_or_default();
        assert!(
            msg.contains(want),
            "{body}: {msg:?} should contain {want:?}"
        );
    }
    let (s, _) = post(
        &format!("{}/completions", server.base_url()),
        r#"{"prompt": [1, 2]}"#,
    );
    assert_eq!(s, 400);
    let (s, _) = post(&format!("{}/embeddings", server.base_url()), "{}");
    assert_eq!(s, 404);
    let r = agent().get(&chat_url).call().unwrap();
    assert_eq!(r.status().as_u16(), 405);
    assert!(server.stats().rejected.load(Ordering::Relaxed) >= cases.len() as u64 + 2);
}

#[test]
fn nullable_fields_accept_null_over_http() {
    let server = serve(Arc::new(SimulatedExecutor::new(Duration::ZERO)));
    let body = json!({
        "model": null, "messages": [{"role": "user", "content": "x"}],
        "n": null, "stream": null, "temperature": null, "top_p": null, "stop": null,
        "seed": null, "max_tokens": null, "max_completion_tokens": null,
        "frequency_penalty": null, "presence_penalty": null, "logit_bias": null,
        "logprobs": null, "top_logprobs": null, "user": null, "tools": null,
        "tool_choice": null, "response_format": null, "stream_options": null,
    });
    let (status, v) = post(
        &format!("{}/chat/completions", server.base_url()),
        &body.to_string(),
    );
    assert_eq!(status, 200, "{v}");
    // OpenAI's defaults: temperature 1; seed 0 here.
    assert_eq!(v["choices"][0]["message"]["content"], "user=x t=1 seed=0");
    let (status, v) = post(
        &format!("{}/completions", server.base_url()),
        r#"{"prompt": "p", "n": null, "stream": null, "echo": null, "best_of": null, "suffix": null}"#,
    );
    assert_eq!(status, 200, "{v}");
}

fn connect(server: &Server) -> TcpStream {
    let s = TcpStream::connect(server.addr()).unwrap();
    s.set_read_timeout(Some(SYNC_LIMIT)).unwrap();
    s
}

/// Read until the server ends the stream; the error, if the connection was reset.
fn read_all(s: &mut TcpStream) -> Result<String, std::io::Error> {
    let mut out = Vec::new();
    s.read_to_end(&mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn open_connections(server: &Server) -> u64 {
    server.stats().connections_open.load(Ordering::SeqCst)
}

/// A chunk size that overflows the body length used to panic the connection thread
/// and leak its slot for good (with a cap of 2, two such requests locked every client
/// out). Now it is a 413, and the slots come back.
#[test]
fn an_overflowing_chunk_size_is_a_413_and_frees_its_slot() {
    let server = serve_with(Arc::new(SimulatedExecutor::new(Duration::ZERO)), |c| {
        c.max_connections = 2
    });
    let attack = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\nffffffffffffffff\r\n";
    // Both slots used by attackers that keep their sockets open afterwards.
    let mut attackers = Vec::new();
    for _ in 0..2 {
        let mut s = connect(&server);
        s.write_all(attack.as_bytes()).unwrap();
        let out = read_all(&mut s).unwrap();
        assert!(out.starts_with("HTTP/1.1 413"), "{out}");
        assert!(out.contains("request body over"), "{out}");
        attackers.push(s);
    }
    wait_until("the attackers' slots are released", || {
        open_connections(&server) == 0
    });
    assert_eq!(server.stats().panics.load(Ordering::SeqCst), 0);
    // At the cap (one idle connection held, one request), a request succeeds.
    let _idle = connect(&server);
    wait_until("the idle connection is accepted", || {
        open_connections(&server) == 1
    });
    let (status, v) = post(
        &format!("{}/completions", server.base_url()),
        r#"{"prompt": "after", "temperature": 0}"#,
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["choices"][0]["text"], "raw:after t=0 seed=0");
    assert_eq!(
        server.stats().connections_rejected.load(Ordering::SeqCst),
        0
    );
}

/// Sends the headers and the first half of the body, waits until the server has
/// answered (the rejection is counted), then sends the rest: the way `http.client` and
/// most clients write a POST, with the server's early answer in between and bytes
/// still unread on the server's side when it answers.
fn headers_then_body(server: &Server, counter: &Counter, headers: &str, body: &[u8]) -> String {
    let before = counter(server);
    let mut s = connect(server);
    let (first, rest) = body.split_at(body.len() / 2);
    s.write_all(&[headers.as_bytes(), first].concat()).unwrap();
    wait_until("the server has answered", || counter(server) > before);
    s.write_all(rest)
        .expect("sending the body after the server's early answer");
    read_all(&mut s).expect("reading the server's early answer")
}

/// Reads one of the server's counters.
type Counter = dyn Fn(&Server) -> u64;

#[test]
fn the_503_at_the_connection_cap_reaches_a_client_that_writes_twice() {
    let server = serve_with(Arc::new(SimulatedExecutor::new(Duration::ZERO)), |c| {
        c.max_connections = 2
    });
    let held = [connect(&server), connect(&server)];
    wait_until("both held connections are accepted", || {
        open_connections(&server) == 2
    });
    let body = vec![b' '; 64 << 10];
    let headers = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let rejected = |s: &Server| s.stats().connections_rejected.load(Ordering::SeqCst);
    for i in 0..20 {
        let out = headers_then_body(&server, &rejected, &headers, &body);
        assert!(out.starts_with("HTTP/1.1 503"), "attempt {i}: {out}");
        assert!(out.contains("too many connections (limit 2)"), "{out}");
    }
    assert_eq!(rejected(&server), 20);
    wait_until("lingering sockets are closed", || server.lingering() == 0);
    // The rejected connections never held a slot; freeing one serves the next client.
    drop(held);
    wait_until("the held connections are closed", || {
        open_connections(&server) == 0
    });
    let health = get_json(&format!("http://{}/health", server.addr()));
    assert_eq!(health["connections_rejected"], 20, "{health}");
    assert_eq!(health["connections_open"], 1, "{health}");
    assert_eq!(health["max_connections"], 2, "{health}");
}

#[test]
fn early_400_and_413_reach_a_client_that_writes_twice() {
    let server = serve_with(Arc::new(SimulatedExecutor::new(Duration::ZERO)), |c| {
        c.max_body_bytes = 1000
    });
    let rejected = |s: &Server| s.stats().rejected.load(Ordering::SeqCst);
    let body = vec![b'x'; 64 << 10];
    for i in 0..10 {
        let headers = format!(
            "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let out = headers_then_body(&server, &rejected, &headers, &body);
        assert!(out.starts_with("HTTP/1.1 413"), "attempt {i}: {out}");
        assert!(out.contains("request body over 1000 bytes"), "{out}");
        let headers = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1e5\r\n\r\n";
        let out = headers_then_body(&server, &rejected, headers, &body);
        assert!(out.starts_with("HTTP/1.1 400"), "attempt {i}: {out}");
        assert!(out.contains("bad Content-Length"), "{out}");
    }
    wait_until("lingering sockets are closed", || server.lingering() == 0);
}

#[test]
fn the_body_limit_is_exact_for_both_framings() {
    let limit = 1000;
    let server = serve_with(Arc::new(SimulatedExecutor::new(Duration::ZERO)), |c| {
        c.max_body_bytes = limit
    });
    let url = format!("{}/completions", server.base_url());
    let exact = |n: usize| {
        let mut b = r#"{"prompt": "p", "temperature": 0}"#.to_string();
        while b.len() < n {
            b.insert(1, ' ');
        }
        b
    };
    let (status, v) = post(&url, &exact(limit));
    assert_eq!(status, 200, "a body of exactly the limit: {v}");
    let (status, v) = post(&url, &exact(limit + 1));
    assert_eq!(status, 413, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("over 1000 bytes")
    );
    // Chunked: the running total counts, however the chunks are cut.
    for (total, want) in [(limit, "HTTP/1.1 200"), (limit + 1, "HTTP/1.1 413")] {
        let body = exact(total);
        let (a, b) = body.split_at(600);
        let req = format!(
            "POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
            a.len(),
            b.len()
        );
        let mut s = connect(&server);
        s.write_all(req.as_bytes()).unwrap();
        let out = read_all(&mut s).unwrap();
        assert!(out.starts_with(want), "{total}: {out}");
    }
    // Ambiguous framing is refused.
    let mut s = connect(&server);
    s.write_all(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n").unwrap();
    let out = read_all(&mut s).unwrap();
    assert!(
        out.starts_with("HTTP/1.1 400") && out.contains("both Content-Length"),
        "{out}"
    );
}

#[test]
fn idle_connections_are_closed_and_free_their_slots() {
    let server = serve_with(Arc::new(SimulatedExecutor::new(Duration::ZERO)), |c| {
        c.max_connections = 1;
        c.idle_timeout = Duration::from_millis(200);
    });
    // A connection that never sends is closed by the server (not by this client's
    // read timeout, which is SYNC_LIMIT).
    let mut idle = connect(&server);
    assert_eq!(read_all(&mut idle).unwrap(), "", "closed without an answer");
    wait_until("the idle connection's slot is free", || {
        open_connections(&server) == 0
    });
    // A request that stalls half-way is answered 408, which clients retry.
    let mut s = connect(&server);
    s.write_all(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n{\"pro")
        .unwrap();
    let out = read_all(&mut s).unwrap();
    assert!(out.starts_with("HTTP/1.1 408"), "{out}");
    assert!(out.contains("idle timeout"), "{out}");
    wait_until("the stalled connection's slot is free", || {
        open_connections(&server) == 0
    });
    // A keep-alive connection is served, then closed once idle; the cap of 1 then
    // admits the next client.
    let mut s = connect(&server);
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let out = read_all(&mut s).unwrap();
    assert!(
        out.starts_with("HTTP/1.1 200") && out.contains("Connection: keep-alive"),
        "{out}"
    );
    wait_until("the keep-alive connection's slot is free", || {
        open_connections(&server) == 0
    });
    let (status, _) = post(
        &format!("{}/completions", server.base_url()),
        r#"{"prompt": "p"}"#,
    );
    assert_eq!(status, 200);
    assert_eq!(
        server.stats().connections_rejected.load(Ordering::SeqCst),
        0
    );
}

/// The connection cap is exact across cycles of fill, refuse, close and serve (issue
/// 35; the steps are `common::cap`'s): on one server for many cycles, and on fresh
/// servers. The same steps run against `hrl serve` with the real model below and
/// against `hrl reward-server` in tests/reward.
#[test]
fn the_connection_cap_is_exact_across_connections_that_close() {
    let request = cap::Request {
        method: "POST",
        path: "/v1/completions",
        body: r#"{"prompt": "p", "max_tokens": 1}"#,
    };
    for (i, cycles) in [100, 10, 10, 10, 10].into_iter().enumerate() {
        let server = serve_with(Arc::new(SimulatedExecutor::new(Duration::ZERO)), |c| {
            c.max_connections = 8
        });
        cap::cycles(
            server.addr(),
            8,
            &request,
            cycles,
            &format!("in-process server {i}"),
        );
        assert_eq!(server.stats().panics.load(Ordering::SeqCst), 0);
    }
}

#[test]
fn malformed_http_is_answered_400_and_closed() {
    let server = serve(Arc::new(SimulatedExecutor::new(Duration::ZERO)));
    let mut s = TcpStream::connect(server.addr()).unwrap();
    s.write_all(b"GARBAGE\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 400"), "{out}");
    assert!(out.contains("malformed request line"), "{out}");

    // Chunked upload with Expect: 100-continue (what some clients send).
    let mut s = TcpStream::connect(server.addr()).unwrap();
    let body = r#"{"prompt": "hi", "temperature": 0}"#;
    let (a, b) = body.split_at(10);
    let req = format!(
        "POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
        a.len(),
        b.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(
        out.starts_with("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200"),
        "{out}"
    );
    assert!(out.contains("raw:hi t=0 seed=0"), "{out}");
}

#[test]
fn content_parts_and_models_and_health() {
    let server = serve(Arc::new(SimulatedExecutor::new(Duration::ZERO)));
    let (s, v) = post(
        &format!("{}/chat/completions", server.base_url()),
        r#"{"model": "sim", "temperature": 0, "messages": [{"role": "user", "content": [{"type": "text", "text": "ab"}, {"type": "text", "text": "cd"}]}]}"#,
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        v["choices"][0]["message"]["content"],
        "user=abcd t=0 seed=0"
    );
    assert_eq!(v["object"], "chat.completion");
    let models = get_json(&format!("{}/models", server.base_url()));
    assert_eq!(models["data"][0]["id"], "sim");
    assert_eq!(models["data"][0]["hrl_model_id"], "sha256:simulated");
    let health = get_json(&format!("http://{}/health", server.addr()));
    assert_eq!(health["status"], "ok");
    assert_eq!(health["requests"], 1);
}

#[test]
fn connect_fails_clearly_for_an_unknown_model() {
    let server = serve(Arc::new(SimulatedExecutor::new(Duration::ZERO)));
    let err = OpenAiExecutor::connect(OpenAiConfig::new(server.base_url(), "other"))
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("does not serve model \"other\"") && err.contains("sim"),
        "{err}"
    );
}

#[test]
fn an_executor_panic_fails_its_batch_and_the_server_keeps_serving() {
    let server = serve(Arc::new(SimulatedExecutor::new(Duration::ZERO)));
    let mut cfg = OpenAiConfig::new(server.base_url(), "sim");
    cfg.max_retries = 0;
    let client = OpenAiExecutor::new(cfg).unwrap();
    let err = client.complete(&chat("PANIC")).unwrap_err().to_string();
    assert!(
        err.contains("HTTP 500") && err.contains("executor panicked"),
        "{err}"
    );
    assert!(
        client
            .complete(&chat("fine"))
            .unwrap()
            .text
            .contains("user=fine")
    );
}

#[test]
fn serve_refuses_non_loopback_addresses() {
    let mut cfg = ServeConfig::new("sim");
    cfg.host = "0.0.0.0".parse().unwrap();
    cfg.port = 0;
    let err = Server::start(Arc::new(SimulatedExecutor::new(Duration::ZERO)), cfg)
        .err()
        .unwrap();
    assert!(matches!(err, ServeError::NotLoopback(_)), "{err:?}");
    assert!(err.to_string().contains("loopback"));
}

#[test]
fn shutdown_releases_the_port_and_closes_idle_connections() {
    let server = serve(Arc::new(SimulatedExecutor::new(Duration::ZERO)));
    let addr = server.addr();
    // An idle keep-alive connection must not keep the server alive.
    let idle = TcpStream::connect(addr).unwrap();
    wait_until("the idle connection is accepted", || {
        open_connections(&server) == 1
    });
    server.shutdown();
    assert!(TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_err());
    drop(idle);
}

// ---------------------------------------------------------------------------------
// The real model: `hrl serve` (llama.cpp, SmolLM2-135M) against the in-process executor.

#[cfg(feature = "llama")]
mod real_model {
    use std::io::{BufRead, BufReader, Read};
    use std::process::{Child, Command, Stdio};

    use harness_rl::executor::llama::{LlamaExecutor, LlamaOptions};
    use harness_rl::models;

    use super::*;

    /// Kills the `hrl serve` child this test started.
    struct ServeProcess(Child);

    impl Drop for ServeProcess {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn installed_default_model() -> &'static str {
        let model = models::known(models::DEFAULT_MODEL).expect("default model is known");
        assert!(
            model.is_installed(),
            "{} is not installed: run `hrl models fetch {}` (make test does)",
            model.name,
            model.name
        );
        model.name
    }

    /// Start `hrl serve` on a free port (with `extra_args`, e.g. `--no-cache`);
    /// returns the process and its base URL.
    fn start_hrl_serve(model: &str, extra_args: &[&str]) -> (ServeProcess, String) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hrl"))
            .args([
                "serve",
                "--model",
                model,
                "--port",
                "0",
                "--threads",
                "1",
                "--ctx-per-seq",
                "512",
                "--n-parallel",
                "4",
            ])
            .args(extra_args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("hrl serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        if !line.starts_with("http://127.0.0.1:") {
            let mut err = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            panic!("hrl serve did not print its URL: {line:?}; stderr: {err}");
        }
        (ServeProcess(child), line.trim().to_string())
    }

    #[test]
    fn hrl_serve_refuses_a_non_loopback_host_before_loading_anything() {
        let out = Command::new(env!("CARGO_BIN_EXE_hrl"))
            .args(["serve", "--model", "/nonexistent.gguf", "--host", "0.0.0.0"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("not a loopback address"), "{err}");
    }

    /// One rule for sampling ranges: `hrl generate` refuses what `hrl serve` refuses,
    /// with the same message (`Sampling::validate`), before loading any model.
    #[test]
    fn generate_and_serve_apply_the_same_sampling_ranges() {
        let server = serve(Arc::new(SimulatedExecutor::new(Duration::ZERO)));
        for (flag, value, field) in [
            (
                "--top-p",
                "0",
                "top_p = 0 is out of range: must be in (0, 1]",
            ),
            (
                "--temperature",
                "150",
                "temperature = 150 is out of range: must be between 0 and 100",
            ),
            (
                "--min-p",
                "1.5",
                "min_p = 1.5 is out of range: must be in [0, 1]",
            ),
            (
                "--max-tokens",
                "0",
                "max_tokens = 0 is out of range: must be at least 1",
            ),
        ] {
            let out = Command::new(env!("CARGO_BIN_EXE_hrl"))
                .args(["generate", "--model", "/nonexistent.gguf", "--prompt", "x"])
                .args([flag, value, "--no-cache"])
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{flag} {value}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(field), "{flag} {value}: {err}");
            let json_field = flag.trim_start_matches("--").replace('-', "_");
            let number: Value = serde_json::from_str(value).unwrap();
            let (status, v) = post(
                &format!("{}/completions", server.base_url()),
                &json!({"prompt": "x", json_field.as_str(): number}).to_string(),
            );
            assert_eq!(status, 400, "{v}");
            let msg = v["error"]["message"].as_str().unwrap();
            assert!(msg.contains(field), "{msg}");
        }
    }

    #[test]
    fn hrl_generate_against_an_endpoint_with_the_cache() {
        let sim = Arc::new(SimulatedExecutor::new(Duration::ZERO));
        let server = serve(sim.clone());
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("c.sqlite");
        let run = || {
            let out = Command::new(env!("CARGO_BIN_EXE_hrl"))
                .args([
                    "generate",
                    "--endpoint",
                    &server.base_url(),
                    "--model",
                    "sim",
                ])
                .args(["--prompt", "hi", "--max-tokens", "5", "--json", "--cache"])
                .arg(&cache)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            (v, String::from_utf8_lossy(&out.stderr).into_owned())
        };
        let (first, err) = run();
        assert_eq!(first["text"], "user=hi t=0 seed=0");
        assert_eq!(first["cached"], false);
        assert!(err.contains("0 hits, 1 misses"), "{err}");
        let (second, err) = run();
        assert_eq!(second["text"], first["text"]);
        assert_eq!(second["cached"], true);
        assert!(err.contains("1 hits, 0 misses"), "{err}");
        assert_eq!(
            sim.batches.lock().unwrap().len(),
            1,
            "the warm run reached the server"
        );

        // A model the endpoint does not serve is named in the error.
        let out = Command::new(env!("CARGO_BIN_EXE_hrl"))
            .args([
                "generate",
                "--endpoint",
                &server.base_url(),
                "--model",
                "nope",
            ])
            .args(["--prompt", "hi", "--no-cache"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("does not serve model \"nope\""), "{err}");
    }

    /// `hrl serve` answers a repeated request from its completion cache, across
    /// clients and across a restart of the server, with the text computed first.
    #[test]
    fn hrl_serve_answers_repeated_requests_from_its_completion_cache() {
        let name = installed_default_model();
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("serve-cache.sqlite");
        let cache_arg = cache.to_str().unwrap();
        let body = json!({
            "model": name,
            "messages": [{"role": "user", "content": "Name a color."}],
            "temperature": 0, "max_tokens": 8,
        })
        .to_string();
        let ask = |url: &str| {
            let (status, v) = post(&format!("{url}/chat/completions"), &body);
            assert_eq!(status, 200, "{v}");
            let c = &v["choices"][0];
            (
                c["message"]["content"].as_str().unwrap().to_string(),
                c["hrl_cached"].as_bool().unwrap(),
            )
        };
        let (first_text, first_cached) = {
            let (_serve, url) = start_hrl_serve(name, &["--cache", cache_arg]);
            let first = ask(&url);
            let again = ask(&url);
            assert!(!first.1, "the first request must run the model");
            assert_eq!(again, (first.0.clone(), true), "a repeat is a cache hit");
            first
        };
        assert!(!first_cached && !first_text.is_empty());
        // A new server process on the same cache file answers without the model.
        let (_serve, url) = start_hrl_serve(name, &["--cache", cache_arg]);
        assert_eq!(ask(&url), (first_text.clone(), true));
        // The client sees the hit too, and the entry is keyed by the GGUF's sha256,
        // so `hrl generate` on the same model file would share it.
        let client = OpenAiExecutor::connect(OpenAiConfig::new(url, name)).unwrap();
        let mut r = greedy(Prompt::Chat(vec![Message::user("Name a color.")]));
        r.sampling.max_tokens = 8;
        let c = client.complete(&r).unwrap();
        assert!(c.cached);
        assert_eq!(c.text, first_text);
        let out = Command::new(env!("CARGO_BIN_EXE_hrl"))
            .args(["cache", "stats", "--json", "--cache", cache_arg])
            .output()
            .unwrap();
        let stats: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(stats["entries"], 1, "{stats}");
        assert_eq!(stats["models"][0]["model_id"], client.model_id());
    }

    /// Issue 35: `hrl serve --max-connections 8` holds its cap exactly when connections
    /// close and new ones open at once (the steps are `common::cap`'s), on one server
    /// for 20 cycles and on fresh servers; `/health` counts every open connection.
    #[test]
    fn hrl_serve_holds_its_connection_cap_exactly() {
        let name = installed_default_model();
        let request = cap::Request {
            method: "POST",
            path: "/v1/chat/completions",
            body: r#"{"messages": [{"role": "user", "content": "Hi"}], "temperature": 0, "max_tokens": 1}"#,
        };
        for (i, cycles) in [20, 3, 3, 3].into_iter().enumerate() {
            let (_serve, url) = start_hrl_serve(name, &["--no-cache", "--max-connections", "8"]);
            let addr = url
                .trim_start_matches("http://")
                .trim_end_matches("/v1")
                .parse()
                .unwrap();
            cap::cycles(addr, 8, &request, cycles, &format!("hrl serve {i}"));
        }
    }

    fn cache_entries(path: &std::path::Path) -> u64 {
        harness_rl::executor::cache::CompletionCache::open_existing(path)
            .unwrap()
            .map_or(0, |c| c.stats().unwrap().entries)
    }

    fn jsonl(out: &[u8]) -> Vec<Value> {
        String::from_utf8_lossy(out)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// `hrl generate --prompts` killed with SIGKILL mid-run keeps every completion
    /// it had finished; the rerun answers exactly those from the cache. Driven by
    /// synchronisation: the sixth request blocks inside the served executor until the
    /// test has killed the client.
    #[test]
    fn a_killed_generate_run_keeps_the_completions_it_finished() {
        let (blocked, release) = (Gate::default(), Gate::default());
        let sim =
            Arc::new(SimulatedExecutor::new(Duration::ZERO).slow_requests(&blocked, &release));
        let server = serve(sim.clone());
        let dir = tempfile::tempdir().unwrap();
        let prompts = dir.path().join("prompts.jsonl");
        let lines: Vec<String> = (0..10)
            .map(|i| {
                let p = if i == 5 {
                    "SLOW".to_string()
                } else {
                    format!("q{i}")
                };
                json!({"id": i, "prompt": p}).to_string()
            })
            .collect();
        std::fs::write(&prompts, lines.join("\n")).unwrap();
        let cache = dir.path().join("c.sqlite");
        let generate = || {
            let mut c = Command::new(env!("CARGO_BIN_EXE_hrl"));
            c.args([
                "generate",
                "--endpoint",
                &server.base_url(),
                "--model",
                "sim",
            ])
            .args(["--max-connections", "1", "--max-tokens", "5", "--json"])
            .arg("--prompts")
            .arg(&prompts)
            .arg("--cache")
            .arg(&cache);
            c
        };
        let mut child = generate()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // One request at a time, in order: when the sixth is in the executor, the
        // first five are done.
        assert!(blocked.wait(SYNC_LIMIT), "the sixth request never arrived");
        wait_until("the five finished completions are in the cache", || {
            cache_entries(&cache) == 5
        });
        child.kill().unwrap(); // SIGKILL
        let status = child.wait().unwrap();
        assert!(!status.success(), "the run was killed, not finished");
        release.open();
        assert_eq!(cache_entries(&cache), 5);

        let out = generate().output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(err.contains("5 hits, 5 misses"), "{err}");
        let rows = jsonl(&out.stdout);
        assert_eq!(rows.len(), 10);
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(row["id"], i, "{row}");
            assert_eq!(row["cached"], i < 5, "{row}");
            let prompt = if i == 5 {
                "SLOW".to_string()
            } else {
                format!("q{i}")
            };
            assert!(
                row["text"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("user={prompt} ")),
                "{row}"
            );
        }
        assert_eq!(cache_entries(&cache), 10);
    }

    /// The same with the real model: the llama.cpp executor reports each completion
    /// as its sequence ends, and the cache keeps it. Six prompts, one sequence at a
    /// time, each running to `--max-tokens 48` (checked below): the run is killed as
    /// soon as the first completion is on disk, with at least 5 × 48 tokens of work
    /// left, so it cannot have finished.
    #[test]
    fn a_killed_llama_generate_run_keeps_the_completions_it_finished() {
        let name = installed_default_model();
        let dir = tempfile::tempdir().unwrap();
        let prompts = dir.path().join("prompts.jsonl");
        let texts = [
            "Count from 1 to 200, separated by commas.",
            "List the numbers from 300 to 500, one per line.",
            "Write a long story about a dragon who learns to bake bread.",
            "Write a long essay about the history of the bicycle.",
            "Count backwards from 100 to 1, separated by spaces.",
            "Write a long poem about the sea, with at least twenty lines.",
        ];
        let lines: Vec<String> = texts
            .iter()
            .enumerate()
            .map(|(i, p)| json!({"id": i, "prompt": p}).to_string())
            .collect();
        std::fs::write(&prompts, lines.join("\n")).unwrap();
        let cache = dir.path().join("c.sqlite");
        let generate = || {
            let mut c = Command::new(env!("CARGO_BIN_EXE_hrl"));
            c.args([
                "generate",
                "--model",
                name,
                "--n-parallel",
                "1",
                "--threads",
                "1",
            ])
            .args(["--ctx-per-seq", "512", "--max-tokens", "48", "--json"])
            .arg("--prompts")
            .arg(&prompts)
            .arg("--cache")
            .arg(&cache);
            c
        };
        let mut child = generate()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // One reader connection, polled every 20 ms: reopening the cache on every poll
        // (it initialises the schema) competes with the writer for the file's lock,
        // and a run that fails early is reported with its stderr, not as a timeout.
        let start = Instant::now();
        let mut reader = None;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                let mut err = String::new();
                std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
                panic!("hrl generate ended ({status}) before the test killed it: {err}");
            }
            if reader.is_none() {
                reader =
                    harness_rl::executor::cache::CompletionCache::open_existing(&cache).unwrap();
            }
            if let Some(r) = &reader
                && r.stats().unwrap().entries >= 1
            {
                break;
            }
            assert!(
                start.elapsed() < SYNC_LIMIT,
                "timed out waiting until a first completion is in the cache"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        drop(reader);
        child.kill().unwrap();
        assert!(!child.wait().unwrap().success());
        let kept = cache_entries(&cache);
        assert!(
            (1..texts.len() as u64).contains(&kept),
            "{kept} of {} completions cached when the run was killed",
            texts.len()
        );

        let out = generate().output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        let misses = texts.len() as u64 - kept;
        assert!(
            err.contains(&format!("{kept} hits, {misses} misses")),
            "{err}"
        );
        let rows = jsonl(&out.stdout);
        let cached: Vec<bool> = rows.iter().map(|r| r["cached"] == true).collect();
        // One sequence at a time: the first `kept` prompts finished first.
        let want: Vec<bool> = (0..texts.len() as u64).map(|i| i < kept).collect();
        assert_eq!(cached, want);
        for r in &rows {
            // The premise of the margin above: every completion ran to the limit.
            assert_eq!(r["finish_reason"], "length", "{r}");
            assert_eq!(r["usage"]["completion_tokens"], 48, "{r}");
        }
    }

    fn greedy(prompt: Prompt) -> Request {
        Request {
            prompt,
            sampling: Sampling {
                max_tokens: 24,
                ..Sampling::default()
            },
        }
    }

    #[test]
    fn http_executor_against_hrl_serve_gives_the_in_process_greedy_text() {
        let name = installed_default_model();
        let (_serve, url) = start_hrl_serve(name, &["--no-cache"]);
        let mut opts = LlamaOptions::for_model(name).unwrap();
        opts.n_threads = 1;
        opts.n_ctx_per_seq = 512;
        opts.n_parallel = 4;
        let local = LlamaExecutor::load(opts).unwrap();

        let mut cfg = OpenAiConfig::new(url, name);
        // One request at a time on both sides: the same computation, so the texts
        // must be identical, not merely close.
        cfg.max_connections = 1;
        cfg.timeout = Duration::from_secs(300);
        let remote = OpenAiExecutor::connect(cfg).unwrap();
        assert_eq!(
            remote.model_id(),
            local.model_id(),
            "identity from /v1/models"
        );

        let requests: Vec<Request> = [
            "What is 2 plus 3?",
            "Name a color.",
            "Write one sentence about a river.",
            "What is the capital of Italy?",
        ]
        .iter()
        .map(|q| greedy(Prompt::Chat(vec![Message::user(*q)])))
        .chain([
            greedy(Prompt::Chat(vec![
                Message::system("Answer in one word."),
                Message::user("What animal says moo?"),
            ])),
            greedy(Prompt::Raw("The three primary colors are".into())),
            // A final assistant message is a prefill on both sides.
            greedy(Prompt::Chat(vec![
                Message::user("Write a Python function that adds two numbers."),
                Message::new("assistant", "Here it is:\n```python\n"),
            ])),
        ])
        .collect();
        for r in &requests {
            let want = local.complete(r).unwrap();
            let got = remote.complete(r).unwrap();
            assert!(!want.text.is_empty());
            assert_eq!(got.text, want.text, "{:?}", r.prompt);
            assert_eq!(got.finish_reason, want.finish_reason);
            assert_eq!(got.usage.prompt_tokens, want.usage.prompt_tokens);
            assert_eq!(got.usage.completion_tokens, want.usage.completion_tokens);
        }
    }
}
