//! Executors: the frozen model that runs a harness on an instance.
//!
//! Every backend implements [`Executor`]: it takes a batch of [`Request`]s (chat
//! messages or a raw prompt, plus [`Sampling`] settings) and returns one
//! [`Completion`] per request, in order, with token accounting and timings. Backends:
//! `llama` (llama.cpp in-process through `llama-cpp-2`, behind the `llama` feature) and
//! `openai` (any OpenAI-compatible HTTP endpoint). A persistent completion cache wraps
//! any executor.

pub mod cache;
pub mod json_schema;
pub mod openai;

use serde::{Deserialize, Serialize};

#[cfg(feature = "llama")]
pub mod llama;
pub mod prompts;
pub mod spec;

pub use spec::{ExecutorIdentity, ExecutorRef, ExecutorSpec, OpenOptions, OpenedExecutor};

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: String,
    pub content: String,
}

impl Message {
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        Message {
            role: role.into(),
            content: content.into(),
        }
    }
    pub fn system(content: impl Into<String>) -> Self {
        Self::new("system", content)
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self::new("user", content)
    }
}

/// What the model is asked to continue.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Prompt {
    /// Chat messages, rendered with the model's chat template. A final `assistant`
    /// message (after at least one other) is a prefill: the model continues it (the
    /// llama backend renders the turns before it, the assistant's opening, then the
    /// prefill; `hrl serve` does the same; other servers may differ). The completion
    /// is the continuation only.
    Chat(Vec<Message>),
    /// A raw completion prompt, tokenised as-is.
    Raw(String),
}

/// Sampling settings. `temperature == 0.0` means greedy decoding (the other sampling
/// fields are then ignored). A seeded sampled run repeats exactly on the same backend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    pub temperature: f32,
    pub top_p: f32,
    pub top_k: u32,
    pub min_p: f32,
    pub seed: u64,
    pub max_tokens: u32,
    /// Generation stops before the first occurrence of any of these strings.
    pub stop: Vec<String>,
    /// Optional GBNF grammar (root rule `root`) constraining the output.
    pub grammar: Option<String>,
    /// Optional JSON schema constraining the output (the subset of [`json_schema`]):
    /// the llama backend decodes under its GBNF translation, the HTTP client sends it
    /// as OpenAI's `response_format`. Not together with `grammar`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_schema: Option<serde_json::Value>,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            temperature: 0.0,
            top_p: 1.0,
            top_k: 0,
            min_p: 0.0,
            seed: 0,
            max_tokens: 512,
            stop: Vec::new(),
            grammar: None,
            json_schema: None,
        }
    }
}

/// Largest `temperature` accepted (a guard against nonsense; OpenAI itself stops at 2).
pub const MAX_TEMPERATURE: f32 = 100.0;

impl Sampling {
    pub fn is_greedy(&self) -> bool {
        self.temperature <= 0.0
    }

