//! Taking programs out of model responses, and running them REPL-style.
//!
//! Rule (measured in ../shared/notes/harness-effects.md: taking the last fenced block
//! of any kind grabs the "expected output" block models add after their code): the
//! program is the **last closed fenced block tagged `python`** (`python`, `py`,
//! `python3`, any case). When no block is tagged python, the last closed **bare**
//! block (no tag) is taken, without a stray first line that only says `python` (small
//! models write the tag inside the fence). Blocks tagged anything else (`text`,
//! `output`, `bash`) are never programs. A fence is a line whose first non-space
//! characters are three backticks; a block is closed by a line that is only backticks.
//!
//! REPL-style printing ([`REPL_RUNNER`]): the program is run from `solution.py` by a
//! small runner that executes every statement but the last, and when the last is a
//! bare expression evaluates it and prints `str(value)` unless it is `None` — as a
//! REPL would show it, but with `str` (so a string prints without quotes).

/// One fenced block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The info string after the opening fence, trimmed.
    pub tag: String,
    pub code: String,
}

fn is_python_tag(tag: &str) -> bool {
    let first = tag.split_whitespace().next().unwrap_or("");
    matches!(
        first.to_ascii_lowercase().as_str(),
        "python" | "py" | "python3"
    )
}

/// Every closed fenced block, in order.
pub fn blocks(text: &str) -> Vec<Block> {
    scan(text).0
}

/// Every closed fenced block, and the block left open at the end of the text.
fn scan(text: &str) -> (Vec<Block>, Option<Block>) {
    let mut out = Vec::new();
    let mut open: Option<(String, Vec<&str>)> = None;
    for line in text.split('\n') {
        let t = line.trim_start();
        match &mut open {
            None => {
                if let Some(rest) = t.strip_prefix("```") {
                    open = Some((
                        rest.trim().trim_start_matches('`').trim().to_string(),
                        Vec::new(),
                    ));
                }
            }
            Some((tag, lines)) => {
                let tt = t.trim_end();
                if tt.len() >= 3 && tt.chars().all(|c| c == '`') {
                    out.push(Block {
                        tag: std::mem::take(tag),
                        code: lines.join("\n"),
                    });
                    open = None;
                } else {
                    lines.push(line.strip_suffix('\r').unwrap_or(line));
                }
            }
        }
    }
    let open = open.map(|(tag, lines)| Block {
        tag,
        code: lines.join("\n"),
    });
    (out, open)
}

/// The program of a response whose generation stopped at a closing fence (an
/// assistant prefill opened a ```` ```python ```` block and the `stop` string removed
/// its closing fence): a block tagged python left open at the end counts as closed.
/// Otherwise as [`program`].
pub fn program_stopped_at_fence(text: &str) -> Option<String> {
    if let (_, Some(b)) = scan(text)
        && is_python_tag(&b.tag)
    {
        return Some(b.code.trim_end().to_string()).filter(|c| !c.trim().is_empty());
    }
    program(text)
}

/// The program of a response (see the module doc), or `None`.
pub fn program(text: &str) -> Option<String> {
    let bs = blocks(text);
    if let Some(b) = bs.iter().rev().find(|b| is_python_tag(&b.tag)) {
        return Some(b.code.clone()).filter(|c| !c.trim().is_empty());
    }
    let b = bs.iter().rev().find(|b| b.tag.is_empty())?;
    let mut lines: Vec<&str> = b.code.split('\n').collect();
    if lines
        .first()
        .is_some_and(|l| is_python_tag(l.trim()) && l.split_whitespace().count() == 1)
    {
        lines.remove(0);
    }
    let code = lines.join("\n");
    Some(code).filter(|c| !c.trim().is_empty())
}

/// Whether a response contains a closed block tagged python (the python-tool loop's
/// signal to run code).
pub fn has_python_block(text: &str) -> bool {
    blocks(text).iter().any(|b| is_python_tag(&b.tag))
}

/// The program text of a code item's final output: the response's program when it
/// has a fenced block, otherwise the whole text (a program harness may return bare
/// code).
pub fn solution(text: &str) -> String {
    program(text).unwrap_or_else(|| text.trim().to_string())
}

/// The runner for REPL-style printing; the program goes into `solution.py`.
pub const REPL_RUNNER: &str = r#"import ast, sys
_src = open("solution.py", encoding="utf-8").read()
_tree = ast.parse(_src, "solution.py")
_g = {"__name__": "__main__", "__builtins__": __builtins__}
sys.argv = ["solution.py"]
if _tree.body and isinstance(_tree.body[-1], ast.Expr):
    _last = _tree.body.pop()
    exec(compile(_tree, "solution.py", "exec"), _g)
    _v = eval(compile(ast.Expression(_last.value), "solution.py", "eval"), _g)
    if _v is not None:
        print(_v)
else:
    exec(compile(_tree, "solution.py", "exec"), _g)
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_python_block_wins_over_output_blocks() {
        let r = "Here:\n```python\nprint(1)\n```\nand\n```python\nprint(2)\n```\nOutput:\n```\n2\n```\n";
        assert_eq!(program(r).as_deref(), Some("print(2)"));
        let r = "```py\nx = 3\nx\n```\n```text\n3\n```";
        assert_eq!(program(r).as_deref(), Some("x = 3\nx"));
    }

    #[test]
    fn bare_blocks_lose_a_stray_python_line() {
        let r = "```\npython\nprint(5)\n```";
        assert_eq!(program(r).as_deref(), Some("print(5)"));
        let r = "```\nPython3\nprint(5)\n```";
        assert_eq!(program(r).as_deref(), Some("print(5)"));
        // `python` followed by code on the same line is code.
        let r = "```\nprint('python')\n```";
        assert_eq!(program(r).as_deref(), Some("print('python')"));
    }

    #[test]
    fn unclosed_and_foreign_blocks_are_not_programs() {
        assert_eq!(program("```python\nprint(1)\n"), None);
        assert_eq!(program("```bash\nls\n```"), None);
        assert_eq!(program("no code"), None);
        assert_eq!(program("```python\n\n```"), None);
        assert!(has_python_block("x\n```python\n1\n```"));
        assert!(!has_python_block("```\n1\n```"));
        assert_eq!(solution("def f(): pass"), "def f(): pass");
    }

    #[test]
    fn a_python_block_left_open_by_a_stop_counts_only_when_asked() {
        let r = "Below is a script:\n```python\ndef f():\n    return 1\n";
        assert_eq!(program(r), None);
        assert_eq!(
            program_stopped_at_fence(r).as_deref(),
            Some("def f():\n    return 1")
        );
        // A closed block is taken as usual; an open block of another tag is not code.
        let r = "```python\nx = 1\n```\nthen\n```text\nout";
        assert_eq!(program_stopped_at_fence(r).as_deref(), Some("x = 1"));
        assert_eq!(program_stopped_at_fence("```python\n\n"), None);
    }

    #[test]
    fn indented_fences_and_crlf() {
        let r = "  ```python\r\n  print(1)\r\n  ```\r\n";
        assert_eq!(program(r).as_deref(), Some("  print(1)"));
    }
}
