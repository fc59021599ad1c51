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
        Resolver {
            family: "decimal_arithmetic",
            unique: true,
            solve: decimal_arithmetic,
        },
        Resolver {
            family: "bitwise_arithmetic",
            unique: true,
            solve: bitwise_arithmetic,
        },
        Resolver {
            family: "calendar_arithmetic",
            unique: true,
            solve: calendar_arithmetic,
        },
        Resolver {
            family: "simple_equations",
            unique: true,
            solve: simple_equations,
        },
        Resolver {
            family: "polynomial_multiplication",
            unique: true,
            solve: polynomial_multiplication,
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
        // "digits only"; docs/FAMILIES.md lists this exception to the `+` tolerance).
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

// ---------------------------------------------------------------------------------
// Families added for issue 8: decimal_arithmetic, bitwise_arithmetic,
// calendar_arithmetic, simple_equations, polynomial_multiplication.
// ---------------------------------------------------------------------------------

fn strs(inst: &Instance, key: &str) -> Vec<String> {
    inst.metadata[key]
        .as_array()
        .unwrap_or_else(|| panic!("{}: metadata.{key}", inst.id))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn text<'a>(inst: &'a Instance, key: &str) -> &'a str {
    inst.metadata[key]
        .as_str()
        .unwrap_or_else(|| panic!("{}: metadata.{key}", inst.id))
}

fn gcd_i(a: i128, b: i128) -> i128 {
    if b == 0 { a.abs() } else { gcd_i(b, a % b) }
}

/// A reduced fraction.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Q(i128, i128);

impl Q {
    fn new(n: i128, d: i128) -> Q {
        let g = gcd_i(n, d).max(1);
        let s = if d < 0 { -1 } else { 1 };
        Q(s * n / g, s * d / g)
    }
    fn add(self, o: Q) -> Q {
        Q::new(self.0 * o.1 + o.0 * self.1, self.1 * o.1)
    }
    fn sub(self, o: Q) -> Q {
        Q::new(self.0 * o.1 - o.0 * self.1, self.1 * o.1)
    }
    fn mul(self, o: Q) -> Q {
        Q::new(self.0 * o.0, self.1 * o.1)
    }
    fn div(self, o: Q) -> Q {
        Q::new(self.0 * o.1, self.1 * o.0)
    }
}

/// A decimal literal read digit by digit into a fraction.
fn q_of_decimal(s: &str) -> Q {
    let (neg, body) = s.strip_prefix('-').map_or((false, s), |b| (true, b));
    let (ip, fp) = body.split_once('.').unwrap_or((body, ""));
    let mut n: i128 = 0;
    for c in ip.chars().chain(fp.chars()) {
        n = n * 10 + i128::from(c.to_digit(10).unwrap());
    }
    let q = Q::new(n, 10i128.pow(fp.len() as u32));
    if neg { Q::new(-q.0, q.1) } else { q }
}

/// A fraction whose denominator divides a power of ten, written as the shortest decimal:
/// long division, one digit at a time.
fn decimal_of_q(q: Q) -> String {
    let neg = q.0 < 0;
    let (mut n, d) = (q.0.abs(), q.1);
    let mut s = format!("{}{}", if neg { "-" } else { "" }, n / d);
    n %= d;
    if n != 0 {
        s.push('.');
        let mut steps = 0;
        while n != 0 {
            n *= 10;
            s.push(char::from(b'0' + (n / d) as u8));
            n %= d;
            steps += 1;
            assert!(steps < 40, "not a terminating decimal");
        }
    }
    s
}

/// A stack machine over reduced fractions (the generator keeps a mantissa and a
/// power-of-ten scale per tree node).
fn decimal_arithmetic(inst: &Instance) -> String {
    let mut stack: Vec<Q> = Vec::new();
    for tok in strs(inst, "rpn") {
        match tok.as_str() {
            "+" | "-" | "*" => {
                let b = stack.pop().unwrap();
                let a = stack.pop().unwrap();
                stack.push(match tok.as_str() {
                    "+" => a.add(b),
                    "-" => a.sub(b),
                    _ => a.mul(b),
                });
            }
            lit => stack.push(q_of_decimal(lit)),
        }
    }
    assert_eq!(stack.len(), 1);
    decimal_of_q(stack[0])
}

