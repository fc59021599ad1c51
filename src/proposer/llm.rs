//! The `llm:EXECUTOR_SPEC` proposer: a model (in-process llama.cpp, optionally with a
//! LoRA adapter, or an OpenAI-compatible endpoint) prompted with the task, the current
//! harness, the execution report and the history of earlier rounds ([`super::template`]),
//! asked for a revised harness. Its G replies of a round are one executor batch, each
//! sampled with its own seed ([`super::candidate_seed`]), so a run repeats exactly and
//! the completion cache answers a rerun. Each reply is parsed by [`super::parse`];
//! what fails is an invalid revision carrying the raw reply.
//!
//! A prompt that does not fit the model's context is an invalid revision of every
//! candidate of that round (the reason says so); any other model failure stops the run.

use std::sync::Arc;

use super::constrain::{self, Constrain};
use super::template::{Template, Vars};
use super::{
    Candidate, Proposal, ProposalRequest, Proposer, ProposerError, ProposerIdentity,
    ProposerSettings, Revision, TokenUse, candidate_seed, parse,
};
use crate::executor::{
    Executor, ExecutorError, ExecutorIdentity, Message, Prompt, Request, Sampling,
};
use crate::harness::Harness;

/// See the module doc.
pub struct LlmProposer {
    spec: String,
    executor: Arc<dyn Executor>,
    identity: ExecutorIdentity,
    settings: ProposerSettings,
    template: Template,
}

impl LlmProposer {
    pub fn new(
        spec: String,
        executor: Arc<dyn Executor>,
        identity: ExecutorIdentity,
        settings: ProposerSettings,
    ) -> Result<LlmProposer, ProposerError> {
        let template = match &settings.template {
            Some(p) => Template::load(p)?,
            None => Template::builtin(),
        };
        let probe = Sampling {
            temperature: settings.temperature,
            top_p: settings.top_p,
            max_tokens: settings.max_tokens,
            ..Sampling::default()
        };
        let temperature_ok =
            probe.temperature.is_finite() && (0.0..=2.0).contains(&probe.temperature);
        let top_p_ok = probe.top_p > 0.0 && probe.top_p <= 1.0;
        if !(temperature_ok && top_p_ok) || probe.max_tokens == 0 {
            return Err(ProposerError::Usage(format!(
                "llm proposer: temperature must be in 0..=2, top_p in (0, 1], max_tokens >= 1 (got {}, {}, {})",
                probe.temperature, probe.top_p, probe.max_tokens
            )));
        }
        Ok(LlmProposer {
            spec,
            executor,
            identity,
            settings,
            template,
        })
    }

    /// The messages of a round's prompt.
    pub fn messages(&self, request: &ProposalRequest<'_>) -> Vec<Message> {
        messages(
            &self.template,
            self.settings.report_tokens,
            self.settings.constrain,
            request,
        )
    }
}

/// The messages of a round's prompt under `template` (system, then user): exactly what
/// an `llm:` proposer sends, for anyone who must show a model the same prompt (the
/// reward service's context export).
pub fn messages(
    template: &Template,
    report_tokens: usize,
    constrain: Constrain,
    request: &ProposalRequest<'_>,
) -> Vec<Message> {
    let report = match request.report {
        Some(r) => r.render_text(report_tokens),
        None => "(no report)".to_string(),
    };
    let history = if request.history.is_empty() {
        "(none: this is the first round)".to_string()
    } else {
        request
            .history
            .iter()
            .map(|h| h.render())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut user = template.render(
        matches!(request.harness, Harness::Program(_)),
        &Vars {
            task: &request.task.description,
            harness: &request.harness.canonical(),
            report: &report,
            history: &history,
            round: request.round,
        },
    );
    if let Some(form) = constrain::reply_form(constrain, request.harness) {
        user.push_str("\n\n");
        user.push_str(&form);
    }
    vec![Message::system(template.system()), Message::user(user)]
}

impl Proposer for LlmProposer {
    fn identity(&self) -> ProposerIdentity {
        let spec = super::ProposerSpec::parse(&self.spec).ok();
        ProposerIdentity {
            spec: self.spec.clone(),
            kind: "llm".into(),
            label: spec.map(|s| s.label()).unwrap_or_else(|| "llm".into()),
            details: serde_json::json!({
                "model": self.identity,
                "template": {
                    "version": self.template.version,
                    "origin": self.template.origin,
                    "sha256": self.template.sha256,
                },
                "settings": self.settings,
            }),
        }
    }

    fn propose(&self, request: &ProposalRequest<'_>) -> Result<Proposal, ProposerError> {
        let messages = self.messages(request);
        let json_schema =
            constrain::reply_schema(self.settings.constrain, request.harness, request.feedback);
        let requests: Vec<Request> = (0..request.candidates)
            .map(|i| Request {
                prompt: Prompt::Chat(messages.clone()),
                sampling: Sampling {
                    temperature: self.settings.temperature,
                    top_p: self.settings.top_p,
                    seed: candidate_seed(request.seed, i),
                    max_tokens: self.settings.max_tokens,
                    json_schema: json_schema.clone(),
                    ..Sampling::default()
                },
            })
            .collect();
        let results = self.executor.complete_batch(&requests);
        let mut candidates = Vec::with_capacity(results.len());
        for r in results {
            match r {
                Ok(c) => {
                    let tokens = TokenUse {
                        prompt: c.usage.prompt_tokens as u64,
                        completion: c.usage.completion_tokens as u64,
                    };
                    let revision = match parse::revision(&c.text, request.harness, request.feedback)
                    {
                        Ok((harness, form)) => Revision::Harness { harness, form },
                        Err(reason) => Revision::Invalid {
                            reason: if c.finish_reason == crate::executor::FinishReason::Length {
                                format!("{reason} [the reply stopped at max_tokens]")
                            } else {
                                reason
                            },
                        },
                    };
                    candidates.push(Candidate {
                        revision,
                        raw: Some(c.text),
                        tokens,
                        cached: c.cached,
                    });
                }
                Err(e @ ExecutorError::PromptTooLong { .. }) => {
                    candidates.push(Candidate::invalid(
                        format!("the proposer prompt does not fit the model: {e}"),
                        None,
                    ));
                }
                Err(ExecutorError::InvalidRequest(m)) if json_schema.is_some() => {
                    return Err(ProposerError::Usage(format!(
                        "llm proposer: the executor refused the constrained request \
                         (constrain = \"{}\", sent as a JSON schema: OpenAI `response_format` \
                         over HTTP, a GBNF grammar in process): {m}; use a server that accepts \
                         response_format json_schema (vLLM, SGLang, llama-server, hrl serve) or \
                         constrain = \"off\"",
                        self.settings.constrain.name()
                    )));
                }
                Err(e) => return Err(ProposerError::Executor(e)),
            }
        }
        let Message { content, .. } = messages.into_iter().last().expect("a user message");
        Ok(Proposal {
            candidates,
            prompt: Some(content),
        })
    }
}
