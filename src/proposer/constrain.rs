//! Constrained decoding of `llm:` proposers (`constrain = "edits" | "harness" | "off"`):
//! the JSON schema a reply is decoded under, generated per round from the typed-edit
//! vocabulary of [`crate::harness::edit`] (the one source of truth: the same
//! [`edit::action_space`] the compact policy chooses from) and the parent harness.
//!
//! - `edits`: the reply is a JSON array of typed edits, which [`super::parse`] reads as
//!   an edit list: either 1 to [`MAX_EDITS`] edits drawn from (a) every discrete edit of
//!   the action space that applies to the parent on its own (snippet instructions,
//!   notes and format rules, the strategy and verification grids, sampling values,
//!   `add_example` of each feedback item that can be shown, `reset_sampling` when the
//!   parent overrides sampling) and (b) free-text `add_instruction`, `add_note`,
//!   `set_system` and `set_format_rule` edits of 1 to [`TEXT_MAX`] characters (no
//!   braces, which format templates reserve; no leading space); or exactly one removal
//!   (`remove_instruction` / `remove_note` / `remove_example` of an existing index).
//!   Every reply the grammar allows parses as an edit list; a single edit always
//!   applies; a list of several can still fail to apply in rare combinations (the same
//!   snippet added twice, self-consistency next to a greedy temperature), which is then
//!   an invalid revision with the reason, as always.
//! - `harness`: the reply is a whole declarative harness as a JSON document, coarser:
//!   `system`, up to [`MAX_LIST`] `instructions` and `notes` (free text as above), a
//!   `strategy` of the grid, a `verification` of the grid without self-consistency (it
//!   needs a sampled temperature the document cannot set), and a `format` that is a
//!   snippet rule or empty (the question's own answer instruction). Fields outside it
//!   (examples, sampling, prefill, name) are not written, so they fall back to their
//!   defaults.
//! - `off`: no constraint (the free-form reply of the template).
//!
//! A program parent has no typed edits: under `edits` or `harness` its round is
//! decoded unconstrained (the reply may still be a Python program or a diff).
//!
//! The schema goes to the executor as [`crate::executor::Sampling::json_schema`]: the
//! in-process llama.cpp backend decodes under its GBNF translation
//! ([`crate::executor::json_schema::to_gbnf`]), an `openai:` executor sends it as
//! `response_format` (`{"type": "json_schema", "json_schema": {"name": "hrl_reply",
//! "strict": true, "schema": ...}}`), which vLLM, SGLang, llama-server and `hrl serve`
//! accept. Because the template asks for a TOML block, a constrained round's prompt
//! ends with [`reply_form`], which says what the reply must be instead.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::harness::Harness;
use crate::harness::declarative::{Declarative, Verification};
use crate::harness::edit::{self, Edit, EditContext};
use crate::harness::snippets::{self, SnippetKind};

/// Longest free text (characters) a constrained reply may write in one field.
pub const TEXT_MAX: u64 = 240;
/// Most edits in one constrained reply.
pub const MAX_EDITS: u64 = 3;
/// Most instructions (and notes) in a constrained harness document.
pub const MAX_LIST: u64 = 4;

/// What an `llm:` proposer's reply is decoded under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Constrain {
    #[default]
    Off,
    Edits,
    Harness,
}

