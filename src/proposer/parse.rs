//! Turning a proposer's text into a harness, robustly: anything that does not parse,
//! does not apply or does not validate is an `Err` with a reason (an invalid
//! revision), never a panic.
//!
//! The text is searched for fenced blocks (```` ```toml ````, ```` ```json ````,
//! ```` ```python ````, ```` ```diff ````, or untagged); blocks are tried from the last
//! to the first and the first that yields a valid harness wins (models often write an
//! explanation or an example before the final answer). What a block can be:
//!
//! | block | read as |
//! | --- | --- |
//! | `toml` with `[[edit]]` tables | typed edits, applied to a declarative parent |
//! | `toml` otherwise | a complete declarative harness |
//! | `json` array, or objects with `"op"` | typed edits (a JSON array or JSON lines) |
//! | `json` object otherwise | a complete declarative harness |
//! | `python`/`py` defining `solve` | a complete program harness |
//! | `diff`/`patch`/`udiff` | a unified diff of the parent's canonical text ([`super::patch`]) |
//! | untagged | sniffed: `def solve` → program, `@@` lines → diff, `[[edit]]` → edits, `{`/`[` → JSON, else TOML |
//!
//! Without any closed block the whole text is sniffed the same way. A block that was
//! opened but never closed (the output was cut at its token limit) is reported as such
//! when nothing else parses. A revision may change the harness kind (a declarative
//! parent may become a program harness). Program harnesses still have to pass the
//! sandboxed syntax check, which the evaluator runs before scoring.

use super::RevisionForm;
use crate::harness::edit::{self, EditContext};
use crate::harness::extract;
use crate::harness::{Harness, TextFormat};

/// The label parse errors carry as their origin.
pub const ORIGIN: &str = "<proposer output>";

/// What a block's text is taken to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Toml,
    Json,
    Python,
    Diff,
}

fn form_of_tag(tag: &str) -> Option<Form> {
    match tag
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
        .as_str()
    {
        "toml" => Some(Form::Toml),
        "json" | "jsonl" => Some(Form::Json),
        "python" | "py" | "python3" => Some(Form::Python),
        "diff" | "patch" | "udiff" => Some(Form::Diff),
        _ => None,
    }
}

fn sniff(text: &str) -> Form {
    let t = text.trim_start();
    if text.lines().any(|l| l.starts_with("def solve")) {
        Form::Python
    } else if text.lines().any(|l| l.starts_with("@@")) {
        Form::Diff
    } else if text.contains("[[edit]]") {
        Form::Toml
    } else if t.starts_with('{') || (t.starts_with('[') && !t.starts_with("[[")) {
        Form::Json
    } else {
        Form::Toml
    }
}

fn looks_like_edits_json(t: &str) -> bool {
    let t = t.trim_start();
    (t.starts_with('[') && !t.starts_with("[[")) || (t.starts_with('{') && t.contains("\"op\""))
}

fn declarative_parent(parent: &Harness) -> Result<&crate::harness::Declarative, String> {
    match parent {
        Harness::Declarative(d) => Ok(d),
        Harness::Program(_) => Err(
            "typed edits apply to declarative harnesses; the current harness is a program".into(),
        ),
    }
}

fn edits(
    text: &str,
    parent: &Harness,
    ctx: &EditContext,
) -> Result<(Harness, RevisionForm), String> {
    let d = declarative_parent(parent)?;
    let list = edit::parse_edits(text, ORIGIN).map_err(|e| e.to_string())?;
    if list.is_empty() {
        return Err("an empty list of edits".into());
    }
    let out = edit::apply(d, &list, ctx).map_err(|e| e.to_string())?;
    Ok((Harness::Declarative(out), RevisionForm::Edits))
}

/// Why a harness document that sets no field at all is refused.
const EMPTY_DOCUMENT: &str =
    "the harness document sets no field (only comments or nothing): not a revision";

