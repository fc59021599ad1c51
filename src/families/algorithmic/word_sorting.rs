//! `word_sorting`: sort words in ascending or descending Unicode code-point order.
//!
//! Order is by code point (for these ASCII words: every upper-case letter sorts before
//! every lower-case letter), exactly as the question states; case is significant
//! because it changes the order, so the verifier compares words case-sensitively.
//! The answer is the sorted words separated by commas (`families::parse::list_items`
//! also accepts whitespace separators and one pair of brackets); the exact order
//! matters and every word must appear exactly once.
//!
//! Levels (number of distinct words, probability that a word is transformed):
//! 1: 3..=4 words, none · 2: 5..=7 words, none · 3: 8..=12 words, 0.3 capitalised ·
//! 4: 12..=18 words, 0.4 capitalised or upper-case · 5: 18..=25 words, 0.5 capitalised,
//! upper-case or with one random upper-case letter.
//! Direction: ascending or descending with equal probability at every level.

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::lexicon::WORDS;
use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::sample::distinct_indices;
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct WordSorting;

/// (min words, max words, p transformed, transformation kinds 0..=3) per level.
const PARAMS: [(usize, usize, f64, u8); 5] = [
    (3, 4, 0.0, 0),
    (5, 7, 0.0, 0),
    (8, 12, 0.3, 1),
    (12, 18, 0.4, 2),
    (18, 25, 0.5, 3),
];

fn transform(rng: &mut ChaCha20Rng, w: &str, kinds: u8) -> String {
    match rng.random_range(0..kinds) {
        0 => {
            let mut s = w.to_string();
            s[..1].make_ascii_uppercase();
            s
        }
        1 => w.to_ascii_uppercase(),
        _ => {
            let mut b = w.as_bytes().to_vec();
            let i = rng.random_range(0..b.len());
            b[i] = b[i].to_ascii_uppercase();
            String::from_utf8(b).unwrap_or_else(|_| w.to_string())
        }
    }
}

fn sorted(words: &[&str], descending: bool) -> Vec<String> {
    let mut v: Vec<String> = words.iter().map(|s| s.to_string()).collect();
    v.sort_unstable();
    if descending {
        v.reverse();
    }
    v
}

/// The two sort orders, as stored in `metadata.order`.
const ORDERS: [&str; 2] = ["ascending", "descending"];

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[
            Piece::Text(
                "Sort the words below in {order} order of their Unicode code points (ASCII order: every upper-case letter comes before every lower-case letter). Write each word exactly as it is given.",
            ),
            Piece::Data("{words|bullets}"),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[Piece::Text(
            "Words: {words|json}\nOrder: {order}, by Unicode code point (ASCII order, so upper-case letters come before all lower-case letters)\nKeep every word exactly as written.",
        )],
    ),
];

impl Family for WordSorting {
    fn name(&self) -> &'static str {
        "word_sorting"
    }
    fn category(&self) -> Category {
        Category::Algorithmic
    }
    fn description(&self) -> &'static str {
        "Sort words in ascending or descending Unicode (ASCII) order"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi, p, kinds) = PARAMS[level.idx()];
        let t = ["capitalised", "upper_case", "one_upper_letter"];
        json!({"words_min": lo, "words_max": hi, "p_transformed": p,
               "transformations": &t[..kinds as usize]})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi, p, kinds) = PARAMS[level.idx()];
        let n = rng.random_range(lo..=hi);
        let mut words: Vec<String> = Vec::with_capacity(n);
        for i in distinct_indices(rng, WORDS.len(), n) {
            let w = WORDS[i];
            if kinds > 0 && rng.random_bool(p) {
                let t = transform(rng, w, kinds);
                // Keep words distinct even after a transformation.
                if !words.contains(&t) {
                    words.push(t);
                    continue;
                }
            }
            if !words.iter().any(|x| x == w) {
                words.push(w.to_string());
            }
        }
        let descending = rng.random_bool(0.5);
        let refs: Vec<&str> = words.iter().map(String::as_str).collect();
        let gold = sorted(&refs, descending).join(", ");
        let dir = if descending {
            "descending"
        } else {
            "ascending"
        };
        Generated {
            body: Body::new()
                .text(format!(
                    "Sort these words in {dir} order by Unicode code point (ASCII order, so every \
                     upper-case letter comes before every lower-case letter). Keep each word exactly \
                     as written."
                ))
                .data(format!("Words: {}", words.join(", "))),
            // Three words; capitalised words appear only from level 3, where there are
            // at least eight words.
            format: AnswerFormat::with_example(
                "as the sorted words separated by commas",
                if descending {
                    "zulu, Yankee, Xray"
                } else {
                    "Xray, Yankee, zulu"
                },
            ),
            answer: gold,
            metadata: fields([("words", Value::from(words)), ("order", Value::from(dir))]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let m = Meta::of(instance);
        let (Some(words), Some(order)) = (m.strs("words"), m.choice("order", &ORDERS)) else {
            return 0.0;
        };
        let descending = order == 1;
        let want = sorted(&words, descending);
        match parse::list_items(answer) {
            Some(got) if got.len() == want.len() && got.iter().zip(&want).all(|(a, b)| a == b) => {
                1.0
            }
            _ => 0.0,
        }
    }
}
