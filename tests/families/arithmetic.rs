//! Independent re-solvers for the arithmetic families, plus focused verifier tests.
//!
//! Each re-solver reads only `metadata` and uses a different algorithm from the
//! generator: a recursive-descent parser of the shown expression instead of the
//! generator's tree, divisor enumeration instead of Euclid, prime-exponent maxima
//! instead of `a / gcd * b`, trial division by every integer, Horner evaluation and
//! highest-power-first digit extraction, left-to-right square-and-multiply.

use harness_rl::families::{self, Instance, Level};

use crate::Resolver;

fn u(inst: &Instance, key: &str) -> u64 {
    inst.metadata[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{}: metadata.{key}", inst.id))
}

fn nums(inst: &Instance) -> Vec<u64> {
    inst.metadata["numbers"]
        .as_array()
        .unwrap_or_else(|| panic!("{}: metadata.numbers", inst.id))
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

/// Trial division, one number at a time (the generator sieves).
fn count_primes(inst: &Instance) -> String {
    let is_prime = |n: u64| n >= 2 && (2..).take_while(|d| d * d <= n).all(|d| n % d != 0);
    (u(inst, "start")..=u(inst, "end"))
        .filter(|&n| is_prime(n))
        .count()
        .to_string()
}

/// Recursive-descent evaluation of `expr := term (('+'|'-') term)*`,
/// `term := atom (('*'|'/') atom)*`, `atom := number | '(' expr ')'`. Panics on an
/// inexact division, which would contradict the family's promise.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn skip(&mut self) {
        while self.i < self.s.len() && self.s[self.i] == b' ' {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.skip();
        self.s.get(self.i).copied()
    }
    fn expr(&mut self) -> i128 {
        let mut v = self.term();
        while let Some(c @ (b'+' | b'-')) = self.peek() {
            self.i += 1;
            let r = self.term();
            v = if c == b'+' { v + r } else { v - r };
        }
        v
    }
    fn term(&mut self) -> i128 {
        let mut v = self.atom();
        while let Some(c @ (b'*' | b'/')) = self.peek() {
            self.i += 1;
            let r = self.atom();
            if c == b'*' {
                v *= r;
            } else {
                assert!(r != 0 && v % r == 0, "inexact division {v} / {r}");
                v /= r;
            }
        }
        v
    }
    fn atom(&mut self) -> i128 {
        if self.peek() == Some(b'(') {
            self.i += 1;
            let v = self.expr();
            assert_eq!(self.peek(), Some(b')'));
            self.i += 1;
            return v;
        }
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i])
            .unwrap()
            .parse()
            .expect("a number")
    }
}

fn eval_text(text: &str) -> i128 {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    let v = p.expr();
    assert_eq!(p.peek(), None, "trailing text in {text:?}");
    v
}

fn basic_arithmetic(inst: &Instance) -> String {
    let expr = inst.metadata["expression"].as_str().unwrap();
    // The expression in metadata must be the one the question shows.
    assert!(inst.question.contains(expr));
    eval_text(expr).to_string()
}

fn chain_sum(inst: &Instance) -> String {
    let expr = inst.metadata["expression"].as_str().unwrap();
    assert!(inst.question.contains(expr));
    eval_text(expr).to_string()
}

/// Largest divisor of the smallest number that divides all of them.
fn gcd(inst: &Instance) -> String {
    let n = nums(inst);
    let m = *n.iter().min().unwrap();
    let mut best = 1;
    let mut d = 1;
    while d * d <= m {
        if m % d == 0 {
            for c in [d, m / d] {
                if c > best && n.iter().all(|x| x % c == 0) {
                    best = c;
                }
            }
        }
        d += 1;
    }
    best.to_string()
}

fn factor(mut n: u64) -> Vec<(u64, u32)> {
    let mut out = Vec::new();
    let mut d = 2;
    while d * d <= n {
        let mut e = 0;
        while n % d == 0 {
            n /= d;
            e += 1;
        }
        if e > 0 {
            out.push((d, e));
        }
        d += 1;
    }
    if n > 1 {
        out.push((n, 1));
    }
    out
}

/// Product of each prime to its highest exponent among the numbers.
fn lcm(inst: &Instance) -> String {
    let mut best: std::collections::BTreeMap<u64, u32> = Default::default();
    for x in nums(inst) {
        for (p, e) in factor(x) {
            let b = best.entry(p).or_default();
            *b = (*b).max(e);
        }
    }
    best.iter()
        .map(|(&p, &e)| (p as u128).pow(e))
        .product::<u128>()
        .to_string()
}

/// Trial division by every integer; answers in power notation, largest prime first, to
/// exercise the verifier's order- and notation-insensitivity.
fn prime_factorization(inst: &Instance) -> String {
    let f = factor(u(inst, "n"));
    f.iter()
        .rev()
        .map(|&(p, e)| {
            if e == 1 {
                p.to_string()
            } else {
                format!("{p}^{e}")
            }
        })
        .collect::<Vec<_>>()
        .join(" * ")
}