impl Constrain {
    pub fn parse(s: &str) -> Result<Constrain, String> {
        match s {
            "off" => Ok(Constrain::Off),
            "edits" => Ok(Constrain::Edits),
            "harness" => Ok(Constrain::Harness),
            other => Err(format!(
                "constrain = `{other}` is not one of off, edits, harness"
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Constrain::Off => "off",
            Constrain::Edits => "edits",
            Constrain::Harness => "harness",
        }
    }
}

/// A free-text string: 1..=TEXT_MAX characters, no braces, no leading space.
fn text() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": TEXT_MAX, "pattern": "^[^ {}][^{}]*$"})
}

/// The schema of exactly the JSON value `v` (objects as objects of constants, so a
/// server that knows no object `const` still reads it).
fn exact(v: &Value) -> Value {
    match v {
        Value::Object(m) => json!({
            "type": "object",
            "properties": m.iter().map(|(k, v)| (k.clone(), exact(v))).collect::<serde_json::Map<_, _>>(),
            "required": m.keys().cloned().collect::<Vec<_>>(),
            "additionalProperties": false,
        }),
        other => json!({"enum": [other]}),
    }
}

/// An edit as the JSON value it is written as (numbers in their shortest form).
fn edit_value(e: &Edit) -> Value {
    let text = serde_json::to_string(e).expect("edits serialise");
    serde_json::from_str(&text).expect("and parse back")
}

fn free_text_edit(op: &str, field: &str) -> Value {
    json!({
        "type": "object",
        "properties": {"op": {"enum": [op]}, field: text()},
        "required": ["op", field],
        "additionalProperties": false,
    })
}

fn is_removal(e: &Edit) -> bool {
    matches!(
        e,
        Edit::RemoveInstruction { .. } | Edit::RemoveNote { .. } | Edit::RemoveExample { .. }
    )
}

/// The schema of an `edits` reply for `parent` (see the module doc).
pub fn edits_schema(parent: &Declarative, ctx: &EditContext) -> Value {
    let ids: Vec<String> = ctx.feedback.iter().map(|f| f.item.id()).collect();
    let mut space = edit::action_space(parent, &ids);
    if parent.sampling != Default::default() {
        space.push(Edit::ResetSampling);
    }
    let applies = |e: &Edit| edit::apply(parent, std::slice::from_ref(e), ctx).is_ok();
    let (removals, others): (Vec<Edit>, Vec<Edit>) =
        space.into_iter().filter(applies).partition(is_removal);
    let mut alternatives: Vec<Value> = others.iter().map(|e| exact(&edit_value(e))).collect();
    alternatives.extend([
        free_text_edit("add_instruction", "text"),
        free_text_edit("add_note", "text"),
        free_text_edit("set_system", "text"),
        free_text_edit("set_format_rule", "rule"),
    ]);
    let list = json!({
        "type": "array",
        "items": {"anyOf": alternatives},
        "minItems": 1,
        "maxItems": MAX_EDITS,
    });
    if removals.is_empty() {
        return list;
    }
    let removal = json!({
        "type": "array",
        "items": {"anyOf": removals.iter().map(|e| exact(&edit_value(e))).collect::<Vec<_>>()},
        "minItems": 1,
        "maxItems": 1,
    });
    json!({"anyOf": [list, removal]})
}

/// The schema of a `harness` reply (see the module doc).
pub fn harness_schema() -> Value {
    fn value<T: Serialize>(x: &T) -> Value {
        serde_json::from_str(&serde_json::to_string(x).expect("serialises")).expect("parses")
    }
    let strategies: Vec<Value> = edit::strategy_grid()
        .iter()
        .map(|s| exact(&value(s)))
        .collect();
    let verifications: Vec<Value> = edit::verification_grid()
        .iter()
        .filter(|v| !matches!(v, Verification::SelfConsistency { .. }))
        .map(|v| exact(&value(v)))
        .collect();
    let mut formats: Vec<Value> = snippets::of_kind(SnippetKind::FormatRule)
        .map(|s| exact(&json!({"rule": s.text})))
        .collect();
    formats.push(exact(&json!({})));
    let list = json!({"type": "array", "items": text(), "minItems": 0, "maxItems": MAX_LIST});
    json!({
        "type": "object",
        "properties": {
            "system": text(),
            "instructions": list,
            "notes": list,
            "strategy": {"anyOf": strategies},
            "verification": {"anyOf": verifications},
            "format": {"anyOf": formats},
        },
        "required": ["system", "instructions", "notes", "strategy", "verification", "format"],
        "additionalProperties": false,
    })
}

/// The schema a round's replies are decoded under, or `None` (off, or a program parent).
pub fn reply_schema(c: Constrain, parent: &Harness, ctx: &EditContext) -> Option<Value> {
    match (c, parent) {
        (Constrain::Off, _) | (_, Harness::Program(_)) => None,
        (Constrain::Edits, Harness::Declarative(d)) => Some(edits_schema(d, ctx)),
        (Constrain::Harness, Harness::Declarative(_)) => Some(harness_schema()),
    }
}

/// The paragraph that ends a constrained round's prompt: what the reply must be.
pub fn reply_form(c: Constrain, parent: &Harness) -> Option<String> {
    if matches!(parent, Harness::Program(_)) {
        return None;
    }
    let ids = |k: SnippetKind| {
        snippets::of_kind(k)
            .map(|s| format!("`{}`", s.id))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match c {
        Constrain::Off => None,
        Constrain::Edits => Some(format!(
            "# Reply form (this replaces the reply instructions above)\n\
             Reply with a JSON array of 1 to {MAX_EDITS} edits and nothing else, for example \
             [{{\"op\":\"set_strategy\",\"strategy\":{{\"kind\":\"program\",\"repl_print\":true}}}},\
             {{\"op\":\"add_instruction\",\"text\":\"Print only the final value.\"}}]. \
             Edits: add_instruction / add_note (\"text\" or a \"snippet\": instructions {}; notes {}), \
             set_system (\"text\"), set_format_rule (\"rule\" or a \"snippet\": {}), \
             set_strategy, set_verification, set_sampling (temperature or max_tokens), \
             add_example (\"from_feedback\": a practice question id), or one \
             remove_instruction / remove_note / remove_example (\"index\"). \
             Texts: at most {TEXT_MAX} characters, no braces.",
            ids(SnippetKind::Instruction),
            ids(SnippetKind::Note),
            ids(SnippetKind::FormatRule),
        )),
        Constrain::Harness => Some(format!(
            "# Reply form (this replaces the reply instructions above)\n\
             Reply with the revised harness as one JSON object and nothing else: \
             {{\"system\": \"...\", \"instructions\": [...], \"notes\": [...], \
             \"strategy\": {{\"kind\": ...}}, \"verification\": {{\"kind\": ...}}, \"format\": {{}} or \
             {{\"rule\": ...}}}}, at most {MAX_LIST} instructions and notes of at most {TEXT_MAX} \
             characters each, no braces in texts."
        )),
    }
}

#[cfg(test)]
mod tests;
