//! Applying a unified diff that a model wrote to a harness text.
//!
//! Models get line numbers and hunk counts wrong far more often than the lines
//! themselves, so a hunk is located by its content: the hunk's old lines (context and
//! removed lines) must appear in the text exactly, or else with trailing whitespace
//! ignored. The search starts at the header's line number (when there is one) and
//! spreads outward; hunks apply in order and never overlap. Counts in `@@` headers
//! are ignored (the body decides). `---`/`+++`/`diff`/`index` header lines are
//! skipped. A hunk with no old lines (pure addition) needs a header line number.
//! Anything that does not apply is an error saying which hunk and why.

/// One hunk: its header's old start line (1-based, if given) and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hunk {
    start: Option<usize>,
    old: Vec<String>,
    new: Vec<String>,
    /// The body in order: `' '` context, `'-'` removed, `'+'` added.
    ops: Vec<(char, String)>,
}

fn header_start(line: &str) -> Option<usize> {
    // "@@ -12,3 +12,4 @@" → 12 ("-12" or "-12,3").
    let rest = line.trim_start_matches('@').trim_start();
    let old = rest.split_whitespace().next()?.strip_prefix('-')?;
    old.split(',').next()?.parse().ok()
}

fn parse(diff: &str) -> Result<Vec<Hunk>, String> {
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut cur: Option<Hunk> = None;
    for raw in diff.lines() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.starts_with("@@") {
            if let Some(h) = cur.take() {
                hunks.push(h);
            }
            cur = Some(Hunk {
                start: header_start(line),
                old: Vec::new(),
                new: Vec::new(),
                ops: Vec::new(),
            });
            continue;
        }
        let is_header = line.starts_with("--- ")
            || line.starts_with("+++ ")
            || line == "---"
            || line == "+++"
            || line.starts_with("diff ")
            || line.starts_with("index ");
        let Some(h) = cur.as_mut() else {
            // Anything before the first hunk (headers, prose) is skipped.
            continue;
        };
        if is_header {
            hunks.push(cur.take().expect("a hunk is open"));
            continue;
        }
        if line.starts_with('\\') {
            continue; // "\ No newline at end of file"
        }
        match line.chars().next() {
            Some('+') => {
                h.new.push(line[1..].to_string());
                h.ops.push(('+', line[1..].to_string()));
            }
            Some('-') => {
                h.old.push(line[1..].to_string());
                h.ops.push(('-', line[1..].to_string()));
            }
            Some(' ') => {
                h.old.push(line[1..].to_string());
                h.new.push(line[1..].to_string());
                h.ops.push((' ', line[1..].to_string()));
            }
            // An empty line inside a hunk: an empty context line (editors strip the
            // leading space).
            None => {
                h.old.push(String::new());
                h.new.push(String::new());
                h.ops.push((' ', String::new()));
            }
            Some(_) => {
                return Err(format!(
                    "a line in a hunk does not start with ' ', '+' or '-': {:?}",
                    line.chars().take(60).collect::<String>()
                ));
            }
        }
    }
    if let Some(h) = cur.take() {
        hunks.push(h);
    }
    // Trailing empty context lines are usually the blank line after the diff.
    for h in &mut hunks {
        while h
            .ops
            .last()
            .is_some_and(|(op, l)| *op == ' ' && l.is_empty())
        {
            h.ops.pop();
            h.old.pop();
            h.new.pop();
        }
    }
    hunks.retain(|h| h.old != h.new);
    if hunks.is_empty() {
        return Err("no hunk with a change (expected `@@` hunks with + and - lines)".into());
    }
    Ok(hunks)
}

fn matches_at(lines: &[String], at: usize, old: &[String], loose: bool) -> bool {
    if at + old.len() > lines.len() {
        return false;
    }
    lines[at..at + old.len()].iter().zip(old).all(|(a, b)| {
        if loose {
            a.trim_end() == b.trim_end()
        } else {
            a == b
        }
    })
}

