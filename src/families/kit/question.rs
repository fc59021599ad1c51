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
//! That is the canonical layout (variant 0). Because the body is kept in parts and the
//! format separately, a question template (`kit::template`, variants 1..) can re-lay
//! out and re-word the same task without touching a family's generator: its body is
//! rendered from the instance's metadata and the canonical parts, and its instruction
//! uses one of the [`Wording`]s — the canonical sentence above, two other sentences at
//! the end, or a leading "Answer format: ..." paragraph before the body. Every wording
//! shows the same phrase and the same example (the example rule below holds for all of
//! them), and a harness can state the answer rule itself ([`AnswerFormat::phrase`])
//! while scoring stays the family's verifier.
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

/// How the answer instruction is worded and where it stands. Every wording is
/// `pre + phrase + mid [+ example_open + example + example_close] + end`; the tags it
/// names are always the empty pair `<answer></answer>`, so the only tagged text a
/// question holds is its format example (never a right answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Wording {
    /// The canonical sentence at the end: `Give your final answer {phrase} inside
    /// <answer></answer> tags[, for example <answer>{example}</answer>].`
    #[default]
    Give,
    /// At the end: `Put your final answer inside <answer></answer> tags, written
    /// {phrase}[; for example <answer>{example}</answer>].`
    Put,
    /// At the end: `Respond with your final answer {phrase}, enclosed in
    /// <answer></answer> tags[ (for instance <answer>{example}</answer>)].`
    Respond,
    /// A paragraph *before* the body: `Answer format: your final answer goes inside
    /// <answer></answer> tags, written {phrase}[; for example
    /// <answer>{example}</answer>].` Not for phrases that point back at the body
    /// (`as one of those words`).
    Lead,
}

/// The fixed pieces of one wording (see [`Wording`]).
struct Pieces {
    pre: &'static str,
    mid: &'static str,
    example_open: &'static str,
    example_close: &'static str,
    end: &'static str,
}

impl Wording {
    /// Every wording, canonical first.
    pub const ALL: [Wording; 4] = [Wording::Give, Wording::Put, Wording::Respond, Wording::Lead];

