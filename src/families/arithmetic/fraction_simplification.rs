//! `fraction_simplification`: reduce a fraction to lowest terms.
//!
//! The shown fraction is `(a·k)/(b·k)` with `gcd(a, b) = 1`, `b ≥ 2` and `k ≥ 2`, so it
//! is never already reduced and the answer is never a whole number.
//! Levels (reduced numerator/denominator range, multiplier range):
//! 1: a 1..=10, b 2..=10, k 2..=5 · 2: 1..=20, 2..=20, k 2..=10 ·
//! 3: 1..=100, 2..=100, k 2..=20 · 4: 1..=1_000, 2..=1_000, k 2..=50 ·
//! 5: 1..=10_000, 2..=10_000, k 2..=500.
//! Gold: `a/b`. Verifier: the answer must contain a `/` and equal `a/b` exactly
//! (`parse::fraction`: whitespace around the slash, a `+` on the numerator, leading
//! zeros and `1,000` tolerated; the denominator carries no sign, so `a/-b`, `a/+b` and
//! `-a/-b` score 0); an equal but unreduced fraction such as `2/4` for `1/2` scores 0,
//! as the question says. No format example is shown (any fraction chosen without
//! looking at the gold could be it).
//! Metadata: `numerator`, `denominator` (the fraction shown).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use super::number_theory::gcd;
use crate::families::kit::meta::fields;
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct FractionSimplification;

/// (reduced part max, multiplier max) per level.
const PARAMS: [(u64, u64); 5] = [(10, 5), (20, 10), (100, 20), (1_000, 50), (10_000, 500)];

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[Piece::Text(
            "Reduce the fraction {numerator}/{denominator} to lowest terms, that is, to p/q where p and q share no factor greater than 1. An equal fraction that can still be reduced is wrong.",
        )],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Data("numerator: {numerator}\ndenominator: {denominator}"),
            Piece::Text(
                "Write this fraction in lowest terms, as p/q where p and q have no common factor other than 1. An equal fraction that is not fully reduced is wrong.",
            ),
        ],
    ),
];

impl Family for FractionSimplification {
    fn name(&self) -> &'static str {
        "fraction_simplification"
    }
    fn category(&self) -> Category {
        Category::Arithmetic
    }
    fn description(&self) -> &'static str {
        "Reduce a fraction to lowest terms"
    }
    fn version(&self) -> u32 {
        // 2: no format example (it was chosen by looking at the gold).
        2
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (m, k) = PARAMS[level.idx()];
        json!({
            "reduced_numerator_min": 1, "reduced_numerator_max": m,
            "reduced_denominator_min": 2, "reduced_denominator_max": m,
            "multiplier_min": 2, "multiplier_max": k,
        })
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (m, kmax) = PARAMS[level.idx()];
        let (a, b) = loop {
            let a = rng.random_range(1..=m);
            let b = rng.random_range(2..=m);
            if gcd(a, b) == 1 {
                break (a, b);
            }
        };
        let k = rng.random_range(2..=kmax);
        let (num, den) = (a * k, b * k);
        Generated {
            body: Body::of(format!(
                "Simplify the fraction {num}/{den} to lowest terms, i.e. write it as p/q where \
                 p and q have no common factor other than 1. An equal fraction that is not \
                 fully reduced is wrong."
            )),
            format: AnswerFormat::new("as p/q"),
            answer: format!("{a}/{b}"),
            metadata: fields([
                ("numerator", Value::from(num)),
                ("denominator", Value::from(den)),
            ]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        if !answer.contains('/') {
            return 0.0;
        }
        match (parse::fraction(answer), parse::fraction(&instance.answer)) {
            (Some(x), Some(g)) if x == g => 1.0,
            _ => 0.0,
        }
    }
}
