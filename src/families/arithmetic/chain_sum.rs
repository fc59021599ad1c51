//! `chain_sum`: evaluate a left-to-right chain of additions and subtractions.
//!
//! Levels (number of terms, term range):
//! 1: 2..=3 terms, 1..=9 · 2: 3..=4 terms, 1..=99 · 3: 4..=6 terms, 1..=999 ·
//! 4: 6..=8 terms, 1..=9_999 · 5: 8..=12 terms, 1..=99_999.
//! The first term is added, each later term is added or subtracted with equal chance.
//! Metadata: `terms` (signed: a subtracted term is negative) and `expression`.
//! Verifier: one integer (`parse::int`: surrounding whitespace, `+`, `1,000` tolerated).

use std::fmt::Write;

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::fields;
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct ChainSum;

/// (min terms, max terms, max term) per level.
const PARAMS: [(usize, usize, i64); 5] = [
    (2, 3, 9),
    (3, 4, 99),
    (4, 6, 999),
    (6, 8, 9_999),
    (8, 12, 99_999),
];

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Text("Find the sum of these integers:"),
            Piece::Data("{terms|lines}"),
        ],
    ),
    Template::new(Wording::Lead, &[Piece::Text("Calculate: {expression} = ?")]),
];

impl Family for ChainSum {
    fn name(&self) -> &'static str {
        "chain_sum"
    }
    fn category(&self) -> Category {
        Category::Arithmetic
    }
    fn description(&self) -> &'static str {
        "Evaluate a chain of integer additions and subtractions"
    }
    fn version(&self) -> u32 {
        // 2: the format example no longer depends on the gold answer (it exceeds the sum of the magnitudes).
        2
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi, max) = PARAMS[level.idx()];
        json!({"terms_min": lo, "terms_max": hi, "term_min": 1, "term_max": max})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi, max) = PARAMS[level.idx()];
        let n = rng.random_range(lo..=hi);
        let mut terms = Vec::with_capacity(n);
        let mut expr = String::with_capacity(n * 8);
        let mut total: i64 = 0;
        for i in 0..n {
            let v = rng.random_range(1..=max);
            let neg = i > 0 && rng.random_bool(0.5);
            if i > 0 {
                expr.push_str(if neg { " - " } else { " + " });
            }
            let _ = write!(expr, "{v}");
            let signed = if neg { -v } else { v };
            total += signed;
            terms.push(signed);
        }
        // |total| <= the sum of the terms' magnitudes, so one more than that sum (read
        // off the question) is never the answer.
        let example = (terms.iter().map(|t| t.abs()).sum::<i64>() + 1).to_string();
        Generated {
            body: Body::of(format!("Compute the value of {expr}.")),
            format: AnswerFormat::with_example("as a single integer", example),
            answer: total.to_string(),
            metadata: fields([
                ("terms", Value::from(terms)),
                ("expression", Value::from(expr)),
            ]),
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
