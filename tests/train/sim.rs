//! Test-only simulated executor for the trainer tests: `SimulatedExecutor`. It is NOT a
//! language model and never ships: it answers by rules that depend on the harness in
//! a known way, so each test knows which edits are best.
//!
//! The question is found by its body in the last user message (gold answers come from
//! the same sets the trainer builds); the harness's text is every message together.
//! The reply is always `The answer is <answer>X</answer>`, X the gold answer when the
//! rule says the harness succeeds on this item, else `-12345`.
//!
//! Rules ([`Rule`]):
//! - `Additive`: an item whose body has even length succeeds iff the harness holds the
//!   `check-work` instruction; odd length iff it holds the `tags-required` note. The
//!   best revision adds both (score 1); each alone scores about 0.5.
//! - `ByAnswerShape`: an item whose gold answer is a number succeeds iff the harness
//!   holds the `track-values` instruction and not `count-explicitly`; any other item
//!   iff it holds `count-explicitly` and not `track-values`. The best edit depends on
//!   the answer shape — a report feature — not on the task's name.

use std::sync::Arc;

use harness_rl::eval::Backend;
use harness_rl::eval::sets;
use harness_rl::executor::spec::BuildIdentity;
use harness_rl::executor::{
    Completion, Executor, ExecutorError, ExecutorIdentity, FinishReason, Message, Prompt, Request,
    Timings, Usage,
};
use harness_rl::harness::snippets;
use harness_rl::task::AnswerShape;
use harness_rl::task::spec::GradingSetup;
use harness_rl::train::config::TrainSettings;
use serde_json::json;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    Additive,
    ByAnswerShape,
}

pub struct SimulatedExecutor {
    rule: Rule,
    golds: Vec<(String, String)>,
}

fn snippet(id: &str) -> &'static str {
    snippets::get(id).unwrap().text
}

impl SimulatedExecutor {
    pub fn new(rule: Rule, settings: &TrainSettings) -> SimulatedExecutor {
        let mut golds = Vec::new();
        for t in &settings.tasks {
            let s = sets::build(t, t.sets, &GradingSetup::default()).expect("sets build");
            for set in [&s.feedback, &s.dev, &s.test, &s.validation] {
                for item in set.iter() {
                    golds.push((
                        item.body().trim().to_string(),
                        item.gold().expect("answer items").to_string(),
                    ));
                }
            }
        }
        golds.sort_by_key(|(b, _)| std::cmp::Reverse(b.len()));
        SimulatedExecutor { rule, golds }
    }

    fn reply(&self, messages: &[Message]) -> String {
        let all: String = messages.iter().map(|m| m.content.as_str()).collect();
        let user = messages
            .iter()
            .rev()
            .find(|m| m.role == "user")
            .map(|m| m.content.as_str())
            .unwrap_or("");
        let found = self.golds.iter().find(|(b, _)| user.contains(b.as_str()));
        let Some((body, gold)) = found else {
            return "The answer is <answer>-12345</answer>".into();
        };
        let has = |id: &str| all.contains(snippet(id));
        let right = match self.rule {
            Rule::Additive => {
                if body.len() % 2 == 0 {
                    has("check-work")
                } else {
                    has("tags-required")
                }
            }
            Rule::ByAnswerShape => {
                if AnswerShape::of(gold) == AnswerShape::Number {
                    has("track-values") && !has("count-explicitly")
                } else {
                    has("count-explicitly") && !has("track-values")
                }
            }
        };
        let answer = if right { gold.as_str() } else { "-12345" };
        format!("The answer is <answer>{answer}</answer>")
    }
}

impl Executor for SimulatedExecutor {
    fn model_id(&self) -> &str {
        "simulated-model"
    }

    fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>> {
        requests
            .iter()
            .map(|r| {
                let m = match &r.prompt {
                    Prompt::Chat(m) => m.clone(),
                    Prompt::Raw(t) => vec![Message::user(t.clone())],
                };
                let text = self.reply(&m);
                Ok(Completion {
                    usage: Usage {
                        prompt_tokens: 10,
                        completion_tokens: (text.len() / 4) as u32,
                        cached_prompt_tokens: 0,
                    },
                    text,
                    finish_reason: FinishReason::Stop,
                    timings: Timings::default(),
                    cached: false,
                })
            })
            .collect()
    }
}

pub fn backend(rule: Rule, settings: &TrainSettings) -> Backend {
    Backend {
        executor: Arc::new(SimulatedExecutor::new(rule, settings)),
        identity: ExecutorIdentity {
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
        },
        cache: None,
        parallelism: 8,
    }
}
