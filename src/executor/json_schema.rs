//! A JSON schema → GBNF grammar translator for the subset of JSON Schema that
//! constrained decoding needs here: the in-process llama.cpp backend decodes a
//! request's `json_schema` ([`super::Sampling::json_schema`]) under the grammar this
//! writes, and `hrl serve` accepts the same schemas in OpenAI's `response_format`
//! (`{"type": "json_schema", "json_schema": {"schema": ...}}`). A schema outside the
//! subset is refused with the path and keyword named, never half-honoured.
//!
//! The subset (every keyword not listed is an error, except the annotations `title`,
//! `description` and `$schema`, which are ignored):
//!
//! | schema | text the grammar allows |
//! | --- | --- |
//! | `{"const": V}`, `{"enum": [V, ...]}` | V written as compact JSON |
//! | `{"anyOf": [S, ...]}` (or `oneOf`) | any alternative |
//! | `{"type": "object", "properties": {...}, "required": [every property], "additionalProperties": false}` | `{"k":v,...}`, the properties in the schema's order, no whitespace |
//! | `{"type": "array", "items": S, "minItems": A, "maxItems": B}` | `[s,s,...]`, A..=B items (no `maxItems`: unbounded) |
//! | `{"type": "string", "minLength": A, "maxLength": B, "pattern": P}` | a JSON string without escapes or control characters, A..=B characters |
//! | `{"type": "boolean"}` | `true` or `false` |
//!
//! A `pattern` must be a sequence of negated character classes, the last optionally
//! starred, anchored at both ends: `^[^{}]*$` or `^[^ {}][^{}]*$` (a first character,
//! then the rest). Every object property must be required, as OpenAI's strict mode
//! demands. The grammar is a strict sublanguage of the schema's (no whitespace between
//! tokens, no string escapes), so whatever it produces validates against the schema.

use serde_json::{Map, Value};

/// The GBNF grammar (root rule `root`) of `schema`, or why the schema is outside the
/// supported subset (the error names the JSON pointer of the offending part).
pub fn to_gbnf(schema: &Value) -> Result<String, String> {
    let mut g = Gbnf::default();
    let root = g.node(schema, "")?;
    let mut out = format!("root ::= {root}\n");
    for (i, body) in g.rules.iter().enumerate() {
        out.push_str(&format!("r{i} ::= {body}\n"));
    }
    Ok(out)
}

#[derive(Default)]
struct Gbnf {
    rules: Vec<String>,
}

