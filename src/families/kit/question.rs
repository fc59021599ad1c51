//! How a question is put together: a [`Body`] (what the task is) and an
//! [`AnswerFormat`] (what the answer must look like), composed by [`compose`] into the
//! question text every instance carries.
//!
//! Layout, the same for every family: the body's parts are paragraphs separated by a
//! blank line; a part is [`Part::Text`] (prose, possibly several lines) or
//! [`Part::Data`] (a block shown verbatim: a grid, a list, the notes of a haystack).
//! The answer instruction follows on the next line after prose, or after a blank line
//! after a data block:
//!
//! ```text
//! Give your final answer {phrase} inside <answer></answer> tags[, for example <answer>{example}</answer>].
//! ```
//!
//! Because the body is kept in parts and the format separately, a later question
//! template variant can re-lay out the same parts (data first, fenced blocks, another
//! wording of the instruction) without touching a family's generator, and a harness can
//! state the answer rule itself ([`AnswerFormat::phrase`]) while scoring stays the
//! family's verifier.
//!
//! The example rule every family follows: an example is shown only where one can be
//! built **from what the question shows** so that it can never be right — a count above
//! the largest possible count, a grid of the wrong size, a list of the wrong length, an
//! expression over other numbers. It is never chosen by looking at the gold answer (an
//! example picked as "7 unless the answer is 7" gives the answer away to anyone who
//! sees many questions, a proposer in particular). Where no such example exists —
//! yes/no, true/false, option letters and other closed vocabularies, free words, free
//! integers — the phrase names the allowed values and no example is shown. So a
//! response that echoes the question never holds an accepted answer (a registry-wide
//! test checks every family, level and many seeds).

use std::borrow::Cow;

use serde_json::{Map, Value};

/// The words every answer instruction starts with.
pub const INSTRUCTION_LEAD: &str = "Give your final answer ";
/// What follows the phrase in an answer instruction.
pub const INSTRUCTION_TAGS: &str = " inside <answer></answer> tags";

/// One paragraph of a question body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Prose: the task, its rules, the question asked (may span several lines).
    Text(String),
    /// A block shown verbatim: a grid, a matrix, a list of facts.
    Data(String),
}

impl Part {
    pub fn as_str(&self) -> &str {
        match self {
            Part::Text(s) | Part::Data(s) => s,
        }
    }
}

/// What a question asks, as paragraphs (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Body {
    parts: Vec<Part>,
}

impl Body {
    pub fn new() -> Self {
        Body {
            parts: Vec::with_capacity(4),
        }
    }

    /// A body of one prose paragraph.
    pub fn of(text: impl Into<String>) -> Self {
        Body::new().text(text)
    }

    /// Append a prose paragraph.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.parts.push(Part::Text(text.into()));
        self
    }

    /// Append a data block.
    pub fn data(mut self, block: impl Into<String>) -> Self {
        self.parts.push(Part::Data(block.into()));
        self
    }

    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// The body as text: the parts separated by blank lines.
    pub fn render(&self) -> String {
        let mut s = String::with_capacity(self.len_hint());
        self.write_to(&mut s);
        s
    }

    fn len_hint(&self) -> usize {
        self.parts.iter().map(|p| p.as_str().len() + 2).sum()
    }

    fn write_to(&self, out: &mut String) {
        for (i, p) in self.parts.iter().enumerate() {
            if i > 0 {
                out.push_str("\n\n");
            }
            out.push_str(p.as_str());
        }
    }

    /// What separates the body from the answer instruction.
    fn gap(&self) -> &'static str {
        match self.parts.last() {
            Some(Part::Data(_)) => "\n\n",
            _ => "\n",
        }
    }
}

/// What the answer must look like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerFormat {
    phrase: Cow<'static, str>,
    example: Option<Cow<'static, str>>,
}

impl AnswerFormat {
    /// A format without an example. `phrase` completes "Give your final answer ...",
    /// e.g. `as a single integer`, `as yes or no`.
    pub fn new(phrase: impl Into<Cow<'static, str>>) -> Self {
        AnswerFormat {
            phrase: phrase.into(),
            example: None,
        }
    }

    /// A format with an example that can never be the right answer (see the module
    /// docs for the rule).
    pub fn with_example(
        phrase: impl Into<Cow<'static, str>>,
        example: impl Into<Cow<'static, str>>,
    ) -> Self {
        AnswerFormat {
            phrase: phrase.into(),
            example: Some(example.into()),
        }
    }

    /// The phrase, e.g. `as a single integer`.
    pub fn phrase(&self) -> &str {
        &self.phrase
    }

    /// The format example, if the question shows one.
    pub fn example(&self) -> Option<&str> {
        self.example.as_deref()
    }

    /// The instruction sentence the question ends with.
    pub fn instruction(&self) -> String {
        let mut s = String::with_capacity(self.instruction_len());
        self.write_instruction(&mut s);
        s
    }

    fn instruction_len(&self) -> usize {
        INSTRUCTION_LEAD.len()
            + self.phrase.len()
            + INSTRUCTION_TAGS.len()
            + self.example.as_ref().map_or(0, |e| e.len() + 40)
            + 1
    }

    fn write_instruction(&self, out: &mut String) {
        out.push_str(INSTRUCTION_LEAD);
        out.push_str(&self.phrase);
        out.push_str(INSTRUCTION_TAGS);
        if let Some(e) = &self.example {
            out.push_str(EXAMPLE_OPEN);
            out.push_str(e);
            out.push_str(EXAMPLE_CLOSE);
        }
        out.push('.');
    }

