//! Running a harness on items: one [`Rollout`] per (item, sample).
//!
//! [`run`] starts `concurrency` rollout threads over the items; each registers with
//! the [`Dispatcher`], so the executor calls of all running rollouts are batched
//! together. Declarative harnesses follow their strategy and verification
//! ([`Runtime::rollout`]); program harnesses run `bootstrap.py` + the harness file in
//! the sandbox with a channel whose `llm` and `python` messages this module answers
//! ([`ProgramHandler`]). Rollouts are handed to a sink as they finish (for an
//! append-only log) and returned in item order.
//!
//! Fixed follow-up messages (part of [`super::HARNESS_SEMANTICS`]): [`msg`].

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::declarative::{Declarative, Strategy, Verification, Vote};
use super::dispatch::{BatchStats, DispatchConfig, Dispatcher};
use super::program::{self, Program};
use super::rollout::{
    ExecutorCall, FailureClass, ROLLOUT_SCHEMA, Rollout, Tokens, ToolCall, ToolPurpose,
};
use super::tools::{ToolLimits, ToolPool};
use super::{Harness, HarnessError, Location, extract, render};
use crate::executor::{
    Completion, Executor, ExecutorError, ExecutorRef, FinishReason, Message, Prompt, Request,
    Sampling,
};
use crate::families::extract_answer;
use crate::sandbox::{
    ChannelHandler, ChannelReply, EndReason, Limits, RunRequest, Sandbox, SandboxError,
};
use crate::task::{AnswerRule, Item, ItemKind};

/// The fixed follow-up messages of the runtime.
pub mod msg {
    pub const RETRY_ANSWER: &str = "Your reply did not contain a final answer inside <answer></answer> tags. Reply with the final answer inside <answer></answer> tags.";
    pub const RETRY_NO_PROGRAM: &str = "Your reply did not contain a Python program in a ```python code block. Reply with the complete program in one ```python code block.";
    pub const RETRY_PROGRAM_FAILED: &str = "Your program failed:\n```\n{failure}\n```\nFix it and reply with the complete corrected program in one ```python code block.";
    pub const RETRY_CODE_FAILED: &str = "Your solution failed a test from the problem statement: {failure}\nFix it and reply with the complete corrected solution in one ```python code block.";
    pub const TOOL_OUTPUT: &str = "Output:\n```\n{output}\n```";
    pub const FINAL_NOW: &str =
        "You have used every tool call. Give your final answer now inside <answer></answer> tags.";
    pub const FINAL_CODE_NOW: &str = "You have used every tool call. Reply with your final solution in one ```python code block.";
}

/// Characters of program output or error shown back to the model.
const FEEDBACK_CHARS: usize = 2000;

/// Per-instance limits of a program harness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramLimits {
    pub max_llm_calls: u32,
    /// Prompt plus completion tokens over all llm calls.
    pub max_tokens: u64,
    pub max_tool_calls: u32,
    /// Wall time of the harness process, not counting time spent waiting for the
    /// executor or for nested python runs.
    pub wall: Duration,
    pub memory_mb: u64,
    /// Bytes of the harness's own stdout and stderr kept; more stops it.
    pub output_bytes: usize,
    /// Largest message on the channel.
    pub max_message_bytes: usize,
}

impl Default for ProgramLimits {
    fn default() -> Self {
        ProgramLimits {
            max_llm_calls: 32,
            max_tokens: 65_536,
            max_tool_calls: 32,
            wall: Duration::from_secs(60),
            memory_mb: 1024,
            output_bytes: 1 << 20,
            max_message_bytes: 4 << 20,
        }
    }
}

/// How a run is carried out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Rollouts in flight at once.
    pub concurrency: usize,
    pub dispatch: DispatchConfig,
    pub program: ProgramLimits,
    pub tool: ToolLimits,
    /// Base seed of sampled decoding (each call's seed is derived from it, the
    /// harness's own seed, the item id, the sample and the attempt).
    pub seed: u64,
    /// Rollouts per item (sample index 0..samples).
    pub samples: u32,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            concurrency: 16,
            dispatch: DispatchConfig::default(),
            program: ProgramLimits::default(),
            tool: ToolLimits::default(),
            seed: 0,
            samples: 1,
        }
    }
}

