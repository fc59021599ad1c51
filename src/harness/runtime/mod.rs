//! Running a harness on items: one [`Rollout`] per (item, sample).
//!
//! [`run`] starts `concurrency` rollout threads over the items; each registers with
//! the [`Dispatcher`], so the executor calls of all running rollouts are batched
//! together. Declarative harnesses follow their strategy and verification
//! ([`Runtime::rollout`]); program harnesses run `bootstrap.py` + the harness file in
//! the sandbox with a channel whose `llm` and `python` messages the runtime answers.
//! Rollouts are handed to a sink as they finish (for an append-only log) and returned
//! in item order.
//!
//! Files: `config.rs` ([`RunConfig`], [`ProgramLimits`] and the result hash),
//! `strategy.rs` (the declarative strategies and the fixed follow-up messages,
//! [`msg`], part of [`super::HARNESS_SEMANTICS`]), `channel.rs` (program harnesses:
//! the channel handler and [`check_program`]), `pool.rs` ([`run`]: the rollout
//! threads); this file holds the [`Runtime`] one rollout runs in, its recorder and
//! the failure classification.

mod channel;
mod config;
mod pool;
mod strategy;

pub use channel::check_program;
pub use config::{ProgramLimits, RunConfig};
pub use pool::{RunContext, RunOutput, RunProgress, run};
pub use strategy::msg;

use std::time::Instant;

use sha2::{Digest, Sha256};

use super::dispatch::Dispatcher;
use super::rollout::{
    ExecutorCall, FailureClass, ROLLOUT_SCHEMA, Rollout, Tokens, ToolCall, ToolPurpose,
};
use super::tools::ToolPool;
use super::{Harness, HarnessError, extract};
use crate::executor::{Completion, ExecutorError, ExecutorRef, Message, Prompt, Request, Sampling};
use crate::sandbox::{Sandbox, SandboxError};
use crate::task::{Item, ItemKind};

/// Errors that stop a run before or outside any rollout.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Harness(#[from] HarnessError),
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error("{0}")]
    Usage(String),
    #[error("writing the run log: {0}")]
    Io(#[from] std::io::Error),
}

impl crate::error::Classify for RunError {
    fn kind(&self) -> crate::error::ErrorKind {
        match self {
            RunError::Harness(e) => e.kind(),
            RunError::Sandbox(e) => e.kind(),
            RunError::Usage(_) => crate::error::ErrorKind::Usage,
            RunError::Io(_) => crate::error::ErrorKind::Runtime,
        }
    }
}

/// Characters of program output or error shown back to the model.
const FEEDBACK_CHARS: usize = 2000;

/// One executor call made through the dispatcher, recorded.
struct Recorder {
    /// The rollout's canonical name in a wave (item id, sample).
    key: String,
    calls: Vec<ExecutorCall>,
    tools: Vec<ToolCall>,
    executor_error: Option<String>,
}

impl Recorder {
    fn new(key: String) -> Recorder {
        Recorder {
            key,
            calls: Vec::new(),
            tools: Vec::new(),
            executor_error: None,
        }
    }

    fn record(
        &mut self,
        messages: Vec<Message>,
        sampling: Sampling,
        r: &Result<Completion, ExecutorError>,
        ms: f64,
    ) {
        let call = match r {
            Ok(c) => ExecutorCall {
                messages,
                sampling,
                completion: c.text.clone(),
                finish_reason: Some(c.finish_reason),
                prompt_tokens: c.usage.prompt_tokens,
                completion_tokens: c.usage.completion_tokens,
                cached_prompt_tokens: c.usage.cached_prompt_tokens,
                cached: c.cached,
                ms,
                error: None,
            },
            Err(e) => {
                self.executor_error.get_or_insert_with(|| e.to_string());
                ExecutorCall {
                    messages,
                    sampling,
                    completion: String::new(),
                    finish_reason: None,
                    prompt_tokens: 0,
                    completion_tokens: 0,
                    cached_prompt_tokens: 0,
                    cached: false,
                    ms,
                    error: Some(e.to_string()),
                }
            }
        };
        self.calls.push(call);
    }

    /// The wave key of the rollout's next executor call: (item, sample, call index).
    fn call_key(&self) -> String {
        format!("{}\0{:06}", self.key, self.calls.len())
    }

    fn tokens(&self) -> Tokens {
        let mut t = Tokens::default();
        for c in &self.calls {
            t.prompt += c.prompt_tokens as u64;
            t.completion += c.completion_tokens as u64;
            t.cached_prompt += c.cached_prompt_tokens as u64;
        }
        t
    }
}

