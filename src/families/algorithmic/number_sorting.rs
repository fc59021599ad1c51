//! `number_sorting`: sort integers or decimals exactly, ascending or descending.
//!
//! Numbers are compared as exact decimals (never as floats), and there is no tolerance:
//! an answer is right only if it lists exactly the given numbers (with multiplicity) in
//! the requested order. A number may be written with or without trailing zeros
//! (`2.50` equals `2.5`), with a leading `+` or leading zeros, or as `.5` for `0.5`;
//! items are separated by commas and/or whitespace, optionally inside one pair of
//! brackets. Thousands separators are not allowed inside the list (a comma always
//! separates items).
//!
//! Levels (count, magnitude bound, decimal places):
//! 1: 3..=5 integers in 0..=99 · 2: 5..=8 integers in -100..=100 ·
//! 3: 8..=12 numbers in -1000..=1000 with 0..=1 decimal places ·
//! 4: 12..=20 numbers in -10000..=10000 with 0..=2 decimal places ·
//! 5: 20..=30 numbers in -100000..=100000 with 0..=3 decimal places, drawn in clusters
//! so that many share their integer part.
//! Direction: ascending or descending with equal probability.

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct NumberSorting;

/// (min count, max count, lowest value, highest value, max decimal places) per level.
const PARAMS: [(usize, usize, i64, i64, u32); 5] = [
    (3, 5, 0, 99, 0),
    (5, 8, -100, 100, 0),
    (8, 12, -1000, 1000, 1),
    (12, 20, -10_000, 10_000, 2),
    (20, 30, -100_000, 100_000, 3),
];

/// Fixed scale for exact comparison: every number is held as `value * 10^SCALE`.
const SCALE: u32 = 6;

/// Parse an exact decimal like `-12.50`, `+3`, `.5` into units of `10^-SCALE`.
/// `None` for anything else, or for more than `SCALE` significant decimal places.
fn decimal(s: &str) -> Option<i128> {
    let t = s.trim();
    let (neg, body) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let (int_part, frac) = match body.split_once('.') {
        Some((i, f)) => (i, f),
        None => (body, ""),
    };
    if int_part.is_empty() && frac.is_empty() {
        return None;
    }
    if !int_part.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if body.ends_with('.') {
        return None;
    }
    let frac = frac.trim_end_matches('0');
    if frac.len() > SCALE as usize || int_part.len() > 24 {
        return None;
    }
    let ip: i128 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().ok()?
    };
    let fp: i128 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    let v = ip
        .checked_mul(10i128.pow(SCALE))?
        .checked_add(fp.checked_mul(10i128.pow(SCALE - frac.len() as u32))?)?;
    Some(if neg { -v } else { v })
}

/// Canonical text of `m * 10^-places`: no trailing zeros, no `-0`.
fn render(m: i64, places: u32) -> String {
    let p = 10i64.pow(places);
    let (neg, a) = (m < 0, m.unsigned_abs());
    let (ip, mut fp) = (a / p as u64, a % p as u64);
    let mut s = String::new();
    if neg {
        s.push('-');
    }
    s.push_str(&ip.to_string());
    if fp != 0 {
        let mut digits = places as usize;
        while fp % 10 == 0 {
            fp /= 10;
            digits -= 1;
        }
        s.push('.');
        s.push_str(&format!("{fp:0digits$}"));
    }
    s
}

fn sorted_values(numbers: &[&str], descending: bool) -> Option<Vec<i128>> {
    let mut v = numbers
        .iter()
        .map(|s| decimal(s))
        .collect::<Option<Vec<_>>>()?;
    v.sort_unstable();
    if descending {
        v.reverse();
    }
    Some(v)
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
                "Arrange the following numbers in {order} order. Keep every number, repeats included, and write each one exactly as given (no rounding).",
            ),
            Piece::Data("{numbers|lines}"),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[Piece::Text(
            "Numbers (separated by semicolons): {numbers|semicolon}\nSort them in {order} order. Every number must appear as often as it does here, written exactly (no rounding).",
        )],
    ),
];