/// Bit vectors of 128 booleans: AND/OR/XOR per bit, shifts by moving indices,
/// addition by a ripple-carry adder (the generator uses machine integers).
fn bitwise_arithmetic(inst: &Instance) -> String {
    type Bits = [bool; 128];
    let from = |v: u128| -> Bits { std::array::from_fn(|i| v >> i & 1 == 1) };
    let mut stack: Vec<Bits> = Vec::new();
    for tok in strs(inst, "rpn") {
        let op = tok.as_str();
        if let Ok(v) = op.parse::<u128>() {
            stack.push(from(v));
            continue;
        }
        let b = stack.pop().unwrap();
        let a = stack.pop().unwrap();
        let shift = (0..128)
            .filter(|&i| b[i])
            .map(|i| 1usize << i)
            .sum::<usize>();
        let r: Bits = match op {
            "&" => std::array::from_fn(|i| a[i] && b[i]),
            "|" => std::array::from_fn(|i| a[i] || b[i]),
            "^" => std::array::from_fn(|i| a[i] != b[i]),
            "<<" => std::array::from_fn(|i| i >= shift && a[i - shift]),
            ">>" => std::array::from_fn(|i| i + shift < 128 && a[i + shift]),
            "+" => {
                let mut out = [false; 128];
                let mut carry = false;
                for i in 0..128 {
                    let s = u8::from(a[i]) + u8::from(b[i]) + u8::from(carry);
                    out[i] = s & 1 == 1;
                    carry = s >= 2;
                }
                assert!(!carry);
                out
            }
            _ => panic!("unknown operator {op}"),
        };
        stack.push(r);
    }
    let bits = stack.pop().unwrap();
    let v: u128 = (0..128).filter(|&i| bits[i]).map(|i| 1u128 << i).sum();
    if inst.level >= 3 {
        format!("0x{v:x}")
    } else {
        v.to_string()
    }
}

const WEEKDAY_NAMES: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