/// What a finished attempt (or program harness) is scored from.
struct Final {
    response: String,
    program: Option<String>,
    extracted: Option<String>,
    score: f64,
    shape_ok: bool,
    failure_hint: Option<FailureClass>,
    detail: Option<String>,
    truncated: bool,
}

/// The shared state of a run's rollouts.
pub struct Runtime<'a> {
    harness: &'a Harness,
    harness_hash: String,
    dispatcher: &'a Dispatcher,
    /// The dispatcher's wave group this runtime's rollouts join.
    group: u64,
    tools: &'a ToolPool,
    sandbox: &'a Sandbox,
    executor: ExecutorRef,
    config: &'a RunConfig,
    config_hash: String,
}

fn mix_seed(parts: &[&[u8]]) -> u64 {
    let mut h = Sha256::new();
    h.update(b"harness-rl/call-seed\0");
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    u64::from_le_bytes(h.finalize()[..8].try_into().expect("8 bytes"))
}

fn tail(s: &str, n: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= n {
        s.to_string()
    } else {
        let t: String = chars[chars.len() - n..].iter().collect();
        format!("...{t}")
    }
}

fn head(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let h: String = s.chars().take(n).collect();
        format!("{h}...")
    }
}

impl<'a> Runtime<'a> {
    /// A runtime for one harness over shared parts: callers that schedule rollouts
    /// themselves (the evaluator runs many harnesses through one dispatcher and one
    /// tool pool) build one and call [`Runtime::rollout`] per item. A program harness
    /// should have passed [`check_program`] first.
    pub fn new(
        harness: &'a Harness,
        dispatcher: &'a Dispatcher,
        tools: &'a ToolPool,
        sandbox: &'a Sandbox,
        executor: ExecutorRef,
        config: &'a RunConfig,
    ) -> Runtime<'a> {
        Runtime {
            harness,
            harness_hash: harness.hash(),
            dispatcher,
            group: 0,
            tools,
            sandbox,
            executor,
            config,
            config_hash: config.result_hash(&sandbox.python().hash()),
        }
    }

    /// The rollouts' executor calls join wave group `group` of the dispatcher (whose
    /// registrations the caller holds, [`Dispatcher::enter_group`]).
    pub fn in_group(mut self, group: u64) -> Self {
        self.group = group;
        self
    }

    /// The [`Rollout::key`] the rollout of `item` (sample `sample`) will have, for
    /// reusing rollouts of an earlier run.
    pub fn resume_key(&self, item: &Item, sample: u32) -> String {
        self.base_rollout(item, sample, 0).key()
    }

    /// One executor call through the dispatcher.
    fn call(
        &self,
        rec: &mut Recorder,
        messages: &[Message],
        sampling: &Sampling,
    ) -> Option<Completion> {
        let t = Instant::now();
        let mut out = self.dispatcher.complete_keyed(
            self.group,
            rec.call_key(),
            vec![Request {
                prompt: Prompt::Chat(messages.to_vec()),
                sampling: sampling.clone(),
            }],
        );
        let r = out
            .pop()
            .unwrap_or_else(|| Err(ExecutorError::Model("no result from the executor".into())));
        rec.record(
            messages.to_vec(),
            sampling.clone(),
            &r,
            t.elapsed().as_secs_f64() * 1e3,
        );
        r.ok()
    }

    fn run_program(
        &self,
        rec: &mut Recorder,
        code: &str,
        repl_print: bool,
        purpose: ToolPurpose,
    ) -> ToolCall {
        let timeout = self.tools.limits().timeout;
        let t = if repl_print {
            self.tools.run(
                purpose,
                extract::REPL_RUNNER,
                vec![("solution.py".into(), code.as_bytes().to_vec())],
                "",
                timeout,
                code,
            )
        } else {
            self.tools.run(purpose, code, Vec::new(), "", timeout, code)
        };
        rec.tools.push(t.clone());
        t
    }

    /// One attempt of a declarative harness's strategy on `item`.
    fn base_rollout(&self, item: &Item, sample: u32, seed: u64) -> Rollout {
        Rollout {
            schema: ROLLOUT_SCHEMA,
            item_id: item.id(),
            source: item.source(),
            group: item.group(),
            level: item.level(),
            harness_hash: self.harness_hash.clone(),
            harness_kind: self.harness.kind().as_str().into(),
            executor: self.executor.clone(),
            config_hash: self.config_hash.clone(),
            sample,
            seed,
            question: item.question(),
            calls: Vec::new(),
            tools: Vec::new(),
            response: String::new(),
            program: None,
            extracted: None,
            score: 0.0,
            failure: None,
            detail: None,
            executor_free: true,
            votes: Vec::new(),
            tokens: Tokens::default(),
            wall_ms: 0,
            gold: item.gold().map(str::to_string),
            meta: item.record_meta(),
        }
    }

    /// Score a code item's program with the item's grader (declarative strategies and
    /// program harnesses both finish code items here); no program scores 0.
    fn finish_code(
        &self,
        item: &Item,
        response: &str,
        program: Option<String>,
        hint: Option<FailureClass>,
        truncated: bool,
    ) -> Final {
        let Some(code) = program.filter(|p| !p.trim().is_empty()) else {
            return Final {
                response: response.to_string(),
                program: None,
                extracted: None,
                score: 0.0,
                shape_ok: false,
                failure_hint: hint,
                detail: Some("no program".into()),
                truncated,
            };
        };
        match item.grade_code(&code) {
            Ok(g) => Final {
                response: response.to_string(),
                program: Some(code.clone()),
                extracted: Some(code),
                score: g.score,
                shape_ok: true,
                failure_hint: hint,
                detail: (!g.detail.is_empty())
                    .then(|| format!("{}/{} tests run: {}", g.tests_run, g.n_tests, g.detail)),
                truncated,
            },
            Err(e) => Final {
                response: response.to_string(),
                program: Some(code.clone()),
                extracted: Some(code),
                score: 0.0,
                shape_ok: true,
                failure_hint: Some(FailureClass::ToolError),
                detail: Some(format!("grader failed: {e}")),
                truncated,
            },
        }
    }

    /// Run the harness on one item (sample `sample`).
    pub fn rollout(&self, item: &Item, sample: u32) -> Rollout {
        let start = Instant::now();
        let seed = mix_seed(&[
            &self.config.seed.to_le_bytes(),
            item.id().as_bytes(),
            &sample.to_le_bytes(),
        ]);
        let mut r = self.base_rollout(item, sample, seed);
        let mut rec = Recorder::new(format!("{}\0{sample:010}", item.id()));
        let fin = match self.harness {
            Harness::Declarative(h) => self.declarative(h, item, seed, &mut rec, &mut r),
            Harness::Program(p) => self.program(p, item, &mut rec),
        };
        r.response = fin.response;
        r.program = fin.program;
        r.extracted = fin.extracted;
        r.score = fin.score;
        r.detail = fin.detail;
        r.failure = classify(
            fin.score,
            rec.executor_error.is_some(),
            fin.failure_hint,
            r.extracted.is_some(),
            fin.truncated,
            fin.shape_ok,
            item.kind(),
        );
        if r.failure == Some(FailureClass::ExecutorError) && r.detail.is_none() {
            r.detail = rec.executor_error.clone();
        }
        r.executor_free = rec.calls.is_empty();
        r.tokens = rec.tokens();
        r.calls = rec.calls;
        r.tools = rec.tools;
        r.wall_ms = start.elapsed().as_millis() as u64;
        r
    }
}

