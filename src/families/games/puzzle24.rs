//! `puzzle24`: combine the given numbers, each exactly once, with `+ - * /` and
//! parentheses into an expression equal to a target.
//!
//! Levels (how many numbers, their range, the target):
//! 1: 3 numbers in 1..=9, target an integer in 1..=30 ·
//! 2: 4 numbers in 1..=9, target 24 · 3: 4 numbers in 1..=13, target 24 ·
//! 4: 5 numbers in 1..=13, target an integer in 30..=200 ·
//! 5: 5 numbers in 1..=25, target an integer in 100..=999.
//! Only solvable instances are generated: for target 24 the numbers are redrawn until a
//! depth-first search finds an expression; for the other levels the target is the value
//! of a random expression over the numbers (kept when it is an integer in range).
//!
//! Gold: one such expression. Verifier: parses the expression (numbers, `+ - * /`,
//! also `×`, `÷`, `−`; parentheses; whitespace ignored; no unary minus, no
//! concatenation, no `=`; a number may carry leading zeros, `06` is 6 — no given
//! number is 0, so that never joins two numbers), checks that the multiset of numbers
//! written equals the given numbers, and evaluates it exactly with rationals (division by zero or
//! overflow scores 0). Any correct expression scores 1. Metadata: `params`, `numbers`,
//! `target`.

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct Puzzle24;

/// (count, max number, target range) per level; a range `(24, 24)` means "target 24".
const PARAMS: [(usize, u32, (i64, i64)); 5] = [
    (3, 9, (1, 30)),
    (4, 9, (24, 24)),
    (4, 13, (24, 24)),
    (5, 13, (30, 200)),
    (5, 25, (100, 999)),
];

/// An exact rational with positive denominator, in lowest terms.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Q {
    n: i128,
    d: i128,
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

impl Q {
    fn int(n: i128) -> Q {
        Q { n, d: 1 }
    }
    fn new(n: i128, d: i128) -> Option<Q> {
        // `i128::MIN` has no absolute value; such magnitudes are overflow here anyway.
        if d == 0 || n == i128::MIN || d == i128::MIN {
            return None;
        }
        let g = gcd(n, d).max(1);
        let (n, d) = (n / g, d / g);
        if d < 0 {
            Some(Q {
                n: n.checked_neg()?,
                d: d.checked_neg()?,
            })
        } else {
            Some(Q { n, d })
        }
    }
    fn apply(self, op: u8, o: Q) -> Option<Q> {
        match op {
            b'+' => Q::new(
                self.n
                    .checked_mul(o.d)?
                    .checked_add(o.n.checked_mul(self.d)?)?,
                self.d.checked_mul(o.d)?,
            ),
            b'-' => Q::new(
                self.n
                    .checked_mul(o.d)?
                    .checked_sub(o.n.checked_mul(self.d)?)?,
                self.d.checked_mul(o.d)?,
            ),
            b'*' => Q::new(self.n.checked_mul(o.n)?, self.d.checked_mul(o.d)?),
            b'/' => Q::new(self.n.checked_mul(o.d)?, self.d.checked_mul(o.n)?),
            _ => None,
        }
    }
}

/// A node of an expression built by the search: a given number, or `(op, left, right)`
/// with children indexing the arena.
#[derive(Clone, Copy)]
enum Node {
    Leaf(u32),
    Bin(u8, usize, usize),
}

fn render(arena: &[Node], at: usize) -> String {
    match arena[at] {
        Node::Leaf(x) => x.to_string(),
        Node::Bin(op, a, b) => {
            format!("({} {} {})", render(arena, a), op as char, render(arena, b))
        }
    }
}

/// An unreduced fraction for the search: with at most 5 numbers of at most 25 both
/// parts stay far below `i64::MAX` (each is at most `2^5` times the product of the
/// numbers), so no gcd is needed; values are compared by cross-multiplication.
#[derive(Clone, Copy)]
struct Fr {
    n: i64,
    d: i64,
}

impl Fr {
    fn apply(self, op: u8, o: Fr) -> Option<Fr> {
        Some(match op {
            b'+' => Fr {
                n: self.n * o.d + o.n * self.d,
                d: self.d * o.d,
            },
            b'-' => Fr {
                n: self.n * o.d - o.n * self.d,
                d: self.d * o.d,
            },
            b'*' => Fr {
                n: self.n * o.n,
                d: self.d * o.d,
            },
            _ if o.n == 0 => return None,
            _ => Fr {
                n: self.n * o.d,
                d: self.d * o.n,
            },
        })
    }
}