impl Family for NumberSorting {
    fn name(&self) -> &'static str {
        "number_sorting"
    }
    fn category(&self) -> Category {
        Category::Algorithmic
    }
    fn description(&self) -> &'static str {
        "Sort integers or decimals exactly, ascending or descending"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi, min, max, places) = PARAMS[level.idx()];
        json!({"count_min": lo, "count_max": hi, "value_min": min, "value_max": max,
               "decimal_places_max": places, "clustered": level.get() == 5})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi, min, max, places) = PARAMS[level.idx()];
        let n = rng.random_range(lo..=hi);
        let p = 10i64.pow(places);
        let clustered = level.get() == 5;
        let centres: Vec<i64> = (0..3).map(|_| rng.random_range(min..=max)).collect();
        let mut numbers: Vec<String> = Vec::with_capacity(n);
        for _ in 0..n {
            let m = if clustered && rng.random_bool(0.6) {
                let c = centres[rng.random_range(0..centres.len())];
                (c * p + rng.random_range(-2 * p..=2 * p)).clamp(min * p, max * p)
            } else {
                rng.random_range(min * p..=max * p)
            };
            // Keep `d` decimal places (truncating towards zero stays inside the range).
            let d = rng.random_range(0..=places);
            let unit = 10i64.pow(places - d);
            numbers.push(render(m - m % unit, places));
        }
        let descending = rng.random_bool(0.5);
        let refs: Vec<&str> = numbers.iter().map(String::as_str).collect();
        let mut order: Vec<(i128, usize)> = refs
            .iter()
            .enumerate()
            .map(|(i, s)| (decimal(s).unwrap_or_default(), i))
            .collect();
        order.sort_unstable();
        if descending {
            order.reverse();
        }
        let gold: Vec<&str> = order.iter().map(|&(_, i)| refs[i]).collect();
        let dir = if descending {
            "descending"
        } else {
            "ascending"
        };
        let example = if places == 0 {
            "-3, 0, 12"
        } else {
            "-3.25, 0, 12.5"
        };
        let example = if descending {
            if places == 0 {
                "12, 0, -3"
            } else {
                "12.5, 0, -3.25"
            }
        } else {
            example
        };
        Generated {
            body: Body::new()
                .text(format!(
                    "Sort these numbers in {dir} order. Keep every number, including repeats, \
                     and write each one exactly (no rounding)."
                ))
                .data(format!("Numbers: {}", numbers.join(", "))),
            format: AnswerFormat::with_example(
                "as the sorted numbers separated by commas",
                example,
            ),
            answer: gold.join(", "),
            metadata: fields([
                ("numbers", Value::from(numbers)),
                ("order", Value::from(dir)),
            ]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let m = Meta::of(instance);
        let (Some(nums), Some(order)) = (m.strs("numbers"), m.choice("order", &ORDERS)) else {
            return 0.0;
        };
        let descending = order == 1;
        let Some(want) = sorted_values(&nums, descending) else {
            return 0.0;
        };
        let Some(items) = parse::list_items(answer) else {
            return 0.0;
        };
        if items.len() != want.len() {
            return 0.0;
        }
        for (item, w) in items.iter().zip(&want) {
            if decimal(item) != Some(*w) {
                return 0.0;
            }
        }
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::{decimal, render};

    #[test]
    fn decimals_are_exact() {
        assert_eq!(decimal("2.50"), decimal("2.5"));
        assert_eq!(decimal(".5"), decimal("0.5"));
        assert_eq!(decimal("+3"), decimal("3.000"));
        assert_ne!(decimal("0.1"), decimal("0.10000001"));
        assert_eq!(decimal("-0.25"), Some(-250_000));
        for bad in [
            "",
            ".",
            "-",
            "1.",
            "1.2.3",
            "1e3",
            "0x1",
            "1,5",
            "- 1",
            "1.0000001",
        ] {
            assert_eq!(decimal(bad), None, "{bad:?}");
        }
        assert_eq!(decimal(&"9".repeat(60)), None);
    }

    #[test]
    fn rendering_is_canonical() {
        assert_eq!(render(-2500, 3), "-2.5");
        assert_eq!(render(7, 2), "0.07");
        assert_eq!(render(-7, 2), "-0.07");
        assert_eq!(render(0, 3), "0");
        assert_eq!(render(1200, 2), "12");
    }
}
