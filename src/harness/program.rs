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

/// The `question` object a program harness receives, as JSON.
pub fn question_json(item: &Item) -> serde_json::Value {
    let contract = item.contract();
    serde_json::json!({
        "id": item.id(),
        "group": item.group(),
        "kind": match item.kind() { ItemKind::Answer => "answer", ItemKind::Code => "code" },
        "text": item.question(),
        "body": item.body(),
        "answer_format": item.answer_format(),
        "instruction": item.answer_instruction(),
        "level": item.level(),
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
