//! `count_bits`: how many 1 bits the binary representation of `n` has.
//!
//! Levels (range of n): 1: 1..=63 (≤ 6 bits) · 2: 64..=1_023 (≤ 10 bits) ·
//! 3: 1_024..=65_535 (≤ 16 bits) · 4: 2^16..=2^32-1 · 5: 2^32..=2^63-1.
//! `n` is shown in decimal. Metadata: `n`. Verifier: one integer (`parse::int`).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::fields;
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct CountBits;

/// Inclusive range of n per level.
const RANGE: [(u64, u64); 5] = [
    (1, 63),
    (64, 1_023),
    (1_024, 65_535),
    (1 << 16, (1 << 32) - 1),
    (1 << 32, (1 << 63) - 1),
];

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[Piece::Text(
            "Write the decimal number {n} in binary. How many of its binary digits are 1?",
        )],
    ),
    Template::new(
        Wording::Lead,
        &[Piece::Text(
            "n = {n} (decimal)\nWhat is the population count of n, that is, the number of 1 bits in its binary representation?",
        )],
    ),
];

impl Family for CountBits {
    fn name(&self) -> &'static str {
        "count_bits"
    }
    fn category(&self) -> Category {
        Category::Cognition
    }
    fn description(&self) -> &'static str {
        "Count the 1 bits in the binary representation of an integer"
    }
    fn version(&self) -> u32 {
        // 2: the format example no longer depends on the gold answer (one more than the bit length of n).
        2
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi) = RANGE[level.idx()];
        json!({"n_min": lo, "n_max": hi})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi) = RANGE[level.idx()];
        let n = rng.random_range(lo..=hi);
        let ones = n.count_ones();
        // n has at most as many 1 bits as binary digits: one more than its bit length
        // (a function of n, which the question shows) is never the answer.
        let example = (u64::BITS - n.leading_zeros() + 1).to_string();
        Generated {
            body: Body::of(format!(
                "How many 1 bits are there in the binary representation of the decimal number \
                 {n}?"
            )),
            format: AnswerFormat::with_example("as a single integer", example),
            answer: ones.to_string(),
            metadata: fields([("n", Value::from(n))]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        match (parse::int(answer), parse::int(&instance.answer)) {
            (Some(a), Some(g)) if a == g => 1.0,
            _ => 0.0,
        }
    }
}
