//! Number theory shared by the arithmetic families: gcd, modular powers, deterministic
//! primality, a small prime table. (Metadata, text and parameter plumbing live in
//! `families::kit`.)

/// Greatest common divisor (Euclid); `gcd(0, 0) == 0`.
pub fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `a * b mod m` without overflow.
pub fn mul_mod(a: u64, b: u64, m: u64) -> u64 {
    ((a as u128 * b as u128) % m as u128) as u64
}

/// `base^exp mod m` by right-to-left binary exponentiation (`m >= 1`).
pub fn pow_mod(base: u64, mut exp: u64, m: u64) -> u64 {
    if m == 1 {
        return 0;
    }
    let mut result = 1 % m;
    let mut b = base % m;
    while exp > 0 {
        if exp & 1 == 1 {
            result = mul_mod(result, b, m);
        }
        b = mul_mod(b, b, m);
        exp >>= 1;
    }
    result
}

/// Deterministic Miller-Rabin primality test, exact for every `u64`.
pub fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    const SMALL: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    for p in SMALL {
        if n % p == 0 {
            return n == p;
        }
    }
    let mut d = n - 1;
    let mut s = 0;
    while d % 2 == 0 {
        d /= 2;
        s += 1;
    }
    'witness: for a in SMALL {
        let mut x = pow_mod(a, d, n);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul_mod(x, x, n);
            if x == n - 1 {
                continue 'witness;
            }
        }
        return false;
    }
    true
}

/// Primes below 2000, computed once by a sieve.
pub fn small_primes() -> &'static [u64] {
    use std::sync::OnceLock;
    static P: OnceLock<Vec<u64>> = OnceLock::new();
    P.get_or_init(|| {
        const N: usize = 2000;
        let mut comp = [false; N];
        let mut v = Vec::new();
        for i in 2..N {
            if !comp[i] {
                v.push(i as u64);
                let mut j = i * i;
                while j < N {
                    comp[j] = true;
                    j += i;
                }
            }
        }
        v
    })
}

/// Whether all items differ (small slices: quadratic scan, no allocation).
pub fn distinct(v: &[u64]) -> bool {
    v.iter().enumerate().all(|(i, x)| !v[..i].contains(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primality_matches_trial_division() {
        for n in 0..5000u64 {
            let slow = n >= 2 && (2..n).take_while(|d| d * d <= n).all(|d| n % d != 0);
            assert_eq!(is_prime(n), slow, "{n}");
        }
        assert!(is_prime(1_000_000_007));
        assert!(!is_prime(3_215_031_751)); // strong pseudoprime to bases 2, 3, 5, 7
        assert!(is_prime(18_446_744_073_709_551_557));
    }

    #[test]
    fn modular_power() {
        assert_eq!(pow_mod(2, 10, 1000), 24);
        assert_eq!(pow_mod(5, 0, 7), 1);
        assert_eq!(pow_mod(5, 3, 1), 0);
        assert_eq!(small_primes().len(), 303);
    }
}
