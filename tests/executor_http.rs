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

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    delay: Duration,
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
            delay: Duration::ZERO,
        }
    }
    fn header(mut self, k: &str, v: &str) -> Reply {
        self.headers.push((k.into(), v.into()));
        self
    }
    fn after(mut self, d: Duration) -> Reply {
        self.delay = d;
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
        std::thread::sleep(reply.delay);
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
fn timeouts_are_retried_then_reported() {
    let server = ScriptedServer::start(|_, _| chat_reply("late").after(Duration::from_secs(3)));
    let mut cfg = config(&server.base_url());
    cfg.timeout = Duration::from_millis(200);
    cfg.max_retries = 1;
    let exec = OpenAiExecutor::new(cfg).unwrap();
    let t = Instant::now();
    let err = exec.complete(&chat("x")).unwrap_err().to_string();
    assert!(err.contains("timed out"), "{err}");
    assert!(err.contains("0.2 s per attempt"), "{err}");
    assert!(err.contains("gave up after 2 attempts"), "{err}");
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "did not wait for the slow server"
    );
    assert_eq!(server.count(), 2);
}

#[test]
fn a_timeout_then_a_fast_answer_succeeds() {
    let server = ScriptedServer::start(|n, _| {
        if n == 0 {
            chat_reply("late").after(Duration::from_secs(2))
        } else {
            chat_reply("fast")
        }
    });
    let mut cfg = config(&server.base_url());
    cfg.timeout = Duration::from_millis(300);
    let exec = OpenAiExecutor::new(cfg).unwrap();
    assert_eq!(exec.complete(&chat("x")).unwrap().text, "fast");
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
    let server = ScriptedServer::start(|_, rec| {
        let body = rec.json();
        let q = body["messages"][1]["content"].as_str().unwrap().to_string();
        chat_reply(&format!("answer to {q}")).after(Duration::from_millis(120))
    });
    let mut cfg = config(&server.base_url());
    cfg.max_connections = 3;
    let exec = OpenAiExecutor::new(cfg).unwrap();
    let reqs: Vec<Request> = (0..12).map(|i| chat(&format!("q{i}"))).collect();
    let out = exec.complete_batch(&reqs);
    for (i, r) in out.iter().enumerate() {
        assert_eq!(r.as_ref().unwrap().text, format!("answer to q{i}"));
    }
    assert_eq!(server.max_in_flight.load(Ordering::SeqCst), 3);

    // The bound holds across concurrent callers of one executor too.
    let server2 = ScriptedServer::start(|_, _| chat_reply("x").after(Duration::from_millis(100)));
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
    assert_eq!(server2.max_in_flight.load(Ordering::SeqCst), 2);
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
/// `delay` per call (so concurrent requests pile up into batches).
struct SimulatedExecutor {
    delay: Duration,
    batches: Mutex<Vec<usize>>,
}

impl SimulatedExecutor {
    fn new(delay: Duration) -> Self {
        SimulatedExecutor {
            delay,
            batches: Mutex::new(Vec::new()),
        }
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
        if text.contains("SLOW") {
            std::thread::sleep(Duration::from_millis(1500));
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
        requests.iter().map(Self::answer).collect()
    }
}

fn serve(exec: Arc<SimulatedExecutor>) -> Server {
    let mut cfg = ServeConfig::new("sim");
    cfg.port = 0;
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
    let sim = Arc::new(SimulatedExecutor::new(Duration::from_millis(300)));
    let server = serve_one_batch_at_a_time(sim.clone());
    let mut cfg = OpenAiConfig::new(server.base_url(), "sim");
    cfg.max_connections = 8;
    cfg.timeout = Duration::from_secs(20);
    let client = OpenAiExecutor::new(cfg).unwrap();
    let reqs: Vec<Request> = (0..8).map(|i| chat(&format!("q{i}"))).collect();
    let out = client.complete_batch(&reqs);
    for (r, got) in reqs.iter().zip(&out) {
        assert_eq!(
            got.as_ref().unwrap().text,
            SimulatedExecutor::answer(r).unwrap().text
        );
    }
    let batches = sim.batches.lock().unwrap().clone();
    assert_eq!(batches.iter().sum::<usize>(), 8, "{batches:?}");
    // While the first batch runs (300 ms), the other requests queue and go together.
    assert!(batches.len() < 8, "no batching happened: {batches:?}");
    assert!(*batches.iter().max().unwrap() >= 2, "{batches:?}");
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
    let server = serve(Arc::new(SimulatedExecutor::new(Duration::ZERO)));
    let url = server.base_url();
    let order = Arc::new(Mutex::new(Vec::new()));
    std::thread::scope(|s| {
        let (o1, u1) = (order.clone(), url.clone());
        s.spawn(move || {
            let c = OpenAiExecutor::new(OpenAiConfig::new(u1, "sim")).unwrap();
            c.complete(&chat("SLOW")).unwrap();
            o1.lock().unwrap().push("slow");
        });
        std::thread::sleep(Duration::from_millis(200));
        let c = OpenAiExecutor::new(OpenAiConfig::new(url.clone(), "sim")).unwrap();
        c.complete(&chat("quick")).unwrap();
        order.lock().unwrap().push("quick");
    });
    // The quick request went into its own batch while the slow one was still running.
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
            "temperature",
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
    std::thread::sleep(Duration::from_millis(50));
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

    /// Start `hrl serve` on a free port; returns the process and its base URL.
    fn start_hrl_serve(model: &str) -> (ServeProcess, String) {
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
                "--no-cache",
            ])
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
        let (_serve, url) = start_hrl_serve(name);
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