    /// Check every field against its allowed range: `temperature` in [0, 100], `top_p`
    /// in (0, 1], `min_p` in [0, 1], `max_tokens` at least 1, no empty `stop` string,
    /// no empty `grammar`. The one rule for every entry point (`hrl generate`, `hrl
    /// serve`, the HTTP client, harness specs), so a request valid for one is valid for
    /// all. The error is [`ExecutorError::InvalidRequest`] naming the field, its value
    /// and its range.
    pub fn validate(&self) -> Result<(), ExecutorError> {
        let bad = |field: &str, value: String, range: &str| {
            Err(ExecutorError::InvalidRequest(format!(
                "{field} = {value} is out of range: must be {range}"
            )))
        };
        let t = self.temperature;
        if !(t.is_finite() && (0.0..=MAX_TEMPERATURE).contains(&t)) {
            return bad(
                "temperature",
                t.to_string(),
                "between 0 and 100 (0 = greedy)",
            );
        }
        let p = self.top_p;
        if !(p.is_finite() && p > 0.0 && p <= 1.0) {
            return bad("top_p", p.to_string(), "in (0, 1] (1 = off)");
        }
        let m = self.min_p;
        if !(m.is_finite() && (0.0..=1.0).contains(&m)) {
            return bad("min_p", m.to_string(), "in [0, 1] (0 = off)");
        }
        if self.max_tokens == 0 {
            return bad("max_tokens", "0".into(), "at least 1");
        }
        if let Some(i) = self.stop.iter().position(String::is_empty) {
            return Err(ExecutorError::InvalidRequest(format!(
                "stop[{i}] is an empty string: stop strings must not be empty"
            )));
        }
        if self.grammar.as_deref().is_some_and(|g| g.trim().is_empty()) {
            return Err(ExecutorError::InvalidRequest(
                "grammar is empty: give a GBNF grammar with a `root` rule, or none".into(),
            ));
        }
        if let Some(schema) = &self.json_schema {
            if self.grammar.is_some() {
                return Err(ExecutorError::InvalidRequest(
                    "give a grammar or a JSON schema, not both".into(),
                ));
            }
            json_schema::to_gbnf(schema).map_err(|e| {
                ExecutorError::InvalidRequest(format!(
                    "the JSON schema cannot be used for constrained decoding: {e}"
                ))
            })?;
        }
        Ok(())
    }

    /// The GBNF grammar this request decodes under: `grammar`, or the translation of
    /// `json_schema` (checked by [`Sampling::validate`]).
    pub fn effective_grammar(&self) -> Result<Option<String>, ExecutorError> {
        match (&self.grammar, &self.json_schema) {
            (Some(g), _) => Ok(Some(g.clone())),
            (None, Some(s)) => json_schema::to_gbnf(s).map(Some).map_err(|e| {
                ExecutorError::InvalidRequest(format!(
                    "the JSON schema cannot be used for constrained decoding: {e}"
                ))
            }),
            (None, None) => Ok(None),
        }
    }
}

/// One generation request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub prompt: Prompt,
    pub sampling: Sampling,
}

/// Why generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// End-of-generation token or a stop string.
    Stop,
    /// `max_tokens` (or the context) ran out.
    Length,
}

/// Token accounting for one request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// Prompt tokens whose KV was reused (shared prefix) instead of computed.
    pub cached_prompt_tokens: u32,
}

/// Wall-clock timings for one request, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    pub prompt_ms: f64,
    pub generation_ms: f64,
    pub total_ms: f64,
}

/// One completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    pub text: String,
    pub finish_reason: FinishReason,
    pub usage: Usage,
    pub timings: Timings,
    /// True when this completion came from the completion cache (no model call).
    #[serde(default)]
    pub cached: bool,
}

/// Executor failures.
#[derive(Debug, thiserror::Error)]
pub enum ExecutorError {
    #[error("model error: {0}")]
    Model(String),
    #[error("prompt of {tokens} tokens does not fit the context of {n_ctx} tokens")]
    PromptTooLong { tokens: usize, n_ctx: usize },
    #[error("HTTP executor: {0}")]
    Http(String),
    #[error("malformed response from {endpoint}: {detail}")]
    MalformedResponse { endpoint: String, detail: String },
    #[error("cache: {0}")]
    Cache(String),
    #[error("invalid request: {0}")]
    InvalidRequest(String),
}

impl crate::error::Classify for ExecutorError {
    fn kind(&self) -> crate::error::ErrorKind {
        match self {
            ExecutorError::InvalidRequest(_) => crate::error::ErrorKind::Usage,
            ExecutorError::Model(_)
            | ExecutorError::PromptTooLong { .. }
            | ExecutorError::Http(_)
            | ExecutorError::MalformedResponse { .. }
            | ExecutorError::Cache(_) => crate::error::ErrorKind::Runtime,
        }
    }
}

/// Called once for each request of a batch as soon as that request has finished (see
/// [`Executor::complete_batch_progress`]), with the request's index in the batch.
pub type OnDone<'a> = dyn Fn(usize, &Result<Completion, ExecutorError>) + Sync + 'a;

