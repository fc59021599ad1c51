//! `decimal_arithmetic`: evaluate an expression over decimal numbers, exactly.
//!
//! The expression is a random binary tree over decimal literals (each with 1 to 3
//! fractional digits, the last one non-zero), rendered with the minimal parentheses
//! that keep its meaning under the usual precedence. Every value is computed exactly as
//! an integer mantissa and a power-of-ten scale, so the gold answer is the exact
//! result — there is no tolerance to tune (reasoning-gym takes its tolerance from the
//! dataset configuration rather than the item).
//!
//! Levels (literals, integer part of each literal, fractional digits, operators):
//! 1: 2, 0..=9, 1, `+ -` · 2: 3, 0..=99, 1..=2, `+ -` · 3: 3, 0..=99, 1..=2, `+ - *` ·
//! 4: 4, 0..=999, 1..=3, `+ - *` · 5: 5..=6, 0..=999, 1..=3, `+ - *`.
//! The exact result has at most 8 fractional digits and magnitude below 10^12 (trees
//! that exceed either are redrawn).
//!
//! Gold: the exact value, canonical form (no trailing fractional zeros, no point for
//! whole numbers, e.g. `-12.05`, `3`). Verifier: one exact decimal — an optional sign,
//! digits, optionally a point and digits (`2.50` and `2.5` are equal, `.5` is `0.5`);
//! no exponent, no thousands separators, no fraction, no rounding.
//! Metadata: `expression` (the text shown) and `rpn` (literals and operators as
//! strings, reverse Polish notation).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::decimal::{Decimal, decimal_text};
use crate::families::kit::meta::fields;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct DecimalArithmetic;

struct Params {
    literals: (usize, usize),
    int_max: i128,
    frac_digits: (u32, u32),
    mul: bool,
}

const PARAMS: [Params; 5] = [
    Params {
        literals: (2, 2),
        int_max: 9,
        frac_digits: (1, 1),
        mul: false,
    },
    Params {
        literals: (3, 3),
        int_max: 99,
        frac_digits: (1, 2),
        mul: false,
    },
    Params {
        literals: (3, 3),
        int_max: 99,
        frac_digits: (1, 2),
        mul: true,
    },
    Params {
        literals: (4, 4),
        int_max: 999,
        frac_digits: (1, 3),
        mul: true,
    },
    Params {
        literals: (5, 6),
        int_max: 999,
        frac_digits: (1, 3),
        mul: true,
    },
];

/// Most fractional digits of the exact result.
const MAX_RESULT_SCALE: u32 = 8;
/// Results (and intermediate values) stay below this magnitude.
const LIMIT: i128 = 1_000_000_000_000;
/// The format example: 9 fractional digits, more than any result has, so it is never
/// the gold answer.
const EXAMPLE: &str = "-0.123456789";

#[derive(Clone, Copy)]
enum Node {
    /// mantissa, scale
    Lit(i128, u32),
    Op(u8, usize, usize),
}

fn prec(op: u8) -> u8 {
    if op == b'*' { 2 } else { 1 }
}

struct Tree {
    nodes: Vec<Node>,
}

impl Tree {
    fn build(&mut self, rng: &mut ChaCha20Rng, n: usize, p: &Params) -> usize {
        if n == 1 {
            let scale = rng.random_range(p.frac_digits.0..=p.frac_digits.1);
            let int = rng.random_range(0..=p.int_max);
            let unit = 10i128.pow(scale);
            // Fractional part with a non-zero last digit.
            let frac = rng.random_range(0..unit / 10) * 10 + rng.random_range(1..=9);
            self.nodes.push(Node::Lit(int * unit + frac, scale));
            return self.nodes.len() - 1;
        }
        let k = rng.random_range(1..n);
        let ops: &[u8] = if p.mul { b"+-*" } else { b"+-" };
        let op = ops[rng.random_range(0..ops.len())];
        let l = self.build(rng, k, p);
        let r = self.build(rng, n - k, p);
        self.nodes.push(Node::Op(op, l, r));
        self.nodes.len() - 1
    }

    /// Exact value `(mantissa, scale)`, or `None` when it leaves the limits.
    fn eval(&self, i: usize) -> Option<(i128, u32)> {
        let (m, s) = match self.nodes[i] {
            Node::Lit(m, s) => (m, s),
            Node::Op(op, l, r) => {
                let (a, sa) = self.eval(l)?;
                let (b, sb) = self.eval(r)?;
                if op == b'*' {
                    (a.checked_mul(b)?, sa + sb)
                } else {
                    let s = sa.max(sb);
                    let a = a.checked_mul(10i128.pow(s - sa))?;
                    let b = b.checked_mul(10i128.pow(s - sb))?;
                    (if op == b'+' { a + b } else { a - b }, s)
                }
            }
        };
        (s <= MAX_RESULT_SCALE && m.abs() < LIMIT.checked_mul(10i128.pow(s))?).then_some((m, s))
    }

