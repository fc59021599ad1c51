//! `needle_haystack`: find one stated fact among many distractor sentences.
//!
//! The haystack is a list of facts of the form (person, attribute, value), e.g. "Kofi
//! lives in Oslo.", written with a fixed sentence template per attribute and mixed with
//! filler sentences that state nothing about anyone. Each (person, attribute) pair is
//! stated at most once, so the queried fact (the needle, placed at a uniformly random
//! position) has exactly one answer; the other facts mention the same person with
//! other attributes and the same attribute for other people, which is what makes the
//! search non-trivial. Names, templates and values: `cognition/words.rs`.
//! Levels (facts, filler sentences): 1: 4, 0 · 2: 12, 2 · 3: 40, 8 · 4: 120, 20 ·
//! 5: 360, 60.
//! Gold: the value as written in the text (a word, a city or a number).
//! Verifier: compares after trimming, dropping one trailing `.`, collapsing whitespace,
//! ignoring ASCII letter case (values are not case-sensitive; Unicode lookalikes are
//! never folded) and dropping one leading article (`a`, `an`, `the`); numbers must
//! match exactly as written (no `+`, no leading zeros: the answer is the value as
//! stated in the notes). The format example (`marigold`, `1234`) is never a value of
//! any attribute (a unit test checks the lists).
//! Metadata: `facts` (`[name, attribute, value]` in order of appearance), `query`
//! (`name`, `attribute`), `fillers` (how many filler sentences).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use super::facts::{ATTRIBUTES, FILLERS, Values};
use crate::families::kit::lexicon::NAMES;
use crate::families::kit::meta::fields;
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct NeedleHaystack;

/// (facts, fillers) per level.
const PARAMS: [(usize, usize); 5] = [(4, 0), (12, 2), (40, 8), (120, 20), (360, 60)];

/// Sentences per paragraph in the rendered text.
const PARAGRAPH: usize = 6;

fn normalise(s: &str) -> String {
    let t = s.trim();
    let t = t.strip_suffix('.').unwrap_or(t);
    // ASCII case only: Unicode lookalikes (U+212A KELVIN SIGN for `k`) do not fold.
    let t = parse::collapse_ws(t).to_ascii_lowercase();
    for article in ["a ", "an ", "the "] {
        if let Some(rest) = t.strip_prefix(article) {
            return rest.to_string();
        }
    }
    t
}

/// Append `template` with `{N}`, `{V}` and `{a}` (the article for the value)
/// substituted, without intermediate allocations.
fn fill_into(out: &mut String, template: &str, name: &str, value: &str) {
    let mut parts = template.split('{');
    out.push_str(parts.next().unwrap_or(""));
    for part in parts {
        let (tag, rest) = part.split_at(part.len().min(2));
        match tag {
            "N}" => out.push_str(name),
            "V}" => out.push_str(value),
            "a}" => out.push_str(if value.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            }),
            _ => {
                out.push('{');
                out.push_str(tag);
            }
        }
        out.push_str(rest);
    }
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[
            Piece::Text("{@2}"),
            Piece::Text("The answer is stated in the notes below."),
            Piece::Data("{@1}"),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[Piece::Data("{@1.sentences|lines}"), Piece::Text("{@2}")],
    ),
];

