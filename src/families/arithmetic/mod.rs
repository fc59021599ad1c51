//! Arithmetic families: number theory and exact calculation.

mod base_conversion;
mod basic_arithmetic;
mod chain_sum;
mod count_primes;
mod fraction_simplification;
mod gcd;
mod lcm;
mod number_theory;
mod power_function;
mod prime_factorization;

use super::Family;

pub static FAMILIES: &[&dyn Family] = &[
    &count_primes::CountPrimes,
    &basic_arithmetic::BasicArithmetic,
    &chain_sum::ChainSum,
    &gcd::Gcd,
    &lcm::Lcm,
    &prime_factorization::PrimeFactorization,
    &base_conversion::BaseConversion,
    &fraction_simplification::FractionSimplification,
    &power_function::PowerFunction,
];
