//! Question templates: the declarative re-wordings and re-layouts of a family's task
//! that make its question variants 1.. (variant 0 is the canonical question the
//! generator composes).
//!
//! A family lists its templates as data (`Family::templates`): each is a [`Template`],
//! a [`Wording`] of the answer instruction plus body paragraphs ([`Piece::Text`] prose,
//! [`Piece::Data`] verbatim blocks) written in a small template language. The instance
//! stream renders the chosen template from what the generator already produced — the
//! instance's metadata (the structured input, with `params`) and the canonical body's
//! parts — so a template can change the wording, the order of the parts and the way
//! data is shown (inline, as a list, as a table), but never the task or the gold answer,
//! and rendering draws nothing from the instance's RNG.
//!
//! # The template language
//!
//! Text is copied as it is, except for tags in braces (`{{` and `}}` are literal
//! braces):
//!
//! - `{path}` or `{path|format}`: a value. A path starts at a metadata key (`numbers`,
//!   `query.name`, `params.rows`), at a canonical body part (`@0`, `@1`, ...) or at the
//!   current section item (`.`, `.0`, `.name`), and continues with `.`-separated steps:
//!   a key, an index (`0`, `-1` counts from the end), a slice `a:b` (either end may be
//!   left out or negative), or on a string `lines`, `sentences` (split after `. `),
//!   `words` or `chars` (each makes a list).
//! - `{#path}...{/}` repeats its inside for every element of a list (the element is the
//!   current item; `{#path|SEP}` puts SEP between repetitions); for any other value
//!   that is present and not empty it renders once with the value as the item.
//!   `{^path}...{/}` renders once when the value is missing, `null`, `false`, `0` or
//!   empty. `{#path=text}...{/}` renders once when the value is the scalar `text`
//!   (for families with several kinds of task), `{^path=text}...{/}` when it is not.
//!
//! Formats of a scalar: none (numbers as JSON writes them, strings as they are),
//! `quoted` (`"text"`), `upper`, `lower`. Of a list of scalars: none or `comma`
//! (`a, b, c`), `and` (`a, b and c`), `or`, `space`, `semicolon`, `lines` (one per
//! line), `bullets` (`- a`), `numbered` (`1. a`), `json` (`[1, 2, 3]`, strings
//! quoted), `len`. Of a grid (a list of lists, or a list of strings whose characters
//! are the cells): `grid` (cells separated by spaces, one row per line), `compact`
//! (cells run together), `csv` (cells separated by commas), `json` (`[[0, 1], [1,
//! 0]]`), `table` (a Markdown table with 1-based row and column numbers), `labeled`
//! (`row 1: 0 1`), `len` (rows), `cols` (cells of the first row).
//!
//! A paragraph that renders to nothing but whitespace is left out, so a whole paragraph
//! can be optional. A template that does not fit its instance (a missing key, a
//! format that does not apply) is a [`TemplateError`]; the registry-wide tests render
//! every template of every family at every level for many seeds, so a shipped template
//! never fails.

use std::borrow::Cow;
use std::fmt::Write;

use serde_json::{Map, Value};

use super::question::{Body, Part, Wording};

/// One paragraph of a template (rendered into a [`Part`] of the same kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// Prose.
    Text(&'static str),
    /// A block shown verbatim (a grid, a list).
    Data(&'static str),
}

/// One question template: the instruction's wording and the body's paragraphs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template {
    pub wording: Wording,
    pub body: &'static [Piece],
}

impl Template {
    pub const fn new(wording: Wording, body: &'static [Piece]) -> Self {
        Template { wording, body }
    }
}

/// A template that does not fit the instance it was rendered for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("template paragraph {paragraph}, at `{near}`: {message}")]
pub struct TemplateError {
    /// 0-based paragraph of the template.
    pub paragraph: usize,
    /// The template text from where the problem was found (at most 40 bytes).
    pub near: String,
    pub message: String,
}

impl crate::error::Classify for TemplateError {
    fn kind(&self) -> crate::error::ErrorKind {
        // A shipped template that does not render is a bug, not the caller's input.
        crate::error::ErrorKind::Runtime
    }
}

