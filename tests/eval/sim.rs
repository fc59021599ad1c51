//! Test-only simulated model: `SimulatedExecutor` (in-process) and `SimulatedServer`
//! (the same model behind an OpenAI-compatible HTTP endpoint, for `hrl eval` runs in
//! a subprocess). It is NOT a language model and never ships: it answers by rules,
//! so every test knows exactly what each harness scores.
//!
//! Executor rules (the question is found by its body in the last user message; the
//! gold answers come from the same sets the evaluator builds):
//! - a system message containing `SIM-GOOD` answers correctly, `SIM-NONE` or no
//!   marker answers `-12345` (wrong), `SIM-HALF` answers correctly when the question
//!   body's length is even;
//! - when the user message asks for a Python program, the answer is a ```python block
//!   that prints it (run in the real sandbox), after `SIM-SLEEP` seconds of sleep when
//!   the system message has `SIM-SLEEP=<ms>`.
//!
//! Proposer rules (a system message containing "You improve harnesses"), by the
//! request's sampling seed modulo 4: 0 → a TOML harness with `SIM-GOOD`; 1 → prose
//! (an invalid revision); 2 → a TOML harness with `SIM-NONE`; 3 → a JSON edit list
//! adding the note `SIM-NOTE`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness_rl::eval::config::EvalSettings;
use harness_rl::eval::sets;
use harness_rl::executor::spec::BuildIdentity;
use harness_rl::executor::{
    Completion, Executor, ExecutorError, ExecutorIdentity, FinishReason, Message, Prompt, Request,
    Sampling, Timings, Usage,
};
use harness_rl::task::spec::GradingSetup;
use serde_json::{Value, json};

pub const PROSE: &str = "I cannot help with that.";

/// The TOML of a harness with a marker in its system message.
pub fn marked(marker: &str) -> String {
    format!(
        "system = \"{marker}\"\n\n[format]\nrule = \"Give your final answer {{format}} inside <answer></answer> tags.\"\n"
    )
}

/// The rules (see the module doc).
pub struct SimModel {
    /// (question body, gold answer)
    golds: Vec<(String, String)>,
}

impl SimModel {
    /// A model that knows the gold answers of every set of `settings`' tasks.
    pub fn for_settings(settings: &EvalSettings) -> SimModel {
        let mut golds = Vec::new();
        for t in &settings.tasks {
            let sizes = sets::limited(t.sets, settings.limit);
            let s = sets::build(t, sizes, &GradingSetup::default()).expect("sets build");
            for set in [&s.feedback, &s.dev, &s.test] {
                for item in set.iter() {
                    golds.push((
                        item.body().trim().to_string(),
                        item.gold().expect("answer items").to_string(),
                    ));
                }
            }
        }
        // Longest bodies first, so a body that contains another is matched first.
        golds.sort_by_key(|(b, _)| std::cmp::Reverse(b.len()));
        SimModel { golds }
    }

    pub fn reply(&self, messages: &[Message], sampling: &Sampling) -> String {
        let system = messages
            .iter()
            .find(|m| m.role == "system")
            .map(|m| m.content.as_str())
            .unwrap_or("");
        if system.contains("You improve harnesses") {
            return match sampling.seed % 4 {
                0 => format!("Add the marker.\n```toml\n{}```\n", marked("SIM-GOOD")),
                1 => PROSE.to_string(),
                2 => format!("```toml\n{}```", marked("SIM-NONE")),
                _ => "```json\n[{\"op\": \"add_note\", \"text\": \"SIM-NOTE\"}]\n```".to_string(),
            };
        }
        let user = messages
            .iter()
            .rev()
            .find(|m| m.role == "user")
            .map(|m| m.content.as_str())
            .unwrap_or("");
        let found = self.golds.iter().find(|(b, _)| user.contains(b.as_str()));
        let right = match found {
            None => false,
            Some((body, _)) => {
                system.contains("SIM-GOOD") || (system.contains("SIM-HALF") && body.len() % 2 == 0)
            }
        };
        let answer = match (right, found) {
            (true, Some((_, g))) => g.clone(),
            _ => "-12345".to_string(),
        };
        if user.contains("Python program") {
            let sleep = system
                .split("SIM-SLEEP=")
                .nth(1)
                .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|ms| ms.parse::<u64>().ok())
                .unwrap_or(0);
            format!(
                "```python\nimport time\ntime.sleep({})\nprint({answer:?})\n```",
                sleep as f64 / 1000.0
            )
        } else {
            format!("The answer is <answer>{answer}</answer>")
        }
    }
}