/// The failure class of a rollout (see [`super::rollout`] for the order).
fn classify(
    score: f64,
    executor_error: bool,
    hint: Option<FailureClass>,
    extracted: bool,
    truncated: bool,
    shape_ok: bool,
    kind: ItemKind,
) -> Option<FailureClass> {
    if score >= 1.0 {
        return None;
    }
    if executor_error {
        return Some(FailureClass::ExecutorError);
    }
    if let Some(h) = hint {
        return Some(h);
    }
    if !extracted {
        return Some(if truncated {
            FailureClass::Truncated
        } else {
            FailureClass::NoAnswer
        });
    }
    if kind == ItemKind::Answer && !shape_ok {
        return Some(FailureClass::BadFormat);
    }
    Some(FailureClass::Wrong)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_classes_in_order() {
        use FailureClass::*;
        let c = |score, exec, hint, ext, trunc, shape| {
            classify(score, exec, hint, ext, trunc, shape, ItemKind::Answer)
        };
        assert_eq!(c(1.0, true, Some(Timeout), false, true, false), None);
        assert_eq!(
            c(0.0, true, Some(Timeout), false, true, false),
            Some(ExecutorError)
        );
        assert_eq!(
            c(0.0, false, Some(ToolError), true, false, true),
            Some(ToolError)
        );
        assert_eq!(c(0.0, false, None, false, true, false), Some(Truncated));
        assert_eq!(c(0.0, false, None, false, false, false), Some(NoAnswer));
        assert_eq!(c(0.0, false, None, true, false, false), Some(BadFormat));
        assert_eq!(c(0.0, false, None, true, false, true), Some(Wrong));
        assert_eq!(
            classify(0.0, false, None, true, false, false, ItemKind::Code),
            Some(Wrong)
        );
    }
}