/// Depth-first search combining two items at a time (items are `(value, arena
/// index)`); returns the arena index of the first expression equal to `target`.
fn dfs(items: &[(Fr, usize)], target: i64, arena: &mut Vec<Node>) -> Option<usize> {
    if items.len() == 1 {
        let v = items[0].0;
        return (v.n == target * v.d).then_some(items[0].1);
    }
    let mut next: [(Fr, usize); 8] = [(Fr { n: 0, d: 1 }, 0); 8];
    for i in 0..items.len() {
        for j in 0..items.len() {
            if i == j {
                continue;
            }
            for &op in b"+-*/" {
                // + and * are commutative: try each unordered pair once.
                if (op == b'+' || op == b'*') && i > j {
                    continue;
                }
                let (a, b) = (items[i], items[j]);
                let Some(v) = a.0.apply(op, b.0) else {
                    continue;
                };
                let mark = arena.len();
                arena.push(Node::Bin(op, a.1, b.1));
                let mut k = 0;
                for (m, &x) in items.iter().enumerate() {
                    if m != i && m != j {
                        next[k] = x;
                        k += 1;
                    }
                }
                next[k] = (v, mark);
                if let Some(found) = dfs(&next[..=k], target, arena) {
                    return Some(found);
                }
                arena.truncate(mark);
            }
        }
    }
    None
}

/// An expression over `nums` (at most 5 numbers, each at most 25) equal to `target`.
fn solve(nums: &[u32], target: i64) -> Option<String> {
    debug_assert!(nums.len() <= 5 && nums.iter().all(|&x| x <= 25));
    let mut arena: Vec<Node> = nums.iter().map(|&x| Node::Leaf(x)).collect();
    let items: Vec<(Fr, usize)> = nums
        .iter()
        .enumerate()
        .map(|(i, &x)| (Fr { n: x.into(), d: 1 }, i))
        .collect();
    let root = dfs(&items, target, &mut arena)?;
    Some(render(&arena, root))
}

fn strip_outer(s: String) -> String {
    match s.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
        // The generator wraps every combination, so an outer pair always matches.
        Some(inner) => inner.to_string(),
        None => s,
    }
}

/// A random expression tree over `nums`: its value and text.
fn random_expr(rng: &mut ChaCha20Rng, nums: &[u32]) -> Option<(Q, String)> {
    let mut items: Vec<(Q, String)> = nums
        .iter()
        .map(|&x| (Q::int(x.into()), x.to_string()))
        .collect();
    while items.len() > 1 {
        let i = rng.random_range(0..items.len());
        let a = items.swap_remove(i);
        let j = rng.random_range(0..items.len());
        let b = items.swap_remove(j);
        let op = b"+-*/"[rng.random_range(0..4)];
        let v = a.0.apply(op, b.0)?;
        items.push((v, format!("({} {} {})", a.1, op as char, b.1)));
    }
    items.pop()
}

/// Recursive-descent parser and exact evaluator for answers.
struct Parser<'a> {
    t: &'a [u8],
    pos: usize,
    nums: Vec<i128>,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.t.get(self.pos).copied()
    }
    fn expr(&mut self) -> Option<Q> {
        self.depth += 1;
        if self.depth > 64 {
            return None;
        }
        let mut v = self.term()?;
        while let Some(op @ (b'+' | b'-')) = self.peek() {
            self.pos += 1;
            v = v.apply(op, self.term()?)?;
        }
        self.depth -= 1;
        Some(v)
    }
    fn term(&mut self) -> Option<Q> {
        let mut v = self.factor()?;
        while let Some(op @ (b'*' | b'/')) = self.peek() {
            self.pos += 1;
            v = v.apply(op, self.factor()?)?;
        }
        Some(v)
    }
    fn factor(&mut self) -> Option<Q> {
        match self.peek()? {
            b'(' => {
                self.pos += 1;
                let v = self.expr()?;
                (self.peek()? == b')').then_some(())?;
                self.pos += 1;
                Some(v)
            }
            b'0'..=b'9' => {
                let start = self.pos;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
                if self.pos - start > 9 {
                    return None;
                }
                let n: i128 = std::str::from_utf8(&self.t[start..self.pos])
                    .ok()?
                    .parse()
                    .ok()?;
                self.nums.push(n);
                Some(Q::int(n))
            }
            _ => None,
        }
    }
}

/// Evaluate an answer expression; returns its value and the numbers it uses.
fn evaluate(answer: &str) -> Option<(Q, Vec<i128>)> {
    let mut t = Vec::with_capacity(answer.len());
    for c in answer.chars() {
        match c {
            c if c.is_whitespace() => {}
            '×' => t.push(b'*'),
            '÷' => t.push(b'/'),
            '−' => t.push(b'-'),
            c if c.is_ascii_digit() || "+-*/()".contains(c) => t.push(c as u8),
            _ => return None,
        }
    }
    // Digits separated only by whitespace would merge into one number: reject them.
    let mut prev_digit_then_space = false;
    let mut last_was_digit = false;
    for c in answer.chars() {
        if c.is_ascii_digit() {
            if prev_digit_then_space {
                return None;
            }
            last_was_digit = true;
        } else if c.is_whitespace() {
            prev_digit_then_space = last_was_digit;
        } else {
            last_was_digit = false;
            prev_digit_then_space = false;
        }
    }
    let mut p = Parser {
        t: &t,
        pos: 0,
        nums: Vec::new(),
        depth: 0,
    };
    let v = p.expr()?;
    (p.pos == t.len()).then_some((v, p.nums))
}

