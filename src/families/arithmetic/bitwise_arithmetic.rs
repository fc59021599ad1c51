//! `bitwise_arithmetic`: evaluate a fully parenthesised expression of bitwise AND, OR,
//! XOR, shifts and (at the top levels) addition on non-negative integers.
//!
//! Every operation but the outermost is wrapped in parentheses, so no precedence rule is
//! needed. There is no subtraction or complement, so every value is a non-negative
//! integer and no word size has to be assumed. Shift amounts are small decimal
//! literals; the other operands are written in decimal at levels 1-2 and in hexadecimal
//! (`0x...`) at levels 3-5.
//!
//! Levels (operations, operand bound, operators, largest shift, result bound):
//! 1: 1, < 2^4, `& | ^`, -, < 2^4 · 2: 1, < 2^8, `& | ^ << >>`, 4, < 2^12 ·
//! 3: 2, < 2^16, `& | ^ << >>`, 8, < 2^24 · 4: 3, < 2^32, `& | ^ << >> +`, 8, < 2^40 ·
//! 5: 4..=5, < 2^32, `& | ^ << >> +`, 16, < 2^56. Trees whose value (or any
//! intermediate value) reaches the result bound are redrawn.
//!
//! Gold: the value in the base the operands use (`13` at levels 1-2, `0x3fa0` at 3-5).
//! Verifier: one non-negative integer, written in decimal (`parse::int` rules) or in
//! hexadecimal with a `0x`/`0X` prefix and ASCII hex digits of either case (`0x3FA0`;
//! leading zeros allowed). The format example is one above the level's result bound
//! plus 15, so it is never the gold.
//! Metadata: `expression` (the text shown) and `rpn` (operands as decimal strings and
//! the operators `& | ^ << >> +`).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::fields;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct BitwiseArithmetic;

struct Params {
    ops: (usize, usize),
    operand_bits: u32,
    operators: &'static [&'static str],
    max_shift: u32,
    result_bits: u32,
    hex: bool,
}

const PARAMS: [Params; 5] = [
    Params {
        ops: (1, 1),
        operand_bits: 4,
        operators: &["&", "|", "^"],
        max_shift: 0,
        result_bits: 4,
        hex: false,
    },
    Params {
        ops: (1, 1),
        operand_bits: 8,
        operators: &["&", "|", "^", "<<", ">>"],
        max_shift: 4,
        result_bits: 12,
        hex: false,
    },
    Params {
        ops: (2, 2),
        operand_bits: 16,
        operators: &["&", "|", "^", "<<", ">>"],
        max_shift: 8,
        result_bits: 24,
        hex: true,
    },
    Params {
        ops: (3, 3),
        operand_bits: 32,
        operators: &["&", "|", "^", "<<", ">>", "+"],
        max_shift: 8,
        result_bits: 40,
        hex: true,
    },
    Params {
        ops: (4, 5),
        operand_bits: 32,
        operators: &["&", "|", "^", "<<", ">>", "+"],
        max_shift: 16,
        result_bits: 56,
        hex: true,
    },
];

#[derive(Clone, Copy)]
enum Node {
    Num(u64),
    /// A shift amount (always the right operand of a shift).
    Shift(u32),
    Op(&'static str, usize, usize),
}

struct Tree {
    nodes: Vec<Node>,
}

impl Tree {
    fn push(&mut self, n: Node) -> usize {
        self.nodes.push(n);
        self.nodes.len() - 1
    }

    /// A subtree with `ops` operations.
    fn build(&mut self, rng: &mut ChaCha20Rng, ops: usize, p: &Params) -> usize {
        if ops == 0 {
            let v = rng.random_range(0..1u64 << p.operand_bits);
            return self.push(Node::Num(v));
        }
        let op = p.operators[rng.random_range(0..p.operators.len())];
        if op == "<<" || op == ">>" {
            let l = self.build(rng, ops - 1, p);
            let r = self.push(Node::Shift(rng.random_range(1..=p.max_shift)));
            return self.push(Node::Op(op, l, r));
        }
        let k = rng.random_range(0..ops);
        let l = self.build(rng, k, p);
        let r = self.build(rng, ops - 1 - k, p);
        self.push(Node::Op(op, l, r))
    }

    /// The value, or `None` when some value reaches `2^bits`.
    fn eval(&self, i: usize, bits: u32) -> Option<u64> {
        let v = match self.nodes[i] {
            Node::Num(v) => v,
            Node::Shift(s) => u64::from(s),
            Node::Op(op, l, r) => {
                let (a, b) = (self.eval(l, bits)?, self.eval(r, bits)?);
                match op {
                    "&" => a & b,
                    "|" => a | b,
                    "^" => a ^ b,
                    "+" => a.checked_add(b)?,
                    "<<" => a.checked_shl(b as u32).filter(|v| v >> b == a)?,
                    _ => a >> b,
                }
            }
        };
        (v < 1u64 << bits).then_some(v)
    }

