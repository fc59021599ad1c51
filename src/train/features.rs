//! Task-agnostic features of a proposal context, the input of the compact policy
//! ([`super::policy`]). They describe the execution report of the parent harness on
//! the feedback set, the answers asked for, and the harness being edited (the parent
//! with the edits chosen so far applied, so that a revision is sampled
//! autoregressively). They **never** name the task or its family: a policy trained on
//! some families sees a held-out family only through these numbers, so transfer means
//! something.
//!
//! The list ([`FEATURES`], in this order; every value clamped to `0..=10`):
//!
//! | feature | meaning |
//! | --- | --- |
//! | `report.present` | 1 when the proposer was given a report, else 0 (every report feature is then 0) |
//! | `score` | mean feedback score of the parent |
//! | `fail.<class>` | rate of each failure class (`no_answer`, `bad_format`, `wrong`, `truncated`, `tool_error`, `timeout`, `harness_error`, `executor_error`) |
//! | `executor_free` | rate of rollouts that never called the executor |
//! | `truncated` | rate of rollouts whose last executor call stopped at `max_tokens` |
//! | `calls_per_item`, `tools_per_item` | executor calls and tool calls per item, / 10 |
//! | `tool_error_rate` | failed tool calls / tool calls |
//! | `completion_tokens` | mean completion tokens per item, / 1000 |
//! | `question_chars`, `question_lines` | mean question length in characters / 1000, in lines / 100 |
//! | `response_has_tag`, `response_has_code` | rate of responses with an `<answer>` pair, with a code block |
//! | `gold_shape.<number,token,line,lines>` | shape of the feedback items' gold answers (a shape reveals no answer) |
//! | `kind.code` | 1 for code items (programs graded by tests), 0 for answer items |
//! | `strategy.<direct,reason-then-answer,program,python-tool>` | the harness's strategy (one-hot) |
//! | `verification.<none,re-run-on-error,self-consistency>` | its verification (one-hot) |
//! | `instructions`, `notes`, `examples` | counts / 10 |
//! | `has_format_rule`, `has_system` | 0/1 |
//! | `temperature` | the sampling temperature in effect |
//! | `max_tokens` | the `max_tokens` in effect, / 1000 |
//! | `edits_so_far` | edits already chosen in this revision / the revision's maximum length |
//!
//! The report features come from `harness::execution_report::features`, the harness features
//! from `harness::execution_report::harness_features` (a program harness gives zeros: the
//! policy does not edit programs).

use std::collections::BTreeMap;

use crate::harness::Harness;
use crate::harness::edit::EditContext;
use crate::harness::execution_report::{self, ExecutionReport};
use crate::task::{AnswerShape, ItemKind};

/// The feature names, in vector order (see the module doc).
pub const FEATURES: &[&str] = &[
    "report.present",
    "score",
    "fail.no_answer",
    "fail.bad_format",
    "fail.wrong",
    "fail.truncated",
    "fail.tool_error",
    "fail.timeout",
    "fail.harness_error",
    "fail.executor_error",
    "executor_free",
    "truncated",
    "calls_per_item",
    "tools_per_item",
    "tool_error_rate",
    "completion_tokens",
    "question_chars",
    "question_lines",
    "response_has_tag",
    "response_has_code",
    "gold_shape.number",
    "gold_shape.token",
    "gold_shape.line",
    "gold_shape.lines",
    "kind.code",
    "strategy.direct",
    "strategy.reason-then-answer",
    "strategy.program",
    "strategy.python-tool",
    "verification.none",
    "verification.re-run-on-error",
    "verification.self-consistency",
    "instructions",
    "notes",
    "examples",
    "has_format_rule",
    "has_system",
    "temperature",
    "max_tokens",
    "edits_so_far",
];

/// The part of the features fixed for a whole revision: the report and the answers.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextFeatures {
    values: BTreeMap<String, f64>,
}

impl ContextFeatures {
    /// From the parent's report (if any), the feedback items (their gold answers'
    /// shapes) and the kind of the task's items.
    pub fn new(
        report: Option<&ExecutionReport>,
        feedback: &EditContext,
        kind: ItemKind,
    ) -> ContextFeatures {
        let mut values = match report {
            Some(r) => {
                let mut v = execution_report::features(r);
                v.insert("report.present".into(), 1.0);
                v
            }
            None => BTreeMap::new(),
        };
        let golds: Vec<&str> = feedback
            .feedback
            .iter()
            .filter_map(|f| f.item.gold())
            .collect();
        if !golds.is_empty() {
            for shape in [
                AnswerShape::Number,
                AnswerShape::Token,
                AnswerShape::Line,
                AnswerShape::Lines,
            ] {
                let k = golds.iter().filter(|g| AnswerShape::of(g) == shape).count();
                values.insert(
                    format!("gold_shape.{}", shape.as_str()),
                    k as f64 / golds.len() as f64,
                );
            }
        }
        values.insert(
            "kind.code".into(),
            f64::from(matches!(kind, ItemKind::Code)),
        );
        ContextFeatures { values }
    }

    /// The full vector for `harness` (the parent with the edits so far applied) after
    /// `edits_so_far` of at most `max_edits` edits.
    pub fn vector(&self, harness: &Harness, edits_so_far: usize, max_edits: usize) -> Vec<f64> {
        let mut all = self.values.clone();
        all.extend(execution_report::harness_features(harness));
        all.insert(
            "edits_so_far".into(),
            edits_so_far as f64 / max_edits.max(1) as f64,
        );
        FEATURES
            .iter()
            .map(|name| {
                let v = all.get(*name).copied().unwrap_or(0.0);
                if v.is_finite() {
                    v.clamp(0.0, 10.0)
                } else {
                    0.0
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Declarative;

    #[test]
    fn the_vector_follows_the_list_and_never_names_a_family() {
        let c = ContextFeatures::new(None, &EditContext::default(), ItemKind::Answer);
        let h = Harness::Declarative(Declarative::default());
        let v = c.vector(&h, 1, 4);
        assert_eq!(v.len(), FEATURES.len());
        let at = |n: &str| v[FEATURES.iter().position(|f| *f == n).unwrap()];
        assert_eq!(at("report.present"), 0.0);
        assert_eq!(at("strategy.direct"), 1.0);
        assert_eq!(at("edits_so_far"), 0.25);
        assert_eq!(at("max_tokens"), 0.512);
        // Every name is one of the documented kinds; none is a family name.
        for f in FEATURES {
            assert!(crate::families::get(f).is_err(), "{f}");
        }
        let mut sorted: Vec<_> = FEATURES.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), FEATURES.len());
    }
}
