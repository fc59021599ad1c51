//! Program harnesses: a Python file with one entry point,
//!
//! ```python
//! def solve(question, llm, python) -> str: ...
//! ```
//!
//! run inside the sandbox by `bootstrap.py` (see [`BOOTSTRAP`]); `llm(...)` and
//! `python(...)` are calls back to the host over the sandbox channel, answered by the
//! runtime ([`super::runtime`]): llm calls of all running instances are gathered into
//! executor batches ([`super::dispatch`]), python calls run nested programs in the
//! sandbox ([`super::tools`]). The `question` object never contains the gold answer.
//! Its attributes ([`question_json`]):
//!
//! | attribute | answer items (families) | code items |
//! | --- | --- | --- |
//! | `id`, `group`, `kind` | instance id, family, `"answer"` | `lcb:ID`, `platform/difficulty`, `"code"` |
//! | `text` | the question as generated, with its answer instruction | the source's reference prompt |
//! | `body` | the question without the instruction | the problem statement |
//! | `answer_format` | e.g. `as a single integer` | `""` |
//! | `instruction` | the question's own answer instruction | `""` |
//! | `level` | 1..5 | `None` |
//! | `io`, `starter_code`, `entry_point`, `contract` | `None` | `"stdin"`/`"function"`, starter code, function name, format text |
//!
//! **The task-agnostic view** (the default): `id`, `group` and `level` are `None`, so a
//! program sees what the executor sees — the question text and its answer contract —
//! and cannot dispatch on the family name to a hand-written per-family solver (the
//! bypass of executor ablation an RL-trained proposer could learn). A program whose
//! source holds the line [`FULL_VIEW_DIRECTIVE`] gets them back; the line is part of
//! the source, hence of the harness hash and of the harness file every record names.
//!
//! The return value: for an answer item, the content of its last
//! `<answer>...</answer>` pair when it has one, otherwise the whole string (trimmed),
//! is the final answer, checked by the family's verifier. For a code item it is the
//! solution: the program in its last fenced python block when it has one, otherwise
//! the whole string.
//!
//! Parsing checks the file is text, within size, and defines `solve` at top level;
//! the runtime compiles it in the sandbox before the first rollout, so a syntax error
//! is reported once, with its line, instead of as a failure of every item.

use super::{HarnessError, Location};
use crate::task::{CodeIo, Item, ItemKind};

/// The sandboxed entry point that loads `harness.py` and calls `solve`.
pub const BOOTSTRAP: &str = include_str!("bootstrap.py");

/// Largest program harness accepted.
pub const MAX_SOURCE_BYTES: usize = 256 * 1024;

/// A program harness: its name (the file stem) and normalised source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub name: String,
    /// Normalised: LF line endings, no trailing spaces, no trailing blank lines, one
    /// final newline, no byte-order mark.
    pub source: String,
}

