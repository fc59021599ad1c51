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
//! Gold: the letter of the entailed option. Verifier: one letter A-D (case ignored,
//! optionally written `(B)`), equal to the gold. Metadata: `params`, `variables`,
//! `premises` and `options` (each `{"text", "tree"}`, where a tree is `["var", "p"]`,
//! `["not", f]` or `[op, f, g]` with op one of `and`, `or`, `implies`, `iff`).

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use super::common::choice_letter;
use crate::families::{Category, Family, Generated, Instance, Level, answer_instruction};

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

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    And,
    Or,
    Implies,
    Iff,
}

enum F {
    Var(usize),
    Not(Box<F>),
    Bin(Op, Box<F>, Box<F>),
}

impl F {
    /// Truth table over all 32 rows (rows beyond the used variables repeat).
    fn table(&self) -> u32 {
        match self {
            F::Var(i) => VAR_TABLES[*i],
            F::Not(a) => !a.table(),
            F::Bin(op, a, b) => {
                let (a, b) = (a.table(), b.table());
                match op {
                    Op::And => a & b,
                    Op::Or => a | b,
                    Op::Implies => !a | b,
                    Op::Iff => !(a ^ b),
                }
            }
        }
    }
    fn text(&self, top: bool) -> String {
        match self {
            F::Var(i) => VARS[*i].to_string(),
            F::Not(a) => format!("~{}", a.text(false)),
            F::Bin(op, a, b) => {
                let sym = match op {
                    Op::And => "&",
                    Op::Or => "|",
                    Op::Implies => "->",
                    Op::Iff => "<->",
                };
                let inner = format!("{} {sym} {}", a.text(false), b.text(false));
                if top { inner } else { format!("({inner})") }
            }
        }
    }
    fn tree(&self) -> Value {
        match self {
            F::Var(i) => json!(["var", VARS[*i]]),
            F::Not(a) => json!(["not", a.tree()]),
            F::Bin(op, a, b) => {
                let name = match op {
                    Op::And => "and",
                    Op::Or => "or",
                    Op::Implies => "implies",
                    Op::Iff => "iff",
                };
                json!([name, a.tree(), b.tree()])
            }
        }
    }
}

fn random_formula(rng: &mut ChaCha20Rng, vars: usize, depth: u32, iff: bool) -> F {
    if depth == 0 || rng.random_bool(0.25) {
        let v = F::Var(rng.random_range(0..vars));
        return if rng.random_bool(0.3) {
            F::Not(Box::new(v))
        } else {
            v
        };
    }
    if rng.random_bool(0.12) {
        return F::Not(Box::new(random_formula(rng, vars, depth - 1, iff)));
    }
    let ops: &[Op] = if iff {
        &[Op::And, Op::Or, Op::Implies, Op::Iff]
    } else {
        &[Op::And, Op::Or, Op::Implies]
    };
    let op = ops[rng.random_range(0..ops.len())];
    let a = random_formula(rng, vars, depth - 1, iff);
    // Never `x & x`: redraw the right side while it repeats the left.
    let mut b = random_formula(rng, vars, depth - 1, iff);
    while b.text(false) == a.text(false) {
        b = random_formula(rng, vars, depth - 1, iff);
    }
    F::Bin(op, Box::new(a), Box::new(b))
}

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
        1
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
        let (premises, options, correct) = 'draw: loop {
            let premises: Vec<F> = (0..np)
                .map(|_| random_formula(rng, nv, depth, iff))
                .collect();
            let tables: Vec<u32> = premises.iter().map(|f| f.table() & rows).collect();
            let both = tables.iter().fold(rows, |acc, t| acc & t);
            // Never contradictory; and no premise may be a tautology (it would say nothing).
            if both == 0 || tables.contains(&rows) {
                continue;
            }
            let entailed = |t: u32| t & both == both;
            let mut good = None;
            for _ in 0..200 {
                let f = random_formula(rng, nv, depth, iff);
                let t = f.table() & rows;
                if entailed(t) && t != rows && !tables.contains(&t) {
                    good = Some(f);
                    break;
                }
            }
            let Some(good) = good else { continue };
            let mut opts = vec![good];
            let mut tries = 0;
            while opts.len() < 4 {
                tries += 1;
                if tries > 400 {
                    continue 'draw;
                }
                let f = random_formula(rng, nv, depth, iff);
                let t = f.table() & rows;
                let text = f.text(true);
                if !entailed(t) && opts.iter().all(|o| o.text(true) != text) {
                    opts.push(f);
                }
            }
            let mut order = [0usize, 1, 2, 3];
            order.shuffle(rng);
            let correct = order.iter().position(|&i| i == 0).unwrap_or(0);
            let mut slots: Vec<Option<F>> = opts.into_iter().map(Some).collect();
            let options: Vec<F> = order.iter().filter_map(|&i| slots[i].take()).collect();
            break (premises, options, correct);
        };
        let vars = VARS[..nv].join(", ");
        let prem_text: Vec<String> = premises
            .iter()
            .enumerate()
            .map(|(i, f)| format!("{}. {}", i + 1, f.text(true)))
            .collect();
        let opt_text: Vec<String> = options
            .iter()
            .enumerate()
            .map(|(i, f)| format!("{}. {}", LETTERS[i], f.text(true)))
            .collect();
        let question = format!(
            "In propositional logic with variables {vars}, the connectives are ~ (not), & (and), | (or, inclusive), \
-> (implies) and <-> (if and only if). A formula follows from the premises if it is true under every assignment \
of true/false to the variables that makes all the premises true.\n\nPremises:\n{}\n\nWhich one of these formulas \
follows from the premises? Exactly one does.\n{}\n\nAnswer with the letter of that formula.\n{}",
            prem_text.join("\n"),
            opt_text.join("\n"),
            answer_instruction(
                "as a single letter",
                "A</answer>, <answer>B</answer>, <answer>C</answer> or <answer>D"
            )
        );
        Generated {
            question,
            answer: LETTERS[correct].to_string(),
            metadata: json!({
                "params": self.level_params(level),
                "variables": &VARS[..nv],
                "premises": premises.iter().map(|f| json!({"text": f.text(true), "tree": f.tree()})).collect::<Vec<_>>(),
                "options": options.iter().map(|f| json!({"text": f.text(true), "tree": f.tree()})).collect::<Vec<_>>(),
            }),
        }
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
        let p = || Box::new(F::Var(0));
        let q = || Box::new(F::Var(1));
        // Modus ponens: p & (p -> q) entails q.
        let prem = F::Bin(Op::And, p(), Box::new(F::Bin(Op::Implies, p(), q())));
        assert_eq!(prem.table() & F::Var(1).table(), prem.table());
        // p <-> ~p is unsatisfiable.
        assert_eq!(F::Bin(Op::Iff, p(), Box::new(F::Not(p()))).table(), 0);
        assert_eq!(F::Bin(Op::Or, p(), q()).text(true), "p | q");
    }
}
