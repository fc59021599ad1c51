//! Arithmetic families: number theory and exact calculation.

mod base_conversion;
mod basic_arithmetic;
mod bitwise_arithmetic;
mod calendar_arithmetic;
mod chain_sum;
mod count_primes;
mod decimal_arithmetic;
mod fraction_simplification;
mod gcd;
mod lcm;
mod number_theory;
mod polynomial_multiplication;
mod power_function;
mod prime_factorization;
mod simple_equations;

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
    &decimal_arithmetic::DecimalArithmetic,
    &bitwise_arithmetic::BitwiseArithmetic,
    &calendar_arithmetic::CalendarArithmetic,
    &simple_equations::SimpleEquations,
    &polynomial_multiplication::PolynomialMultiplication,
];
