//! The `rule` proposer: a positive control. A fixed, written-down revision rule that
//! reads only the parent's execution report (failure rates, score, truncation) and the
//! shapes of the feedback items' gold answers (a shape such as "one number" reveals no
//! answer; the compact policy's features read the same) — never the task's name,
//! description or family. If a revision rule of this kind lifts held-out scores, the
//! instrument can see a task-dependent revision skill; a trained proposer should at
//! least match it. The rule was fixed before any held-out number of a transfer suite
//! was computed (docs/EVAL.md, "The positive control", records it; changing it makes it a different
//! control, with a new [`RULE_VERSION`]).
//!
//! Rule `rule-v1`, first match wins (f = number of feedback items; a rate is a
//! fraction of f):
//!
//! 0. Nothing to revise — no report, a program parent, code items, or a feedback score
//!    of 1 — gives no candidate (the parent is kept).
//! 1. **Computable answers**: at least half the gold answers are numbers, wrong +
//!    bad_format ≥ 1/4, and the strategy is not already `program` → the program
//!    strategy with REPL printing (`set_strategy program, repl_print = true`), the
//!    `program-print` format rule, the `print-only-answer` instruction.
//! 2. **Format failures**: no_answer + bad_format ≥ 1/4 → the `tagged` format rule
//!    (`tagged-at-end` under reason-then-answer), the `tags-required` and
//!    `last-tag-wins` notes.
//! 3. **Cut off**: truncated ≥ 1/4 → `max_tokens = 1024` and the `brief` instruction.
//! 4. **Wrong answers otherwise**: wrong ≥ 1/4 and the strategy is `direct` →
//!    `reason-then-answer` with the `tagged-at-end` format rule.
//! 5. Otherwise no candidate.
//!
//! Each step's edits are applied in order, skipping one that does not apply (a note
//! already there); a step whose edits change nothing gives no candidate. The rule is
//! deterministic: one candidate per round whatever G is (G copies would be duplicates).

use serde_json::json;

use super::{
    Candidate, Proposal, ProposalRequest, Proposer, ProposerError, ProposerIdentity, Revision,
    RevisionForm, TokenUse,
};
use crate::harness::Harness;
use crate::harness::declarative::{Declarative, Strategy};
use crate::harness::edit::{self, Edit};
use crate::harness::execution_report;
use crate::task::AnswerShape;

/// The version of the written rule (recorded in the proposer's identity).
pub const RULE_VERSION: &str = "rule-v1";

/// What the rule reads: rates over the feedback items.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Signals {
    pub score: f64,
    pub wrong: f64,
    pub bad_format: f64,
    pub no_answer: f64,
    pub truncated: f64,
    /// Fraction of feedback gold answers whose shape is one number.
    pub numeric_gold: f64,
}

/// Which step of the rule fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Computable,
    Format,
    CutOff,
    Reason,
}

/// The rule's decision for a declarative parent (see the module doc).
pub fn decide(s: &Signals, parent: &Declarative) -> Option<(Step, Vec<Edit>)> {
    const Q: f64 = 0.25;
    let snippet = |id: &str| Some(id.to_string());
    if s.score >= 1.0 {
        return None;
    }
    let is_program = matches!(parent.strategy, Strategy::Program { .. });
    if s.numeric_gold >= 0.5 && s.wrong + s.bad_format >= Q && !is_program {
        return Some((
            Step::Computable,
            vec![
                Edit::SetStrategy {
                    strategy: Strategy::Program { repl_print: true },
                },
                Edit::SetFormatRule {
                    rule: None,
                    snippet: snippet("program-print"),
                },
                Edit::AddInstruction {
                    text: None,
                    snippet: snippet("print-only-answer"),
                },
            ],
        ));
    }
    if s.no_answer + s.bad_format >= Q {
        let rule = if matches!(parent.strategy, Strategy::ReasonThenAnswer {}) {
            "tagged-at-end"
        } else {
            "tagged"
        };
        return Some((
            Step::Format,
            vec![
                Edit::SetFormatRule {
                    rule: None,
                    snippet: snippet(rule),
                },
                Edit::AddNote {
                    text: None,
                    snippet: snippet("tags-required"),
                },
                Edit::AddNote {
                    text: None,
                    snippet: snippet("last-tag-wins"),
                },
            ],
        ));
    }
    if s.truncated >= Q {
        return Some((
            Step::CutOff,
            vec![
                Edit::SetSampling {
                    temperature: None,
                    top_p: None,
                    max_tokens: Some(1024),
                    stop: None,
                },
                Edit::AddInstruction {
                    text: None,
                    snippet: snippet("brief"),
                },
            ],
        ));
    }
    if s.wrong >= Q && matches!(parent.strategy, Strategy::Direct {}) {
        return Some((
            Step::Reason,
            vec![
                Edit::SetStrategy {
                    strategy: Strategy::ReasonThenAnswer {},
                },
                Edit::SetFormatRule {
                    rule: None,
                    snippet: snippet("tagged-at-end"),
                },
            ],
        ));
    }
    None
}

