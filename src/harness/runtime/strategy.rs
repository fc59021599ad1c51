//! The declarative strategies: one attempt of a strategy (direct, program, python tool,
//! re-run on error, self-consistency), verification, and how an attempt is finished
//! and scored. Fixed follow-up messages (part of [`super::super::HARNESS_SEMANTICS`]): [`msg`].

use std::time::Duration;

use crate::executor::{Completion, FinishReason, Message, Sampling};
use crate::families::extract_answer;
use crate::harness::declarative::{Declarative, Strategy, Verification, Vote};
use crate::harness::rollout::{FailureClass, Rollout, ToolCall, ToolPurpose};
use crate::harness::{extract, render};
use crate::sandbox::EndReason;
use crate::task::{AnswerRule, Item, ItemKind};

use super::{FEEDBACK_CHARS, Final, Recorder, Runtime, head, mix_seed, tail};

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

impl Runtime<'_> {
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

    pub(super) fn declarative(
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
            .map(|(i, k)| crate::harness::rollout::Vote {
                extracted: k.clone(),
                chosen: Some(i) == chosen,
            })
            .collect();
        self.finish(item, &attempts[chosen.unwrap_or(0)])
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
}
