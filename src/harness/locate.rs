//! Source locations in TOML harness files: the line of a field path
//! (`strategy.max_calls`, `examples[2].response`, `instructions[0]`), and the field
//! path at a byte offset, so every error names file, line and field.

use toml_edit::{ImDocument, Item, Value};

/// 1-based line of a byte offset.
pub fn line_of_offset(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// One step of a field path.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

fn steps(path: &str) -> Vec<Step<'_>> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (key, rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            out.push(Step::Key(key));
        }
        for idx in rest.split('[').filter(|s| !s.is_empty()) {
            if let Ok(i) = idx.trim_end_matches(']').parse() {
                out.push(Step::Index(i));
            }
        }
    }
    out
}

/// The line where the field at `path` is written (its key, or its value for array
/// elements). Falls back to the deepest enclosing field that exists.
pub fn line_of_path(text: &str, path: &str) -> Option<usize> {
    let doc = ImDocument::parse(text).ok()?;
    let mut best: Option<usize> = None;
    let mut item: &Item = doc.as_item();
    let mut value: Option<&Value> = None;
    for step in steps(path) {
        match step {
            Step::Key(k) => {
                let found = if let Some(v) = value {
                    v.as_inline_table()
                        .and_then(|t| t.get_key_value(k))
                        .map(|(key, it)| (key.span(), it))
                } else {
                    item.as_table_like()
                        .and_then(|t| t.get_key_value(k))
                        .map(|(key, it)| (key.span(), it))
                };
                let Some((span, it)) = found else {
                    return best;
                };
                if let Some(s) = span.or_else(|| it.span()) {
                    best = Some(line_of_offset(text, s.start));
                }
                item = it;
                value = item.as_value();
            }
            Step::Index(i) => {
                if let Some(aot) = item.as_array_of_tables() {
                    let Some(t) = aot.get(i) else { return best };
                    if let Some(s) = t.span() {
                        best = Some(line_of_offset(text, s.start));
                    }
                    // Continue inside the table.
                    return line_in_table(text, t, &path_after_index(path, i), best);
                }
                let Some(arr) = value.and_then(|v| v.as_array()) else {
                    return best;
                };
                let Some(v) = arr.get(i) else { return best };
                if let Some(s) = v.span() {
                    best = Some(line_of_offset(text, s.start));
                }
                value = Some(v);
            }
        }
    }
    best
}

/// The remainder of `path` after its first `[i]`.
fn path_after_index(path: &str, i: usize) -> String {
    let marker = format!("[{i}]");
    path.split_once(&marker)
        .map(|(_, rest)| rest.trim_start_matches('.').to_string())
        .unwrap_or_default()
}

fn line_in_table(
    text: &str,
    table: &toml_edit::Table,
    rest: &str,
    best: Option<usize>,
) -> Option<usize> {
    if rest.is_empty() {
        return best;
    }
    let key = rest.split(['.', '[']).next().unwrap_or("");
    match table.get_key_value(key) {
        Some((k, it)) => k
            .span()
            .or_else(|| it.span())
            .map(|s| line_of_offset(text, s.start))
            .or(best),
        None => best,
    }
}

/// The field path whose key or value covers byte `offset` (the deepest one).
pub fn path_at_offset(text: &str, offset: usize) -> Option<String> {
    let doc = ImDocument::parse(text).ok()?;
    let mut path = String::new();
    walk_table(doc.as_table(), offset, &mut path).then_some(path)
}

fn covers(span: Option<std::ops::Range<usize>>, offset: usize) -> bool {
    span.is_some_and(|s| s.start <= offset && offset < s.end.max(s.start + 1))
}