    fn render(&self, i: usize, hex: bool, top: bool, out: &mut String) {
        use std::fmt::Write;
        match self.nodes[i] {
            Node::Num(v) if hex => {
                let _ = write!(out, "{v:#x}");
            }
            Node::Num(v) => {
                let _ = write!(out, "{v}");
            }
            Node::Shift(s) => {
                let _ = write!(out, "{s}");
            }
            Node::Op(op, l, r) => {
                if !top {
                    out.push('(');
                }
                self.render(l, hex, false, out);
                out.push(' ');
                out.push_str(op);
                out.push(' ');
                self.render(r, hex, false, out);
                if !top {
                    out.push(')');
                }
            }
        }
    }

    fn rpn(&self, i: usize, out: &mut Vec<String>) {
        match self.nodes[i] {
            Node::Num(v) => out.push(v.to_string()),
            Node::Shift(s) => out.push(s.to_string()),
            Node::Op(op, l, r) => {
                self.rpn(l, out);
                self.rpn(r, out);
                out.push(op.to_string());
            }
        }
    }
}

/// A non-negative integer in decimal or `0x` hexadecimal.
fn parse_value(s: &str) -> Option<u128> {
    let t = s.trim();
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        if h.is_empty() || h.len() > 32 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        return u128::from_str_radix(h, 16).ok();
    }
    u128::try_from(parse::int(t)?).ok()
}

fn example(p: &Params) -> String {
    format!("{:#x}", (1u64 << p.result_bits) + 15)
}

impl Family for BitwiseArithmetic {
    fn name(&self) -> &'static str {
        "bitwise_arithmetic"
    }
    fn category(&self) -> Category {
        Category::Arithmetic
    }
    fn description(&self) -> &'static str {
        "Evaluate a parenthesised expression of AND, OR, XOR, shifts and + on non-negative integers"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> Value {
        let p = &PARAMS[level.idx()];
        json!({
            "operations_min": p.ops.0, "operations_max": p.ops.1,
            "operand_bits": p.operand_bits, "operators": p.operators,
            "shift_max": p.max_shift, "result_bits": p.result_bits,
            "operand_base": if p.hex { 16 } else { 10 },
        })
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let p = &PARAMS[level.idx()];
        let mut tree = Tree {
            nodes: Vec::with_capacity(16),
        };
        let (root, value) = loop {
            tree.nodes.clear();
            let n = rng.random_range(p.ops.0..=p.ops.1);
            let root = tree.build(rng, n, p);
            if let Some(v) = tree.eval(root, p.result_bits) {
                break (root, v);
            }
        };
        let mut expr = String::with_capacity(64);
        tree.render(root, p.hex, true, &mut expr);
        let mut rpn = Vec::with_capacity(tree.nodes.len());
        tree.rpn(root, &mut rpn);
        let gold = if p.hex {
            format!("{value:#x}")
        } else {
            value.to_string()
        };
        Generated {
            body: Body::new()
                .text(
                    "Evaluate this expression on non-negative integers of unlimited width. `&` \
                     is bitwise AND, `|` bitwise OR, `^` bitwise XOR, `<<` and `>>` shift left \
                     and right by the number of bits on their right, and `+` is addition. \
                     Numbers written 0x... are hexadecimal.",
                )
                .data(expr.clone()),
            format: AnswerFormat::with_example(
                "as one integer (decimal, or hexadecimal with the 0x prefix)",
                example(p),
            ),
            answer: gold,
            metadata: fields([("expression", Value::from(expr)), ("rpn", Value::from(rpn))]),
        }
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        match (parse_value(answer), parse_value(&instance.answer)) {
            (Some(a), Some(g)) if a == g => 1.0,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_in_both_bases() {
        assert_eq!(parse_value("0x3FA0"), Some(0x3fa0));
        assert_eq!(parse_value(" 0x003fa0 "), Some(0x3fa0));
        assert_eq!(parse_value("16288"), Some(0x3fa0));
        for bad in ["0x", "0xg", "-5", "0x 1", "3fa0h", "0b101", "0x1_0", "x10"] {
            assert_eq!(parse_value(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn examples_exceed_every_result() {
        for p in &PARAMS {
            assert!(parse_value(&example(p)).unwrap() >= 1u128 << p.result_bits);
        }
    }

    #[test]
    fn shifts_and_rendering() {
        let t = Tree {
            nodes: vec![
                Node::Num(0xf0),
                Node::Shift(4),
                Node::Op(">>", 0, 1),
                Node::Num(3),
                Node::Op("|", 2, 3),
            ],
        };
        assert_eq!(t.eval(4, 8), Some(0xf));
        let mut s = String::new();
        t.render(4, true, true, &mut s);
        assert_eq!(s, "(0xf0 >> 4) | 0x3");
    }
}