/// Horner evaluation of the shown numeral, then digits from the highest power down,
/// in upper case (the verifier ignores case).
fn base_conversion(inst: &Instance) -> String {
    let digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let from = u(inst, "from_base") as u128;
    let to = u(inst, "to_base") as u128;
    let number = inst.metadata["number"].as_str().unwrap();
    let mut v: u128 = 0;
    for c in number.chars() {
        let d = digits.find(c.to_ascii_uppercase()).unwrap() as u128;
        assert!(d < from);
        v = v * from + d;
    }
    let mut power = 1u128;
    while power * to <= v {
        power *= to;
    }
    let mut out = String::new();
    loop {
        let d = v / power;
        out.push(digits.as_bytes()[d as usize] as char);
        v -= d * power;
        if power == 1 {
            break;
        }
        power /= to;
    }
    out
}

/// Divide out common factors, smallest first.
fn fraction_simplification(inst: &Instance) -> String {
    let (mut p, mut q) = (u(inst, "numerator"), u(inst, "denominator"));
    let mut d = 2;
    while d <= p.min(q) {
        if p % d == 0 && q % d == 0 {
            p /= d;
            q /= d;
        } else {
            d += 1;
        }
    }
    format!("{p}/{q}")
}

/// Repeated multiplication for exact powers; left-to-right square-and-multiply for
/// modular ones (the generator goes right to left).
fn power_function(inst: &Instance) -> String {
    let b = inst.metadata["base"].as_i64().unwrap();
    let e = u(inst, "exponent");
    match inst.metadata["modulus"].as_u64() {
        None => {
            let mut v: i128 = 1;
            for _ in 0..e {
                v = v.checked_mul(b as i128).unwrap();
            }
            v.to_string()
        }
        Some(m) => {
            let (b, m) = (b as u128 % m as u128, m as u128);
            let mut v: u128 = 1 % m;
            for bit in (0..64).rev() {
                v = v * v % m;
                if (e >> bit) & 1 == 1 {
                    v = v * b % m;
                }
            }
            v.to_string()
        }
    }
}

pub fn resolvers() -> Vec<Resolver> {
    vec![
        Resolver {
            family: "count_primes",
            unique: true,
            solve: count_primes,
        },
        Resolver {
            family: "basic_arithmetic",
            unique: true,
            solve: basic_arithmetic,
        },
        Resolver {
            family: "chain_sum",
            unique: true,
            solve: chain_sum,
        },
        Resolver {
            family: "gcd",
            unique: true,
            solve: gcd,
        },
        Resolver {
            family: "lcm",
            unique: true,
            solve: lcm,
        },
        Resolver {
            family: "prime_factorization",
            unique: true,
            solve: prime_factorization,
        },
        Resolver {
            family: "base_conversion",
            unique: true,
            solve: base_conversion,
        },
        Resolver {
            family: "fraction_simplification",
            unique: true,
            solve: fraction_simplification,
        },
        Resolver {
            family: "power_function",
            unique: true,
            solve: power_function,
        },
    ]
}

fn inst(family: &str, level: u8, index: u64) -> (&'static dyn families::Family, Instance) {
    let f = families::get(family).unwrap();
    (
        f,
        families::generate(f, Level::new(level).unwrap(), 3, index),
    )
}

/// Find an instance whose metadata satisfies `pred`.
fn find(
    family: &str,
    level: u8,
    pred: impl Fn(&Instance) -> bool,
) -> (&'static dyn families::Family, Instance) {
    (0..2000)
        .map(|i| inst(family, level, i))
        .find(|(_, x)| pred(x))
        .unwrap_or_else(|| panic!("no {family} instance matches"))
}

#[test]
fn prime_factorization_accepts_every_notation_and_order() {
    let (f, x) = find("prime_factorization", 3, |x| {
        factor(u(x, "n")).iter().any(|&(_, e)| e >= 2) && factor(u(x, "n")).len() >= 2
    });
    let fs = factor(u(&x, "n"));
    let expanded: Vec<String> = fs
        .iter()
        .flat_map(|&(p, e)| std::iter::repeat_n(p.to_string(), e as usize))
        .collect();
    let powers: Vec<String> = fs.iter().map(|&(p, e)| format!("{p}^{e}")).collect();
    let mut rev = expanded.clone();
    rev.reverse();
    for a in [
        expanded.join(" × "),
        expanded.join("*"),
        rev.join(" x "),
        powers.join(" · "),
        powers.join(" X "),
    ] {
        assert_eq!(f.verify(&x, &a), 1.0, "{a} for {}", x.answer);
    }
    // A composite factor, a missing factor, `1 ×`, commas and bare spaces all fail.
    let (p0, _) = fs[0];
    let mut merged = expanded.clone();
    let first = merged.remove(0).parse::<u64>().unwrap() * merged.remove(0).parse::<u64>().unwrap();
    merged.insert(0, first.to_string());
    for a in [
        merged.join(" × "),
        expanded[1..].join(" × "),
        format!("1 × {}", expanded.join(" × ")),
        expanded.join(", "),
        expanded.join(" "),
        format!("{} × {p0}", expanded.join(" × ")),
    ] {
        assert_eq!(f.verify(&x, &a), 0.0, "{a} for {}", x.answer);
    }
}