fn example(n: usize) -> String {
    // n + 1 numbers, so the example can never be a valid answer.
    let mut s = String::from("(1 + 2) * 3");
    for k in 4..=n + 1 {
        s.push_str(if k % 2 == 0 { " - " } else { " + " });
        s.push_str(&k.to_string());
    }
    s
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[
            Piece::Data("target: {target}\nnumbers: {numbers|comma}"),
            Piece::Text(
                "Build an arithmetic expression that uses every one of these numbers exactly once (and no other numbers), with +, -, *, / and parentheses, and whose value is exactly the target. Digits may not be joined into larger numbers, and a minus sign may not be put in front of a number on its own; intermediate results may be fractions. Write only the expression, without \"= {target}\".",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[Piece::Text(
            "Make {target} from the numbers {numbers|and}: use each of them exactly once, combined with +, -, *, / and parentheses only. No other numbers may appear, digits cannot be joined into larger numbers, and a number cannot be negated by a lone minus sign; fractions along the way are fine. Answer with the expression alone (no \"= {target}\").",
        )],
    ),
];

impl Family for Puzzle24 {
    fn name(&self) -> &'static str {
        "puzzle24"
    }
    fn category(&self) -> Category {
        Category::Games
    }
    fn description(&self) -> &'static str {
        "Combine the given numbers with + - * / and parentheses to reach a target (any correct expression)"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (count, max, (lo, hi)) = PARAMS[level.idx()];
        json!({"count": count, "number_min": 1, "number_max": max, "target_min": lo, "target_max": hi})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (count, max, (lo, hi)) = PARAMS[level.idx()];
        let (nums, target, expr) = 'outer: loop {
            let nums: Vec<u32> = (0..count).map(|_| rng.random_range(1..=max)).collect();
            if lo == hi {
                if let Some(e) = solve(&nums, lo) {
                    break (nums, lo, e);
                }
                continue;
            }
            for _ in 0..50 {
                let mut order = nums.clone();
                order.shuffle(rng);
                if let Some((v, e)) = random_expr(rng, &order) {
                    if v.d == 1 && (lo as i128..=hi as i128).contains(&v.n) {
                        break 'outer (nums, v.n as i64, e);
                    }
                }
            }
        };
        let list = nums
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let body = Body::of(format!(
            "Using each of the numbers {list} exactly once, and only the operations +, -, *, / and parentheses, \
write an expression whose value is exactly {target}. Every given number must appear exactly once and no other \
numbers may appear; digits cannot be joined into larger numbers and a minus sign cannot be put in front of a \
number on its own. Intermediate results may be fractions. Write only the expression, without \"= {target}\"."
        ));
        let format = AnswerFormat::with_example("as the expression", example(count));
        Generated {
            body,
            format,
            answer: strip_outer(expr),
            metadata: fields([
                ("numbers", Value::from(nums)),
                ("target", Value::from(target)),
            ]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let m = Meta::of(instance);
        let (Some(target), Some(nums)) = (m.i64("target"), m.i64s("numbers")) else {
            return 0.0;
        };
        let mut want: Vec<i128> = nums.into_iter().map(i128::from).collect();
        let Some((v, mut used)) = evaluate(answer) else {
            return 0.0;
        };
        want.sort_unstable();
        used.sort_unstable();
        if used == want && v == Q::int(target.into()) {
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
    fn evaluates_exactly() {
        let (v, n) = evaluate("8 / (3 - 8 / 3)").unwrap();
        assert_eq!(v, Q::int(24));
        assert_eq!(n, vec![8, 3, 8, 3]);
        assert_eq!(evaluate("(1 + 2) * 3 - 4").unwrap().0, Q::int(5));
        assert_eq!(evaluate("6 × 4 ÷ 1").unwrap().0, Q::int(24));
        for bad in [
            "1 / 0",
            "-1 + 2",
            "1 2 + 3",
            "(1 + 2",
            "1 + 2)",
            "1 + 2 = 3",
            "",
            "1 +",
            "2 ** 3",
        ] {
            assert!(evaluate(bad).is_none(), "{bad}");
        }
        assert!(evaluate(&"(".repeat(200)).is_none());
    }
}