impl RunConfig {
    /// Hash of the settings that can change a rollout's result: limits, seed and the
    /// sandbox's interpreter (`python_hash`: [`crate::sandbox::PythonIdentity::hash`], over its
    /// version and installed packages); not concurrency or batching, which must not.
    pub fn result_hash(&self, python_hash: &str) -> String {
        let v = serde_json::json!({
            "program": self.program,
            "tool": self.tool,
            "seed": self.seed,
            "python": python_hash,
        });
        let mut h = Sha256::new();
        h.update(b"harness-rl/run-config/v2\0");
        h.update(v.to_string().as_bytes());
        h.finalize()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

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

/// Progress of a run, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
    /// Mean score of the finished rollouts.
    pub mean_score: f64,
}

/// Everything [`run`] produced.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// In (item, sample) order.
    pub rollouts: Vec<Rollout>,
    /// Rollouts taken from `done` instead of being run.
    pub reused: usize,
    pub batches: BatchStats,
    pub wall: Duration,
}

/// One executor call made through the dispatcher, recorded.
struct Recorder {
    calls: Vec<ExecutorCall>,
    tools: Vec<ToolCall>,
    executor_error: Option<String>,
}

impl Recorder {
    fn new() -> Recorder {
        Recorder {
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

/// The result of one attempt of a declarative strategy.
#[derive(Debug, Clone, Default)]
struct Attempt {
    response: String,
    /// The text the answer is taken from, and how.
    answer_text: Option<String>,
    rule: Option<AnswerRule>,
    program: Option<String>,
    truncated: bool,
    tool_failed: Option<String>,
    timed_out: bool,
    executor_failed: bool,
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

/// A short description of a failed program run, for feedback and records.
fn failure_text(t: &ToolCall, timeout: Duration) -> String {
    if let Some(e) = &t.error {
        return e.clone();
    }
    match t.end {
        Some(EndReason::Timeout) => format!(
            "the program ran past the time limit of {} s",
            timeout.as_secs_f64()
        ),
        Some(EndReason::Memory) => "the program ran out of memory".into(),
        Some(EndReason::OutputLimit) => "the program printed too much output".into(),
        _ if t.exit_code != Some(0) => {
            let err = tail(t.stderr.trim_end(), FEEDBACK_CHARS);
            if err.is_empty() {
                format!("exit status {:?}", t.exit_code)
            } else {
                err
            }
        }
        _ => "the program printed nothing".into(),
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
            tools,
            sandbox,
            executor,
            config,
            config_hash: config.result_hash(&sandbox.python().hash()),
        }
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
        let mut out = self.dispatcher.complete(vec![Request {
            prompt: Prompt::Chat(messages.to_vec()),
            sampling: sampling.clone(),
        }]);
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
    fn attempt(
        &self,
        h: &Declarative,
        item: &Item,
        sampling: &Sampling,
        rec: &mut Recorder,
    ) -> Attempt {
        let retries = match h.verification {
            Verification::ReRunOnError { max_retries } => max_retries,
            _ => 0,
        };
        let code_item = item.kind() == ItemKind::Code;
        let mut msgs = render::messages(h, item);
        let mut a = Attempt::default();
        let mut tries = 0u32;
        let mut tool_calls_left = match h.strategy {
            Strategy::PythonTool { max_calls } => max_calls,
            _ => 0,
        };
        let mut last_block: Option<String> = None;
        let mut last_tool_failure: Option<String> = None;
        // With a prefill every assistant turn starts with it: the response is the
        // prefill followed by the completion, and a python block the prefill opened
        // that a stop string left unclosed still yields its program.
        let prefill = h.prefill.as_str();
        let full = |c: &Completion| format!("{prefill}{}", c.text);
        let program_of = |text: &str, truncated: bool| {
            if !prefill.is_empty() && !truncated {
                extract::program_stopped_at_fence(text)
            } else {
                extract::program(text)
            }
        };
        loop {
            let Some(c) = self.call(rec, &msgs, sampling) else {
                a.executor_failed = true;
                return a;
            };
            let text = full(&c);
            a.response = text.clone();
            a.truncated = c.finish_reason == FinishReason::Length;
            let follow = |msgs: &mut Vec<Message>, reply: String| {
                if !prefill.is_empty() {
                    msgs.pop();
                }
                msgs.push(Message::new("assistant", text.clone()));
                msgs.push(Message::user(reply));
                if !prefill.is_empty() {
                    msgs.push(Message::new("assistant", prefill));
                }
            };
            match (&h.strategy, code_item) {
                (Strategy::PythonTool { .. }, _) => {
                    if let Some(p) = program_of(&text, a.truncated) {
                        last_block = Some(p);
                    }
                    let answered = !code_item && extract_answer(&text).is_some();
                    if answered || !extract::has_python_block(&text) {
                        // The final response.
                        if !code_item && !answered && tries < retries {
                            tries += 1;
                            follow(&mut msgs, msg::RETRY_ANSWER.into());
                            continue;
                        }
                        if !answered && !code_item {
                            a.tool_failed = last_tool_failure.clone();
                        }
                        break;
                    }
                    if tool_calls_left == 0 {
                        follow(
                            &mut msgs,
                            if code_item {
                                msg::FINAL_CODE_NOW
                            } else {
                                msg::FINAL_NOW
                            }
                            .into(),
                        );
                        let Some(c2) = self.call(rec, &msgs, sampling) else {
                            a.executor_failed = true;
                            return a;
                        };
                        let text2 = full(&c2);
                        a.truncated = c2.finish_reason == FinishReason::Length;
                        if let Some(p) = program_of(&text2, a.truncated) {
                            last_block = Some(p);
                        }
                        if !code_item && extract_answer(&text2).is_none() {
                            a.tool_failed = last_tool_failure.clone();
                        }
                        a.response = text2;
                        break;
                    }
                    tool_calls_left -= 1;
                    let code = last_block.clone().unwrap_or_default();
                    let t = self.run_program(rec, &code, false, ToolPurpose::Tool);
                    last_tool_failure =
                        (!t.ok()).then(|| failure_text(&t, self.tools.limits().timeout));
                    let mut output = format!(
                        "{}{}",
                        head(&t.stdout, FEEDBACK_CHARS),
                        head(&t.stderr, FEEDBACK_CHARS)
                    );
                    if let Some(e) = &t.error {
                        output.push_str(e);
                    } else if t.end == Some(EndReason::Timeout) {
                        output.push_str("(stopped: time limit)");
                    }
                    if output.trim().is_empty() {
                        output = "(no output)".into();
                    }
                    follow(
                        &mut msgs,
                        msg::TOOL_OUTPUT.replace("{output}", output.trim_end()),
                    );
                }
                (Strategy::Program { repl_print }, false) => {
                    let Some(code) = program_of(&text, a.truncated) else {
                        if tries < retries {
                            tries += 1;
                            follow(&mut msgs, msg::RETRY_NO_PROGRAM.into());
                            continue;
                        }
                        a.program = None;
                        break;
                    };
                    let t = self.run_program(rec, &code, *repl_print, ToolPurpose::Program);
                    a.program = Some(code);
                    let printed = !t.stdout.trim().is_empty();
                    let failed = !t.ok() || !printed;
                    if failed && tries < retries {
                        tries += 1;
                        let f = failure_text(&t, self.tools.limits().timeout);
                        follow(
                            &mut msgs,
                            msg::RETRY_PROGRAM_FAILED.replace("{failure}", &f),
                        );
                        continue;
                    }
                    a.answer_text = Some(t.stdout.clone());
                    a.rule = Some(AnswerRule::Bare);
                    a.timed_out = t.end == Some(EndReason::Timeout);
                    if !t.ok() && !a.timed_out {
                        a.tool_failed = Some(failure_text(&t, self.tools.limits().timeout));
                    }
                    break;
                }
                (_, true) => {
                    // Code items under direct, reason-then-answer and program.
                    let Some(code) = program_of(&text, a.truncated) else {
                        if tries < retries {
                            tries += 1;
                            follow(&mut msgs, msg::RETRY_NO_PROGRAM.into());
                            continue;
                        }
                        break;
                    };
                    a.program = Some(code.clone());
                    if tries < retries
                        && let Some(problem) = item.code_problem()
                        && let Some(check) = problem.grade_public(&code)
                    {
                        let (passed, detail) = match &check {
                            Ok(g) => (g.passed, g.detail.clone()),
                            Err(e) => (true, format!("grader: {e}")),
                        };
                        rec.tools.push(ToolCall {
                            purpose: ToolPurpose::PublicTests,
                            code: code.clone(),
                            stdin: String::new(),
                            stdout: detail.clone(),
                            stderr: String::new(),
                            exit_code: Some(if passed { 0 } else { 1 }),
                            end: Some(EndReason::Exited),
                            wall_ms: 0,
                            cpu_ms: 0,
                            error: check.as_ref().err().map(|e| e.to_string()),
                        });
                        if !passed {
                            tries += 1;
                            follow(
                                &mut msgs,
                                msg::RETRY_CODE_FAILED
                                    .replace("{failure}", &head(&detail, FEEDBACK_CHARS)),
                            );
                            continue;
                        }
                    }
                    break;
                }
                (_, false) => {
                    // Answer items under direct and reason-then-answer.
                    if extract_answer(&text).is_none() && tries < retries {
                        tries += 1;
                        follow(&mut msgs, msg::RETRY_ANSWER.into());
                        continue;
                    }
                    break;
                }
            }
        }
        if code_item {
            if a.program.is_none() {
                a.program = match h.strategy {
                    Strategy::PythonTool { .. } => {
                        program_of(&a.response, a.truncated).or(last_block)
                    }
                    _ => program_of(&a.response, a.truncated),
                };
            }
        } else if a.rule.is_none() {
            a.answer_text = Some(a.response.clone());
            a.rule = Some(AnswerRule::Tagged);
        }
        a
    }

    /// Score an attempt's output on `item`.
    fn finish(&self, item: &Item, a: &Attempt) -> Final {
        match item.kind() {
            ItemKind::Answer => {
                let s = match (&a.answer_text, a.rule) {
                    (Some(t), Some(rule)) => item.score_answer(t, rule),
                    _ => item.score_answer("", AnswerRule::Tagged),
                };
                Final {
                    response: a.response.clone(),
                    program: a.program.clone(),
                    extracted: s.extracted,
                    score: s.score,
                    shape_ok: s.shape_ok,
                    failure_hint: hint(a),
                    detail: a.tool_failed.clone(),
                    truncated: a.truncated,
                }
            }
            ItemKind::Code => {
                self.finish_code(item, &a.response, a.program.clone(), hint(a), a.truncated)
            }
        }
    }

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

    /// Run the harness on one item (sample `sample`).
    pub fn rollout(&self, item: &Item, sample: u32) -> Rollout {
        let start = Instant::now();
        let seed = mix_seed(&[
            &self.config.seed.to_le_bytes(),
            item.id().as_bytes(),
            &sample.to_le_bytes(),
        ]);
        let mut r = self.base_rollout(item, sample, seed);
        let mut rec = Recorder::new();
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

    fn declarative(
        &self,
        h: &Declarative,
        item: &Item,
        seed: u64,
        rec: &mut Recorder,
        r: &mut Rollout,
    ) -> Final {
        let mut sampling = h.sampling();
        let harness_seed = sampling.seed;
        let n = match h.verification {
            Verification::SelfConsistency { n, .. } => n,
            _ => 1,
        };
        let mut attempts = Vec::with_capacity(n as usize);
        for k in 0..n {
            sampling.seed = mix_seed(&[
                &harness_seed.to_le_bytes(),
                &seed.to_le_bytes(),
                &k.to_le_bytes(),
            ]);
            attempts.push(self.attempt(h, item, &sampling, rec));
        }
        if attempts.len() == 1 {
            return self.finish(item, &attempts[0]);
        }
        // Self-consistency: score each attempt's extraction and vote.
        let vote = match h.verification {
            Verification::SelfConsistency { vote, .. } => vote,
            _ => Vote::Majority,
        };
        let keys: Vec<Option<String>> = attempts
            .iter()
            .map(|a| match item.kind() {
                ItemKind::Answer => match (&a.answer_text, a.rule) {
                    (Some(t), Some(rule)) => item.score_answer(t, rule).extracted,
                    _ => None,
                }
                .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" ")),
                ItemKind::Code => a
                    .program
                    .as_ref()
                    .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" ")),
            })
            .collect();
        let chosen = choose(&keys, vote);
        r.votes = keys
            .iter()
            .enumerate()
            .map(|(i, k)| super::rollout::Vote {
                extracted: k.clone(),
                chosen: Some(i) == chosen,
            })
            .collect();
        self.finish(item, &attempts[chosen.unwrap_or(0)])
    }

    fn program(&self, p: &Program, item: &Item, rec: &mut Recorder) -> Final {
        let limits = &self.config.program;
        let job = serde_json::json!({ "question": program::question_json(item) });
        let req = RunRequest {
            program: program::BOOTSTRAP.to_string(),
            stdin: Vec::new(),
            files: vec![
                ("harness.py".into(), p.source.as_bytes().to_vec()),
                ("job.json".into(), job.to_string().into_bytes()),
            ],
            limits: Limits {
                wall: limits.wall,
                cpu_seconds: limits.wall.as_secs().max(1) + 1,
                memory_mb: limits.memory_mb,
                file_size_bytes: 16 << 20,
                open_files: 64,
                processes: 32,
                output_bytes: limits.output_bytes,
            },
        };
        let mut handler = ProgramHandler {
            rt: self,
            rec,
            final_answer: None,
            limit_hit: None,
            tool_calls: 0,
            tokens_used: 0,
        };
        let run = self
            .sandbox
            .run_with_channel(&req, &mut handler, limits.max_message_bytes);
        let final_answer = handler.final_answer.take();
        let limit_hit = handler.limit_hit.take();
        let fail = |class: FailureClass, detail: String| Final {
            response: String::new(),
            program: None,
            extracted: None,
            score: 0.0,
            shape_ok: false,
            failure_hint: Some(class),
            detail: Some(detail),
            truncated: false,
        };
        let run = match run {
            Ok(r) => r,
            Err(e) => return fail(FailureClass::ToolError, format!("sandbox: {e}")),
        };
        let stderr = String::from_utf8_lossy(&run.result.stderr).into_owned();
        let with_limit = |mut d: String| {
            if let Some(l) = &limit_hit {
                d = format!("{l}; {d}");
            }
            d
        };
        match final_answer {
            Some(Ok(answer)) => {
                let mut f = match item.kind() {
                    ItemKind::Answer => {
                        let s = item.score_answer(&answer, AnswerRule::Bare);
                        Final {
                            response: answer.clone(),
                            program: None,
                            extracted: s.extracted,
                            score: s.score,
                            shape_ok: s.shape_ok,
                            failure_hint: None,
                            detail: None,
                            truncated: false,
                        }
                    }
                    ItemKind::Code => {
                        let code = extract::solution(&answer);
                        self.finish_code(item, &answer, Some(code), None, false)
                    }
                };
                if let Some(l) = limit_hit {
                    f.detail = Some(match f.detail {
                        Some(d) => format!("{l}; {d}"),
                        None => l,
                    });
                }
                f
            }
            Some(Err(e)) => fail(FailureClass::HarnessError, with_limit(e)),
            None => {
                let why = if let Some(v) = &run.violation {
                    format!("protocol violation: {v}")
                } else {
                    match run.result.end {
                        EndReason::Timeout => {
                            return fail(
                                FailureClass::Timeout,
                                with_limit(format!(
                                    "the harness ran past its {} s limit",
                                    limits.wall.as_secs_f64()
                                )),
                            );
                        }
                        EndReason::OutputLimit => format!(
                            "the harness printed more than {} bytes",
                            limits.output_bytes
                        ),
                        EndReason::Memory => "the harness ran out of memory".into(),
                        EndReason::Killed => {
                            format!("the harness was killed (signal {:?})", run.result.signal)
                        }
                        EndReason::Exited => {
                            let t = tail(stderr.trim_end(), FEEDBACK_CHARS);
                            if t.is_empty() {
                                format!(
                                    "the harness exited ({:?}) without returning an answer",
                                    run.result.exit_code
                                )
                            } else {
                                t
                            }
                        }
                    }
                };
                fail(FailureClass::HarnessError, with_limit(why))
            }
        }
    }
}

/// The failure a strategy's attempt already implies.
fn hint(a: &Attempt) -> Option<FailureClass> {
    if a.executor_failed {
        Some(FailureClass::ExecutorError)
    } else if a.timed_out {
        Some(FailureClass::Timeout)
    } else if a.tool_failed.is_some() {
        Some(FailureClass::ToolError)
    } else {
        None
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

/// The index of the chosen sample.
fn choose(keys: &[Option<String>], vote: Vote) -> Option<usize> {
    match vote {
        Vote::FirstAnswer => keys.iter().position(Option::is_some),
        Vote::Majority => {
            let mut best: Option<(usize, usize)> = None; // (count, first index)
            for (i, k) in keys.iter().enumerate() {
                let Some(k) = k else { continue };
                let first = keys.iter().position(|x| x.as_ref() == Some(k)).unwrap_or(i);
                if first != i {
                    continue;
                }
                let count = keys.iter().filter(|x| x.as_ref() == Some(k)).count();
                if best.is_none_or(|(c, _)| count > c) {
                    best = Some((count, i));
                }
            }
            best.map(|(_, i)| i)
        }
    }
}

/// Answers a program harness's channel messages.
struct ProgramHandler<'r, 'a> {
    rt: &'r Runtime<'a>,
    rec: &'r mut Recorder,
    final_answer: Option<Result<String, String>>,
    limit_hit: Option<String>,
    tool_calls: u32,
    tokens_used: u64,
}

fn error_reply(kind: &str, message: impl Into<String>) -> ChannelReply {
    ChannelReply::Reply(
        serde_json::json!({"error": {"kind": kind, "message": message.into()}})
            .to_string()
            .into_bytes(),
    )
}

fn ok_reply(v: serde_json::Value) -> ChannelReply {
    ChannelReply::Reply(serde_json::json!({ "ok": v }).to_string().into_bytes())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LlmRequest {
    messages: Vec<Message>,
    max_tokens: u32,
    temperature: f32,
    top_p: f32,
    #[serde(default)]
    stop: Vec<String>,
    #[serde(default)]
    seed: Option<u64>,
}

impl ProgramHandler<'_, '_> {
    fn llm(&mut self, v: &serde_json::Value) -> ChannelReply {
        let limits = &self.rt.config.program;
        let reqs: Vec<LlmRequest> = match v.get("requests").cloned().map(serde_json::from_value) {
            Some(Ok(r)) => r,
            Some(Err(e)) => return error_reply("bad_request", format!("llm request: {e}")),
            None => return error_reply("bad_request", "llm: no requests"),
        };
        if reqs.is_empty() || reqs.len() > 64 {
            return error_reply("bad_request", "llm: 1..=64 requests per call");
        }
        let used = self.rec.calls.len() as u32;
        if used + reqs.len() as u32 > limits.max_llm_calls {
            let m = format!("limit: {} llm calls per instance", limits.max_llm_calls);
            self.limit_hit.get_or_insert(m.clone());
            return error_reply("limit", m);
        }
        if self.tokens_used >= limits.max_tokens {
            let m = format!("limit: {} tokens per instance", limits.max_tokens);
            self.limit_hit.get_or_insert(m.clone());
            return error_reply("limit", m);
        }
        let left = (limits.max_tokens - self.tokens_used).min(u32::MAX as u64) as u32;
        let mut requests = Vec::with_capacity(reqs.len());
        for (i, r) in reqs.into_iter().enumerate() {
            if r.messages.is_empty()
                || r.messages
                    .iter()
                    .any(|m| !["system", "user", "assistant"].contains(&m.role.as_str()))
            {
                return error_reply(
                    "bad_request",
                    format!("llm request {i}: messages need roles system, user or assistant"),
                );
            }
            let sampling = Sampling {
                temperature: r.temperature,
                top_p: r.top_p,
                top_k: 0,
                min_p: 0.0,
                seed: r.seed.unwrap_or(0),
                max_tokens: r.max_tokens.min(left).max(1),
                stop: r.stop,
                grammar: None,
            };
            let check = Declarative {
                sampling: super::SamplingOverrides {
                    temperature: Some(sampling.temperature),
                    top_p: Some(sampling.top_p),
                    max_tokens: Some(sampling.max_tokens),
                    stop: Some(sampling.stop.clone()),
                    ..Default::default()
                },
                ..Declarative::default()
            };
            if let Err(inv) = check.validate() {
                return error_reply(
                    "bad_request",
                    format!(
                        "llm request {i}: {}: {}",
                        inv.field.trim_start_matches("sampling."),
                        inv.message
                    ),
                );
            }
            requests.push(Request {
                prompt: Prompt::Chat(r.messages),
                sampling,
            });
        }
        let t = Instant::now();
        let results = self.rt.dispatcher.complete(requests.clone());
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let mut out = Vec::with_capacity(results.len());
        let mut failed = None;
        for (req, r) in requests.into_iter().zip(results) {
            let Prompt::Chat(messages) = req.prompt else {
                unreachable!()
            };
            self.rec.record(messages, req.sampling, &r, ms);
            match r {
                Ok(c) => {
                    self.tokens_used += (c.usage.prompt_tokens + c.usage.completion_tokens) as u64;
                    out.push(serde_json::json!({
                        "text": c.text,
                        "finish_reason": c.finish_reason,
                        "prompt_tokens": c.usage.prompt_tokens,
                        "completion_tokens": c.usage.completion_tokens,
                        "cached": c.cached,
                    }));
                }
                Err(e) => {
                    failed.get_or_insert(e.to_string());
                }
            }
        }
        match failed {
            Some(e) => error_reply("executor", e),
            None => ok_reply(serde_json::Value::Array(out)),
        }
    }

    fn python(&mut self, v: &serde_json::Value) -> ChannelReply {
        let limits = &self.rt.config.program;
        if self.tool_calls >= limits.max_tool_calls {
            let m = format!("limit: {} python calls per instance", limits.max_tool_calls);
            self.limit_hit.get_or_insert(m.clone());
            return error_reply("limit", m);
        }
        let (Some(code), stdin, timeout) = (
            v.get("code").and_then(|c| c.as_str()),
            v.get("stdin").and_then(|c| c.as_str()).unwrap_or(""),
            v.get("timeout").and_then(|c| c.as_f64()).unwrap_or(10.0),
        ) else {
            return error_reply("bad_request", "python: give code");
        };
        if !(timeout.is_finite() && timeout > 0.0) {
            return error_reply("bad_request", "python: timeout must be positive");
        }
        self.tool_calls += 1;
        let t = self.rt.tools.run(
            ToolPurpose::Nested,
            code,
            Vec::new(),
            stdin,
            Duration::from_secs_f64(timeout.min(3600.0)),
            code,
        );
        let reply = serde_json::json!({
            "stdout": t.stdout,
            "stderr": t.stderr,
            "exit_code": t.exit_code,
            "timed_out": t.end == Some(EndReason::Timeout),
        });
        let err = t.error.clone();
        self.rec.tools.push(t);
        match err {
            Some(e) => error_reply("sandbox", e),
            None => ok_reply(reply),
        }
    }
}

impl ChannelHandler for ProgramHandler<'_, '_> {
    fn message(&mut self, message: &[u8]) -> ChannelReply {
        let v: serde_json::Value = match serde_json::from_slice(message) {
            Ok(v) => v,
            Err(e) => return ChannelReply::Violation(format!("a message that is not JSON ({e})")),
        };
        match v.get("op").and_then(|o| o.as_str()) {
            Some("llm") => self.llm(&v),
            Some("python") => self.python(&v),
            Some("final") => {
                if self.final_answer.is_some() {
                    return ChannelReply::Violation("a second final answer".into());
                }
                self.final_answer = Some(match (v.get("answer"), v.get("error")) {
                    (Some(serde_json::Value::String(a)), _) => Ok(a.clone()),
                    (_, Some(e)) => Err(e.as_str().unwrap_or("error").to_string()),
                    _ => Err("final message without an answer".into()),
                });
                ok_reply(serde_json::Value::Null)
            }
            _ => ChannelReply::Violation("a message with an unknown op".into()),
        }
    }
}

/// Check that a program harness compiles (in the sandbox); a syntax error names the
/// file and line.
pub fn check_program(p: &Program, sandbox: &Sandbox, origin: &str) -> Result<(), RunError> {
    let req = RunRequest {
        program: program::SYNTAX_CHECK.to_string(),
        files: vec![("harness.py".into(), p.source.as_bytes().to_vec())],
        limits: Limits {
            wall: Duration::from_secs(20),
            cpu_seconds: 20,
            memory_mb: 512,
            ..Limits::default()
        },
        ..RunRequest::default()
    };
    let r = sandbox.run(&req)?;
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).map_err(|_| {
        RunError::Usage(format!(
            "{origin}: the syntax check did not finish ({:?}): {}",
            r.end,
            String::from_utf8_lossy(&r.stderr).trim()
        ))
    })?;
    if v.get("ok") == Some(&serde_json::Value::Bool(true)) {
        return Ok(());
    }
    Err(RunError::Harness(HarnessError::Parse {
        at: Location {
            origin: origin.to_string(),
            line: v.get("line").and_then(|l| l.as_u64()).map(|l| l as usize),
            field: None,
        },
        message: v
            .get("message")
            .and_then(|m| m.as_str())
            .unwrap_or("syntax error")
            .to_string(),
    }))
}

/// Everything a run needs besides the items.
pub struct RunContext<'a> {
    pub harness: &'a Harness,
    /// Where the harness came from (for error messages).
    pub origin: &'a str,
    pub executor: Arc<dyn Executor>,
    pub executor_ref: ExecutorRef,
    pub sandbox: &'a Sandbox,
    pub config: &'a RunConfig,
}

/// Run the harness on every (item, sample); rollouts whose key is in `done` are
/// reused instead of run. `sink` sees each new rollout as it finishes (completion
/// order); the output is in (item, sample) order.
pub fn run(
    ctx: &RunContext<'_>,
    items: &[Item],
    done: &HashMap<String, Rollout>,
    sink: &mut dyn FnMut(&Rollout) -> Result<(), std::io::Error>,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<RunOutput, RunError> {
    let start = Instant::now();
    let config = ctx.config;
    if config.samples == 0 || config.concurrency == 0 {
        return Err(RunError::Usage(
            "samples and concurrency must be >= 1".into(),
        ));
    }
    if let Harness::Program(p) = ctx.harness {
        check_program(p, ctx.sandbox, ctx.origin)?;
    }
    let dispatcher = Dispatcher::new(Arc::clone(&ctx.executor), config.dispatch.clone());
    let tools = ToolPool::new(ctx.sandbox.clone(), config.tool.clone());
    let rt = Runtime {
        harness: ctx.harness,
        harness_hash: ctx.harness.hash(),
        dispatcher: &dispatcher,
        tools: &tools,
        sandbox: ctx.sandbox,
        executor: ctx.executor_ref.clone(),
        config,
        config_hash: config.result_hash(&ctx.sandbox.python().hash()),
    };
    let slots: Vec<(usize, u32)> = (0..items.len())
        .flat_map(|i| (0..config.samples).map(move |s| (i, s)))
        .collect();
    let total = slots.len();
    let mut out: Vec<Option<Rollout>> = vec![None; total];
    let mut todo = Vec::new();
    let mut reused = 0;
    let mut score_sum = 0.0;
    for (k, &(i, s)) in slots.iter().enumerate() {
        let probe = Rollout {
            item_id: items[i].id(),
            sample: s,
            ..rt.base_rollout(&items[i], s, 0)
        };
        match done.get(&probe.key()) {
            Some(r) => {
                score_sum += r.score;
                out[k] = Some(r.clone());
                reused += 1;
            }
            None => todo.push(k),
        }
    }
    progress(Progress {
        done: reused,
        total,
        mean_score: if reused > 0 {
            score_sum / reused as f64
        } else {
            0.0
        },
    });
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Rollout)>();
    let workers = config.concurrency.min(todo.len());
    let mut sink_error = None;
    std::thread::scope(|s| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (rt, todo, next, slots) = (&rt, &todo, &next, &slots);
            s.spawn(move || {
                let _reg = rt.dispatcher.enter();
                loop {
                    let j = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&k) = todo.get(j) else { break };
                    let (i, sample) = slots[k];
                    let r = rt.rollout(&items[i], sample);
                    if tx.send((k, r)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut finished = reused;
        for (k, r) in rx {
            if sink_error.is_none()
                && let Err(e) = sink(&r)
            {
                sink_error = Some(e);
            }
            finished += 1;
            score_sum += r.score;
            out[k] = Some(r);
            progress(Progress {
                done: finished,
                total,
                mean_score: score_sum / finished as f64,
            });
        }
    });
    if let Some(e) = sink_error {
        return Err(RunError::Io(e));
    }
    let batches = dispatcher.stats();
    Ok(RunOutput {
        rollouts: out
            .into_iter()
            .map(|r| r.expect("every slot ran"))
            .collect(),
        reused,
        batches,
        wall: start.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn majority_vote_with_ties_to_the_earliest() {
        let k = |s: &[Option<&str>]| s.iter().map(|x| x.map(String::from)).collect::<Vec<_>>();
        assert_eq!(
            choose(&k(&[Some("1"), Some("2"), Some("2")]), Vote::Majority),
            Some(1)
        );
        assert_eq!(choose(&k(&[Some("1"), Some("2")]), Vote::Majority), Some(0));
        assert_eq!(
            choose(&k(&[None, Some("2"), Some("1"), Some("1")]), Vote::Majority),
            Some(2)
        );
        assert_eq!(choose(&k(&[None, None]), Vote::Majority), None);
        assert_eq!(choose(&k(&[None, Some("3")]), Vote::FirstAnswer), Some(1));
    }

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

    fn python(version: &str, packages: &[&str]) -> crate::sandbox::PythonIdentity {
        crate::sandbox::PythonInstall {
            executable: "/x/bin/python3".into(),
            extra_ro_dirs: Vec::new(),
            version: version.into(),
            packages: packages.iter().map(|p| p.to_string()).collect(),
        }
        .identity()
    }

    #[test]
    fn config_hash_ignores_concurrency() {
        let py = python("cpython 3.11.7", &["pip==24.0"]);
        let a = RunConfig::default();
        let mut b = a.clone();
        b.concurrency = 3;
        b.dispatch.window = Duration::from_secs(9);
        assert_eq!(a.result_hash(&py.hash), b.result_hash(&py.hash));
        b.program.max_llm_calls = 1;
        assert_ne!(a.result_hash(&py.hash), b.result_hash(&py.hash));
    }

    #[test]
    fn config_hash_follows_the_sandbox_interpreter_not_its_path() {
        let c = RunConfig::default();
        let base = python("cpython 3.11.7", &["pip==24.0"]);
        let mut moved = base.clone();
        moved.executable = "/elsewhere/bin/python3".into();
        assert_eq!(c.result_hash(&base.hash), c.result_hash(&moved.hash));
        for other in [
            python("cpython 3.12.1", &["pip==24.0"]),
            python("cpython 3.11.7", &["numpy==2.4.6", "pip==24.0"]),
            python("cpython 3.11.7", &["pip==24.1"]),
            python("cpython 3.11.7", &[]),
        ] {
            assert_ne!(other.hash, base.hash, "{other:?}");
            assert_ne!(
                c.result_hash(&base.hash),
                c.result_hash(&other.hash),
                "{other:?}"
            );
        }
    }
}
