//! Program harnesses: the harness process in the sandbox and the channel whose `llm`,
//! `python` and `final` messages the runtime answers ([`ProgramHandler`]), and the
//! syntax check a program harness passes before it runs ([`check_program`]).

use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::executor::{Message, Prompt, Request, Sampling};
use crate::harness::declarative::Declarative;
use crate::harness::program::{self, Program};
use crate::harness::rollout::{FailureClass, ToolPurpose};
use crate::harness::{HarnessError, Location, extract};
use crate::sandbox::{ChannelHandler, ChannelReply, EndReason, Limits, RunRequest, Sandbox};
use crate::task::{AnswerRule, Item, ItemKind};

use super::{FEEDBACK_CHARS, Final, Recorder, RunError, Runtime, tail};

impl Runtime<'_> {
    pub(super) fn program(&self, p: &Program, item: &Item, rec: &mut Recorder) -> Final {
        let limits = &self.config.program;
        let job =
            serde_json::json!({ "question": program::question_json(item, p.full_question_view()) });
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
                json_schema: None,
            };
            let check = Declarative {
                sampling: crate::harness::SamplingOverrides {
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
        let results =
            self.rt
                .dispatcher
                .complete_keyed(self.rt.group, self.rec.call_key(), requests.clone());
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
