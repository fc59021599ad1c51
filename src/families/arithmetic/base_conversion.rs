//! `base_conversion`: convert an integer between positional bases 2..=36.
//!
//! Levels (base pairs, value range):
//! 1: decimal ↔ binary, value 2..=31 · 2: two distinct bases of {2, 8, 10, 16},
//! value 16..=255 · 3: two distinct bases in 2..=16, value 256..=4_095 ·
//! 4: two distinct bases in 2..=36, value 4_096..=1_000_000 ·
//! 5: two distinct bases in 2..=36, value 10^6..=10^12.
//! Digits are `0-9` then `a-z` for 10..=35. Gold: lowercase, no prefix, no leading
//! zeros. Verifier: the answer read as a base-`to_base` numeral must equal the gold's
//! value; letter case is ignored (digit letters carry no case meaning) and leading
//! zeros are tolerated; prefixes (`0x`, `0b`), signs, separators, spaces inside the
//! numeral or digits outside the base score 0.
//! Metadata: `number` (the numeral shown), `from_base`, `to_base`.

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct BaseConversion;

const MIN_VALUE: [u64; 5] = [2, 16, 256, 4_096, 1_000_000];
const MAX_VALUE: [u64; 5] = [31, 255, 4_095, 1_000_000, 1_000_000_000_000];

/// Render `v` in `base` (2..=36), lowercase.
fn to_base(mut v: u64, base: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    if v == 0 {
        return "0".to_string();
    }
    let mut buf = [0u8; 64];
    let mut i = buf.len();
    while v > 0 {
        i -= 1;
        buf[i] = DIGITS[(v % base) as usize];
        v /= base;
    }
    String::from_utf8_lossy(&buf[i..]).into_owned()
}

/// Read a numeral in `base` (case-insensitive); `None` on any other character.
fn from_base(s: &str, base: u32) -> Option<u128> {
    let s = s.trim();
    if s.is_empty() || s.len() > 128 {
        return None;
    }
    let mut v: u128 = 0;
    for c in s.chars() {
        let d = c.to_digit(36)?;
        if d >= base {
            return None;
        }
        v = v.checked_mul(base as u128)?.checked_add(d as u128)?;
    }
    Some(v)
}

fn base_name(b: u64) -> String {
    match b {
        2 => "base 2 (binary)".into(),
        8 => "base 8 (octal)".into(),
        10 => "base 10 (decimal)".into(),
        16 => "base 16 (hexadecimal)".into(),
        _ => format!("base {b}"),
    }
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Text(
                "Rewrite a number from one base in another base.\nNumber: {number}\nIt is written in base: {from_base}\nWrite it in base: {to_base}",
            ),
            Piece::Text(
                "For digit values above 9 use the letters a-z (a = 10, ..., z = 35; letter case does not matter). Write the digits only, with no prefix such as 0x.",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[Piece::Text(
            "The base-{from_base} numeral {number} names an integer. Write the same integer in base {to_base}: digit values 10 to 35 are the letters a to z (either case), and no prefix such as 0x is used.",
        )],
    ),
];

impl Family for BaseConversion {
    fn name(&self) -> &'static str {
        "base_conversion"
    }
    fn category(&self) -> Category {
        Category::Arithmetic
    }
    fn description(&self) -> &'static str {
        "Convert an integer from one base (2..36) to another"
    }
    fn version(&self) -> u32 {
        // 2: no format example (it was chosen by looking at the gold).
        2
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let bases = match level.idx() {
            0 => json!([2, 10]),
            1 => json!([2, 8, 10, 16]),
            2 => json!({"min": 2, "max": 16}),
            _ => json!({"min": 2, "max": 36}),
        };
        json!({"bases": bases, "value_min": MIN_VALUE[level.idx()], "value_max": MAX_VALUE[level.idx()]})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let i = level.idx();
        let (from, to) = loop {
            let pick = |rng: &mut ChaCha20Rng| -> u64 {
                match i {
                    0 => [2, 10][rng.random_range(0..2)],
                    1 => [2, 8, 10, 16][rng.random_range(0..4)],
                    2 => rng.random_range(2..=16),
                    _ => rng.random_range(2..=36),
                }
            };
            let (a, b) = (pick(rng), pick(rng));
            if a != b {
                break (a, b);
            }
        };
        let value = rng.random_range(MIN_VALUE[i]..=MAX_VALUE[i]);
        let number = to_base(value, from);
        let answer = to_base(value, to);
        Generated {
            body: Body::of(format!(
                "Convert the number {number}, written in {}, to {}. Digits above 9 are written \
                 as letters a-z (a = 10, ..., z = 35; letter case does not matter). Write the \
                 digits only, without a prefix such as 0x.",
                base_name(from),
                base_name(to),
            )),
            format: AnswerFormat::new(format!("as a base-{to} numeral")),
            answer,
            metadata: fields([
                ("number", Value::from(number)),
                ("from_base", Value::from(from)),
                ("to_base", Value::from(to)),
            ]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let Some(to) = Meta::of(instance).u64("to_base") else {
            return 0.0;
        };
        if !(2..=36).contains(&to) {
            return 0.0;
        }
        match (
            from_base(answer, to as u32),
            from_base(&instance.answer, to as u32),
        ) {
            (Some(a), Some(g)) if a == g => 1.0,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        assert_eq!(to_base(255, 16), "ff");
        assert_eq!(to_base(35, 36), "z");
        assert_eq!(to_base(5, 2), "101");
        assert_eq!(from_base("FF", 16), Some(255));
        assert_eq!(from_base("00ff", 16), Some(255));
        assert_eq!(from_base("0xff", 16), None);
        assert_eq!(from_base("12", 2), None);
        assert_eq!(from_base("1 0", 2), None);
        assert_eq!(from_base("-1", 2), None);
    }
}
