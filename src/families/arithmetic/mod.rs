//! Arithmetic families: number theory and exact calculation.

mod count_primes;

use super::Family;

pub static FAMILIES: &[&dyn Family] = &[&count_primes::CountPrimes];