/// The signals of a round: the report's rates and the gold answers' shapes.
pub fn signals(request: &ProposalRequest<'_>) -> Option<Signals> {
    let report = request.report?;
    let f = execution_report::features(report);
    let at = |k: &str| f.get(k).copied().unwrap_or(0.0);
    let golds: Vec<&str> = request
        .feedback
        .feedback
        .iter()
        .filter_map(|x| x.item.gold())
        .collect();
    let numeric = golds
        .iter()
        .filter(|g| AnswerShape::of(g) == AnswerShape::Number)
        .count();
    Some(Signals {
        score: at("score"),
        wrong: at("fail.wrong"),
        bad_format: at("fail.bad_format"),
        no_answer: at("fail.no_answer"),
        truncated: at("truncated"),
        numeric_gold: if golds.is_empty() {
            0.0
        } else {
            numeric as f64 / golds.len() as f64
        },
    })
}

/// See the module doc.
pub struct RuleProposer;

impl Proposer for RuleProposer {
    fn identity(&self) -> ProposerIdentity {
        ProposerIdentity {
            spec: "rule".into(),
            kind: "rule".into(),
            label: "rule".into(),
            details: json!({"rule": RULE_VERSION}),
        }
    }

    fn propose(&self, request: &ProposalRequest<'_>) -> Result<Proposal, ProposerError> {
        let Harness::Declarative(parent) = request.harness else {
            return Ok(Proposal::default());
        };
        let code_items = request
            .feedback
            .feedback
            .iter()
            .any(|x| matches!(x.item.kind(), crate::task::ItemKind::Code));
        let decision = match signals(request) {
            Some(s) if !code_items => decide(&s, parent),
            _ => None,
        };
        let Some((step, edits)) = decision else {
            return Ok(Proposal::default());
        };
        let mut out = parent.clone();
        let mut applied = Vec::new();
        for e in edits {
            if let Ok(h) = edit::apply(&out, std::slice::from_ref(&e), request.feedback) {
                out = h;
                applied.push(e);
            }
        }
        if out == *parent {
            return Ok(Proposal::default());
        }
        let raw = serde_json::to_string(&applied).expect("edits serialise");
        Ok(Proposal {
            candidates: vec![Candidate {
                revision: Revision::Harness {
                    harness: Harness::Declarative(out),
                    form: RevisionForm::Edits,
                },
                raw: Some(format!("{RULE_VERSION} {step:?}: {raw}")),
                tokens: TokenUse::default(),
                cached: false,
            }],
            prompt: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(numeric: f64, wrong: f64, bad: f64, none: f64, trunc: f64) -> Signals {
        Signals {
            score: 1.0 - wrong - bad - none - trunc,
            wrong,
            bad_format: bad,
            no_answer: none,
            truncated: trunc,
            numeric_gold: numeric,
        }
    }

    #[test]
    fn the_written_rule_in_order() {
        let direct = Declarative::default();
        let step = |x: Signals, d: &Declarative| decide(&x, d).map(|(s, _)| s);
        assert_eq!(
            step(s(1.0, 0.5, 0.0, 0.0, 0.0), &direct),
            Some(Step::Computable)
        );
        assert_eq!(
            step(s(0.75, 0.0, 0.25, 0.0, 0.0), &direct),
            Some(Step::Computable)
        );
        // Not numeric: a format failure gets the format rule, a wrong answer reasoning.
        assert_eq!(
            step(s(0.25, 0.0, 0.5, 0.0, 0.0), &direct),
            Some(Step::Format)
        );
        assert_eq!(
            step(s(0.0, 0.5, 0.0, 0.0, 0.0), &direct),
            Some(Step::Reason)
        );
        assert_eq!(
            step(s(0.0, 0.0, 0.0, 0.0, 0.5), &direct),
            Some(Step::CutOff)
        );
        // Below the thresholds, or all solved: nothing.
        assert_eq!(step(s(1.0, 0.2, 0.0, 0.0, 0.0), &direct), None);
        assert_eq!(step(s(1.0, 0.0, 0.0, 0.0, 0.0), &direct), None);
        // Already a program: numeric wrong answers fall through to the later steps.
        let program = Declarative {
            strategy: Strategy::Program { repl_print: false },
            ..Default::default()
        };
        assert_eq!(step(s(1.0, 0.5, 0.0, 0.0, 0.0), &program), None);
        assert_eq!(
            step(s(1.0, 0.0, 0.0, 0.5, 0.0), &program),
            Some(Step::Format)
        );
    }

    #[test]
    fn every_step_applies_to_the_zero_shot_seed() {
        let seed = Declarative {
            format: crate::harness::declarative::Format {
                rule: Some("Give your final answer {format} inside <answer></answer> tags.".into()),
                code_rule: None,
            },
            ..Default::default()
        };
        for x in [
            s(1.0, 0.5, 0.0, 0.0, 0.0),
            s(0.0, 0.0, 0.5, 0.0, 0.0),
            s(0.0, 0.0, 0.0, 0.0, 0.5),
            s(0.0, 0.5, 0.0, 0.0, 0.0),
        ] {
            let (step, edits) = decide(&x, &seed).unwrap();
            let ctx = edit::EditContext::default();
            let mut h = seed.clone();
            for e in &edits {
                if let Ok(next) = edit::apply(&h, std::slice::from_ref(e), &ctx) {
                    h = next;
                }
            }
            assert_ne!(h, seed, "{step:?} changed nothing");
        }
    }
}