    /// The name recorded in the metadata (`answer_format.wording`).
    pub fn as_str(self) -> &'static str {
        match self {
            Wording::Give => "give",
            Wording::Put => "put",
            Wording::Respond => "respond",
            Wording::Lead => "lead",
        }
    }

    /// The wording recorded under `name`.
    pub fn from_name(name: &str) -> Option<Wording> {
        Wording::ALL.into_iter().find(|w| w.as_str() == name)
    }

    /// Whether the instruction stands before the body (else after it).
    pub fn leads(self) -> bool {
        self == Wording::Lead
    }

    fn pieces(self) -> Pieces {
        match self {
            Wording::Give => Pieces {
                pre: INSTRUCTION_LEAD,
                mid: INSTRUCTION_TAGS,
                example_open: EXAMPLE_OPEN,
                example_close: EXAMPLE_CLOSE,
                end: ".",
            },
            Wording::Put => Pieces {
                pre: "Put your final answer inside <answer></answer> tags, written ",
                mid: "",
                example_open: "; for example <answer>",
                example_close: "</answer>",
                end: ".",
            },
            Wording::Respond => Pieces {
                pre: "Respond with your final answer ",
                mid: ", enclosed in <answer></answer> tags",
                example_open: " (for instance <answer>",
                example_close: "</answer>)",
                end: ".",
            },
            Wording::Lead => Pieces {
                pre: "Answer format: your final answer goes inside <answer></answer> tags, written ",
                mid: "",
                example_open: "; for example <answer>",
                example_close: "</answer>",
                end: ".",
            },
        }
    }

    /// The length in bytes of this wording's instruction for `phrase` and `example`.
    pub fn instruction_len(self, phrase: &str, example: Option<&str>) -> usize {
        let p = self.pieces();
        p.pre.len()
            + phrase.len()
            + p.mid.len()
            + example.map_or(0, |e| {
                p.example_open.len() + e.len() + p.example_close.len()
            })
            + p.end.len()
    }

    /// Whether `text` is exactly this wording's instruction for `phrase` and
    /// `example` (checked without building it).
    pub fn is_instruction(self, text: &str, phrase: &str, example: Option<&str>) -> bool {
        let p = self.pieces();
        let rest = text
            .strip_prefix(p.pre)
            .and_then(|r| r.strip_prefix(phrase))
            .and_then(|r| r.strip_prefix(p.mid));
        let rest = match (rest, example) {
            (Some(r), Some(e)) => r
                .strip_prefix(p.example_open)
                .and_then(|r| r.strip_prefix(e))
                .and_then(|r| r.strip_prefix(p.example_close)),
            (r, None) => r,
            (None, Some(_)) => None,
        };
        rest == Some(p.end)
    }

    fn write(self, out: &mut String, phrase: &str, example: Option<&str>) {
        let p = self.pieces();
        out.push_str(p.pre);
        out.push_str(phrase);
        out.push_str(p.mid);
        if let Some(e) = example {
            out.push_str(p.example_open);
            out.push_str(e);
            out.push_str(p.example_close);
        }
        out.push_str(p.end);
    }
}

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

    /// The instruction in another wording.
    pub fn instruction_in(&self, wording: Wording) -> String {
        let mut s = String::with_capacity(wording.instruction_len(&self.phrase, self.example()));
        wording.write(&mut s, &self.phrase, self.example());
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
        self.to_json_in(Wording::Give)
    }

    /// The format and the wording of its instruction as stored: [`to_json`] plus
    /// `"wording": NAME` for any wording but the canonical one (whose record stays
    /// exactly what it was before wordings existed).
    ///
    /// [`to_json`]: AnswerFormat::to_json
    pub fn to_json_in(&self, wording: Wording) -> Value {
        let mut m = Map::with_capacity(3);
        m.insert("phrase".into(), Value::from(self.phrase.as_ref()));
        if let Some(e) = &self.example {
            m.insert("example".into(), Value::from(e.as_ref()));
        }
        if wording != Wording::Give {
            m.insert("wording".into(), Value::from(wording.as_str()));
        }
        Value::Object(m)
    }

    /// Read a stored format back; `None` unless it has a string `phrase` and at most a
    /// string `example` (and no `wording` other than the canonical one; see
    /// [`from_json_in`](AnswerFormat::from_json_in)).
    pub fn from_json(v: &Value) -> Option<AnswerFormat> {
        Self::from_json_in(v).and_then(|(f, w)| (w == Wording::Give).then_some(f))
    }

    /// Read a stored format and its wording back; `None` unless it has a string
    /// `phrase`, at most a string `example` and at most a known `wording` name.
    pub fn from_json_in(v: &Value) -> Option<(AnswerFormat, Wording)> {
        let o = v.as_object()?;
        let phrase = o.get("phrase")?.as_str()?.to_string();
        let example = match o.get("example") {
            None => None,
            Some(e) => Some(Cow::Owned(e.as_str()?.to_string())),
        };
        let wording = match o.get("wording") {
            None => None,
            Some(w) => Some(Wording::from_name(w.as_str()?)?),
        };
        (o.len() == 1 + usize::from(example.is_some()) + usize::from(wording.is_some())).then_some(
            (
                AnswerFormat {
                    phrase: Cow::Owned(phrase),
                    example,
                },
                wording.unwrap_or_default(),
            ),
        )
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

/// The question text in another wording: for [`Wording::Lead`] the instruction, a
/// blank line, then the body; for the others the body, its gap and the instruction
/// (as [`compose`], which is `compose_in(.., Wording::Give)`).
pub fn compose_in(body: Body, format: &AnswerFormat, wording: Wording) -> String {
    if wording == Wording::Give {
        return compose(body, format);
    }
    let (phrase, example) = (format.phrase(), format.example());
    let mut s =
        String::with_capacity(body.len_hint() + wording.instruction_len(phrase, example) + 2);
    if wording.leads() {
        wording.write(&mut s, phrase, example);
        if !body.parts.is_empty() {
            s.push_str("\n\n");
        }
        body.write_to(&mut s);
    } else {
        body.write_to(&mut s);
        s.push_str(body.gap());
        wording.write(&mut s, phrase, example);
    }
    s
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

    #[test]
    fn every_wording_measures_checks_and_records_its_instruction() {
        let formats = [
            AnswerFormat::new("as yes or no"),
            AnswerFormat::with_example("as the grid", "0 1\n1 0"),
        ];
        for w in Wording::ALL {
            assert_eq!(Wording::from_name(w.as_str()), Some(w));
            for f in &formats {
                let ins = f.instruction_in(w);
                assert_eq!(
                    ins.len(),
                    w.instruction_len(f.phrase(), f.example()),
                    "{w:?}"
                );
                assert!(w.is_instruction(&ins, f.phrase(), f.example()), "{w:?}");
                assert!(!w.is_instruction(&ins[1..], f.phrase(), f.example()));
                assert!(!w.is_instruction(&ins, "as a word", f.example()));
                // The only tags are the empty pair and the example's.
                assert_eq!(
                    ins.matches("<answer>").count(),
                    1 + usize::from(f.example().is_some())
                );
                assert!(ins.contains("<answer></answer>"), "{ins}");
                for other in Wording::ALL.into_iter().filter(|&o| o != w) {
                    assert!(!other.is_instruction(&ins, f.phrase(), f.example()));
                }
                let rec = f.to_json_in(w);
                assert_eq!(AnswerFormat::from_json_in(&rec), Some((f.clone(), w)));
                assert_eq!(rec.get("wording").is_some(), w != Wording::Give);
                assert_eq!(AnswerFormat::from_json(&rec).is_some(), w == Wording::Give);
            }
        }
        assert_eq!(Wording::from_name("shout"), None);
        assert_eq!(
            Wording::Give.instruction_len("as p/q", None),
            instruction_len("as p/q", None)
        );
        let bad = serde_json::json!({"phrase": "x", "wording": "shout"});
        assert_eq!(AnswerFormat::from_json_in(&bad), None);
        let bad = serde_json::json!({"phrase": "x", "wording": 1});
        assert_eq!(AnswerFormat::from_json_in(&bad), None);
    }

    #[test]
    fn wordings_lay_out_the_question() {
        let f = AnswerFormat::new("as a single integer");
        let body = || Body::new().text("Count:").data("1 2 3");
        assert_eq!(compose_in(body(), &f, Wording::Give), compose(body(), &f));
        assert_eq!(
            compose_in(body(), &f, Wording::Put),
            "Count:\n\n1 2 3\n\nPut your final answer inside <answer></answer> tags, written as a \
             single integer."
        );
        assert_eq!(
            compose_in(Body::of("How many?"), &f, Wording::Respond),
            "How many?\nRespond with your final answer as a single integer, enclosed in \
             <answer></answer> tags."
        );
        assert_eq!(
            compose_in(body(), &f, Wording::Lead),
            "Answer format: your final answer goes inside <answer></answer> tags, written as a \
             single integer.\n\nCount:\n\n1 2 3"
        );
    }
}
