//! `propositional_logic`: which of four offered formulas follows from the premises.
//!
//! Formulas use variables `p, q, r, s, t` and the connectives `~` (not), `&` (and),
//! `|` (inclusive or), `->` (implies), `<->` (if and only if), fully parenthesised.
//! Exactly one option is entailed: it is true in every row of the truth table where
//! all premises are true. Premises are never contradictory (the conjunction of the
//! premises is satisfiable; otherwise every option would follow and the set is
//! redrawn), the entailed option is not a tautology and not equivalent to a single
//! premise, and the three distractors are not entailed.
//!
//! Levels (variables, premises, maximum formula depth, connectives):
//! 1: 2, 1, 1, ~ & | -> · 2: 3, 2, 2, ~ & | -> · 3: 3, 3, 2, + <-> ·
//! 4: 4, 3, 3, all · 5: 5, 4, 3, all.
//!
//! Gold: the letter of the entailed option. Verifier: one letter A-D (ASCII case
//! ignored), written `B`, `(B)` or `B)` — the ways options are labelled — and equal to
//! the gold; `(B`, `B.` or `[B]` score 0. The question names the four letters and shows
//! no tagged example (an echoed question must not score). Metadata: `params`, `variables`,
//! `premises` and `options` (each `{"text", "prefix"}`; `prefix` is the formula in
//! prefix notation with space-separated tokens: a variable, `not F`, or `OP F G` with
//! OP one of `and`, `or`, `implies`, `iff` — e.g. `implies p and q not r`).

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use super::answers::choice_letter;
use crate::families::kit::meta::object;
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct PropositionalLogic;

/// (variables, premises, max depth, allow iff) per level.
const PARAMS: [(usize, usize, u32, bool); 5] = [
    (2, 1, 1, false),
    (3, 2, 2, false),
    (3, 3, 2, true),
    (4, 3, 3, true),
    (5, 4, 3, true),
];
const VARS: [&str; 5] = ["p", "q", "r", "s", "t"];
const LETTERS: [&str; 4] = ["A", "B", "C", "D"];

/// Truth table of variable `i` over `2^5` rows (row bit i = value of variable i).
const fn var_table(i: usize) -> u32 {
    let mut m = 0u32;
    let mut row = 0;
    while row < 32 {
        if row >> i & 1 == 1 {
            m |= 1 << row;
        }
        row += 1;
    }
    m
}
const VAR_TABLES: [u32; 5] = [
    var_table(0),
    var_table(1),
    var_table(2),
    var_table(3),
    var_table(4),
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    And,
    Or,
    Implies,
    Iff,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Var(usize),
    Not(usize),
    Bin(Op, usize, usize),
}

/// A formula node; children index the same arena. `table` is the node's truth table
/// over all 32 rows, computed when the node is built.
#[derive(Clone, Copy, Debug)]
struct Node {
    kind: Kind,
    table: u32,
}

/// Formulas of one instance, stored without per-node allocation; a rejected candidate
/// is dropped by truncating the arena back to where it began.
#[derive(Default)]
struct Arena {
    nodes: Vec<Node>,
}

