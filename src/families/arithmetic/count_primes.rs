//! `count_primes`: how many primes lie in an inclusive interval.
//!
//! Levels (interval start range, interval width range):
//! 1: start 1..=20, width 5..=15 · 2: start 1..=200, width 10..=50 ·
//! 3: start 1..=1000, width 50..=200 · 4: start 1..=100_000, width 200..=1000 ·
//! 5: start 1..=10_000_000, width 1000..=10_000.
//! Gold: a sieve of Eratosthenes over the interval using primes up to sqrt(end).
//! Verifier: one integer (see `families::parse::int`).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::fields;
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct CountPrimes;

/// (start max, width min, width max) per level.
const PARAMS: [(u64, u64, u64); 5] = [
    (20, 5, 15),
    (200, 10, 50),
    (1000, 50, 200),
    (100_000, 200, 1000),
    (10_000_000, 1000, 10_000),
];

/// Number of primes in `lo..=hi` by a segmented sieve.
fn count_in(lo: u64, hi: u64) -> u64 {
    let lo = lo.max(2);
    if hi < lo {
        return 0;
    }
    let root = (hi as f64).sqrt() as u64 + 1;
    let mut small = vec![true; (root + 1) as usize];
    let mut base = Vec::new();
    for i in 2..=root {
        if small[i as usize] {
            base.push(i);
            let mut j = i * i;
            while j <= root {
                small[j as usize] = false;
                j += i;
            }
        }
    }
    let mut seg = vec![true; (hi - lo + 1) as usize];
    for p in base {
        let mut j = (lo.div_ceil(p) * p).max(p * p);
        while j <= hi {
            seg[(j - lo) as usize] = false;
            j += p;
        }
    }
    seg.iter().filter(|&&b| b).count() as u64
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[Piece::Text(
            "Count the prime numbers p with {start} ≤ p ≤ {end} (both ends of the range are included).",
        )],
    ),
    Template::new(
        Wording::Lead,
        &[Piece::Text(
            "Range: {start} to {end}, both ends included.\nHow many primes lie in this range?",
        )],
    ),
];

impl Family for CountPrimes {
    fn name(&self) -> &'static str {
        "count_primes"
    }
    fn category(&self) -> Category {
        Category::Arithmetic
    }
    fn description(&self) -> &'static str {
        "Count the prime numbers in an inclusive integer interval"
    }
    fn version(&self) -> u32 {
        // 2: the format example is one more than the interval's width, never the gold.
        2
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (smax, wmin, wmax) = PARAMS[level.idx()];
        json!({"start_min": 1, "start_max": smax, "width_min": wmin, "width_max": wmax})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (smax, wmin, wmax) = PARAMS[level.idx()];
        let start = rng.random_range(1..=smax);
        let end = start + rng.random_range(wmin..=wmax);
        let count = count_in(start, end);
        Generated {
            body: Body::of(format!(
                "How many prime numbers are there between {start} and {end}, inclusive?"
            )),
            // More primes than numbers in the interval is impossible.
            format: AnswerFormat::with_example(
                "as a single integer",
                (end - start + 2).to_string(),
            ),
            answer: count.to_string(),
            metadata: fields([("start", Value::from(start)), ("end", Value::from(end))]),
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

#[cfg(test)]
mod tests {
    use super::count_in;

    #[test]
    fn small_intervals() {
        assert_eq!(count_in(1, 10), 4);
        assert_eq!(count_in(2, 2), 1);
        assert_eq!(count_in(14, 16), 0);
        assert_eq!(count_in(1, 100), 25);
        assert_eq!(count_in(1, 1_000_000), 78_498);
    }
}