/// A frozen model that completes requests.
pub trait Executor: Send + Sync {
    /// A stable identity of the model behind this executor (for a GGUF: its sha256), used
    /// in completion-cache keys and run logs.
    fn model_id(&self) -> &str;
    /// Complete a batch. Returns one result per request, in order; a failure of one
    /// request does not discard the others.
    fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>>;
    /// [`Executor::complete_batch`], also calling `on_done(i, &result)` once for every
    /// request `i` as soon as it has finished (in completion order, from whichever
    /// thread finished it), so a caller can keep work that is done before the whole
    /// batch is (the completion cache writes each completion as it arrives). The
    /// default reports every result when the whole batch has returned; executors that
    /// finish requests at different times (llama.cpp's continuous batch, the HTTP
    /// client's parallel requests) override it.
    fn complete_batch_progress(
        &self,
        requests: &[Request],
        on_done: &OnDone<'_>,
    ) -> Vec<Result<Completion, ExecutorError>> {
        let out = self.complete_batch(requests);
        for (i, r) in out.iter().enumerate() {
            on_done(i, r);
        }
        out
    }
    /// Complete one request.
    fn complete(&self, request: &Request) -> Result<Completion, ExecutorError> {
        self.complete_batch(std::slice::from_ref(request))
            .pop()
            .unwrap_or_else(|| Err(ExecutorError::Model("executor returned no result".into())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(f: impl FnOnce(&mut Sampling)) -> Result<(), String> {
        let mut s = Sampling::default();
        f(&mut s);
        s.validate().map_err(|e| match e {
            ExecutorError::InvalidRequest(m) => m,
            other => panic!("not InvalidRequest: {other:?}"),
        })
    }

    #[test]
    fn validate_accepts_the_edges_of_every_range() {
        with(|_| ()).unwrap();
        with(|s| s.temperature = 100.0).unwrap();
        with(|s| s.temperature = -0.0).unwrap();
        with(|s| s.top_p = f32::MIN_POSITIVE).unwrap();
        with(|s| s.min_p = 1.0).unwrap();
        with(|s| s.max_tokens = 1).unwrap();
        with(|s| s.top_k = u32::MAX).unwrap();
        with(|s| s.grammar = Some("root ::= \"a\"".into())).unwrap();
    }

    #[test]
    fn validate_names_the_field_and_its_range() {
        type Case = (Box<dyn FnOnce(&mut Sampling)>, &'static str, &'static str);
        let cases: Vec<Case> = vec![
            (
                Box::new(|s| s.temperature = 100.5),
                "temperature = 100.5",
                "between 0 and 100",
            ),
            (
                Box::new(|s| s.temperature = -0.1),
                "temperature = -0.1",
                "between 0 and 100",
            ),
            (
                Box::new(|s| s.temperature = f32::NAN),
                "temperature = NaN",
                "between 0 and 100",
            ),
            (
                Box::new(|s| s.temperature = f32::INFINITY),
                "temperature = inf",
                "between 0 and 100",
            ),
            (Box::new(|s| s.top_p = 0.0), "top_p = 0", "(0, 1]"),
            (Box::new(|s| s.top_p = 1.01), "top_p = 1.01", "(0, 1]"),
            (Box::new(|s| s.min_p = -0.01), "min_p = -0.01", "[0, 1]"),
            (Box::new(|s| s.min_p = f32::NAN), "min_p = NaN", "[0, 1]"),
            (
                Box::new(|s| s.max_tokens = 0),
                "max_tokens = 0",
                "at least 1",
            ),
            (
                Box::new(|s| s.stop = vec!["x".into(), String::new()]),
                "stop[1]",
                "must not be empty",
            ),
            (
                Box::new(|s| s.grammar = Some(" ".into())),
                "grammar is empty",
                "root",
            ),
        ];
        for (f, field, range) in cases {
            let e = with(f).unwrap_err();
            assert!(
                e.contains(field) && e.contains(range),
                "{e:?}: want {field} and {range}"
            );
        }
    }
}