/// The identity of the simulated executor.
pub fn identity() -> ExecutorIdentity {
    ExecutorIdentity {
        spec: "llama:sim-model".into(),
        backend: "simulated".into(),
        model_id: "simulated-model".into(),
        model: "sim-model".into(),
        lora: None,
        build: BuildIdentity::current(),
        device: None,
        settings: json!({}),
        output_settings: json!({}),
        hash: "simulated-executor-identity".into(),
    }
}

/// The in-process simulated executor; records every batch's requests.
pub struct SimulatedExecutor {
    pub model: SimModel,
    /// Per `complete_batch` call: each request's (system text, user text).
    pub batches: Mutex<Vec<Vec<(String, String)>>>,
    pub calls: AtomicUsize,
    /// Sleep per batch (to let concurrent callers overlap).
    pub delay: Duration,
}

impl SimulatedExecutor {
    pub fn new(model: SimModel) -> SimulatedExecutor {
        SimulatedExecutor {
            model,
            batches: Mutex::new(Vec::new()),
            calls: AtomicUsize::new(0),
            delay: Duration::ZERO,
        }
    }

    /// Requests whose system text contains `marker` and user text contains `user`.
    pub fn count(&self, marker: &str, user: &str) -> usize {
        self.batches
            .lock()
            .unwrap()
            .iter()
            .flatten()
            .filter(|(s, u)| s.contains(marker) && u.contains(user))
            .count()
    }
}

fn messages_of(r: &Request) -> Vec<Message> {
    match &r.prompt {
        Prompt::Chat(m) => m.clone(),
        Prompt::Raw(t) => vec![Message::user(t.clone())],
    }
}

fn completion(text: String, messages: &[Message]) -> Completion {
    let prompt_chars: usize = messages.iter().map(|m| m.content.len()).sum();
    Completion {
        usage: Usage {
            prompt_tokens: (prompt_chars / 4) as u32,
            completion_tokens: (text.len() / 4) as u32,
            cached_prompt_tokens: 0,
        },
        text,
        finish_reason: FinishReason::Stop,
        timings: Timings::default(),
        cached: false,
    }
}

impl Executor for SimulatedExecutor {
    fn model_id(&self) -> &str {
        "simulated-model"
    }

    fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>> {
        std::thread::sleep(self.delay);
        let mut rec = Vec::new();
        let out = requests
            .iter()
            .map(|r| {
                let m = messages_of(r);
                let sys = m
                    .iter()
                    .find(|x| x.role == "system")
                    .map(|x| x.content.clone())
                    .unwrap_or_default();
                let user = m
                    .iter()
                    .rev()
                    .find(|x| x.role == "user")
                    .map(|x| x.content.clone())
                    .unwrap_or_default();
                rec.push((sys, user));
                Ok(completion(self.model.reply(&m, &r.sampling), &m))
            })
            .collect();
        self.calls.fetch_add(requests.len(), Ordering::SeqCst);
        self.batches.lock().unwrap().push(rec);
        out
    }
}

/// The simulated model behind an OpenAI-compatible endpoint (`/v1/models`,
/// `/v1/chat/completions`), serving model `sim`. Each answer waits `delay`.
pub struct SimulatedServer {
    pub port: u16,
    pub requests: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl SimulatedServer {
    pub fn start(model: SimModel, delay: Duration) -> SimulatedServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let model = Arc::new(model);
        let requests = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        {
            let (requests, stop) = (requests.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let (model, requests) = (model.clone(), requests.clone());
                            std::thread::spawn(move || serve(stream, &model, &requests, delay));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
            });
        }
        SimulatedServer {
            port,
            requests,
            stop,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}

impl Drop for SimulatedServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn serve(stream: TcpStream, model: &SimModel, requests: &AtomicUsize, delay: Duration) {
    stream.set_nonblocking(false).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
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
            if let Some((k, v)) = h.split_once(':')
                && k.trim().eq_ignore_ascii_case("content-length")
            {
                len = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; len];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let reply = if path.ends_with("/models") {
            json!({"object": "list", "data": [{"id": "sim", "object": "model"}]})
        } else {
            requests.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(delay);
            let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let messages: Vec<Message> =
                serde_json::from_value(v["messages"].clone()).unwrap_or_default();
            let sampling = Sampling {
                seed: v["seed"].as_u64().unwrap_or(0),
                ..Sampling::default()
            };
            let text = model.reply(&messages, &sampling);
            let c = completion(text, &messages);
            json!({
                "id": "sim", "object": "chat.completion", "created": 0, "model": "sim",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": c.text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": c.usage.prompt_tokens, "completion_tokens": c.usage.completion_tokens, "total_tokens": c.usage.prompt_tokens + c.usage.completion_tokens}
            })
        };
        let body = reply.to_string();
        let out = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if writer.write_all(out.as_bytes()).is_err() {
            return;
        }
    }
}
