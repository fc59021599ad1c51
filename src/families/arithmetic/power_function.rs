//! `power_function`: exact integer powers and modular exponentiation (no floats).
//!
//! Levels (mode: base range, exponent range, modulus range):
//! 1: exact, base 6..=25, exponent 3..=5 · 2: exact, base 11..=40, exponent 3..=6 ·
//! 3: exact, base ±2..=±20, exponent 2..=8 ·
//! 4: half exact (base 2..=50, exponent 8..=20), half modular (base 2..=1_000,
//! exponent 10..=10_000, modulus 2..=1_000) ·
//! 5: half exact (base ±2..=±999, exponent 8..=12), half modular (base 2..=10^9,
//! exponent 10^3..=10^12, modulus 10^3..=10^9).
//! Exact answers fit in i128 (at most 999^12 < 10^36); a negative base is shown in
//! parentheses, e.g. `(-3)^5`. A modular answer is the remainder in `0..modulus`.
//! Metadata: `base`, `exponent`, `modulus` (`null` for exact powers).
//! Verifier: one integer (`parse::int`: whitespace, `+`, `1,000` tolerated).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use super::number_theory::pow_mod;
use crate::families::kit::meta::fields;
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct PowerFunction;

struct Exact {
    base: (i64, i64),
    signed: bool,
    exp: (u32, u32),
}

struct Modular {
    base: (u64, u64),
    exp: (u64, u64),
    modulus: (u64, u64),
}

const EXACT: [Exact; 5] = [
    // Level 1 was base 2..=9, exponent 2..=3 until version 3: Qwen2.5-Coder-0.5B
    // answered all 24 calibration items zero-shot (docs/RESULTS.md), and still 22 of
    // 24 with bases up to 12 (it knows small powers by heart): no room to improve.
    Exact {
        base: (6, 25),
        signed: false,
        exp: (3, 5),
    },
    Exact {
        base: (11, 40),
        signed: false,
        exp: (3, 6),
    },
    Exact {
        base: (2, 20),
        signed: true,
        exp: (2, 8),
    },
    Exact {
        base: (2, 50),
        signed: false,
        exp: (8, 20),
    },
    Exact {
        base: (2, 999),
        signed: true,
        exp: (8, 12),
    },
];

/// Modular variants for levels 4 and 5 (indices 0 and 1).
const MODULAR: [Modular; 2] = [
    Modular {
        base: (2, 1_000),
        exp: (10, 10_000),
        modulus: (2, 1_000),
    },
    Modular {
        base: (2, 1_000_000_000),
        exp: (1_000, 1_000_000_000_000),
        modulus: (1_000, 1_000_000_000),
    },
];

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[Piece::Text(
            "{^modulus}Raise {base} to the power {exponent}. What is the exact result, written out in full as an integer?{/}{#modulus}Raise {base} to the power {exponent} and divide the result by {modulus}. What is the remainder (a number from 0 up to, but not including, {modulus})?{/}",
        )],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Data("base: {base}\nexponent: {exponent}{#modulus}\nmodulus: {modulus}{/}"),
            Piece::Text(
                "{^modulus}Compute the base raised to the exponent, exactly, as an integer written out in full.{/}{#modulus}Compute the base raised to the exponent, modulo the modulus: the remainder of that power divided by the modulus, between 0 and the modulus minus 1.{/}",
            ),
        ],
    ),
];

impl Family for PowerFunction {
    fn name(&self) -> &'static str {
        "power_function"
    }
    fn category(&self) -> Category {
        Category::Arithmetic
    }
    fn description(&self) -> &'static str {
        "Compute an exact integer power or a modular power"
    }
    fn version(&self) -> u32 {
        // 2: the format example no longer depends on the gold answer (the modulus, or 1 for exact powers).
        // 3: levels 1 and 2 harder (calibration: level 1 scored 1.00 zero-shot).
        3
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let e = &EXACT[level.idx()];
        let exact = json!({
            "base_min": e.base.0, "base_max": e.base.1, "negative_bases": e.signed,
            "exponent_min": e.exp.0, "exponent_max": e.exp.1,
        });
        match level.idx() {
            i @ 3..=4 => {
                let m = &MODULAR[i - 3];
                json!({
                    "exact": exact, "modular_share": 0.5,
                    "modular": {
                        "base_min": m.base.0, "base_max": m.base.1,
                        "exponent_min": m.exp.0, "exponent_max": m.exp.1,
                        "modulus_min": m.modulus.0, "modulus_max": m.modulus.1,
                    },
                })
            }
            _ => json!({"exact": exact, "modular_share": 0.0}),
        }
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let i = level.idx();
        let modular = i >= 3 && rng.random_bool(0.5);
        let (base, exp, modulus, value, shown): (i64, u64, Option<u64>, i128, String) = if modular {
            let m = &MODULAR[i - 3];
            let b = rng.random_range(m.base.0..=m.base.1);
            let e = rng.random_range(m.exp.0..=m.exp.1);
            let md = rng.random_range(m.modulus.0..=m.modulus.1);
            let v = pow_mod(b, e, md);
            let shown = format!(
                "Compute {b}^{e} mod {md}, that is, the remainder (between 0 and {}) when \
                     {b} raised to the power {e} is divided by {md}.",
                md - 1
            );
            (b as i64, e, Some(md), v as i128, shown)
        } else {
            let x = &EXACT[i];
            let mut b = rng.random_range(x.base.0..=x.base.1);
            if x.signed && rng.random_bool(0.5) {
                b = -b;
            }
            let e = rng.random_range(x.exp.0..=x.exp.1);
            // Bounded by 999^12 < 10^36 < i128::MAX.
            let v = (b as i128).pow(e);
            let shown_base = if b < 0 {
                format!("({b})")
            } else {
                b.to_string()
            };
            let shown = format!(
                "Compute {shown_base}^{e} exactly, that is, {shown_base} raised to the \
                     power {e}, written out in full as an integer."
            );
            (b, e as u64, None, v, shown)
        };
        // A remainder is below the modulus, so the modulus is never the answer; an exact
        // power of a base with |base| >= 2 and exponent >= 2 is never 1.
        let example = modulus.map_or_else(|| "1".to_string(), |m| m.to_string());
        Generated {
            body: Body::of(shown),
            format: AnswerFormat::with_example("as a single integer", example),
            answer: value.to_string(),
            metadata: fields([
                ("base", Value::from(base)),
                ("exponent", Value::from(exp)),
                ("modulus", Value::from(modulus)),
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