/// Apply `diff` to `original`; the result ends with a newline when the original did.
pub fn apply(original: &str, diff: &str) -> Result<String, String> {
    let hunks = parse(diff)?;
    let mut lines: Vec<String> = original.lines().map(str::to_string).collect();
    let mut floor = 0usize; // hunks apply in order
    for (k, h) in hunks.iter().enumerate() {
        let hint = h
            .start
            .map(|s| s.saturating_sub(1))
            .unwrap_or(floor)
            .max(floor);
        let at = if h.old.is_empty() {
            match h.start {
                Some(_) if hint <= lines.len() => Some(hint),
                Some(_) => None,
                None => {
                    return Err(format!(
                        "hunk {}: adds lines without context or a line number",
                        k + 1
                    ));
                }
            }
        } else {
            let n = lines.len();
            let mut found = None;
            'search: for loose in [false, true] {
                // Outward from the hint until both ends of the text are covered.
                for d in 0..=n.max(hint) {
                    for cand in [hint.checked_add(d), hint.checked_sub(d)]
                        .into_iter()
                        .flatten()
                    {
                        if cand >= floor && matches_at(&lines, cand, &h.old, loose) {
                            found = Some(cand);
                            break 'search;
                        }
                    }
                }
            }
            found
        };
        let Some(at) = at else {
            let first = h
                .old
                .iter()
                .find(|l| !l.trim().is_empty())
                .map(|l| l.chars().take(60).collect::<String>())
                .unwrap_or_default();
            return Err(format!(
                "hunk {}: its old lines are not in the harness (first: {first:?})",
                k + 1
            ));
        };
        // Context lines keep the harness's text (a loose match may differ in
        // trailing whitespace); removed lines go, added lines come in.
        let mut replacement = Vec::with_capacity(h.new.len());
        let mut i = at;
        for (op, text) in &h.ops {
            match op {
                ' ' => {
                    replacement.push(lines[i].clone());
                    i += 1;
                }
                '-' => i += 1,
                _ => replacement.push(text.clone()),
            }
        }
        let added = replacement.len();
        lines.splice(at..at + h.old.len(), replacement);
        floor = at + added;
    }
    let mut out = lines.join("\n");
    if original.ends_with('\n') || original.is_empty() {
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str =
        "def solve(question, llm, python):\n    a = llm(question.body)\n    return a\n";

    #[test]
    fn applies_a_hunk_with_wrong_numbers_and_counts() {
        let d = "--- a/h.py\n+++ b/h.py\n@@ -7,9 +7,9 @@\n def solve(question, llm, python):\n-    a = llm(question.body)\n+    a = llm(question.body, max_tokens=64)\n     return a\n";
        assert_eq!(
            apply(SRC, d).unwrap(),
            "def solve(question, llm, python):\n    a = llm(question.body, max_tokens=64)\n    return a\n"
        );
    }

    #[test]
    fn several_hunks_in_order_and_additions() {
        let src = "a\nb\nc\nd\ne\n";
        let d = "@@ -1 +1 @@\n-a\n+A\n@@ -4,2 +4,3 @@\n d\n+d2\n e\n";
        assert_eq!(apply(src, d).unwrap(), "A\nb\nc\nd\nd2\ne\n");
        // Pure addition at a line number.
        assert_eq!(
            apply(src, "@@ -3,0 +3,1 @@\n+x\n").unwrap(),
            "a\nb\nx\nc\nd\ne\n"
        );
        // Trailing spaces in the model's context lines are tolerated.
        assert_eq!(apply(src, "@@\n b  \n-c\n+C\n").unwrap(), "a\nb\nC\nd\ne\n");
    }

    #[test]
    fn what_does_not_apply_is_an_error() {
        let e = apply(SRC, "@@ -1 +1 @@\n-nothing like this\n+x\n").unwrap_err();
        assert!(
            e.starts_with("hunk 1: its old lines are not in the harness"),
            "{e}"
        );
        assert!(apply(SRC, "just prose").unwrap_err().contains("no hunk"));
        assert!(
            apply(SRC, "@@\n+x\n")
                .unwrap_err()
                .contains("without context")
        );
        assert!(
            apply(SRC, "@@\n?x\n")
                .unwrap_err()
                .contains("does not start")
        );
        // A hunk whose lines are the same on both sides is not a change.
        assert!(apply(SRC, "@@\n return a\n").is_err());
        // Hunks may not go backwards.
        let src = "a\nb\nc\n";
        assert!(apply(src, "@@\n-c\n+C\n@@\n-a\n+A\n").is_err());
    }
}