#[test]
fn base_conversion_ignores_case_and_leading_zeros_only() {
    let (f, x) = find("base_conversion", 4, |x| {
        u(x, "to_base") == 16 && x.answer.bytes().any(|b| b.is_ascii_alphabetic())
    });
    assert_eq!(f.verify(&x, &x.answer.to_uppercase()), 1.0);
    assert_eq!(f.verify(&x, &format!("00{}", x.answer)), 1.0);
    for bad in [
        format!("0x{}", x.answer),
        format!("{}h", x.answer),
        format!("-{}", x.answer),
        // A numeral is digits only: no sign at all, not even `+` (the question says
        // "digits only"; the README lists this exception to the `+` tolerance).
        format!("+{}", x.answer),
        x.answer[1..].to_string(),
    ] {
        assert_eq!(f.verify(&x, &bad), 0.0, "{bad}");
    }
    // A digit outside the target base fails even if it would read fine in base 36.
    let (f, x) = find("base_conversion", 2, |x| u(x, "to_base") == 2);
    assert_eq!(f.verify(&x, &x.answer.replace('1', "2")), 0.0);
}

#[test]
fn fraction_simplification_rejects_unreduced_equal_fractions() {
    let (f, x) = inst("fraction_simplification", 3, 0);
    let (p, q) = x.answer.split_once('/').unwrap();
    let (p, q): (u64, u64) = (p.parse().unwrap(), q.parse().unwrap());
    assert_eq!(f.verify(&x, &format!(" {p} / {q} ")), 1.0);
    assert_eq!(f.verify(&x, &format!("{}/{}", 2 * p, 2 * q)), 0.0);
    assert_eq!(
        f.verify(
            &x,
            &format!("{}/{}", u(&x, "numerator"), u(&x, "denominator"))
        ),
        0.0
    );
    assert_eq!(f.verify(&x, &format!("{q}/{p}")), 0.0);
    assert_eq!(f.verify(&x, &format!("{p}/{q}/1")), 0.0);
    // Signs: the numerator may carry `+` (like any integer); the denominator is
    // unsigned digits, and a negated fraction is another number.
    assert_eq!(f.verify(&x, &format!("+{p}/{q}")), 1.0);
    assert_eq!(f.verify(&x, &format!("0{p}/0{q}")), 1.0);
    for bad in [
        format!("{p}/+{q}"),
        format!("-{p}/-{q}"),
        format!("{p}/-{q}"),
        format!("-{p}/{q}"),
        format!("{p}"),
        format!("{p}:{q}"),
        format!("{p} / {q}."),
    ] {
        assert_eq!(f.verify(&x, &bad), 0.0, "{bad}");
    }
    // The shown fraction is never already reduced.
    for i in 0..200 {
        let (_, x) = inst("fraction_simplification", 1 + (i % 5) as u8, i);
        assert_ne!(
            x.answer,
            format!("{}/{}", u(&x, "numerator"), u(&x, "denominator"))
        );
    }
}

#[test]
fn arithmetic_questions_match_metadata_and_stay_in_range() {
    for i in 0..300 {
        let level = 1 + (i % 5) as u8;
        let (_, x) = inst("gcd", level, i);
        let max = x.metadata["params"]["number_max"].as_u64().unwrap();
        assert!(nums(&x).iter().all(|&n| n >= 1 && n <= max));
        let (_, x) = inst("power_function", level, i);
        assert!(x.question.contains(&format!("^{}", u(&x, "exponent"))));
        if let Some(m) = x.metadata["modulus"].as_u64() {
            assert!(x.answer.parse::<u64>().unwrap() < m);
        }
        let (_, x) = inst("basic_arithmetic", level, i);
        let lits = x.metadata["rpn"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t.as_str().unwrap().parse::<u64>().is_ok())
            .count() as u64;
        let p = &x.metadata["params"];
        assert!(
            lits >= p["literals_min"].as_u64().unwrap()
                && lits <= p["literals_max"].as_u64().unwrap()
        );
        if level <= 3 {
            assert!(!x.metadata["expression"].as_str().unwrap().contains('/'));
        }
    }
    // Division does appear at level 5, and parentheses somewhere.
    let with_div = (0..200)
        .filter(|&i| {
            inst("basic_arithmetic", 5, i).1.metadata["expression"]
                .as_str()
                .unwrap()
                .contains('/')
        })
        .count();
    assert!(with_div > 10, "{with_div}");
    let with_paren = (0..200)
        .filter(|&i| {
            inst("basic_arithmetic", 3, i).1.metadata["expression"]
                .as_str()
                .unwrap()
                .contains('(')
        })
        .count();
    assert!(with_paren > 10, "{with_paren}");
}