impl Arena {
    fn push(&mut self, kind: Kind) -> usize {
        let t = |i: usize| self.nodes[i].table;
        let table = match kind {
            Kind::Var(v) => VAR_TABLES[v],
            Kind::Not(a) => !t(a),
            Kind::Bin(op, a, b) => {
                let (a, b) = (t(a), t(b));
                match op {
                    Op::And => a & b,
                    Op::Or => a | b,
                    Op::Implies => !a | b,
                    Op::Iff => !(a ^ b),
                }
            }
        };
        self.nodes.push(Node { kind, table });
        self.nodes.len() - 1
    }
    fn table(&self, f: usize) -> u32 {
        self.nodes[f].table
    }
    fn text(&self, f: usize, top: bool, out: &mut String) {
        match self.nodes[f].kind {
            Kind::Var(i) => out.push_str(VARS[i]),
            Kind::Not(a) => {
                out.push('~');
                self.text(a, false, out);
            }
            Kind::Bin(op, a, b) => {
                let sym = match op {
                    Op::And => " & ",
                    Op::Or => " | ",
                    Op::Implies => " -> ",
                    Op::Iff => " <-> ",
                };
                if !top {
                    out.push('(');
                }
                self.text(a, false, out);
                out.push_str(sym);
                self.text(b, false, out);
                if !top {
                    out.push(')');
                }
            }
        }
    }
    fn render(&self, f: usize) -> String {
        let mut s = String::new();
        self.text(f, true, &mut s);
        s
    }
    /// The formula in prefix notation, tokens separated by single spaces: variables,
    /// `not X`, and `and|or|implies|iff X Y`.
    fn prefix(&self, f: usize, out: &mut String) {
        if !out.is_empty() {
            out.push(' ');
        }
        match self.nodes[f].kind {
            Kind::Var(i) => out.push_str(VARS[i]),
            Kind::Not(a) => {
                out.push_str("not");
                self.prefix(a, out);
            }
            Kind::Bin(op, a, b) => {
                out.push_str(match op {
                    Op::And => "and",
                    Op::Or => "or",
                    Op::Implies => "implies",
                    Op::Iff => "iff",
                });
                self.prefix(a, out);
                self.prefix(b, out);
            }
        }
    }
    fn structured(&self, f: usize) -> Value {
        let mut prefix = String::new();
        self.prefix(f, &mut prefix);
        json!({"text": self.render(f), "prefix": prefix})
    }
    /// A random formula of depth at most `depth`; returns its root.
    fn random(&mut self, rng: &mut ChaCha20Rng, vars: usize, depth: u32, iff: bool) -> usize {
        if depth == 0 || rng.random_bool(0.25) {
            let v = self.push(Kind::Var(rng.random_range(0..vars)));
            return if rng.random_bool(0.3) {
                self.push(Kind::Not(v))
            } else {
                v
            };
        }
        if rng.random_bool(0.12) {
            let a = self.random(rng, vars, depth - 1, iff);
            return self.push(Kind::Not(a));
        }
        let ops: &[Op] = if iff {
            &[Op::And, Op::Or, Op::Implies, Op::Iff]
        } else {
            &[Op::And, Op::Or, Op::Implies]
        };
        let op = ops[rng.random_range(0..ops.len())];
        let a = self.random(rng, vars, depth - 1, iff);
        // Never `x & x` or an equivalent pair: redraw the right side while it has the
        // left side's truth table.
        let mark = self.nodes.len();
        let mut b = self.random(rng, vars, depth - 1, iff);
        while self.table(b) == self.table(a) {
            self.nodes.truncate(mark);
            b = self.random(rng, vars, depth - 1, iff);
        }
        self.push(Kind::Bin(op, a, b))
    }
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[
            Piece::Text("Premises (variables {variables|comma}):"),
            Piece::Data("{#premises|\n}- {.text}{/}"),
            Piece::Text(
                "Connectives: ~ not, & and, | inclusive or, -> implies, <-> if and only if. A formula follows from the premises when it is true under every true/false assignment to the variables that makes all the premises true. Exactly one of the options below follows; which one?",
            ),
            Piece::Data("{@2.lines.1:|lines}"),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Text(
                "Which option is entailed by the premises? Exactly one is. (Notation: ~ not, & and, | or (inclusive), -> implies, <-> if and only if. A formula is entailed when it is true under every assignment of truth values to {variables|comma} that makes all the premises true.)",
            ),
            Piece::Data("Options:\n{@2.lines.1:|lines}"),
            Piece::Data("Premises:\n{#premises|\n}{.text}{/}"),
        ],
    ),
];