fn leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn month_len(y: i64, m: i64) -> i64 {
    match m {
        2 if leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn ymd(s: &str) -> (i64, i64, i64) {
    let p: Vec<i64> = s.split('-').map(|x| x.parse().unwrap()).collect();
    (p[0], p[1], p[2])
}

/// Step a date one day at a time (the generator converts to day numbers).
fn step(d: (i64, i64, i64), forward: bool) -> (i64, i64, i64) {
    let (mut y, mut m, mut day) = d;
    if forward {
        day += 1;
        if day > month_len(y, m) {
            day = 1;
            m += 1;
            if m > 12 {
                m = 1;
                y += 1;
            }
        }
    } else {
        day -= 1;
        if day < 1 {
            m -= 1;
            if m < 1 {
                m = 12;
                y -= 1;
            }
            day = month_len(y, m);
        }
    }
    (y, m, day)
}

/// Zeller's congruence, converted to 0 = Monday.
fn zeller(d: (i64, i64, i64)) -> usize {
    let (mut y, mut m, q) = d;
    if m < 3 {
        m += 12;
        y -= 1;
    }
    let (k, j) = (y % 100, y / 100);
    let h = (q + 13 * (m + 1) / 5 + k + k / 4 + j / 4 + 5 * j) % 7; // 0 = Saturday
    ((h + 5) % 7) as usize
}

fn weekday_index(name: &str) -> usize {
    WEEKDAY_NAMES.iter().position(|w| *w == name).unwrap()
}

fn calendar_arithmetic(inst: &Instance) -> String {
    let days = || inst.metadata["days"].as_i64().unwrap();
    match text(inst, "task") {
        "weekday_offset" => {
            let w = weekday_index(text(inst, "weekday")) as i64;
            WEEKDAY_NAMES[(w + days()).rem_euclid(7) as usize].to_string()
        }
        "add_days" => {
            let n = days();
            let mut d = ymd(text(inst, "date"));
            for _ in 0..n.abs() {
                d = step(d, n > 0);
            }
            format!("{:04}-{:02}-{:02}", d.0, d.1, d.2)
        }
        "days_between" => {
            let (mut d, end) = (ymd(text(inst, "start")), ymd(text(inst, "end")));
            let mut n = 0;
            while d != end {
                d = step(d, true);
                n += 1;
            }
            n.to_string()
        }
        "weekday_of_date" => {
            // Zeller for the target; the reference must agree with Zeller too.
            let r = ymd(text(inst, "reference_date"));
            assert_eq!(
                WEEKDAY_NAMES[zeller(r)],
                text(inst, "reference_weekday"),
                "{}",
                inst.id
            );
            WEEKDAY_NAMES[zeller(ymd(text(inst, "date")))].to_string()
        }
        "business_days" => {
            let (mut d, end) = (ymd(text(inst, "start")), ymd(text(inst, "end")));
            assert_eq!(WEEKDAY_NAMES[zeller(d)], text(inst, "weekday"));
            let mut n = 0;
            loop {
                if zeller(d) < 5 {
                    n += 1;
                }
                if d == end {
                    break;
                }
                d = step(d, true);
            }
            n.to_string()
        }
        t => panic!("unknown task {t}"),
    }
}

/// Parse the shown equation: each side is a sum of terms `c`, `c v`, `c(v ± b)`; every
/// side is reduced to (coefficient, constant), then the solution is
/// (constant difference) / (coefficient difference).
fn simple_equations(inst: &Instance) -> String {
    let var = text(inst, "variable");
    let eq = text(inst, "equation");
    let side = |s: &str| -> (i64, i64) {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        let b = s.as_bytes();
        let (mut a, mut c) = (0i64, 0i64);
        let mut i = 0;
        while i < b.len() {
            let mut sign = 1;
            if b[i] == b'+' {
                i += 1;
            } else if b[i] == b'-' {
                sign = -1;
                i += 1;
            }
            let st = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let num: Option<i64> = (i > st).then(|| s[st..i].parse().unwrap());
            if i < b.len() && b[i] == b'(' {
                // k(v ± m)
                let close = s[i..].find(')').unwrap() + i;
                let inner = &s[i + 1..close];
                let rest = inner.strip_prefix(var).unwrap();
                let m: i64 = rest.parse().unwrap();
                let k = sign * num.unwrap_or(1);
                a += k;
                c += k * m;
                i = close + 1;
            } else if s[i..].starts_with(var) {
                a += sign * num.unwrap_or(1);
                i += var.len();
            } else {
                c += sign * num.unwrap();
            }
        }
        (a, c)
    };
    let (l, r) = eq.split_once('=').unwrap();
    let ((a1, c1), (a2, c2)) = (side(l), side(r));
    assert_ne!(a1, a2);
    assert_eq!((c2 - c1) % (a1 - a2), 0, "{eq}");
    ((c2 - c1) / (a1 - a2)).to_string()
}

/// Evaluate the factors at 0, 1, ..., d and recover the coefficients by Newton's
/// divided differences over exact fractions (the generator convolves coefficient
/// lists).
fn polynomial_multiplication(inst: &Instance) -> String {
    let var = text(inst, "variable");
    let factors: Vec<Vec<i128>> = inst.metadata["factors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            f.as_array()
                .unwrap()
                .iter()
                .map(|c| i128::from(c.as_i64().unwrap()))
                .collect()
        })
        .collect();
    let degree: usize = factors.iter().map(|f| f.len() - 1).sum();
    let eval = |x: i128| -> i128 {
        factors
            .iter()
            .map(|f| f.iter().rev().fold(0i128, |acc, c| acc * x + c))
            .product()
    };
    let xs: Vec<i128> = (0..=degree as i128).collect();
    let mut dd: Vec<Q> = xs.iter().map(|&x| Q::new(eval(x), 1)).collect();
    for j in 1..=degree {
        for i in (j..=degree).rev() {
            dd[i] = dd[i].sub(dd[i - 1]).div(Q::new(xs[i] - xs[i - j], 1));
        }
    }
    // Newton form -> monomial coefficients (Horner on the nested form).
    let mut coef: Vec<Q> = vec![Q::new(0, 1); degree + 1];
    for k in (0..=degree).rev() {
        // coef = coef * (x - xs[k]) + dd[k]
        let mut next = vec![Q::new(0, 1); degree + 1];
        for p in 0..degree {
            next[p + 1] = next[p + 1].add(coef[p]);
            next[p] = next[p].sub(coef[p].mul(Q::new(xs[k], 1)));
        }
        next[0] = next[0].add(dd[k]);
        coef = next;
    }
    let ints: Vec<i128> = coef
        .iter()
        .map(|q| {
            assert_eq!(q.1, 1);
            q.0
        })
        .collect();
    let mut terms: Vec<String> = Vec::new();
    for p in (0..=degree).rev() {
        let c = ints[p];
        if c == 0 {
            continue;
        }
        let mag = match (c.abs(), p) {
            (1, 0) => "1".to_string(),
            (1, _) => String::new(),
            (m, _) => m.to_string(),
        };
        let pow = match p {
            0 => String::new(),
            1 => var.to_string(),
            _ => format!("{var}^{p}"),
        };
        let sign = if c < 0 { "-" } else { "+" };
        terms.push(format!("{sign} {mag}{pow}"));
    }
    if terms.is_empty() {
        return "0".into();
    }
    let joined = terms.join(" ");
    match joined.strip_prefix("+ ") {
        Some(rest) => rest.to_string(),
        None => format!("-{}", &joined[2..]),
    }
}

/// The new arithmetic families' re-solvers must reproduce the gold answer text exactly
/// (each answer is unique and the gold is in canonical form).
#[test]
fn new_arithmetic_resolvers_match_the_gold_text() {
    type Solve = fn(&Instance) -> String;
    let cases: [(&str, Solve); 5] = [
        ("decimal_arithmetic", decimal_arithmetic),
        ("bitwise_arithmetic", bitwise_arithmetic),
        ("calendar_arithmetic", calendar_arithmetic),
        ("simple_equations", simple_equations),
        ("polynomial_multiplication", polynomial_multiplication),
    ];
    for (name, solve) in cases {
        let f = families::get(name).unwrap();
        for level in Level::all() {
            for i in 0..40 {
                let x = families::generate(f, level, 17, i);
                assert_eq!(solve(&x), x.answer, "{}", x.id);
            }
        }
    }
}

#[test]
fn decimal_and_bitwise_answers_are_exact() {
    let (f, x) = find("decimal_arithmetic", 3, |x| x.answer.contains('.'));
    let g = &x.answer;
    assert_eq!(f.verify(&x, g), 1.0);
    assert_eq!(f.verify(&x, &format!("{g}000")), 1.0, "trailing zeros");
    for bad in [
        format!("{g}1"),
        format!("{g}e0"),
        format!("~{g}"),
        format!("{g} + 0"),
        g.replace('.', ","),
    ] {
        assert_eq!(f.verify(&x, &bad), 0.0, "{bad:?} for {g}");
    }
    let (f, x) = find("bitwise_arithmetic", 4, |x| x.answer.len() > 4);
    let v = u128::from_str_radix(&x.answer[2..], 16).unwrap();
    assert_eq!(f.verify(&x, &v.to_string()), 1.0, "decimal form");
    assert_eq!(
        f.verify(&x, &x.answer.to_uppercase().replace("0X", "0x")),
        1.0
    );
    assert_eq!(f.verify(&x, &format!("0x{:x}", v + 1)), 0.0);
    assert_eq!(f.verify(&x, &format!("{:x}", v)), 0.0, "hex without prefix");
}

#[test]
fn calendar_and_equation_answer_forms() {
    let (f, x) = find("calendar_arithmetic", 1, |x| {
        x.metadata["task"] == "weekday_offset"
    });
    assert_eq!(f.verify(&x, &x.answer.to_uppercase()), 1.0);
    assert_eq!(f.verify(&x, &x.answer[..3]), 1.0);
    let kelvin = x.answer.replacen('k', "\u{212a}", 1);
    if kelvin != x.answer {
        assert_eq!(f.verify(&x, &kelvin), 0.0);
    }
    let other = ["Monday", "Tuesday"]
        .into_iter()
        .find(|w| *w != x.answer)
        .unwrap();
    assert_eq!(f.verify(&x, other), 0.0);
    let (f, x) = find("calendar_arithmetic", 3, |x| {
        x.metadata["task"] == "add_days"
    });
    let (y, m, d) = ymd(&x.answer);
    assert_eq!(f.verify(&x, &format!("{y}-{m}-{d}")), 1.0);
    assert_eq!(f.verify(&x, &format!("{d:02}/{m:02}/{y}")), 0.0);
    let (f, x) = find("simple_equations", 4, |x| x.metadata["variable"] != "x");
    let v = x.metadata["variable"].as_str().unwrap();
    assert_eq!(f.verify(&x, &format!("{v} = {}", x.answer)), 1.0);
    assert_eq!(f.verify(&x, &format!("x = {}", x.answer)), 0.0);
    let (f, x) = inst("polynomial_multiplication", 4, 0);
    // The same terms in reverse order are the same polynomial.
    let toks: Vec<&str> = x.answer.split(' ').collect();
    let mut terms: Vec<(bool, &str)> = vec![match toks[0].strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, toks[0]),
    }];
    for pair in toks[1..].chunks(2) {
        terms.push((pair[0] == "-", pair[1]));
    }
    terms.reverse();
    let mut reversed = format!("{}{}", if terms[0].0 { "-" } else { "" }, terms[0].1);
    for (neg, t) in &terms[1..] {
        reversed.push_str(if *neg { " - " } else { " + " });
        reversed.push_str(t);
    }
    assert_ne!(reversed, x.answer);
    assert_eq!(f.verify(&x, &reversed), 1.0, "{reversed}");
    assert_eq!(f.verify(&x, &format!("{reversed} + 0x")), 0.0);
    // One pair of parentheses around the whole answer encloses the same polynomial; the
    // product itself, as the question shows it, is not an expansion.
    assert_eq!(f.verify(&x, &format!("({})", x.answer)), 1.0);
    assert_eq!(f.verify(&x, &format!("(({}))", x.answer)), 0.0);
    let shown = x.metadata["expression"].as_str().unwrap();
    assert_eq!(f.verify(&x, shown), 0.0);
    assert_eq!(f.verify(&x, &format!("{shown} = {}", x.answer)), 0.0);
}
