//! Typed edits of declarative harnesses: the action space of the compact proposer.
//!
//! Each edit is small, serialisable (a tagged TOML/JSON object, `op` naming it) and
//! described by a few discrete parameters; [`apply`] applies a list in order to a copy
//! and validates the result, so an edit list either gives a valid harness or an error
//! naming the failing edit and its field. Text may be given literally (`text`) or by
//! a built-in snippet id (`snippet`, see [`super::snippets`]).
//!
//! | op | parameters | effect |
//! | --- | --- | --- |
//! | `set_system` | `text` | replace the system text |
//! | `add_instruction` | `text` or `snippet` | append an instruction |
//! | `remove_instruction` | `index` | remove one |
//! | `add_note` | `text` or `snippet` | append a memory note |
//! | `remove_note` | `index` | remove one |
//! | `add_example` | `from_feedback` (item id) | a worked example from a feedback item |
//! | `remove_example` | `index` | remove one |
//! | `set_strategy` | `strategy` (`{kind = ...}`) | replace the strategy |
//! | `set_verification` | `verification` (`{kind = ...}`) | replace the verification |
//! | `set_format_rule` | `rule` or `snippet`, or neither to show the original instruction | the answer rule |
//! | `set_sampling` | any of `temperature`, `top_p`, `max_tokens`, `stop` | override sampling |
//! | `reset_sampling` | | remove every sampling override |
//!
//! `add_example` needs the feedback set ([`FeedbackExample`]): the example's question
//! is the item rendered by the harness being edited; its response is the rollout's
//! own successful final response when there is one, otherwise (answer items under a
//! strategy whose responses carry tagged answers) `<answer>GOLD</answer>`.

use serde::{Deserialize, Serialize};

use super::declarative::{Declarative, Example, Strategy, Verification, Vote};
use super::snippets::{self, SnippetKind};
use super::{HarnessError, render};
use crate::task::Item;

/// One edit (see the module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Edit {
    SetSystem {
        text: String,
    },
    AddInstruction {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        snippet: Option<String>,
    },
    RemoveInstruction {
        index: usize,
    },
    AddNote {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        snippet: Option<String>,
    },
    RemoveNote {
        index: usize,
    },
    AddExample {
        from_feedback: String,
    },
    RemoveExample {
        index: usize,
    },
    SetStrategy {
        strategy: Strategy,
    },
    SetVerification {
        verification: Verification,
    },
    SetFormatRule {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        snippet: Option<String>,
    },
    SetSampling {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        temperature: Option<f32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        top_p: Option<f32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_tokens: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop: Option<Vec<String>>,
    },
    ResetSampling,
}

/// A feedback item an `add_example` edit may show (built by whoever ran the
/// feedback set).
#[derive(Debug, Clone)]
pub struct FeedbackExample {
    pub item: Item,
    /// The final response of a rollout of this item that scored 1, if any.
    pub successful_response: Option<String>,
}

/// What edits may draw on.
#[derive(Debug, Clone, Default)]
pub struct EditContext {
    pub feedback: Vec<FeedbackExample>,
}

impl Edit {
    /// The `op` name.
    pub fn op(&self) -> &'static str {
        match self {
            Edit::SetSystem { .. } => "set_system",
            Edit::AddInstruction { .. } => "add_instruction",
            Edit::RemoveInstruction { .. } => "remove_instruction",
            Edit::AddNote { .. } => "add_note",
            Edit::RemoveNote { .. } => "remove_note",
            Edit::AddExample { .. } => "add_example",
            Edit::RemoveExample { .. } => "remove_example",
            Edit::SetStrategy { .. } => "set_strategy",
            Edit::SetVerification { .. } => "set_verification",
            Edit::SetFormatRule { .. } => "set_format_rule",
            Edit::SetSampling { .. } => "set_sampling",
            Edit::ResetSampling => "reset_sampling",
        }
    }
}

fn text_or_snippet(
    text: &Option<String>,
    snippet: &Option<String>,
    kind: SnippetKind,
) -> Result<String, String> {
    match (text, snippet) {
        (Some(t), None) => Ok(t.clone()),
        (None, Some(id)) => {
            let s = snippets::get(id).ok_or_else(|| format!("unknown snippet `{id}`"))?;
            if s.kind != kind {
                return Err(format!("snippet `{id}` is a {:?}, not a {kind:?}", s.kind));
            }
            Ok(s.text.to_string())
        }
        (Some(_), Some(_)) => Err("give `text` or `snippet`, not both".into()),
        (None, None) => Err("give `text` or `snippet`".into()),
    }
}

