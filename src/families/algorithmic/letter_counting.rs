//! `letter_counting`: how many times a letter occurs in a short text.
//!
//! Counting is case-insensitive (the question says so): `E` and `e` both count.
//! The text is a sequence of words from the crate's own word list; some words are
//! capitalised so that case-insensitivity matters.
//!
//! Levels (words in the text, longest word, probability that a word is capitalised,
//! probability that the asked letter is absent from the text):
//! 1: 3..=5 words of at most 5 letters, 0.0, 0.05 · 2: 6..=10 words of at most 7
//! letters, 0.1, 0.1 · 3: 10..=20 words, any length, 0.25, 0.1 ·
//! 4: 20..=40 words, any length, 0.35, 0.1 · 5: 40..=80 words, any length, 0.5, 0.1.
//! Gold: a direct count over the text's bytes. Verifier: one integer
//! (`families::parse::int`).
//! The format example in the question is one more than the largest possible answer,
//! so it is never the gold and says nothing about it.

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::lexicon::{MAX_WORD, words_with_len};
use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct LetterCounting;

/// (min words, max words, max word length, p capitalised, p absent letter) per level.
const PARAMS: [(usize, usize, usize, f64, f64); 5] = [
    (3, 5, 5, 0.0, 0.05),
    (6, 10, 7, 0.1, 0.1),
    (10, 20, 99, 0.25, 0.1),
    (20, 40, 99, 0.35, 0.1),
    (40, 80, 99, 0.5, 0.1),
];

/// Case-insensitive count of ASCII letter `letter` in `text`.
fn count(text: &str, letter: u8) -> usize {
    let l = letter.to_ascii_lowercase();
    text.bytes().filter(|b| b.to_ascii_lowercase() == l).count()
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Data("{text}"),
            Piece::Text(
                "Count how often the letter {letter|quoted} occurs in the text above, upper-case and lower-case alike.",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[Piece::Text(
            "Letter: {letter}\nText: {text|quoted}\nHow many times does the letter appear in the text? Upper-case and lower-case occurrences both count.",
        )],
    ),
];

impl Family for LetterCounting {
    fn name(&self) -> &'static str {
        "letter_counting"
    }
    fn category(&self) -> Category {
        Category::Algorithmic
    }
    fn description(&self) -> &'static str {
        "Count the occurrences of a letter in a text (case-insensitive)"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi, maxlen, cap, absent) = PARAMS[level.idx()];
        json!({"words_min": lo, "words_max": hi, "word_length_max": maxlen.min(MAX_WORD),
               "p_capitalised": cap, "p_absent_letter": absent})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi, maxlen, cap, absent) = PARAMS[level.idx()];
        let pool = words_with_len(3, maxlen);
        let n = rng.random_range(lo..=hi);
        let mut text = String::with_capacity(n * 8);
        for i in 0..n {
            if i > 0 {
                text.push(' ');
            }
            let w = pool[rng.random_range(0..pool.len())];
            if rng.random_bool(cap) {
                let mut c = w.chars();
                if let Some(f) = c.next() {
                    text.push(f.to_ascii_uppercase());
                    text.push_str(c.as_str());
                }
            } else {
                text.push_str(w);
            }
        }
        let mut present = [false; 26];
        for b in text.bytes() {
            if b.is_ascii_alphabetic() {
                present[(b.to_ascii_lowercase() - b'a') as usize] = true;
            }
        }
        let want_absent = rng.random_bool(absent) && present.iter().any(|p| !p);
        let letter = loop {
            let l = rng.random_range(0..26u8);
            if present[l as usize] != want_absent {
                break b'a' + l;
            }
        };
        let gold = count(&text, letter);
        let letter_s = (letter as char).to_string();
        Generated {
            body: Body::new()
                .text(format!(
                    "How many times does the letter \"{letter_s}\" appear in the following text? \
                     Count upper-case and lower-case occurrences alike."
                ))
                .data(format!("Text: \"{text}\"")),
            // The count is at most the text's length: one more is never the answer.
            format: AnswerFormat::with_example("as a single integer", (text.len() + 1).to_string()),
            answer: gold.to_string(),
            metadata: fields([
                ("text", Value::from(text)),
                ("letter", Value::from(letter_s)),
            ]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let m = Meta::of(instance);
        let (Some(text), Some(letter)) = (m.str("text"), m.str("letter")) else {
            return 0.0;
        };
        let &[l] = letter.as_bytes() else { return 0.0 };
        match parse::int(answer) {
            Some(a) if a == count(text, l) as i128 => 1.0,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn counts_ignore_case() {
        assert_eq!(count("Eel eats Every evening", b'e'), 7);
        assert_eq!(count("abc", b'z'), 0);
    }
}
