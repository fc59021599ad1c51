//! `palindrome_generation`: arrange a multiset of letters into a palindrome.
//!
//! The letters come from a random palindrome (a random half, an optional middle letter,
//! the half reversed), shown in shuffled order, so at most one letter has an odd count
//! and a palindrome always exists. Usually many do: any of them scores 1.
//!
//! Levels (number of letters, distinct letters at most): 1: 3..=5, 3 · 2: 6..=8, 4 ·
//! 3: 9..=12, 6 · 4: 13..=18, 8 · 5: 19..=26, 12.
//!
//! Gold: the palindrome the letters came from. Verifier (constraint check, not string
//! comparison): the answer, trimmed, is one run of ASCII letters (ASCII case ignored)
//! that reads the same backwards and uses exactly the given letters, each as often as
//! given. Spaces or punctuation inside, other scripts' letters, or a letter too many
//! score 0. The format example has a different length from the instance's, so it is
//! never accepted. Metadata: `letters` (the shuffled letters, one string each).

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct PalindromeGeneration;

/// (letters min, letters max, distinct letters max) per level.
const PARAMS: [(usize, usize, usize); 5] =
    [(3, 5, 3), (6, 8, 4), (9, 12, 6), (13, 18, 8), (19, 26, 12)];

/// Letter counts of a lowercase ASCII word, `None` for anything else.
fn counts(s: &str) -> Option<[u16; 26]> {
    let mut c = [0u16; 26];
    for b in s.bytes() {
        let b = b.to_ascii_lowercase();
        if !b.is_ascii_lowercase() {
            return None;
        }
        c[usize::from(b - b'a')] += 1;
    }
    Some(c)
}

impl Family for PalindromeGeneration {
    fn name(&self) -> &'static str {
        "palindrome_generation"
    }
    fn category(&self) -> Category {
        Category::Algorithmic
    }
    fn description(&self) -> &'static str {
        "Arrange given letters into a palindrome (any valid palindrome scores)"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> Value {
        let (lo, hi, distinct) = PARAMS[level.idx()];
        json!({"letters_min": lo, "letters_max": hi, "distinct_max": distinct})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi, distinct) = PARAMS[level.idx()];
        let n = rng.random_range(lo..=hi);
        let mut alphabet: Vec<u8> = (b'a'..=b'z').collect();
        alphabet.shuffle(rng);
        let alphabet = &alphabet[..distinct];
        let half: Vec<u8> = (0..n / 2)
            .map(|_| alphabet[rng.random_range(0..distinct)])
            .collect();
        let mut pal = half.clone();
        if n % 2 == 1 {
            pal.push(alphabet[rng.random_range(0..distinct)]);
        }
        pal.extend(half.iter().rev());
        let mut letters = pal.clone();
        letters.shuffle(rng);
        let letters: Vec<String> = letters.iter().map(|&b| char::from(b).to_string()).collect();
        let example = if n == 5 { "abccba" } else { "abcba" };
        Generated {
            body: Body::new()
                .text(format!(
                    "Arrange all of these {n} letters into a palindrome (a string that reads the \
                     same forwards and backwards). Use every letter exactly as often as it is \
                     listed and no other letters. It does not have to be a real word."
                ))
                .data(format!("Letters: {}", letters.join(", ")))
                .text("Write the palindrome as one string without spaces."),
            format: AnswerFormat::with_example("as the palindrome", example),
            answer: String::from_utf8(pal).expect("ASCII letters"),
            metadata: fields([("letters", json!(letters))]),
        }
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let Some(letters) = Meta::of(instance).strs("letters") else {
            return 0.0;
        };
        let a = answer.trim();
        let (Some(have), Some(want)) = (counts(a), counts(&letters.concat())) else {
            return 0.0;
        };
        let b = a.as_bytes();
        let palindrome = (0..b.len() / 2).all(|i| b[i].eq_ignore_ascii_case(&b[b.len() - 1 - i]));
        if have == want && palindrome { 1.0 } else { 0.0 }
    }
}