fn apply_one(h: &mut Declarative, e: &Edit, ctx: &EditContext) -> Result<(), String> {
    let remove = |list: &mut Vec<String>, index: usize, what: &str| {
        if index >= list.len() {
            return Err(format!(
                "index {index} is out of range ({} {what})",
                list.len()
            ));
        }
        list.remove(index);
        Ok(())
    };
    match e {
        Edit::SetSystem { text } => h.system = text.clone(),
        Edit::AddInstruction { text, snippet } => {
            let t = text_or_snippet(text, snippet, SnippetKind::Instruction)?;
            if h.instructions.contains(&t) {
                return Err("the harness already has this instruction".into());
            }
            h.instructions.push(t);
        }
        Edit::RemoveInstruction { index } => remove(&mut h.instructions, *index, "instructions")?,
        Edit::AddNote { text, snippet } => {
            let t = text_or_snippet(text, snippet, SnippetKind::Note)?;
            if h.notes.contains(&t) {
                return Err("the harness already has this note".into());
            }
            h.notes.push(t);
        }
        Edit::RemoveNote { index } => remove(&mut h.notes, *index, "notes")?,
        Edit::AddExample { from_feedback } => {
            let fb = ctx
                .feedback
                .iter()
                .find(|f| f.item.id() == *from_feedback)
                .ok_or_else(|| format!("`{from_feedback}` is not a feedback item"))?;
            if h.examples
                .iter()
                .any(|x| x.source.as_deref() == Some(from_feedback))
            {
                return Err(format!("`{from_feedback}` is already an example"));
            }
            let response = match (&fb.successful_response, fb.item.gold(), &h.strategy) {
                (Some(r), _, _) => r.clone(),
                (None, Some(g), Strategy::Direct {} | Strategy::ReasonThenAnswer {}) => {
                    format!("<answer>{g}</answer>")
                }
                (None, Some(g), Strategy::PythonTool { .. }) => format!("<answer>{g}</answer>"),
                (None, _, _) => {
                    return Err(format!(
                        "`{from_feedback}` has no successful response to show under the {} strategy",
                        h.strategy.name()
                    ));
                }
            };
            h.examples.push(Example {
                question: render::user_text(h, &fb.item),
                response,
                source: Some(from_feedback.clone()),
            });
        }
        Edit::RemoveExample { index } => {
            if *index >= h.examples.len() {
                return Err(format!(
                    "index {index} is out of range ({} examples)",
                    h.examples.len()
                ));
            }
            h.examples.remove(*index);
        }
        Edit::SetStrategy { strategy } => h.strategy = strategy.clone(),
        Edit::SetVerification { verification } => h.verification = verification.clone(),
        Edit::SetFormatRule { rule, snippet } => {
            h.format.rule = match (rule, snippet) {
                (None, None) => None,
                _ => Some(text_or_snippet(rule, snippet, SnippetKind::FormatRule)?),
            };
        }
        Edit::SetSampling {
            temperature,
            top_p,
            max_tokens,
            stop,
        } => {
            if temperature.is_none() && top_p.is_none() && max_tokens.is_none() && stop.is_none() {
                return Err("set at least one of temperature, top_p, max_tokens, stop".into());
            }
            if temperature.is_some() {
                h.sampling.temperature = *temperature;
            }
            if top_p.is_some() {
                h.sampling.top_p = *top_p;
            }
            if max_tokens.is_some() {
                h.sampling.max_tokens = *max_tokens;
            }
            if stop.is_some() {
                h.sampling.stop = stop.clone();
            }
        }
        Edit::ResetSampling => h.sampling = Default::default(),
    }
    Ok(())
}

/// Apply `edits` in order to a copy of `h`; the result is validated. Errors name the
/// failing edit (its index and op) and why.
pub fn apply(
    h: &Declarative,
    edits: &[Edit],
    ctx: &EditContext,
) -> Result<Declarative, HarnessError> {
    let mut out = h.clone();
    for (index, e) in edits.iter().enumerate() {
        apply_one(&mut out, e, ctx).map_err(|message| HarnessError::Edit {
            index,
            op: e.op().into(),
            message,
        })?;
    }
    out.validate().map_err(|inv| HarnessError::Edit {
        index: edits.len().saturating_sub(1),
        op: edits.last().map_or("none", |e| e.op()).into(),
        message: format!("the result is invalid: {}: {}", inv.field, inv.message),
    })?;
    Ok(out)
}

