//! `spell_backward`: write a word with its letters in reverse order.
//!
//! Case-insensitive (the question says so): `OLLEH` and `olleh` are both right for
//! `hello`. The answer must be the reversed word alone, as one word: surrounding
//! whitespace is ignored, but anything else (trailing words, spaces between letters,
//! punctuation) scores 0 — unlike reasoning-gym, whose scorer gives full credit to the
//! right word followed by junk.
//!
//! Levels (word length): 1: 3..=4 · 2: 5..=6 · 3: 7..=8 · 4: 9..=11 · 5: 12..=14.

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::lexicon::words_with_len;
use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct SpellBackward;

const LENGTHS: [(usize, usize); 5] = [(3, 4), (5, 6), (7, 8), (9, 11), (12, 14)];

fn reversed(w: &str) -> String {
    w.chars().rev().collect()
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[Piece::Text(
            "Reverse the letters of the word {word|quoted} and write the result as one word, without spaces or punctuation. Letter case does not matter.",
        )],
    ),
    Template::new(
        Wording::Lead,
        &[Piece::Text(
            "Word: {word}\nWrite this word backwards, last letter first (a single word; letter case does not matter).",
        )],
    ),
];

impl Family for SpellBackward {
    fn name(&self) -> &'static str {
        "spell_backward"
    }
    fn category(&self) -> Category {
        Category::Algorithmic
    }
    fn description(&self) -> &'static str {
        "Spell a word backwards (case-insensitive)"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi) = LENGTHS[level.idx()];
        json!({"length_min": lo, "length_max": hi})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi) = LENGTHS[level.idx()];
        let pool = words_with_len(lo, hi);
        let word = pool[rng.random_range(0..pool.len())];
        let gold = reversed(word);
        Generated {
            body: Body::of(format!(
                "Spell the word \"{word}\" backwards: write its letters in reverse order as a \
                 single word, with no spaces or punctuation. Case does not matter."
            )),
            // `hello` is not in the word list (a unit test checks).
            format: AnswerFormat::with_example("as one word", "olleh"),
            answer: gold,
            metadata: fields([("word", Value::from(word))]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let Some(word) = Meta::of(instance).str("word") else {
            return 0.0;
        };
        // ASCII case only: a lookalike such as U+212A KELVIN SIGN is not `k`.
        if answer.trim().eq_ignore_ascii_case(&reversed(word)) {
            1.0
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::families::kit::lexicon::WORDS;

    #[test]
    fn the_format_example_is_never_a_reversed_list_word() {
        assert!(!WORDS.contains(&"hello"));
    }
}