fn join(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

fn walk_table(t: &dyn toml_edit::TableLike, offset: usize, path: &mut String) -> bool {
    for (k, item) in t.iter() {
        let key_span = t.key(k).and_then(|key| key.span());
        let base = path.clone();
        if covers(key_span, offset) {
            join(path, k);
            return true;
        }
        match item {
            Item::Table(sub) => {
                join(path, k);
                if walk_table(sub, offset, path) || covers(sub.span(), offset) {
                    return true;
                }
            }
            Item::ArrayOfTables(aot) => {
                for (i, sub) in aot.iter().enumerate() {
                    *path = base.clone();
                    join(path, &format!("{k}[{i}]"));
                    if walk_table(sub, offset, path) || covers(sub.span(), offset) {
                        return true;
                    }
                }
            }
            Item::Value(v) => {
                join(path, k);
                if walk_value(v, offset, path) {
                    return true;
                }
            }
            Item::None => {}
        }
        *path = base;
    }
    false
}

fn walk_value(v: &Value, offset: usize, path: &mut String) -> bool {
    match v {
        Value::Array(arr) => {
            for (i, x) in arr.iter().enumerate() {
                let base = path.clone();
                path.push_str(&format!("[{i}]"));
                if walk_value(x, offset, path) {
                    return true;
                }
                *path = base;
            }
            covers(v.span(), offset)
        }
        Value::InlineTable(t) => {
            let base = path.clone();
            if walk_table(t, offset, path) {
                return true;
            }
            *path = base;
            covers(v.span(), offset)
        }
        _ => covers(v.span(), offset),
    }
}

/// Where a `toml` deserialisation error is: (line, field path, message). An unknown
/// key is named itself (serde points at its table).
pub fn toml_error(text: &str, e: &toml::de::Error) -> (Option<usize>, Option<String>, String) {
    let offset = e.span().map(|s| s.start);
    let message = e.message().trim().to_string();
    let mut line = offset.map(|o| line_of_offset(text, o));
    let mut field = offset.and_then(|o| path_at_offset(text, o));
    if let Some(key) = message
        .strip_prefix("unknown field `")
        .and_then(|r| r.split('`').next())
    {
        let path = match &field {
            Some(t) if !t.ends_with(key) => format!("{t}.{key}"),
            Some(t) => t.clone(),
            None => key.to_string(),
        };
        if let Some(l) = line_of_path(text, &path) {
            line = Some(l);
            field = Some(path);
        }
    }
    (line, field, with_did_you_mean(message))
}

/// serde's "unknown field `x`, expected one of `a`, `b`" (or "unknown variant"), with
/// ` (did you mean `a`?)` when one of the expected names is close to `x`.
fn with_did_you_mean(message: String) -> String {
    let Some(rest) = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("unknown variant `"))
    else {
        return message;
    };
    let Some((word, expected)) = rest.split_once('`') else {
        return message;
    };
    let names = expected.split('`').skip(1).step_by(2);
    let hint = crate::suggest::did_you_mean(word, names);
    format!("{message}{hint}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"name = "x"
instructions = [
  "a",
  "b",
]

[strategy]
kind = "python-tool"
max_calls = 0

[[examples]]
question = "q1"
response = "r1"

[[examples]]
question = "q2"
response = "r2"
"#;

    #[test]
    fn lines_of_paths() {
        assert_eq!(line_of_path(DOC, "name"), Some(1));
        assert_eq!(line_of_path(DOC, "instructions[1]"), Some(4));
        assert_eq!(line_of_path(DOC, "strategy.max_calls"), Some(9));
        assert_eq!(line_of_path(DOC, "examples[1].response"), Some(17));
        assert_eq!(line_of_path(DOC, "examples[1]"), Some(15));
        // A missing leaf falls back to its parent.
        assert_eq!(line_of_path(DOC, "strategy.nope"), Some(7));
        assert_eq!(line_of_path(DOC, "nope"), None);
    }

    #[test]
    fn paths_at_offsets() {
        let at = |needle: &str| path_at_offset(DOC, DOC.find(needle).unwrap());
        assert_eq!(at("max_calls").as_deref(), Some("strategy.max_calls"));
        assert_eq!(at("\"b\"").as_deref(), Some("instructions[1]"));
        assert_eq!(at("r2").as_deref(), Some("examples[1].response"));
    }

    /// An unknown field close to an expected one gets a "did you mean".
    #[test]
    fn unknown_fields_get_a_did_you_mean() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct S {
            name: String,
            task: Vec<u32>,
        }
        let text = "name = \"x\"\ntasks = [1]\n";
        let e = toml::from_str::<S>(text).unwrap_err();
        let (line, _, message) = toml_error(text, &e);
        assert_eq!(line, Some(2));
        assert!(message.ends_with("(did you mean `task`?)"), "{message}");
        let text = "name = \"x\"\nbanana = [1]\n";
        let e = toml::from_str::<S>(text).unwrap_err();
        assert!(!toml_error(text, &e).2.contains("did you mean"));
    }
}
