//! `basic_arithmetic`: evaluate an integer expression with `+ - * /` and parentheses.
//!
//! The expression is a random binary tree rendered with the minimal parentheses that
//! keep its meaning under the usual precedence (`*` and `/` before `+` and `-`, left to
//! right within a level), so the text shown always evaluates to the gold answer.
//! Literals are positive; intermediate values may be negative. Division appears only as
//! `a / b` of two literals with `b` dividing `a` exactly (at levels 4 and 5), so every
//! step is an exact integer operation — unlike the Python reasoning-gym, whose shown
//! expression can disagree with its answer when `/` appears.
//!
//! Levels (number of literals, literal range, operators):
//! 1: 2..=3 literals, 1..=9, `+ -` · 2: 3..=4, 1..=20, `+ - *` ·
//! 3: 4..=5, 1..=50, `+ - *` · 4: 5..=6, 1..=100, `+ - * /` ·
//! 5: 7..=9, 1..=999, `+ - * /`. Every intermediate value stays within ±10^12.
//! Metadata: `expression` (the text shown) and `rpn` (the same tree in reverse Polish
//! notation, literals and operators as strings).
//! Verifier: one integer (`parse::int`: surrounding whitespace, `+`, `1,000` tolerated).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::fields;
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct BasicArithmetic;

struct Params {
    leaves: (usize, usize),
    max_lit: i64,
    mul: bool,
    div: bool,
}

const PARAMS: [Params; 5] = [
    Params {
        leaves: (2, 3),
        max_lit: 9,
        mul: false,
        div: false,
    },
    Params {
        leaves: (3, 4),
        max_lit: 20,
        mul: true,
        div: false,
    },
    Params {
        leaves: (4, 5),
        max_lit: 50,
        mul: true,
        div: false,
    },
    Params {
        leaves: (5, 6),
        max_lit: 100,
        mul: true,
        div: true,
    },
    Params {
        leaves: (7, 9),
        max_lit: 999,
        mul: true,
        div: true,
    },
];

const LIMIT: i64 = 1_000_000_000_000;

#[derive(Clone, Copy)]
enum Node {
    Lit(i64),
    Op(u8, usize, usize),
}

fn prec(op: u8) -> u8 {
    if op == b'+' || op == b'-' { 1 } else { 2 }
}

struct Tree {
    nodes: Vec<Node>,
}

impl Tree {
    /// Build a subtree with `n` literals; returns its index.
    fn build(&mut self, rng: &mut ChaCha20Rng, n: usize, p: &Params) -> usize {
        if n == 1 {
            let v = rng.random_range(1..=p.max_lit);
            self.nodes.push(Node::Lit(v));
            return self.nodes.len() - 1;
        }
        if n == 2 && p.div && rng.random_bool(0.3) {
            let b = rng.random_range(2..=p.max_lit.min(30));
            let q = rng.random_range(1..=(p.max_lit / b).max(2));
            self.nodes.push(Node::Lit(q * b));
            self.nodes.push(Node::Lit(b));
            let (l, r) = (self.nodes.len() - 2, self.nodes.len() - 1);
            self.nodes.push(Node::Op(b'/', l, r));
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

    /// Exact value, or `None` when a value leaves ±LIMIT or a division is inexact.
    fn eval(&self, i: usize) -> Option<i64> {
        match self.nodes[i] {
            Node::Lit(v) => Some(v),
            Node::Op(op, l, r) => {
                let (a, b) = (self.eval(l)?, self.eval(r)?);
                let v = match op {
                    b'+' => a.checked_add(b)?,
                    b'-' => a.checked_sub(b)?,
                    b'*' => a.checked_mul(b)?,
                    _ => {
                        if b == 0 || a % b != 0 {
                            return None;
                        }
                        a / b
                    }
                };
                (v.abs() <= LIMIT).then_some(v)
            }
        }
    }

    fn render(&self, i: usize, out: &mut String) {
        use std::fmt::Write;
        match self.nodes[i] {
            Node::Lit(v) => {
                let _ = write!(out, "{v}");
            }
            Node::Op(op, l, r) => {
                let paren_l = matches!(self.nodes[l], Node::Op(o, ..) if prec(o) < prec(op));
                let paren_r = matches!(self.nodes[r], Node::Op(o, ..)
                    if prec(o) < prec(op) || (prec(o) == prec(op) && (op == b'-' || op == b'/')));
                self.render_wrapped(l, paren_l, out);
                out.push(' ');
                out.push(op as char);
                out.push(' ');
                self.render_wrapped(r, paren_r, out);
            }
        }
    }

    fn render_wrapped(&self, i: usize, paren: bool, out: &mut String) {
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
            Node::Lit(v) => out.push(v.to_string()),
            Node::Op(op, l, r) => {
                self.rpn(l, out);
                self.rpn(r, out);
                out.push((op as char).to_string());
            }
        }
    }
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[
            Piece::Data("{expression}"),
            Piece::Text(
                "Work out the exact integer value of the expression above. Multiplication and division come before addition and subtraction, operators of equal precedence are applied from left to right, and every division in it is exact.",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[Piece::Text(
            "What is {expression}? Use the usual precedence (* and / before + and -, left to right among operators of equal precedence); every division in the expression is exact.",
        )],
    ),
];

impl Family for BasicArithmetic {
    fn name(&self) -> &'static str {
        "basic_arithmetic"
    }
    fn category(&self) -> Category {
        Category::Arithmetic
    }
    fn description(&self) -> &'static str {
        "Evaluate an integer expression with + - * / (exact) and parentheses"
    }
    fn version(&self) -> u32 {
        // 2: no format example (no integer is ruled out by the question alone).
        2
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let p = &PARAMS[level.idx()];
        let mut ops = vec!["+", "-"];
        if p.mul {
            ops.push("*");
        }
        if p.div {
            ops.push("/");
        }
        json!({
            "literals_min": p.leaves.0, "literals_max": p.leaves.1,
            "literal_min": 1, "literal_max": p.max_lit,
            "operators": ops, "value_limit": LIMIT,
        })
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let p = &PARAMS[level.idx()];
        let mut tree = Tree {
            nodes: Vec::with_capacity(24),
        };
        let (root, value) = loop {
            tree.nodes.clear();
            let n = rng.random_range(p.leaves.0..=p.leaves.1);
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
                    "Evaluate the following integer expression. Multiplication and division are \
                     done before addition and subtraction, operators of equal precedence are \
                     applied from left to right, and every division in it is exact.",
                )
                .data(expr.clone()),
            format: AnswerFormat::new("as a single integer"),
            answer: value.to_string(),
            metadata: fields([("expression", Value::from(expr)), ("rpn", Value::from(rpn))]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        match (parse::int(answer), parse::int(&instance.answer)) {
            (Some(a), Some(g)) if a == g => 1.0,
            _ => 0.0,
        }
    }
}