/// Render `template`'s body from an instance's metadata fields and its canonical body.
pub fn render(
    template: &Template,
    metadata: &Map<String, Value>,
    canonical: &Body,
) -> Result<Body, TemplateError> {
    let cx = Cx {
        meta: metadata,
        parts: canonical.parts(),
    };
    let mut body = Body::new();
    for (paragraph, piece) in template.body.iter().enumerate() {
        let (src, data) = match *piece {
            Piece::Text(s) => (s, false),
            Piece::Data(s) => (s, true),
        };
        let mut out = String::with_capacity(src.len() * 2);
        cx.render(src, None, &mut out)
            .map_err(|(at, message)| TemplateError {
                paragraph,
                near: near(src, at),
                message,
            })?;
        if out.trim().is_empty() {
            continue;
        }
        body = if data { body.data(out) } else { body.text(out) };
    }
    Ok(body)
}

/// At most 40 bytes of `src` from byte `at` (on a character boundary).
fn near(src: &str, at: usize) -> String {
    let mut start = at.min(src.len());
    while !src.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (start + 40).min(src.len());
    while !src.is_char_boundary(end) {
        end -= 1;
    }
    src[start..end].to_string()
}

/// An error inside one paragraph: the byte offset in the paragraph's source, a message.
type Fail = (usize, String);

struct Cx<'a> {
    meta: &'a Map<String, Value>,
    parts: &'a [Part],
}

impl Cx<'_> {
    /// Render `src` with the current section item `item`.
    fn render(&self, src: &str, item: Option<&Value>, out: &mut String) -> Result<(), Fail> {
        self.render_at(src, 0, item, out)
    }

    /// Render `src`, a slice of the paragraph starting at byte `base` (for messages).
    fn render_at(
        &self,
        src: &str,
        base: usize,
        item: Option<&Value>,
        out: &mut String,
    ) -> Result<(), Fail> {
        let mut pos = 0;
        while let Some(i) = src[pos..].find(['{', '}']) {
            let at = pos + i;
            out.push_str(&src[pos..at]);
            let rest = &src[at..];
            if rest.starts_with("{{") {
                out.push('{');
                pos = at + 2;
                continue;
            }
            if rest.starts_with("}}") {
                out.push('}');
                pos = at + 2;
                continue;
            }
            if rest.starts_with('}') {
                return Err((
                    base + at,
                    "a `}` without its `{` (write `}}` for a brace)".into(),
                ));
            }
            let Some(close) = rest.find('}') else {
                return Err((base + at, "a `{` without its `}`".into()));
            };
            let tag = &rest[1..close];
            let after = at + close + 1;
            match tag.as_bytes().first() {
                Some(b'#') | Some(b'^') => {
                    let (inner_len, skip) = section_len(&src[after..])
                        .ok_or_else(|| (base + at, "a section without its `{/}`".to_string()))?;
                    let inner = &src[after..after + inner_len];
                    let inner_base = base + after;
                    let (path, sep) = match tag[1..].split_once('|') {
                        Some((p, s)) => (p, s),
                        None => (&tag[1..], ""),
                    };
                    if let Some((path, want)) = path.split_once('=') {
                        // `{#path=text}`: once when the value reads `text`; `{^path=text}`:
                        // once when it does not.
                        let value = self.lookup(path, item).map_err(|m| (base + at, m))?;
                        let equal = value
                            .as_deref()
                            .and_then(scalar)
                            .is_some_and(|v| v == want.trim());
                        if equal == tag.starts_with('#') {
                            self.render_at(inner, inner_base, item, out)?;
                        }
                        pos = after + inner_len + skip;
                        continue;
                    }
                    let value = self.lookup(path, item).map_err(|m| (base + at, m))?;
                    if tag.starts_with('^') {
                        if !truthy(value.as_deref()) {
                            self.render_at(inner, inner_base, item, out)?;
                        }
                    } else {
                        match value.as_deref() {
                            Some(Value::Array(items)) => {
                                for (k, v) in items.iter().enumerate() {
                                    if k > 0 {
                                        out.push_str(sep);
                                    }
                                    self.render_at(inner, inner_base, Some(v), out)?;
                                }
                            }
                            v if truthy(v) => {
                                self.render_at(inner, inner_base, v, out)?;
                            }
                            _ => {}
                        }
                    }
                    pos = after + inner_len + skip;
                }
                Some(b'/') => {
                    return Err((base + at, "a `{/}` without its section".into()));
                }
                _ => {
                    let (path, fmt) = tag.split_once('|').unwrap_or((tag, ""));
                    let value = self
                        .lookup(path, item)
                        .map_err(|m| (base + at, m))?
                        .ok_or_else(|| (base + at, format!("`{path}` is missing")))?;
                    format_value(&value, fmt, out).map_err(|m| (base + at, m))?;
                    pos = after;
                }
            }
        }
        out.push_str(&src[pos..]);
        Ok(())
    }

    /// The value at `path`; `Ok(None)` when a key or index is absent.
    fn lookup<'v>(
        &'v self,
        path: &str,
        item: Option<&'v Value>,
    ) -> Result<Option<Cow<'v, Value>>, String> {
        let path = path.trim();
        let (mut cur, steps): (Cow<'v, Value>, &str) = if let Some(rest) = path.strip_prefix('.') {
            let Some(item) = item else {
                return Err(format!("`{path}` outside a section"));
            };
            (Cow::Borrowed(item), rest)
        } else if let Some(rest) = path.strip_prefix('@') {
            let (n, steps) = rest.split_once('.').unwrap_or((rest, ""));
            let n: usize = n
                .parse()
                .map_err(|_| format!("`@{n}` is not a body part number"))?;
            match self.parts.get(n) {
                Some(p) => (Cow::Owned(Value::String(p.as_str().to_string())), steps),
                None => return Ok(None),
            }
        } else {
            let (key, steps) = path.split_once('.').unwrap_or((path, ""));
            if key.is_empty() {
                return Err("an empty path".into());
            }
            match self.meta.get(key) {
                Some(v) => (Cow::Borrowed(v), steps),
                None => return Ok(None),
            }
        };
        if steps.is_empty() {
            return Ok(Some(cur));
        }
        for step in steps.split('.') {
            let next = match cur {
                Cow::Borrowed(v) => take(v, step)?,
                Cow::Owned(v) => take(&v, step)?.map(|c| Cow::Owned(c.into_owned())),
            };
            match next {
                Some(v) => cur = v,
                None => return Ok(None),
            }
        }
        Ok(Some(cur))
    }
}

