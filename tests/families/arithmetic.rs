//! Independent re-solvers for the arithmetic families.

use harness_rl::families::Instance;

use crate::Resolver;

fn u(inst: &Instance, key: &str) -> u64 {
    inst.metadata[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{}: metadata.{key}", inst.id))
}

/// Trial division, one number at a time (the generator sieves).
fn count_primes(inst: &Instance) -> String {
    let is_prime = |n: u64| n >= 2 && (2..).take_while(|d| d * d <= n).all(|d| n % d != 0);
    (u(inst, "start")..=u(inst, "end"))
        .filter(|&n| is_prime(n))
        .count()
        .to_string()
}

pub fn resolvers() -> Vec<Resolver> {
    vec![Resolver {
        family: "count_primes",
        unique: true,
        solve: count_primes,
    }]
}