/// Read one block as `form`.
fn read(
    text: &str,
    form: Form,
    parent: &Harness,
    ctx: &EditContext,
) -> Result<(Harness, RevisionForm), String> {
    match form {
        Form::Toml => {
            if text.contains("[[edit]]") {
                edits(text, parent, ctx)
            } else if text.parse::<toml::Table>().is_ok_and(|t| t.is_empty()) {
                // Comments or blank lines only: it would parse as the default harness,
                // a "revision" a reward-trained proposer learns to game.
                Err(EMPTY_DOCUMENT.into())
            } else {
                Harness::parse_declarative(text, TextFormat::Toml, ORIGIN)
                    .map(|h| (h, RevisionForm::Toml))
                    .map_err(|e| e.to_string())
            }
        }
        Form::Json => {
            if looks_like_edits_json(text) {
                edits(text, parent, ctx)
            } else if serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text)
                .is_ok_and(|m| m.is_empty())
            {
                Err(EMPTY_DOCUMENT.into())
            } else {
                Harness::parse_declarative(text, TextFormat::Json, ORIGIN)
                    .map(|h| (h, RevisionForm::Json))
                    .map_err(|e| e.to_string())
            }
        }
        Form::Python => Harness::parse_program(text, ORIGIN, parent.name().to_string())
            .map(|h| (h, RevisionForm::Python))
            .map_err(|e| e.to_string()),
        Form::Diff => {
            let patched = super::patch::apply(&parent.canonical(), text)
                .map_err(|e| format!("the diff does not apply: {e}"))?;
            let h = match parent {
                Harness::Declarative(_) => {
                    Harness::parse_declarative(&patched, TextFormat::Toml, ORIGIN)
                }
                Harness::Program(p) => Harness::parse_program(&patched, ORIGIN, p.name.clone()),
            }
            .map_err(|e| format!("the patched harness is invalid: {e}"))?;
            Ok((h, RevisionForm::Diff))
        }
    }
}

/// Whether a fence was opened after the last closed block and never closed.
fn unclosed_fence(text: &str) -> bool {
    let mut open = false;
    for line in text.split('\n') {
        let t = line.trim();
        if open {
            if t.len() >= 3 && t.chars().all(|c| c == '`') {
                open = false;
            }
        } else if t.starts_with("```") {
            open = true;
        }
    }
    open
}