    fn render(&self, i: usize, out: &mut String) {
        match self.nodes[i] {
            Node::Lit(m, s) => out.push_str(&lit_text(m, s)),
            Node::Op(op, l, r) => {
                let paren_l = matches!(self.nodes[l], Node::Op(o, ..) if prec(o) < prec(op));
                let paren_r = matches!(self.nodes[r], Node::Op(o, ..)
                    if prec(o) < prec(op) || (prec(o) == prec(op) && op == b'-'));
                self.wrapped(l, paren_l, out);
                out.push(' ');
                out.push(op as char);
                out.push(' ');
                self.wrapped(r, paren_r, out);
            }
        }
    }

    fn wrapped(&self, i: usize, paren: bool, out: &mut String) {
        if paren {
            out.push('(');
        }
        self.render(i, out);
        if paren {
            out.push(')');
        }
    }

    fn rpn(&self, i: usize, out: &mut Vec<String>) {
        match self.nodes[i] {
            Node::Lit(m, s) => out.push(lit_text(m, s)),
            Node::Op(op, l, r) => {
                self.rpn(l, out);
                self.rpn(r, out);
                out.push((op as char).to_string());
            }
        }
    }
}

/// A literal with exactly `scale` fractional digits (its last digit is non-zero, so
/// this is also its canonical text).
fn lit_text(m: i128, scale: u32) -> String {
    decimal_text(m, scale)
}

impl Family for DecimalArithmetic {
    fn name(&self) -> &'static str {
        "decimal_arithmetic"
    }
    fn category(&self) -> Category {
        Category::Arithmetic
    }
    fn description(&self) -> &'static str {
        "Evaluate an expression over decimal numbers exactly (+ - *)"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> Value {
        let p = &PARAMS[level.idx()];
        let ops: &[&str] = if p.mul { &["+", "-", "*"] } else { &["+", "-"] };
        json!({
            "literals_min": p.literals.0, "literals_max": p.literals.1,
            "integer_part_max": p.int_max as i64,
            "fraction_digits_min": p.frac_digits.0, "fraction_digits_max": p.frac_digits.1,
            "operators": ops, "result_fraction_digits_max": MAX_RESULT_SCALE,
            "value_limit": LIMIT as i64,
        })
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let p = &PARAMS[level.idx()];
        let mut tree = Tree {
            nodes: Vec::with_capacity(16),
        };
        let (root, (m, s)) = loop {
            tree.nodes.clear();
            let n = rng.random_range(p.literals.0..=p.literals.1);
            let root = tree.build(rng, n, p);
            if let Some(v) = tree.eval(root) {
                break (root, v);
            }
        };
        let mut expr = String::with_capacity(64);
        tree.render(root, &mut expr);
        let mut rpn = Vec::with_capacity(tree.nodes.len());
        tree.rpn(root, &mut rpn);
        Generated {
            body: Body::new()
                .text(
                    "Evaluate the following expression exactly (no rounding). Multiplication is \
                     done before addition and subtraction, and operators of equal precedence are \
                     applied from left to right.",
                )
                .data(expr.clone()),
            format: AnswerFormat::with_example("as an exact decimal number", EXAMPLE),
            answer: decimal_text(m, s),
            metadata: fields([("expression", Value::from(expr)), ("rpn", Value::from(rpn))]),
        }
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let (Some(a), Some(g)) = (Decimal::parse(answer), Decimal::parse(&instance.answer)) else {
            return 0.0;
        };
        let Some(den) = 10i128.checked_pow(g.scale) else {
            return 0.0;
        };
        if a.equals_fraction(g.mantissa, den) {
            1.0
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_is_never_a_result() {
        let d = Decimal::parse(EXAMPLE).unwrap();
        assert!(d.scale > MAX_RESULT_SCALE);
    }

    #[test]
    fn exact_values() {
        let t = Tree {
            nodes: vec![
                Node::Lit(15, 1),
                Node::Lit(25, 2),
                Node::Op(b'*', 0, 1),
                Node::Lit(1, 1),
                Node::Op(b'-', 2, 3),
            ],
        };
        // 1.5 * 0.25 - 0.1 = 0.275
        let (m, s) = t.eval(4).unwrap();
        assert_eq!(decimal_text(m, s), "0.275");
        let mut e = String::new();
        t.render(4, &mut e);
        assert_eq!(e, "1.5 * 0.25 - 0.1");
    }
}
