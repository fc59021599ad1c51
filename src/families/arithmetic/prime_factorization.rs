//! `prime_factorization`: write an integer as a product of primes.
//!
//! Levels (how n is drawn):
//! 1: n uniform in 2..=60 · 2: 2..=1_000 · 3: 2..=20_000 · 4: 2..=1_000_000 ·
//! 5: n = (2..=4 primes below 100) × (one prime in 1_000..=1_000_000), n ≤ 10^12.
//! Gold: primes in ascending order joined by ` × `, e.g. `2 × 2 × 3`.
//! Verifier (order-insensitive, checks the mathematics, not the string): the answer is
//! one or more factors separated by `×`, `*`, `x`, `X` or `·` (whitespace around them
//! ignored); a factor is `p` or `p^e` (`e` in 1..=64); every `p` must be prime and the
//! product must equal `n` (read from `metadata.n`). By unique factorisation this
//! accepts exactly the correct factorisation in any order or power notation, and
//! rejects everything else (commas, words, a composite factor, `1`, a wrong product).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use super::number_theory::{is_prime, small_primes};
use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct PrimeFactorization;

const MAX_N: [u64; 4] = [60, 1_000, 20_000, 1_000_000];

/// Prime factors of `n` (ascending, with repetition); exact for n < 2000^2.
fn factor_small(mut n: u64) -> Vec<u64> {
    let mut out = Vec::new();
    for &p in small_primes() {
        if p * p > n {
            break;
        }
        while n % p == 0 {
            out.push(p);
            n /= p;
        }
    }
    if n > 1 {
        out.push(n);
    }
    out
}

/// Parse an answer into its product, `None` unless every factor is a prime power.
fn product_of_prime_factors(answer: &str) -> Option<u64> {
    let mut product: u64 = 1;
    let mut any = false;
    for piece in answer.split(['×', '*', 'x', 'X', '·']) {
        let piece = piece.trim();
        let (base, exp) = match piece.split_once('^') {
            Some((b, e)) => (b.trim(), e.trim()),
            None => (piece, "1"),
        };
        let digits =
            |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(base) || !digits(exp) {
            return None;
        }
        let p: u64 = base.parse().ok()?;
        let e: u32 = exp.parse().ok()?;
        if !(1..=64).contains(&e) || !is_prime(p) {
            return None;
        }
        product = product.checked_mul(p.checked_pow(e)?)?;
        any = true;
    }
    any.then_some(product)
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[Piece::Text(
            "Write {n} as a product of prime numbers, separated by ×, listing a prime again each time it divides (for example 12 = 2 × 2 × 3); powers such as 2^2 are accepted too.",
        )],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Data("n = {n}"),
            Piece::Text(
                "Factor n into primes. Join the prime factors with ×, repeating a prime as often as it occurs (12 gives 2 × 2 × 3); a power such as 2^2 is also accepted.",
            ),
        ],
    ),
];

impl Family for PrimeFactorization {
    fn name(&self) -> &'static str {
        "prime_factorization"
    }
    fn category(&self) -> Category {
        Category::Arithmetic
    }
    fn description(&self) -> &'static str {
        "Factor an integer into primes (any order, powers allowed)"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        match level.idx() {
            i @ 0..=3 => json!({"n_min": 2, "n_max": MAX_N[i], "construction": "uniform"}),
            _ => json!({
                "n_max": 1_000_000_000_000u64, "construction": "product",
                "small_primes_count": [2, 4], "small_prime_max": 100,
                "large_prime_min": 1_000, "large_prime_max": 1_000_000,
            }),
        }
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let factors = match level.idx() {
            i @ 0..=3 => factor_small(rng.random_range(2..=MAX_N[i])),
            _ => {
                // The first 25 primes are those below 100.
                let k = rng.random_range(2..=4);
                let mut f: Vec<u64> = (0..k)
                    .map(|_| small_primes()[rng.random_range(0..25)])
                    .collect();
                let large = loop {
                    let c = rng.random_range(1_000..=1_000_000u64) | 1;
                    if is_prime(c) {
                        break c;
                    }
                };
                f.push(large);
                f.sort_unstable();
                f
            }
        };
        let n: u64 = factors.iter().product();
        let answer = factors
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(" × ");
        let example = if n == 42 {
            "2 × 2 × 5"
        } else {
            "2 × 3 × 7"
        };
        Generated {
            body: Body::of(format!(
                "Find the prime factorization of {n}. Write it as a product of prime numbers \
                 separated by ×, listing repeated primes again (for example 12 = 2 × 2 × 3); \
                 powers such as 2^2 are also accepted."
            )),
            format: AnswerFormat::with_example("as a product of primes", example),
            answer,
            metadata: fields([("n", Value::from(n)), ("factors", Value::from(factors))]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        match (
            Meta::of(instance).u64("n"),
            product_of_prime_factors(answer),
        ) {
            (Some(n), Some(p)) if n == p => 1.0,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_documented_form() {
        for a in ["2 × 2 × 3", "3*2*2", "2^2 x 3", "2^2·3", " 3 X 2 ^ 2 "] {
            assert_eq!(product_of_prime_factors(a), Some(12), "{a}");
        }
        for a in [
            "",
            "2, 2, 3",
            "4 × 3",
            "1 × 12",
            "2 2 3",
            "2 × × 3",
            "2^0 × 12",
            "2**2*3",
            "12",
        ] {
            assert_ne!(product_of_prime_factors(a), Some(12), "{a}");
        }
        assert_eq!(product_of_prime_factors("2^64"), None);
        assert_eq!(factor_small(360), vec![2, 2, 2, 3, 3, 5]);
        assert_eq!(factor_small(999_983), vec![999_983]);
    }
}
