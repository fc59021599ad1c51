//! `lcm`: the least common multiple of 2..n positive integers.
//!
//! Levels (count of numbers, number range):
//! 1: 2 numbers in 2..=12 · 2: 2 numbers in 2..=40 · 3: 3 numbers in 2..=60 ·
//! 4: 3..=4 numbers in 2..=200 · 5: 4..=5 numbers in 2..=1000 (the answer fits in u64).
//! The numbers are pairwise distinct. Gold: folded `a / gcd(a, b) * b`.
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

pub struct Lcm;

/// (min count, max count, largest number) per level.
const PARAMS: [(usize, usize, u64); 5] = [
    (2, 2, 12),
    (2, 2, 40),
    (3, 3, 60),
    (3, 4, 200),
    (4, 5, 1000),
];

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Text(
                "What is the smallest positive integer that is a multiple of every one of these numbers?",
            ),
            Piece::Data("{numbers|bullets}"),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[Piece::Text(
            "Numbers: {numbers|json}\nCompute the least common multiple of all of them.",
        )],
    ),
];

impl Family for Lcm {
    fn name(&self) -> &'static str {
        "lcm"
    }
    fn category(&self) -> Category {
        Category::Arithmetic
    }
    fn description(&self) -> &'static str {
        "Least common multiple of several positive integers"
    }
    fn version(&self) -> u32 {
        // 2: the format example no longer depends on the gold answer (it is the largest number plus one).
        2
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi, max) = PARAMS[level.idx()];
        json!({"count_min": lo, "count_max": hi, "number_min": 2, "number_max": max})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi, max) = PARAMS[level.idx()];
        let n = rng.random_range(lo..=hi);
        let numbers: Vec<u64> = loop {
            let v: Vec<u64> = (0..n).map(|_| rng.random_range(2..=max)).collect();
            if distinct(&v) {
                break v;
            }
        };
        // 1000^5 < 2^64, so the fold cannot overflow.
        let answer = numbers.iter().fold(1u64, |acc, &x| acc / gcd(acc, x) * x);
        // The lcm is a multiple of the largest number (>= 2), so the largest number
        // plus one (read off the question) is never the answer.
        let example = (numbers.iter().max().copied().unwrap_or(1) + 1).to_string();
        Generated {
            body: Body::of(format!(
                "Find the least common multiple (LCM) of {}.",
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
