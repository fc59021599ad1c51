//! Executors: the frozen model that runs a harness on an instance.
//!
//! Every backend implements [`Executor`]: it takes a batch of [`Request`]s (chat
//! messages or a raw prompt, plus [`Sampling`] settings) and returns one
//! [`Completion`] per request, in order, with token accounting and timings. Backends:
//! `llama` (llama.cpp in-process through `llama-cpp-2`, behind the `llama` feature) and
//! `openai` (any OpenAI-compatible HTTP endpoint). A persistent completion cache wraps
//! any executor.

pub mod cache;
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
    /// Chat messages, rendered with the model's chat template.
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
        }
    }
}

impl Sampling {
    pub fn is_greedy(&self) -> bool {
        self.temperature <= 0.0
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

/// A frozen model that completes requests.
pub trait Executor: Send + Sync {
    /// A stable identity of the model behind this executor (for a GGUF: its sha256), used
    /// in completion-cache keys and run logs.
    fn model_id(&self) -> &str;
    /// Complete a batch. Returns one result per request, in order; a failure of one
    /// request does not discard the others.
    fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>>;
    /// Complete one request.
    fn complete(&self, request: &Request) -> Result<Completion, ExecutorError> {
        self.complete_batch(std::slice::from_ref(request))
            .pop()
            .unwrap_or_else(|| Err(ExecutorError::Model("executor returned no result".into())))
    }
}