impl Family for PropositionalLogic {
    fn name(&self) -> &'static str {
        "propositional_logic"
    }
    fn category(&self) -> Category {
        Category::Logic
    }
    fn description(&self) -> &'static str {
        "Pick the one formula that follows from consistent premises (decided by truth table)"
    }
    fn version(&self) -> u32 {
        // 2: no tagged example (an echoed question scored on every "D" instance).
        // 3: the body no longer ends "Answer with the letter of that formula." (an
        // instruction of its own that competed with the answer rule: Qwen2.5-Coder-0.5B
        // answered a bare letter, no tags, on 24 of 24 under zero-shot and reason);
        // the phrase says it.
        3
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (v, p, d, iff) = PARAMS[level.idx()];
        json!({"variables": v, "premises": p, "max_depth": d, "iff": iff, "options": 4})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (nv, np, depth, iff) = PARAMS[level.idx()];
        // Rows that matter: assignments of the first `nv` variables.
        let rows: u32 = if nv == 5 {
            u32::MAX
        } else {
            (1u32 << (1 << nv)) - 1
        };
        let mut ar = Arena::default();
        let (premises, options, correct) = 'draw: loop {
            ar.nodes.clear();
            let premises: Vec<usize> = (0..np).map(|_| ar.random(rng, nv, depth, iff)).collect();
            let tables: Vec<u32> = premises.iter().map(|&f| ar.table(f) & rows).collect();
            let both = tables.iter().fold(rows, |acc, t| acc & t);
            // Never contradictory; and no premise may be a tautology (it would say nothing).
            if both == 0 || tables.contains(&rows) {
                continue;
            }
            let entailed = |t: u32| t & both == both;
            let mut good = None;
            for _ in 0..200 {
                let mark = ar.nodes.len();
                let f = ar.random(rng, nv, depth, iff);
                let t = ar.table(f) & rows;
                if entailed(t) && t != rows && !tables.contains(&t) {
                    good = Some(f);
                    break;
                }
                ar.nodes.truncate(mark);
            }
            let Some(good) = good else { continue };
            let mut opts = vec![good];
            let mut tries = 0;
            while opts.len() < 4 {
                tries += 1;
                if tries > 400 {
                    continue 'draw;
                }
                let mark = ar.nodes.len();
                let f = ar.random(rng, nv, depth, iff);
                let t = ar.table(f) & rows;
                // Distractors are not entailed and no two options are equivalent.
                if !entailed(t) && opts.iter().all(|&o| ar.table(o) & rows != t) {
                    opts.push(f);
                } else {
                    ar.nodes.truncate(mark);
                }
            }
            let mut order = [0usize, 1, 2, 3];
            order.shuffle(rng);
            let correct = order.iter().position(|&i| i == 0).unwrap_or(0);
            let options: Vec<usize> = order.iter().map(|&i| opts[i]).collect();
            break (premises, options, correct);
        };
        let vars = VARS[..nv].join(", ");
        let prem_text: Vec<String> = premises
            .iter()
            .enumerate()
            .map(|(i, &f)| format!("{}. {}", i + 1, ar.render(f)))
            .collect();
        let opt_text: Vec<String> = options
            .iter()
            .enumerate()
            .map(|(i, &f)| format!("{}. {}", LETTERS[i], ar.render(f)))
            .collect();
        let body = Body::new()
            .text(format!(
                "In propositional logic with variables {vars}, the connectives are ~ (not), & (and), | (or, inclusive), \
-> (implies) and <-> (if and only if). A formula follows from the premises if it is true under every assignment \
of true/false to the variables that makes all the premises true."
            ))
            .data(format!("Premises:\n{}", prem_text.join("\n")))
            .data(format!(
                "Which one of these formulas follows from the premises? Exactly one does.\n{}",
                opt_text.join("\n")
            ));
        let format =
            AnswerFormat::new("as the letter of that formula, a single letter A, B, C or D");
        Generated {
            body,
            format,
            answer: LETTERS[correct].to_string(),
            metadata: object(json!({
                "variables": &VARS[..nv],
                "premises": premises.iter().map(|&f| ar.structured(f)).collect::<Vec<_>>(),
                "options": options.iter().map(|&f| ar.structured(f)).collect::<Vec<_>>(),
            })),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        match (choice_letter(answer, 4), choice_letter(&instance.answer, 4)) {
            (Some(a), Some(g)) if a == g => 1.0,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truth_tables() {
        let mut ar = Arena::default();
        let p = ar.push(Kind::Var(0));
        let q = ar.push(Kind::Var(1));
        // Modus ponens: p & (p -> q) entails q.
        let imp = ar.push(Kind::Bin(Op::Implies, p, q));
        let prem = ar.push(Kind::Bin(Op::And, p, imp));
        assert_eq!(ar.table(prem) & ar.table(q), ar.table(prem));
        // p <-> ~p is unsatisfiable.
        let np = ar.push(Kind::Not(p));
        let contra = ar.push(Kind::Bin(Op::Iff, p, np));
        assert_eq!(ar.table(contra), 0);
        let or = ar.push(Kind::Bin(Op::Or, p, q));
        assert_eq!(ar.render(or), "p | q");
        assert_eq!(ar.render(prem), "p & (p -> q)");
    }
}