/// One step of a path from `v` (see the module docs); `Ok(None)` when absent.
fn take<'v>(v: &'v Value, step: &str) -> Result<Option<Cow<'v, Value>>, String> {
    let owned = |v: Value| Ok(Some(Cow::Owned(v)));
    match v {
        Value::Object(o) => Ok(o.get(step).map(Cow::Borrowed)),
        Value::Null => Ok(None),
        Value::String(s) => match step {
            "lines" => owned(strings(s.split('\n'))),
            "words" => owned(strings(s.split_whitespace())),
            "sentences" => owned(strings(sentences(s))),
            "chars" => owned(Value::Array(
                s.chars().map(|c| Value::String(c.to_string())).collect(),
            )),
            _ => Err(format!("cannot take `{step}` of a string")),
        },
        Value::Array(a) => {
            let len = a.len() as i64;
            let index = |t: &str, default: i64| -> Result<i64, String> {
                if t.is_empty() {
                    return Ok(default);
                }
                let i: i64 = t
                    .parse()
                    .map_err(|_| format!("`{step}` is not an index of a list"))?;
                Ok(if i < 0 { len + i } else { i })
            };
            if let Some((from, to)) = step.split_once(':') {
                let from = index(from, 0)?.clamp(0, len) as usize;
                let to = index(to, len)?.clamp(0, len) as usize;
                owned(Value::Array(if from < to {
                    a[from..to].to_vec()
                } else {
                    Vec::new()
                }))
            } else {
                let i = index(step, 0)?;
                Ok(usize::try_from(i)
                    .ok()
                    .and_then(|i| a.get(i))
                    .map(Cow::Borrowed))
            }
        }
        other => Err(format!("cannot take `{step}` of {}", kind(other))),
    }
}