/// Parse a list of edits: a JSON array, JSON lines, or TOML `[[edit]]` tables.
pub fn parse_edits(text: &str, origin: &str) -> Result<Vec<Edit>, HarnessError> {
    let t = text.trim_start();
    let err = |line: Option<usize>, message: String| HarnessError::Parse {
        at: super::Location {
            origin: origin.to_string(),
            line,
            field: None,
        },
        message,
    };
    if t.starts_with('[') && !t.starts_with("[[") {
        return serde_json::from_str(t).map_err(|e| err(Some(e.line()), e.to_string()));
    }
    if t.starts_with('{') {
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            out.push(serde_json::from_str(line).map_err(|e| err(Some(i + 1), e.to_string()))?);
        }
        return Ok(out);
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        #[serde(default)]
        edit: Vec<Edit>,
    }
    let f: File = toml::from_str(text).map_err(|e| {
        err(
            e.span()
                .map(|s| super::locate::line_of_offset(text, s.start)),
            e.message().trim().to_string(),
        )
    })?;
    Ok(f.edit)
}

/// The strategies the discrete edit space can set (a small grid).
pub fn strategy_grid() -> Vec<Strategy> {
    vec![
        Strategy::Direct {},
        Strategy::ReasonThenAnswer {},
        Strategy::Program { repl_print: false },
        Strategy::Program { repl_print: true },
        Strategy::PythonTool { max_calls: 2 },
        Strategy::PythonTool { max_calls: 4 },
    ]
}

/// The verifications the discrete edit space can set (a small grid).
pub fn verification_grid() -> Vec<Verification> {
    vec![
        Verification::None {},
        Verification::ReRunOnError { max_retries: 1 },
        Verification::ReRunOnError { max_retries: 2 },
        Verification::SelfConsistency {
            n: 3,
            vote: Vote::Majority,
        },
        Verification::SelfConsistency {
            n: 5,
            vote: Vote::Majority,
        },
    ]
}

/// The harness-independent discrete edits, in a fixed order (the compact policy's
/// weights follow it): add each instruction snippet, add each note snippet, set each
/// strategy and verification of the grids, set each format-rule snippet, restore the
/// original format rule, set the temperature (0, 0.3, 0.7), set max tokens (256, 512,
/// 1024, 2048).
pub fn fixed_edits() -> Vec<Edit> {
    let mut v = Vec::new();
    for s in snippets::of_kind(SnippetKind::Instruction) {
        v.push(Edit::AddInstruction {
            text: None,
            snippet: Some(s.id.into()),
        });
    }
    for s in snippets::of_kind(SnippetKind::Note) {
        v.push(Edit::AddNote {
            text: None,
            snippet: Some(s.id.into()),
        });
    }
    for strategy in strategy_grid() {
        v.push(Edit::SetStrategy { strategy });
    }
    for verification in verification_grid() {
        v.push(Edit::SetVerification { verification });
    }
    for s in snippets::of_kind(SnippetKind::FormatRule) {
        v.push(Edit::SetFormatRule {
            rule: None,
            snippet: Some(s.id.into()),
        });
    }
    v.push(Edit::SetFormatRule {
        rule: None,
        snippet: None,
    });
    for t in [0.0f32, 0.3, 0.7] {
        v.push(Edit::SetSampling {
            temperature: Some(t),
            top_p: None,
            max_tokens: None,
            stop: None,
        });
    }
    for m in [256u32, 512, 1024, 2048] {
        v.push(Edit::SetSampling {
            temperature: None,
            top_p: None,
            max_tokens: Some(m),
            stop: None,
        });
    }
    v
}