impl Family for NeedleHaystack {
    fn name(&self) -> &'static str {
        "needle_haystack"
    }
    fn category(&self) -> Category {
        Category::Cognition
    }
    fn description(&self) -> &'static str {
        "Retrieve one fact about a person from many distractor sentences"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (facts, fillers) = PARAMS[level.idx()];
        json!({"facts": facts, "fillers": fillers, "names": NAMES.len(), "attributes": ATTRIBUTES.len()})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (n_facts, n_fillers) = PARAMS[level.idx()];
        let n_attr = ATTRIBUTES.len();
        let mut used = vec![false; NAMES.len() * n_attr];
        // (name, attribute, value) triples; the needle is drawn first.
        let mut facts: Vec<(usize, usize, String)> = Vec::with_capacity(n_facts);
        while facts.len() < n_facts {
            let (ni, ai) = if facts.is_empty() || level.idx() < 2 || !rng.random_bool(0.25) {
                (
                    rng.random_range(0..NAMES.len()),
                    rng.random_range(0..n_attr),
                )
            } else {
                // Deliberate near-distractors: the needle's person or attribute.
                let (nn, na, _) = facts[0];
                if rng.random_bool(0.5) {
                    (nn, rng.random_range(0..n_attr))
                } else {
                    (rng.random_range(0..NAMES.len()), na)
                }
            };
            if used[ni * n_attr + ai] {
                continue;
            }
            used[ni * n_attr + ai] = true;
            let value = match ATTRIBUTES[ai].values {
                Values::Words(w) => w[rng.random_range(0..w.len())].to_string(),
                Values::Number(lo, hi) => rng.random_range(lo..=hi).to_string(),
            };
            facts.push((ni, ai, value));
        }
        // Move the needle to a random position among the facts.
        let pos = rng.random_range(0..n_facts);
        facts.swap(0, pos);
        let (qn, qa, gold) = facts[pos].clone();
        // Interleave fillers at random slots: slot i in 0..total is a filler with
        // probability remaining_fillers / remaining_slots.
        let total = n_facts + n_fillers;
        let (mut fi, mut left) = (0usize, n_fillers);
        let mut text = String::with_capacity(total * 48);
        for slot in 0..total {
            let remaining = total - slot;
            if slot > 0 {
                text.push(if slot % PARAGRAPH == 0 { '\n' } else { ' ' });
            }
            if left > 0 && rng.random_range(0..remaining) < left {
                left -= 1;
                text.push_str(FILLERS[rng.random_range(0..FILLERS.len())]);
            } else {
                let (ni, ai, v) = &facts[fi];
                fi += 1;
                fill_into(&mut text, ATTRIBUTES[*ai].statement, NAMES[*ni], v);
            }
        }
        let attr = &ATTRIBUTES[qa];
        let (what, example) = match attr.values {
            Values::Words(_) => ("the word or name", "marigold"),
            Values::Number(..) => ("the number", "1234"),
        };
        let facts_json: Vec<serde_json::Value> = facts
            .into_iter()
            .map(|(ni, ai, v)| json!([NAMES[ni], ATTRIBUTES[ai].key, v]))
            .collect();
        Generated {
            body: Body::new()
                .text("Read the following notes.")
                .data(text)
                .text(format!(
                    "Question: {} Answer with {what} exactly as it is stated in the notes.",
                    attr.question.replace("{N}", NAMES[qn]),
                )),
            // Neither `marigold` nor `1234` is ever a value (a unit test checks).
            format: AnswerFormat::with_example("as a single value", example),
            answer: gold,
            metadata: fields([
                ("facts", Value::from(facts_json)),
                ("fillers", Value::from(n_fillers)),
                ("query", json!({"name": NAMES[qn], "attribute": attr.key})),
            ]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let a = normalise(answer);
        if !a.is_empty() && a == normalise(&instance.answer) {
            1.0
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_examples_are_never_a_value() {
        for a in ATTRIBUTES {
            match a.values {
                Values::Words(w) => assert!(!w.iter().any(|v| normalise(v) == "marigold")),
                Values::Number(lo, hi) => assert!(!(lo..=hi).contains(&1234)),
            }
        }
    }

    #[test]
    fn word_lists_are_sound() {
        let mut names = NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), NAMES.len(), "duplicate names");
        for a in ATTRIBUTES {
            assert!(
                a.statement.contains("{N}") && a.statement.contains("{V}"),
                "{}",
                a.key
            );
            assert!(a.question.contains("{N}"), "{}", a.key);
            if let Values::Words(w) = a.values {
                let mut v = w.to_vec();
                v.sort_unstable();
                v.dedup();
                assert_eq!(v.len(), w.len(), "{}", a.key);
            }
        }
    }

    #[test]
    fn templates_fill_in_place() {
        let mut s = String::new();
        fill_into(&mut s, "{N} keeps {a} {V} as a pet.", "Ivo", "iguana");
        assert_eq!(s, "Ivo keeps an iguana as a pet.");
        s.clear();
        fill_into(&mut s, "By profession {N} is {a} {V}.", "Ivo", "baker");
        assert_eq!(s, "By profession Ivo is a baker.");
    }

    #[test]
    fn normalisation() {
        assert_eq!(normalise(" The Mango. "), "mango");
        assert_eq!(normalise("an  axolotl"), "axolotl");
        assert_eq!(normalise("Oslo"), "oslo");
        assert_eq!(normalise("mango juice"), "mango juice");
    }
}