/// `s` as a GBNF string literal.
pub fn literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A negated GBNF character class: not `"`, `\`, a control character, nor `extra`.
fn class(extra: &[char]) -> String {
    let mut out = String::from("[^\"\\\\\\x00-\\x1F");
    for c in extra {
        match c {
            '"' | '\\' => {}
            ']' | '^' | '-' | '[' => {
                out.push('\\');
                out.push(*c);
            }
            c if (*c as u32) < 0x20 => {}
            c => out.push(*c),
        }
    }
    out.push(']');
    out
}

/// The pieces of a supported `pattern`: negated classes (their excluded characters),
/// and whether the last one repeats.
fn pattern_pieces(p: &str) -> Option<(Vec<Vec<char>>, bool)> {
    let inner = p.strip_prefix('^')?.strip_suffix('$')?;
    let mut chars = inner.chars().peekable();
    let mut pieces = Vec::new();
    let mut starred = false;
    while let Some(c) = chars.next() {
        if starred || c != '[' || chars.next()? != '^' {
            return None;
        }
        let mut set = Vec::new();
        loop {
            match chars.next()? {
                ']' => break,
                '\\' => set.push(chars.next()?),
                c => set.push(c),
            }
        }
        pieces.push(set);
        if chars.peek() == Some(&'*') {
            chars.next();
            starred = true;
        }
    }
    (!pieces.is_empty()).then_some((pieces, starred))
}

fn repeat(item: &str, min: u64, max: Option<u64>) -> String {
    match (min, max) {
        (_, Some(0)) => "\"\"".to_string(),
        (0, None) => format!("{item}*"),
        (1, None) => format!("{item}+"),
        (a, None) => format!("{item}{{{a},}}"),
        (a, Some(b)) if a == b && a == 1 => item.to_string(),
        (a, Some(b)) if a == b => format!("{item}{{{a}}}"),
        (0, Some(1)) => format!("{item}?"),
        (a, Some(b)) => format!("{item}{{{a},{b}}}"),
    }
}

impl Gbnf {
    fn rule(&mut self, body: String) -> String {
        self.rules.push(body);
        format!("r{}", self.rules.len() - 1)
    }

    fn node(&mut self, s: &Value, at: &str) -> Result<String, String> {
        let o = s
            .as_object()
            .ok_or_else(|| format!("{}: a schema must be an object", pointer(at)))?;
        let bad = |k: &str, m: &str| Err(format!("{}/{k}: {m}", pointer(at)));
        let known = [
            "type",
            "const",
            "enum",
            "anyOf",
            "oneOf",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "minItems",
            "maxItems",
            "minLength",
            "maxLength",
            "pattern",
            "title",
            "description",
            "$schema",
        ];
        if let Some(k) = o.keys().find(|k| !known.contains(&k.as_str())) {
            return bad(
                k,
                "keyword not supported for constrained decoding (supported: const, enum, anyOf, oneOf, object, array, string, boolean)",
            );
        }
        if let Some(v) = o.get("const") {
            return Ok(literal(&v.to_string()));
        }
        if let Some(v) = o.get("enum") {
            let vs = v.as_array().filter(|a| !a.is_empty());
            let Some(vs) = vs else {
                return bad("enum", "must be a non-empty array");
            };
            let alts: Vec<String> = vs.iter().map(|v| literal(&v.to_string())).collect();
            return Ok(self.rule(alts.join(" | ")));
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(v) = o.get(key) {
                let Some(vs) = v.as_array().filter(|a| !a.is_empty()) else {
                    return bad(key, "must be a non-empty array");
                };
                let mut alts = Vec::with_capacity(vs.len());
                for (i, v) in vs.iter().enumerate() {
                    alts.push(self.node(v, &format!("{at}/{key}/{i}"))?);
                }
                return Ok(self.rule(alts.join(" | ")));
            }
        }
        match o.get("type").and_then(Value::as_str) {
            Some("object") => self.object(o, at),
            Some("array") => {
                let Some(items) = o.get("items") else {
                    return bad("items", "an array schema needs `items`");
                };
                let item = self.node(items, &format!("{at}/items"))?;
                let min = uint(o, "minItems", at)?.unwrap_or(0);
                let max = uint(o, "maxItems", at)?;
                if max.is_some_and(|m| m < min) {
                    return bad("maxItems", "is below minItems");
                }
                let body = match (min, max) {
                    (_, Some(0)) => "\"[]\"".to_string(),
                    (0, max) => {
                        let rest = repeat(&format!("(\",\" {item})"), 0, max.map(|m| m - 1));
                        format!("\"[\" ({item} {rest})? \"]\"")
                    }
                    (min, max) => {
                        let rest = repeat(&format!("(\",\" {item})"), min - 1, max.map(|m| m - 1));
                        format!("\"[\" {item} {rest} \"]\"")
                    }
                };
                Ok(self.rule(body))
            }
            Some("string") => {
                let min = uint(o, "minLength", at)?.unwrap_or(0);
                let max = uint(o, "maxLength", at)?;
                if max.is_some_and(|m| m < min) {
                    return bad("maxLength", "is below minLength");
                }
                let (pieces, starred) = match o.get("pattern") {
                    None => (vec![Vec::new()], true),
                    Some(p) => match p.as_str().and_then(pattern_pieces) {
                        Some(x) => x,
                        None => {
                            return bad(
                                "pattern",
                                "only anchored negated classes are supported, e.g. ^[^{}]*$ or ^[^ {}][^{}]*$",
                            );
                        }
                    },
                };
                let fixed = (pieces.len() - usize::from(starred)) as u64;
                let mut parts = vec!["\"\\\"\"".to_string()];
                for p in &pieces[..fixed as usize] {
                    parts.push(class(p));
                }
                if starred {
                    let last = class(pieces.last().expect("non-empty"));
                    let lo = min.saturating_sub(fixed);
                    let hi = max.map(|m| m.checked_sub(fixed)).map(|m| {
                        m.ok_or_else(|| {
                            format!(
                                "{}/maxLength: below the pattern's {fixed} fixed characters",
                                pointer(at)
                            )
                        })
                    });
                    let hi = hi.transpose()?;
                    parts.push(repeat(&last, lo, hi));
                } else if min > fixed || max.is_some_and(|m| m < fixed) {
                    return bad(
                        "pattern",
                        "its fixed length contradicts minLength/maxLength",
                    );
                }
                parts.push("\"\\\"\"".to_string());
                Ok(self.rule(parts.join(" ")))
            }
            Some("boolean") => Ok(self.rule("\"true\" | \"false\"".into())),
            Some(t) => bad(
                "type",
                &format!("`{t}` is not supported (use const or enum)"),
            ),
            None => bad("type", "missing (and no const, enum, anyOf or oneOf)"),
        }
    }

    fn object(&mut self, o: &Map<String, Value>, at: &str) -> Result<String, String> {
        let bad = |k: &str, m: &str| Err(format!("{}/{k}: {m}", pointer(at)));
        if o.get("additionalProperties")
            .is_some_and(|v| v != &Value::Bool(false))
        {
            return bad("additionalProperties", "must be false (or absent)");
        }
        let empty = Map::new();
        let props = match o.get("properties") {
            None => &empty,
            Some(Value::Object(p)) => p,
            Some(_) => return bad("properties", "must be an object"),
        };
        let required: Vec<&str> = match o.get("required") {
            None => Vec::new(),
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
            Some(_) => return bad("required", "must be an array of names"),
        };
        if let Some(k) = props.keys().find(|k| !required.contains(&k.as_str())) {
            return bad(
                "required",
                &format!("property `{k}` is optional: every property must be required"),
            );
        }
        let mut parts = vec!["\"{\"".to_string()];
        for (i, (k, v)) in props.iter().enumerate() {
            let value = self.node(v, &format!("{at}/properties/{k}"))?;
            let key = format!(
                "{}{}:",
                if i > 0 { "," } else { "" },
                Value::from(k.as_str())
            );
            parts.push(literal(&key));
            parts.push(value);
        }
        parts.push("\"}\"".to_string());
        Ok(self.rule(parts.join(" ")))
    }
}

fn uint(o: &Map<String, Value>, k: &str, at: &str) -> Result<Option<u64>, String> {
    match o.get(k) {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("{}/{k}: must be a non-negative integer", pointer(at))),
    }
}

fn pointer(at: &str) -> String {
    if at.is_empty() {
        "schema".into()
    } else {
        format!("schema{at}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn writes_rules_for_the_subset() {
        let s = json!({"type": "array", "minItems": 1, "maxItems": 2, "items": {"anyOf": [
            {"const": {"op": "a"}},
            {"type": "object", "properties": {"op": {"enum": ["b"]}, "text": {
                "type": "string", "minLength": 1, "maxLength": 5, "pattern": "^[^ {}][^{}]*$"}},
             "required": ["op", "text"], "additionalProperties": false},
        ]}});
        let g = to_gbnf(&s).unwrap();
        assert!(g.starts_with("root ::= r"), "{g}");
        assert!(g.contains(r#""{\"op\":\"a\"}""#), "{g}");
        assert!(g.contains(r#"",\"text\":""#), "{g}");
        assert!(g.contains("{0,4}"), "{g}");
    }

    #[test]
    fn refuses_what_it_cannot_honour() {
        for (s, needle) in [
            (json!({"type": "number"}), "schema/type"),
            (json!({"type": "string", "format": "date"}), "schema/format"),
            (json!({"type": "string", "pattern": "a+"}), "schema/pattern"),
            (
                json!({"type": "object", "properties": {"a": {"const": 1}}}),
                "every property must be required",
            ),
            (
                json!({"anyOf": [{"const": 1}, {"$ref": "#/x"}]}),
                "schema/anyOf/1/$ref",
            ),
            (json!([1]), "must be an object"),
        ] {
            let e = to_gbnf(&s).unwrap_err();
            assert!(e.contains(needle), "{s}: {e}");
        }
    }

    #[test]
    fn literals_escape_quotes_and_backslashes() {
        assert_eq!(literal(r#"{"a":"\n"}"#), r#""{\"a\":\"\\n\"}""#);
    }
}