/// Parse a proposer's text into a revision of `parent` (see the module doc).
pub fn revision(
    text: &str,
    parent: &Harness,
    ctx: &EditContext,
) -> Result<(Harness, RevisionForm), String> {
    if text.trim().is_empty() {
        return Err("the output is empty".into());
    }
    let blocks = extract::blocks(text);
    let mut tries: Vec<(String, Form)> = Vec::new();
    for b in blocks.iter().rev() {
        if b.code.trim().is_empty() {
            continue;
        }
        let form = if b.tag.is_empty() {
            Some(sniff(&b.code))
        } else {
            form_of_tag(&b.tag)
        };
        if let Some(f) = form {
            tries.push((b.code.clone(), f));
        }
    }
    if tries.is_empty() {
        if unclosed_fence(text) {
            return Err(
                "a code block was opened but never closed (the output was cut off?)".into(),
            );
        }
        if !blocks.is_empty() {
            return Err(format!(
                "no toml, json, python or diff block (blocks tagged: {})",
                blocks
                    .iter()
                    .map(|b| if b.tag.is_empty() {
                        "none"
                    } else {
                        b.tag.as_str()
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let form = sniff(text);
        return read(text, form, parent, ctx).map_err(|e| {
            format!("no ```toml, ```json, ```python or ```diff code block, and the whole reply is not a harness either ({e})")
        });
    }
    let mut first_error = None;
    for (code, form) in &tries {
        match read(code, *form, parent, ctx) {
            Ok(r) => return Ok(r),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let mut reason = first_error.unwrap_or_else(|| "nothing to read".into());
    if tries.len() > 1 {
        reason.push_str(&format!(" ({} blocks tried, none valid)", tries.len()));
    }
    if unclosed_fence(text) {
        reason.push_str("; a later code block was never closed (the output was cut off?)");
    }
    Err(reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{Declarative, Strategy};

    fn zero_shot() -> Harness {
        Harness::parse_declarative(
            "name = \"zero-shot\"\n[format]\nrule = \"Give your final answer {format} inside <answer></answer> tags.\"\n",
            TextFormat::Toml,
            "z.toml",
        )
        .unwrap()
    }

    fn program() -> Harness {
        Harness::parse_program(
            "def solve(question, llm, python):\n    return llm(question.body)\n",
            "p.py",
            "p".into(),
        )
        .unwrap()
    }

    fn ok(text: &str, parent: &Harness) -> (Harness, RevisionForm) {
        revision(text, parent, &EditContext::default()).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    #[test]
    fn full_toml_after_prose_and_a_stray_block() {
        let text = "The answers lacked tags.\n```text\nexpected output\n```\nHere:\n```toml\nsystem = \"Be exact.\"\n[strategy]\nkind = \"program\"\n[format]\nrule = \"Print only the answer, {format}.\"\n```\nDone.";
        let (h, form) = ok(text, &zero_shot());
        assert_eq!(form, RevisionForm::Toml);
        let Harness::Declarative(d) = h else { panic!() };
        assert_eq!(d.strategy, Strategy::Program { repl_print: false });
        assert_eq!(d.system, "Be exact.");
    }

    #[test]
    fn edits_in_json_and_toml() {
        let (h, form) = ok(
            "```json\n[{\"op\": \"add_note\", \"snippet\": \"tags-required\"}]\n```",
            &zero_shot(),
        );
        assert_eq!(form, RevisionForm::Edits);
        let Harness::Declarative(d) = h else { panic!() };
        assert_eq!(d.notes.len(), 1);
        let (_, form) = ok(
            "```toml\n[[edit]]\nop = \"set_strategy\"\nstrategy = { kind = \"program\" }\n```",
            &zero_shot(),
        );
        assert_eq!(form, RevisionForm::Edits);
        // Edits on a program parent are refused with a reason.
        let e = revision(
            "```json\n[{\"op\": \"reset_sampling\"}]\n```",
            &program(),
            &EditContext::default(),
        )
        .unwrap_err();
        assert!(e.contains("declarative"), "{e}");
    }

    #[test]
    fn programs_full_and_as_diffs() {
        let (h, form) = ok(
            "```python\ndef solve(question, llm, python):\n    return llm(question.text)\n```",
            &program(),
        );
        assert_eq!(form, RevisionForm::Python);
        assert!(h.canonical().contains("question.text"));
        let (h, form) = ok(
            "```diff\n@@ -1,2 +1,2 @@\n def solve(question, llm, python):\n-    return llm(question.body)\n+    return llm(question.body, max_tokens=64)\n```",
            &program(),
        );
        assert_eq!(form, RevisionForm::Diff);
        assert!(h.canonical().contains("max_tokens=64"));
        // A declarative parent may become a program.
        let (h, _) = ok(
            "```python\ndef solve(question, llm, python):\n    return '1'\n```",
            &zero_shot(),
        );
        assert_eq!(h.kind(), crate::harness::HarnessKind::Program);
        // An untagged block and no block at all are sniffed.
        let (_, form) = ok("```\nsystem = \"x\"\n```", &zero_shot());
        assert_eq!(form, RevisionForm::Toml);
        let (_, form) = ok("def solve(q, llm, python):\n    return ''\n", &program());
        assert_eq!(form, RevisionForm::Python);
    }

    #[test]
    fn garbage_is_an_invalid_revision_with_a_reason() {
        let p = zero_shot();
        let ctx = EditContext::default();
        let cases: [(&str, &str); 10] = [
            ("", "empty"),
            (
                "I would improve the harness by adding examples.",
                "no ```toml",
            ),
            (
                "```toml\n[strategy]\nkind = \"telepathy\"\n```",
                "telepathy",
            ),
            ("```toml\nsystem = \"x\"\ncolour = 2\n```", "colour"),
            (
                "```toml\n[strategy]\nkind = \"python-tool\"\nmax_calls = 99\n```",
                "max_calls",
            ),
            ("```python\nprint('no solve here')\n```", "solve"),
            ("```toml\nsystem = \"cut off", "never closed"),
            ("```diff\n@@\n-nothing\n+x\n```", "does not apply"),
            ("```toml\n# [Reporter]\n```", "sets no field"),
            ("```json\n{}\n```", "sets no field"),
        ];
        for (text, needle) in cases {
            let e = revision(text, &p, &ctx).unwrap_err();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
        // The blank harness is a valid TOML document.
        let (h, _) = ok("```toml\n\n# nothing\nname = \"blank\"\n```", &p);
        assert_eq!(
            h,
            Harness::Declarative(Declarative {
                name: "blank".into(),
                ..Default::default()
            })
        );
    }
}
