//! `gcd`: the greatest common divisor of 2..n positive integers.
//!
//! The numbers are drawn as `g * c_i` with `g` uniform in `1..=isqrt(max)` and each
//! cofactor `c_i` uniform in `1..=max / g`, so non-trivial common divisors are frequent;
//! the numbers are pairwise distinct; the gold answer is the actual gcd (Euclid), which
//! may exceed `g`.
//! Levels (count of numbers, largest number):
//! 1: 2 numbers ≤ 50 · 2: 2 numbers ≤ 500 · 3: 2..=3 numbers ≤ 5_000 ·
//! 4: 3..=4 numbers ≤ 1_000_000 · 5: 4..=6 numbers ≤ 1_000_000_000.
//! Metadata: `numbers`. Verifier: one integer (`parse::int`).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use super::number_theory::{distinct, gcd};
use crate::families::kit::meta::fields;
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::kit::text::join_and;
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct Gcd;

/// (min count, max count, largest number) per level.
const PARAMS: [(usize, usize, u64); 5] = [
    (2, 2, 50),
    (2, 2, 500),
    (2, 3, 5_000),
    (3, 4, 1_000_000),
    (4, 6, 1_000_000_000),
];

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Text(
                "What is the largest positive integer that divides every one of these numbers?",
            ),
            Piece::Data("{numbers|bullets}"),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[Piece::Text(
            "Numbers: {numbers|json}\nCompute the greatest common divisor of all of them.",
        )],
    ),
];

impl Family for Gcd {
    fn name(&self) -> &'static str {
        "gcd"
    }
    fn category(&self) -> Category {
        Category::Arithmetic
    }
    fn description(&self) -> &'static str {
        "Greatest common divisor of several positive integers"
    }
    fn version(&self) -> u32 {
        // 2: the format example no longer depends on the gold answer (it is the smallest number plus one).
        2
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi, max) = PARAMS[level.idx()];
        json!({"count_min": lo, "count_max": hi, "number_min": 1, "number_max": max})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi, max) = PARAMS[level.idx()];
        let n = rng.random_range(lo..=hi);
        let g = rng.random_range(1..=max.isqrt());
        let numbers: Vec<u64> = loop {
            let v: Vec<u64> = (0..n).map(|_| g * rng.random_range(1..=max / g)).collect();
            if distinct(&v) {
                break v;
            }
        };
        let answer = numbers.iter().fold(0, |acc, &x| gcd(acc, x));
        // The gcd divides every number, so it is at most the smallest one: one more
        // than that (read off the question) is never the answer.
        let example = (numbers.iter().min().copied().unwrap_or(1) + 1).to_string();
        Generated {
            body: Body::of(format!(
                "Find the greatest common divisor (GCD) of {}.",
                join_and(&numbers)
            )),
            format: AnswerFormat::with_example("as a single integer", example),
            answer: answer.to_string(),
            metadata: fields([("numbers", Value::from(numbers))]),
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
