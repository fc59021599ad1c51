//! Rollout records: one JSON line per (harness, item) execution in `rollouts.jsonl`,
//! with every executor call, every tool call, the final response, the extracted
//! answer, the score and a failure class.
//!
//! Failure classes ([`FailureClass`]), assigned to a rollout that scored below 1, first
//! match wins:
//!
//! | class | meaning |
//! | --- | --- |
//! | `executor_error` | an executor call failed (the model, the server) |
//! | `harness_error` | a program harness raised, returned a non-string, broke the protocol, flooded its output, ran out of memory, or used up an llm/token/tool limit without answering |
//! | `timeout` | the harness (program kind) or the final program (program strategy) ran past its time limit |
//! | `tool_error` | the program (program strategy) or the last tool call (python-tool, with no answer after it) exited with an error |
//! | `truncated` | nothing was extracted and the last executor call stopped at `max_tokens` |
//! | `no_answer` | nothing was extracted: no `<answer>` pair, no program, empty output |
//! | `bad_format` | an answer was extracted but does not have the gold answer's shape (see `task::shape`) |
//! | `wrong` | an answer (or program) of the right shape that is wrong |

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::executor::{ExecutorRef, FinishReason, Message, Sampling};
use crate::sandbox::EndReason;

/// Version of the record layout.
pub const ROLLOUT_SCHEMA: u32 = 1;

/// Why a rollout scored below 1 (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    NoAnswer,
    BadFormat,
    Wrong,
    Truncated,
    ToolError,
    Timeout,
    HarnessError,
    ExecutorError,
}

impl FailureClass {
    pub const ALL: [FailureClass; 8] = [
        FailureClass::NoAnswer,
        FailureClass::BadFormat,
        FailureClass::Wrong,
        FailureClass::Truncated,
        FailureClass::ToolError,
        FailureClass::Timeout,
        FailureClass::HarnessError,
        FailureClass::ExecutorError,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::NoAnswer => "no_answer",
            FailureClass::BadFormat => "bad_format",
            FailureClass::Wrong => "wrong",
            FailureClass::Truncated => "truncated",
            FailureClass::ToolError => "tool_error",
            FailureClass::Timeout => "timeout",
            FailureClass::HarnessError => "harness_error",
            FailureClass::ExecutorError => "executor_error",
        }
    }
}

/// One executor call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutorCall {
    pub messages: Vec<Message>,
    pub sampling: Sampling,
    /// The completion (empty on error).
    pub completion: String,
    pub finish_reason: Option<FinishReason>,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// Prompt tokens whose KV the executor reused.
    pub cached_prompt_tokens: u32,
    /// Served from the completion cache (no model call).
    pub cached: bool,
    /// Milliseconds from submission to completion (queueing included).
    pub ms: f64,
    pub error: Option<String>,
}

/// What a tool call was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolPurpose {
    /// The program of the program strategy, whose output is the answer.
    Program,
    /// A python-tool call of the python-tool strategy.
    Tool,
    /// `python(...)` called by a program harness.
    Nested,
    /// A code solution checked against the statement's public tests.
    PublicTests,
}

/// One sandboxed run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub purpose: ToolPurpose,
    pub code: String,
    pub stdin: String,
    pub stdout: String,
    pub stderr: String,
    pub exit_code: Option<i32>,
    pub end: Option<EndReason>,
    pub wall_ms: u64,
    pub cpu_ms: u64,
    /// Set when the run could not happen at all (a sandbox failure, a limit).
    pub error: Option<String>,
}

impl ToolCall {
    /// Exited with status 0.
    pub fn ok(&self) -> bool {
        self.error.is_none() && self.exit_code == Some(0) && self.end == Some(EndReason::Exited)
    }
}

/// Token totals of a rollout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    pub prompt: u64,
    pub completion: u64,
    pub cached_prompt: u64,
}

/// One sample of a self-consistency vote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vote {
    pub extracted: Option<String>,
    pub chosen: bool,
}

/// One (harness, item) execution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rollout {
    pub schema: u32,
    pub item_id: String,
    /// `families`, `lcb`, ...
    pub source: String,
    /// The reporting group (family, or platform/difficulty).
    pub group: String,
    pub level: Option<u8>,
    pub harness_hash: String,
    pub harness_kind: String,
    pub executor: ExecutorRef,
    /// Hash of the run settings that can change results (limits, seed).
    pub config_hash: String,
    /// Repetition index (0 for a single run).
    pub sample: u32,
    pub seed: u64,
    /// The question as the item's source presents it (the harness may have shown it
    /// differently; the executor calls hold exactly what was sent).
    pub question: String,
    pub calls: Vec<ExecutorCall>,
    pub tools: Vec<ToolCall>,
    /// The final response (a model response, a program harness's return value).
    pub response: String,
    /// The program run or graded, when there is one.
    pub program: Option<String>,
    /// The final answer taken from the response or the program output.
    pub extracted: Option<String>,
    pub score: f64,
    pub failure: Option<FailureClass>,
    /// What went wrong, in words (a traceback tail, a grader message, a limit).
    pub detail: Option<String>,
    /// No executor call was made (cached calls count as calls).
    pub executor_free: bool,
    pub votes: Vec<Vote>,
    pub tokens: Tokens,
    pub wall_ms: u64,
    /// Gold answer (answer items); shown to proposers only when a report says so.
    pub gold: Option<String>,
    /// Facts about the item (family/level/seed/index, or release date...).
    pub meta: serde_json::Value,
}

impl Rollout {
    /// The key that identifies a rollout for resuming: item, sample, harness,
    /// executor identity and settings, and the item's content (question and gold
    /// answer). Item ids name a (family, level, seed, index) and not the generator's
    /// version, so without the content a family whose generation changed (a retuned
    /// level) would reuse rollouts of its old questions.
    pub fn key(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.question.as_bytes());
        h.update([0]);
        if let Some(g) = &self.gold {
            h.update([1]);
            h.update(g.as_bytes());
        }
        let content = h.finalize();
        format!(
            "{}\u{0}{}\u{0}{}\u{0}{}\u{0}{}\u{0}{}",
            self.item_id,
            self.sample,
            self.harness_hash,
            self.executor.hash,
            self.config_hash,
            super::hex(&content[..8])
        )
    }

    /// Did every executor call come from the completion cache?
    pub fn fully_cached(&self) -> bool {
        self.calls.iter().all(|c| c.cached)
    }
}