/// Normalise a source text (see [`Program::source`]).
pub fn normalize_source(text: &str) -> String {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut lines: Vec<&str> = text.lines().map(|l| l.trim_end()).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

impl Program {
    /// Check and normalise a program harness.
    pub fn parse(text: &str, origin: &str, name: String) -> Result<Program, HarnessError> {
        let at = |line: Option<usize>, field: Option<&str>| Location {
            origin: origin.to_string(),
            line,
            field: field.map(str::to_string),
        };
        if text.len() > MAX_SOURCE_BYTES {
            return Err(HarnessError::Invalid {
                at: at(None, None),
                message: format!(
                    "{} bytes is over the {MAX_SOURCE_BYTES}-byte limit",
                    text.len()
                ),
            });
        }
        if let Some(i) = text.find('\0') {
            return Err(HarnessError::Parse {
                at: at(Some(super::locate::line_of_offset(text, i)), None),
                message: "a NUL byte in the source".into(),
            });
        }
        let source = normalize_source(text);
        let defines_solve = source.lines().any(|l| {
            l.strip_prefix("def solve")
                .is_some_and(|r| r.trim_start().starts_with('('))
        });
        if !defines_solve {
            return Err(HarnessError::Invalid {
                at: at(None, Some("solve")),
                message: "no top-level `def solve(question, llm, python):`".into(),
            });
        }
        Ok(Program { name, source })
    }
}

/// The line that gives a program the full view (see the module doc).
pub const FULL_VIEW_DIRECTIVE: &str = "# hrl: question-view = full";

impl Program {
    /// Whether the source asks for the full view ([`FULL_VIEW_DIRECTIVE`] as a line).
    pub fn full_question_view(&self) -> bool {
        self.source.lines().any(|l| l.trim() == FULL_VIEW_DIRECTIVE)
    }
}

/// The `question` object a program harness receives, as JSON: task-agnostic (no id,
/// family or level) unless `full`.
pub fn question_json(item: &Item, full: bool) -> serde_json::Value {
    let contract = item.contract();
    serde_json::json!({
        "id": full.then(|| item.id()),
        "group": full.then(|| item.group()),
        "kind": match item.kind() { ItemKind::Answer => "answer", ItemKind::Code => "code" },
        "text": item.question(),
        "body": item.body(),
        "answer_format": item.answer_format(),
        "instruction": item.answer_instruction(),
        "level": if full { item.level() } else { None },
        "io": contract.as_ref().map(|c| match c.io { CodeIo::Stdin => "stdin", CodeIo::Function => "function" }),
        "starter_code": contract.as_ref().map(|c| c.starter_code.clone()),
        "entry_point": contract.as_ref().and_then(|c| c.entry_point.clone()),
        "contract": contract.as_ref().map(|c| c.text.clone()),
    })
}

/// A program that compiles `harness.py` and reports a syntax error as JSON on stdout
/// (run in the sandbox before the first rollout).
pub const SYNTAX_CHECK: &str = r#"import json
src = open("harness.py", encoding="utf-8").read()
try:
    compile(src, "harness.py", "exec")
    print(json.dumps({"ok": True}))
except SyntaxError as e:
    print(json.dumps({"ok": False, "line": e.lineno, "message": "%s: %s" % (type(e).__name__, e.msg)}))
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_ignores_line_endings_and_trailing_space() {
        let a = normalize_source("def solve(q, llm, python):\r\n    return 'x'   \r\n\r\n\r\n");
        let b = normalize_source("\u{feff}def solve(q, llm, python):\n    return 'x'\n");
        assert_eq!(a, b);
        assert_eq!(a, "def solve(q, llm, python):\n    return 'x'\n");
    }

    #[test]
    fn a_program_sees_the_task_agnostic_question_unless_it_asks_for_the_full_view() {
        let fam = crate::families::get("gcd").unwrap();
        let stream =
            crate::families::InstanceStream::new(fam, crate::families::Level::new(2).unwrap(), 5);
        let item = Item::Answer {
            instance: std::sync::Arc::new(stream.instance(3)),
            family: fam,
        };
        let plain = Program::parse(
            "def solve(q, llm, python):\n    return ''\n",
            "a.py",
            "a".into(),
        )
        .unwrap();
        assert!(!plain.full_question_view());
        let q = question_json(&item, plain.full_question_view());
        for k in ["id", "group", "level"] {
            assert!(q[k].is_null(), "{k}: {q}");
        }
        assert_eq!(q["text"], item.question());
        assert!(!q.to_string().contains("gcd"), "{q}");
        let full = Program::parse(
            &format!("{FULL_VIEW_DIRECTIVE}\ndef solve(q, llm, python):\n    return ''\n"),
            "b.py",
            "b".into(),
        )
        .unwrap();
        assert!(full.full_question_view());
        let q = question_json(&item, full.full_question_view());
        assert_eq!(q["group"], "gcd");
        assert_eq!(q["level"], 2);
        assert_eq!(q["id"], item.id());
    }

    #[test]
    fn solve_must_be_defined() {
        assert!(Program::parse("def solve (q, l, p):\n  return ''\n", "x.py", "x".into()).is_ok());
        let e = Program::parse("def answer(q):\n  pass\n", "x.py", "x".into()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.py: solve: no top-level `def solve(question, llm, python):`"
        );
        assert!(Program::parse("  def solve(q, l, p):\n", "x.py", "x".into()).is_err());
        assert!(Program::parse("def solver(q):\n", "x.py", "x".into()).is_err());
    }
}