/// Whether a fixed edit would leave `h` as it is (a snippet already present, the
/// strategy or verification already set, the format rule already that one).
fn is_noop(e: &Edit, h: &Declarative) -> bool {
    let text = |id: &Option<String>| id.as_deref().and_then(snippets::get).map(|s| s.text);
    match e {
        Edit::AddInstruction { snippet, .. } => {
            text(snippet).is_some_and(|t| h.instructions.iter().any(|x| x == t))
        }
        Edit::AddNote { snippet, .. } => {
            text(snippet).is_some_and(|t| h.notes.iter().any(|x| x == t))
        }
        Edit::SetStrategy { strategy } => h.strategy == *strategy,
        Edit::SetVerification { verification } => h.verification == *verification,
        Edit::SetFormatRule { snippet: None, .. } => h.format.rule.is_none(),
        Edit::SetFormatRule { snippet, .. } => h.format.rule.as_deref() == text(snippet),
        _ => false,
    }
}

/// The discrete edits available for `h`: every fixed edit ([`fixed_edits`]) that
/// changes `h`, every removal, and `add_example` for each feedback item id given.
pub fn action_space(h: &Declarative, feedback_ids: &[String]) -> Vec<Edit> {
    let mut v: Vec<Edit> = fixed_edits()
        .into_iter()
        .filter(|e| !is_noop(e, h))
        .collect();
    v.extend((0..h.instructions.len()).map(|index| Edit::RemoveInstruction { index }));
    v.extend((0..h.notes.len()).map(|index| Edit::RemoveNote { index }));
    v.extend(feedback_ids.iter().map(|id| Edit::AddExample {
        from_feedback: id.clone(),
    }));
    v.extend((0..h.examples.len()).map(|index| Edit::RemoveExample { index }));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_apply_and_name_their_failures() {
        let h = Declarative::default();
        let ctx = EditContext::default();
        let out = apply(
            &h,
            &[
                Edit::AddInstruction {
                    text: None,
                    snippet: Some("no-input".into()),
                },
                Edit::SetStrategy {
                    strategy: Strategy::Program { repl_print: true },
                },
                Edit::SetFormatRule {
                    rule: None,
                    snippet: Some("program-print".into()),
                },
            ],
            &ctx,
        )
        .unwrap();
        assert_eq!(out.instructions.len(), 1);
        assert_eq!(out.strategy, Strategy::Program { repl_print: true });
        let e = apply(&h, &[Edit::RemoveNote { index: 0 }], &ctx).unwrap_err();
        assert_eq!(
            e.to_string(),
            "edit 0 (remove_note): index 0 is out of range (0 notes)"
        );
        let e = apply(
            &h,
            &[Edit::AddNote {
                text: None,
                snippet: Some("no-input".into()),
            }],
            &ctx,
        )
        .unwrap_err();
        assert!(e.to_string().contains("not a Note"), "{e}");
        // Self-consistency under greedy decoding is refused by validation.
        let e = apply(
            &h,
            &[Edit::SetVerification {
                verification: Verification::SelfConsistency {
                    n: 3,
                    vote: Vote::Majority,
                },
            }],
            &ctx,
        )
        .unwrap_err();
        assert!(e.to_string().contains("verification.n"), "{e}");
    }

    #[test]
    fn edit_lists_parse_in_three_notations() {
        let json = r#"[{"op": "add_note", "snippet": "tags-required"}, {"op": "reset_sampling"}]"#;
        let jsonl = "{\"op\": \"add_note\", \"snippet\": \"tags-required\"}\n{\"op\": \"reset_sampling\"}\n";
        let toml = "[[edit]]\nop = \"add_note\"\nsnippet = \"tags-required\"\n\n[[edit]]\nop = \"reset_sampling\"\n";
        let a = parse_edits(json, "x").unwrap();
        assert_eq!(a, parse_edits(jsonl, "x").unwrap());
        assert_eq!(a, parse_edits(toml, "x").unwrap());
        let e = parse_edits("[[edit]]\nop = \"paint\"\n", "e.toml").unwrap_err();
        assert!(e.to_string().starts_with("e.toml:"), "{e}");
        let e = parse_edits("{\"op\": \"add_note\", \"colour\": 1}\n", "e.jsonl").unwrap_err();
        assert!(e.to_string().contains("colour"), "{e}");
    }

    #[test]
    fn every_action_of_the_space_applies_to_the_blank_harness() {
        let h = Declarative::default();
        for e in action_space(&h, &[]) {
            let r = apply(&h, std::slice::from_ref(&e), &EditContext::default());
            let greedy_sc = matches!(
                e,
                Edit::SetVerification {
                    verification: Verification::SelfConsistency { .. }
                }
            );
            assert_eq!(r.is_ok(), !greedy_sc, "{e:?}: {r:?}");
        }
    }
}