    /// The format as stored under the reserved metadata key
    /// (`kit::meta::ANSWER_FORMAT`): `{"phrase": ..., "example": ...}`, without
    /// `example` when there is none.
    pub fn to_json(&self) -> Value {
        let mut m = Map::with_capacity(2);
        m.insert("phrase".into(), Value::from(self.phrase.as_ref()));
        if let Some(e) = &self.example {
            m.insert("example".into(), Value::from(e.as_ref()));
        }
        Value::Object(m)
    }

    /// Read a stored format back; `None` unless it has a string `phrase` and at most a
    /// string `example`.
    pub fn from_json(v: &Value) -> Option<AnswerFormat> {
        let o = v.as_object()?;
        let phrase = o.get("phrase")?.as_str()?.to_string();
        let example = match o.get("example") {
            None => None,
            Some(e) => Some(Cow::Owned(e.as_str()?.to_string())),
        };
        (o.len() == 1 + usize::from(example.is_some())).then_some(AnswerFormat {
            phrase: Cow::Owned(phrase),
            example,
        })
    }
}

const EXAMPLE_OPEN: &str = ", for example <answer>";
const EXAMPLE_CLOSE: &str = "</answer>";

/// The length in bytes of the instruction for `phrase` and `example`.
pub fn instruction_len(phrase: &str, example: Option<&str>) -> usize {
    INSTRUCTION_LEAD.len()
        + phrase.len()
        + INSTRUCTION_TAGS.len()
        + example.map_or(0, |e| EXAMPLE_OPEN.len() + e.len() + EXAMPLE_CLOSE.len())
        + 1
}

/// Whether `text` is exactly the instruction for `phrase` and `example` (checked
/// without building it).
pub fn is_instruction(text: &str, phrase: &str, example: Option<&str>) -> bool {
    let rest = text
        .strip_prefix(INSTRUCTION_LEAD)
        .and_then(|r| r.strip_prefix(phrase))
        .and_then(|r| r.strip_prefix(INSTRUCTION_TAGS));
    let rest = match (rest, example) {
        (Some(r), Some(e)) => r
            .strip_prefix(EXAMPLE_OPEN)
            .and_then(|r| r.strip_prefix(e))
            .and_then(|r| r.strip_prefix(EXAMPLE_CLOSE)),
        (r, None) => r,
        (None, Some(_)) => None,
    };
    rest == Some(".")
}

/// The question text: the body, its gap, the answer instruction. Takes the body by
/// value so its first paragraph's buffer becomes the question (no copy of it).
pub fn compose(body: Body, format: &AnswerFormat) -> String {
    let gap = body.gap();
    let extra = body.len_hint() + format.instruction_len() + 2;
    let mut parts = body.parts.into_iter();
    let mut s = match parts.next() {
        Some(Part::Text(t) | Part::Data(t)) => t,
        None => String::new(),
    };
    s.reserve(extra.saturating_sub(s.len()));
    for p in parts {
        s.push_str("\n\n");
        s.push_str(p.as_str());
    }
    s.push_str(gap);
    format.write_instruction(&mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let f = AnswerFormat::new("as a single integer");
        assert_eq!(
            compose(Body::of("How many?"), &f),
            "How many?\nGive your final answer as a single integer inside <answer></answer> tags."
        );
        let g = AnswerFormat::with_example("as the grid", "0 1\n1 0");
        let body = Body::new()
            .text("Intro.")
            .data("1 1\n0 0")
            .text("Rules.\nMore.");
        assert_eq!(body.render(), "Intro.\n\n1 1\n0 0\n\nRules.\nMore.");
        assert_eq!(
            compose(body.clone(), &g),
            "Intro.\n\n1 1\n0 0\n\nRules.\nMore.\nGive your final answer as the grid inside \
             <answer></answer> tags, for example <answer>0 1\n1 0</answer>."
        );
        let data_last = Body::new().text("Sort:").data("3, 1, 2");
        assert!(compose(data_last, &f).starts_with("Sort:\n\n3, 1, 2\n\nGive your final"));
        for fmt in [&f, &g] {
            let ins = fmt.instruction();
            assert_eq!(ins.len(), instruction_len(fmt.phrase(), fmt.example()));
            assert!(is_instruction(&ins, fmt.phrase(), fmt.example()));
            assert!(!is_instruction(&ins, "as the grid!", fmt.example()));
            assert!(!is_instruction(&ins[1..], fmt.phrase(), fmt.example()));
        }
        assert!(!is_instruction(&g.instruction(), g.phrase(), None));
        assert!(!is_instruction(&f.instruction(), f.phrase(), Some("1")));
    }

    #[test]
    fn formats_round_trip_through_json() {
        for f in [
            AnswerFormat::new("as yes or no"),
            AnswerFormat::with_example("as the list of moves", "A->B, B->C"),
        ] {
            assert_eq!(AnswerFormat::from_json(&f.to_json()), Some(f.clone()));
        }
        for bad in [
            serde_json::json!({}),
            serde_json::json!({"phrase": 1}),
            serde_json::json!({"phrase": "x", "example": 2}),
            serde_json::json!({"phrase": "x", "other": "y"}),
            serde_json::json!("as a single integer"),
        ] {
            assert_eq!(AnswerFormat::from_json(&bad), None, "{bad}");
        }
    }
}