/// The length of a section's inside in `src` (which starts right after its opening
/// tag) and the length of the closing `{/}`; nested sections are skipped.
fn section_len(src: &str) -> Option<(usize, usize)> {
    let mut depth = 0usize;
    let mut pos = 0;
    while let Some(i) = src[pos..].find('{') {
        let at = pos + i;
        let rest = &src[at..];
        if rest.starts_with("{{") {
            pos = at + 2;
            continue;
        }
        if rest.starts_with("{/}") {
            if depth == 0 {
                return Some((at, 3));
            }
            depth -= 1;
            pos = at + 3;
            continue;
        }
        if rest.starts_with("{#") || rest.starts_with("{^") {
            depth += 1;
        }
        pos = at + 1;
    }
    None
}

fn strings<'a>(it: impl Iterator<Item = &'a str>) -> Value {
    Value::Array(it.map(|s| Value::String(s.to_string())).collect())
}

/// Sentences of a text: split after every `. ` (and at line breaks), each keeping its
/// final full stop; empty pieces are dropped.
fn sentences(s: &str) -> impl Iterator<Item = &str> {
    s.split('\n')
        .flat_map(|line| line.split_inclusive(". "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::Bool(true)) => true,
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A scalar as text (`None` for a list, an object or null).
fn scalar(v: &Value) -> Option<Cow<'_, str>> {
    match v {
        Value::String(s) => Some(Cow::Borrowed(s)),
        Value::Number(n) => Some(Cow::Owned(n.to_string())),
        Value::Bool(b) => Some(Cow::Borrowed(if *b { "true" } else { "false" })),
        _ => None,
    }
}

/// A JSON rendering with `, ` between items (strings quoted and escaped).
fn json(v: &Value, out: &mut String) {
    match v {
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                json(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The cells of one grid row: a list's scalars or a string's characters.
fn row_cells(row: &Value) -> Option<Vec<Cow<'_, str>>> {
    match row {
        Value::Array(a) => a.iter().map(scalar).collect(),
        Value::String(s) => Some(
            s.char_indices()
                .map(|(i, c)| Cow::Borrowed(&s[i..i + c.len_utf8()]))
                .collect(),
        ),
        _ => None,
    }
}

fn format_value(v: &Value, fmt: &str, out: &mut String) -> Result<(), String> {
    let fmt = fmt.trim();
    if let Some(s) = scalar(v) {
        match fmt {
            "" => out.push_str(&s),
            "quoted" => {
                out.push('"');
                out.push_str(&s);
                out.push('"');
            }
            "upper" => out.push_str(&s.to_uppercase()),
            "lower" => out.push_str(&s.to_lowercase()),
            "json" => json(v, out),
            _ => return Err(format!("format `{fmt}` does not apply to {}", kind(v))),
        }
        return Ok(());
    }
    let Value::Array(items) = v else {
        return Err(format!("{} cannot be written as text", kind(v)));
    };
    match fmt {
        "len" => {
            let _ = write!(out, "{}", items.len());
            return Ok(());
        }
        "json" => {
            json(v, out);
            return Ok(());
        }
        _ => {}
    }
    if let Some(sep) = list_separator(fmt) {
        let cells: Vec<Cow<'_, str>> = items
            .iter()
            .map(scalar)
            .collect::<Option<_>>()
            .ok_or_else(|| format!("format `{fmt}` needs a list of plain values"))?;
        join_list(&cells, fmt, sep, out);
        return Ok(());
    }
    if !matches!(
        fmt,
        "grid" | "compact" | "csv" | "cols" | "labeled" | "table"
    ) {
        return Err(format!("unknown format `{fmt}`"));
    }
    let rows: Vec<Vec<Cow<'_, str>>> = items
        .iter()
        .map(row_cells)
        .collect::<Option<_>>()
        .ok_or_else(|| format!("format `{fmt}` needs a grid (a list of lists or strings)"))?;
    match fmt {
        "grid" => grid(&rows, " ", out),
        "compact" => grid(&rows, "", out),
        "csv" => grid(&rows, ",", out),
        "cols" => {
            let _ = write!(out, "{}", rows.first().map_or(0, Vec::len));
        }
        "labeled" => {
            for (r, row) in rows.iter().enumerate() {
                if r > 0 {
                    out.push('\n');
                }
                let _ = write!(out, "row {}: ", r + 1);
                let sep = if matches!(items[r], Value::String(_)) {
                    ""
                } else {
                    " "
                };
                out.push_str(&row.join(sep));
            }
        }
        "table" => {
            let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
            out.push_str("| row |");
            for c in 1..=cols {
                let _ = write!(out, " {c} |");
            }
            out.push_str("\n| --- |");
            for _ in 0..cols {
                out.push_str(" --- |");
            }
            for (r, row) in rows.iter().enumerate() {
                let _ = write!(out, "\n| {} |", r + 1);
                for cell in row {
                    out.push(' ');
                    out.push_str(&cell.replace('|', "\\|"));
                    out.push_str(" |");
                }
            }
        }
        _ => unreachable!("checked above"),
    }
    Ok(())
}

/// The separator of a list format (`None` for grid formats and unknown names).
fn list_separator(fmt: &str) -> Option<&'static str> {
    Some(match fmt {
        "" | "comma" => ", ",
        "and" | "or" => ", ",
        "space" => " ",
        "semicolon" => "; ",
        "lines" | "bullets" | "numbered" => "\n",
        _ => return None,
    })
}

fn join_list(cells: &[Cow<'_, str>], fmt: &str, sep: &str, out: &mut String) {
    let n = cells.len();
    for (i, c) in cells.iter().enumerate() {
        if i > 0 {
            match fmt {
                "and" if i + 1 == n => out.push_str(" and "),
                "or" if i + 1 == n => out.push_str(" or "),
                _ => out.push_str(sep),
            }
        }
        match fmt {
            "bullets" => out.push_str("- "),
            "numbered" => {
                let _ = write!(out, "{}. ", i + 1);
            }
            _ => {}
        }
        out.push_str(c);
    }
}

fn grid(rows: &[Vec<Cow<'_, str>>], sep: &str, out: &mut String) {
    for (r, row) in rows.iter().enumerate() {
        if r > 0 {
            out.push('\n');
        }
        out.push_str(&row.join(sep));
    }
}

#[cfg(test)]
mod tests {
    use super::Piece::{Data, Text};
    use super::*;
    use serde_json::json;

    fn meta() -> Map<String, Value> {
        match json!({
            "numbers": [12, 18, 24],
            "words": ["ant", "bee"],
            "grid": [[0, 1], [1, 0]],
            "rows": ["#.", ".S"],
            "name": "Ada",
            "modulus": null,
            "zero": 0,
            "empty": [],
            "pairs": [[2, 0], [1, 2]],
            "query": {"a": "Jo", "b": "Al"},
            "params": {"rows": 2},
            "bar": ["|x"]
        }) {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    fn canonical() -> Body {
        Body::new()
            .text("Intro line.\nStatement one.\nStatement two.\nQuestion?")
            .data("A is B. C is D. E.")
    }

    fn one(src: &'static str) -> Result<String, TemplateError> {
        let t = Template {
            wording: Wording::Put,
            body: Box::leak(Box::new([Text(src)])),
        };
        render(&t, &meta(), &canonical()).map(|b| b.render())
    }

    #[test]
    fn values_and_list_formats() {
        let cases = [
            ("{name} {name|quoted} {name|upper}", "Ada \"Ada\" ADA"),
            ("{numbers}", "12, 18, 24"),
            ("{numbers|and}", "12, 18 and 24"),
            ("{words|or}", "ant or bee"),
            ("{numbers|space}|{numbers|semicolon}", "12 18 24|12; 18; 24"),
            ("{numbers|lines}", "12\n18\n24"),
            ("{numbers|bullets}", "- 12\n- 18\n- 24"),
            ("{words|numbered}", "1. ant\n2. bee"),
            ("{words|json} {numbers|len}", "[\"ant\", \"bee\"] 3"),
            ("{query.a} to {query.b}; {params.rows}", "Jo to Al; 2"),
            (
                "{numbers.0}..{numbers.-1} {numbers.1:|and}",
                "12..24 18 and 24",
            ),
            ("{{literal}} {numbers.:-1}", "{literal} 12, 18"),
        ];
        for (src, want) in cases {
            assert_eq!(one(src).unwrap(), want, "{src}");
        }
    }

    #[test]
    fn grid_formats() {
        let cases = [
            ("{grid|grid}", "0 1\n1 0"),
            ("{grid|compact}", "01\n10"),
            ("{grid|csv}", "0,1\n1,0"),
            ("{grid|json}", "[[0, 1], [1, 0]]"),
            ("{grid|len}x{grid|cols}", "2x2"),
            ("{rows|grid}", "# .\n. S"),
            ("{rows|lines}", "#.\n.S"),
            ("{rows|labeled}", "row 1: #.\nrow 2: .S"),
            ("{grid|labeled}", "row 1: 0 1\nrow 2: 1 0"),
            (
                "{grid|table}",
                "| row | 1 | 2 |\n| --- | --- | --- |\n| 1 | 0 | 1 |\n| 2 | 1 | 0 |",
            ),
            (
                "{bar|table}",
                "| row | 1 | 2 |\n| --- | --- | --- |\n| 1 | \\| | x |",
            ),
        ];
        for (src, want) in cases {
            assert_eq!(one(src).unwrap(), want, "{src}");
        }
    }

    #[test]
    fn sections_and_canonical_parts() {
        let cases = [
            (
                "{#pairs|\n}course {.0} after {.1}{/}",
                "course 2 after 0\ncourse 1 after 2",
            ),
            ("{#modulus} mod {.}{/}!", "!"),
            ("{^modulus}exact{/}", "exact"),
            ("{^empty}none{/}{#empty}x{/}", "none"),
            (
                "{^zero}no{/}{#zero}yes{/}{#params.rows}{.} rows{/}",
                "no2 rows",
            ),
            (
                "{#name=Ada}A{/}{#name=Bo}B{/}{^name=Bo}!B{/}{#params.rows=2}2{/}",
                "A!B2",
            ),
            (
                "{#missing=x}no{/}{^missing=x}absent{/}{#grid=x}no{/}",
                "absent",
            ),
            ("{#name}hi {.}{/}", "hi Ada"),
            ("{#query}{.a}+{.b}{/}", "Jo+Al"),
            (
                "{@0.lines.1:-1|bullets}",
                "- Statement one.\n- Statement two.",
            ),
            ("{@0.lines.-1}", "Question?"),
            ("{@1.sentences|numbered}", "1. A is B.\n2. C is D.\n3. E."),
            (
                "{#numbers|, }{#words|+}{.}{/}{/}",
                "ant+bee, ant+bee, ant+bee",
            ),
            ("{@1.words.0}{#missing}never{/}", "A"),
        ];
        for (src, want) in cases {
            assert_eq!(one(src).unwrap(), want, "{src}");
        }
    }

    #[test]
    fn an_empty_paragraph_is_left_out_and_kinds_are_kept() {
        let t = Template::new(
            Wording::Lead,
            &[
                Text("Head {name}."),
                Text("{#empty}x{/}"),
                Data("{grid|grid}"),
            ],
        );
        let b = render(&t, &meta(), &canonical()).unwrap();
        assert_eq!(
            b.parts(),
            &[
                Part::Text("Head Ada.".into()),
                Part::Data("0 1\n1 0".into())
            ]
        );
    }

    #[test]
    fn templates_that_do_not_fit_are_errors_that_say_where() {
        for (src, needle) in [
            ("{nope}", "`nope` is missing"),
            ("{grid}", "needs a list of plain values"),
            ("{numbers|table}", "needs a grid"),
            ("{name|and}", "does not apply"),
            ("{numbers|sideways}", "unknown format"),
            ("{query}", "cannot be written"),
            ("{modulus}", "cannot be written"),
            ("{.}", "outside a section"),
            ("{#numbers}x", "without its `{/}`"),
            ("x{/}", "without its section"),
            ("a } b", "without its `{`"),
            ("{name", "without its `}`"),
            ("{numbers.x}", "not an index"),
            ("{name.0}", "cannot take"),
            ("{@x}", "not a body part number"),
            ("{@9}", "`@9` is missing"),
        ] {
            let e = one(src).unwrap_err();
            assert!(e.message.contains(needle), "{src}: {e}");
            assert_eq!(e.paragraph, 0);
        }
        let e = one("ok {nope} tail").unwrap_err();
        assert_eq!(e.near, "{nope} tail");
    }
}
