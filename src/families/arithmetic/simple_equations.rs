//! `simple_equations`: solve a linear equation in one variable with an integer solution.
//!
//! Each side is a sum of parts: `a·v` (written `3x`, `-x`), a constant, or, from level
//! 4, `a(v + b)`. The solution is drawn first and the last constant of the right-hand
//! side is computed so that it holds, so the solution is an integer by construction; the
//! variable's net coefficient is never zero, so it is the only solution.
//!
//! Levels (form, coefficients, constants, solution range, variable):
//! 1: `a·x + b = c`, a 1..=5, b 0..=10, x 0..=10 ·
//! 2: `a·x + b = c`, a ±1..=9, b ±0..=20, x -20..=20 ·
//! 3: `a·x + b = c·x + d`, coefficients ±1..=12, constants ±0..=30, x -30..=30 ·
//! 4: `a(v + b) + c = d·v + e`, coefficients ±1..=12, constants ±0..=30, v -50..=50,
//! v one of `x y z n t k` ·
//! 5: `a(v + b) + c(v + d) = e(v + f) + g`, coefficients ±1..=20, constants ±0..=40,
//! v -100..=100, v one of `x y z n t k`.
//!
//! Gold: the solution as an integer. Verifier: one integer (`parse::int` rules), or the
//! same written `v = 5` with the equation's variable (ASCII case ignored). The format
//! example is one above the level's largest solution, so it is never the gold.
//! Metadata: `equation` (the text shown), `variable`, `lhs` and `rhs` (parts as
//! `["var", a]`, `["const", c]` or `["group", a, b]` for `a(v + b)`).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};
use std::fmt::Write;

use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct SimpleEquations;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Part {
    Var(i64),
    Const(i64),
    /// `a(v + b)`
    Group(i64, i64),
}

#[derive(Clone, Copy)]
enum Form {
    /// a·v + b = c
    Basic,
    /// a·v + b = c·v + d
    BothSides,
    /// a(v + b) + c = d·v + e
    OneGroup,
    /// a(v + b) + c(v + d) = e(v + f) + g
    ThreeGroups,
}

struct Params {
    form: Form,
    coef_max: i64,
    negative_coefs: bool,
    const_max: i64,
    solution: (i64, i64),
    letters: &'static [&'static str],
}

const X: &[&str] = &["x"];
const LETTERS: &[&str] = &["x", "y", "z", "n", "t", "k"];

const PARAMS: [Params; 5] = [
    Params {
        form: Form::Basic,
        coef_max: 5,
        negative_coefs: false,
        const_max: 10,
        solution: (0, 10),
        letters: X,
    },
    Params {
        form: Form::Basic,
        coef_max: 9,
        negative_coefs: true,
        const_max: 20,
        solution: (-20, 20),
        letters: X,
    },
    Params {
        form: Form::BothSides,
        coef_max: 12,
        negative_coefs: true,
        const_max: 30,
        solution: (-30, 30),
        letters: X,
    },
    Params {
        form: Form::OneGroup,
        coef_max: 12,
        negative_coefs: true,
        const_max: 30,
        solution: (-50, 50),
        letters: LETTERS,
    },
    Params {
        form: Form::ThreeGroups,
        coef_max: 20,
        negative_coefs: true,
        const_max: 40,
        solution: (-100, 100),
        letters: LETTERS,
    },
];

fn coef(rng: &mut ChaCha20Rng, p: &Params) -> i64 {
    let a = rng.random_range(1..=p.coef_max);
    if p.negative_coefs && rng.random_bool(0.5) {
        -a
    } else {
        a
    }
}

fn constant(rng: &mut ChaCha20Rng, p: &Params) -> i64 {
    if p.negative_coefs {
        rng.random_range(-p.const_max..=p.const_max)
    } else {
        rng.random_range(0..=p.const_max)
    }
}

fn value(side: &[Part], v: i64) -> i64 {
    side.iter()
        .map(|p| match *p {
            Part::Var(a) => a * v,
            Part::Const(c) => c,
            Part::Group(a, b) => a * (v + b),
        })
        .sum()
}

fn net_coef(side: &[Part]) -> i64 {
    side.iter()
        .map(|p| match *p {
            Part::Var(a) | Part::Group(a, _) => a,
            Part::Const(_) => 0,
        })
        .sum()
}

/// `3x`, `-x`, `x`, `12`.
fn render_side(side: &[Part], var: &str) -> String {
    let mut s = String::new();
    for (i, p) in side.iter().enumerate() {
        let lead = match *p {
            Part::Var(a) | Part::Const(a) | Part::Group(a, _) => a,
        };
        let neg = lead < 0;
        if i == 0 {
            if neg {
                s.push('-');
            }
        } else {
            s.push_str(if neg { " - " } else { " + " });
        }
        let a = lead.abs();
        match *p {
            Part::Var(_) => {
                if a != 1 {
                    let _ = write!(s, "{a}");
                }
                s.push_str(var);
            }
            Part::Const(_) => {
                let _ = write!(s, "{a}");
            }
            Part::Group(_, b) => {
                if a != 1 {
                    let _ = write!(s, "{a}");
                }
                let sign = if b < 0 { '-' } else { '+' };
                let _ = write!(s, "({var} {sign} {})", b.abs());
            }
        }
    }
    s
}

fn parts_json(side: &[Part]) -> Value {
    Value::Array(
        side.iter()
            .map(|p| match *p {
                Part::Var(a) => json!(["var", a]),
                Part::Const(c) => json!(["const", c]),
                Part::Group(a, b) => json!(["group", a, b]),
            })
            .collect(),
    )
}

/// Draw both sides for solution `v`; the right side's last part is the constant that
/// makes the equation hold. `None` when the net coefficient is zero.
fn draw(rng: &mut ChaCha20Rng, p: &Params, v: i64) -> Option<(Vec<Part>, Vec<Part>)> {
    let (lhs, mut rhs) = match p.form {
        Form::Basic => (
            vec![Part::Var(coef(rng, p)), Part::Const(constant(rng, p))],
            vec![],
        ),
        Form::BothSides => (
            vec![Part::Var(coef(rng, p)), Part::Const(constant(rng, p))],
            vec![Part::Var(coef(rng, p))],
        ),
        Form::OneGroup => (
            vec![
                Part::Group(coef(rng, p), constant(rng, p)),
                Part::Const(constant(rng, p)),
            ],
            vec![Part::Var(coef(rng, p))],
        ),
        Form::ThreeGroups => (
            vec![
                Part::Group(coef(rng, p), constant(rng, p)),
                Part::Group(coef(rng, p), constant(rng, p)),
            ],
            vec![Part::Group(coef(rng, p), constant(rng, p))],
        ),
    };
    if net_coef(&lhs) == net_coef(&rhs) {
        return None;
    }
    let c = value(&lhs, v) - value(&rhs, v);
    // A zero constant is left out, unless it is the whole right-hand side.
    if c != 0 || rhs.is_empty() {
        rhs.push(Part::Const(c));
    }
    // Level 1 shows no negative numbers at all.
    if !p.negative_coefs && c < 0 {
        return None;
    }
    Some((lhs, rhs))
}

/// Strip an optional `v =` in front of the value (ASCII case ignored).
fn strip_variable<'a>(answer: &'a str, var: &str) -> &'a str {
    let t = answer.trim();
    match t.split_once('=') {
        Some((l, r)) if l.trim().eq_ignore_ascii_case(var) => r,
        _ => t,
    }
}

impl Family for SimpleEquations {
    fn name(&self) -> &'static str {
        "simple_equations"
    }
    fn category(&self) -> Category {
        Category::Arithmetic
    }
    fn description(&self) -> &'static str {
        "Solve a linear equation in one variable (integer solution)"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> Value {
        let p = &PARAMS[level.idx()];
        let form = match p.form {
            Form::Basic => "a*v + b = c",
            Form::BothSides => "a*v + b = c*v + d",
            Form::OneGroup => "a*(v + b) + c = d*v + e",
            Form::ThreeGroups => "a*(v + b) + c*(v + d) = e*(v + f) + g",
        };
        json!({
            "form": form, "coefficient_max": p.coef_max, "negative_coefficients": p.negative_coefs,
            "constant_max": p.const_max, "solution_min": p.solution.0, "solution_max": p.solution.1,
            "variables": p.letters,
        })
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let p = &PARAMS[level.idx()];
        let var = p.letters[rng.random_range(0..p.letters.len())];
        let (v, lhs, rhs) = loop {
            let v = rng.random_range(p.solution.0..=p.solution.1);
            if let Some((l, r)) = draw(rng, p, v) {
                break (v, l, r);
            }
        };
        let equation = format!("{} = {}", render_side(&lhs, var), render_side(&rhs, var));
        Generated {
            body: Body::new()
                .text(format!(
                    "Solve this equation for {var}. Its solution is an integer."
                ))
                .data(equation.clone()),
            format: AnswerFormat::with_example(
                format!("as the value of {var} (a single integer)"),
                (p.solution.1 + 1).to_string(),
            ),
            answer: v.to_string(),
            metadata: fields([
                ("equation", Value::from(equation)),
                ("variable", Value::from(var)),
                ("lhs", parts_json(&lhs)),
                ("rhs", parts_json(&rhs)),
            ]),
        }
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let Some(var) = Meta::of(instance).str("variable") else {
            return 0.0;
        };
        match (
            parse::int(strip_variable(answer, var)),
            parse::int(&instance.answer),
        ) {
            (Some(a), Some(g)) if a == g => 1.0,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rendering() {
        let lhs = [Part::Group(-3, -4), Part::Var(1), Part::Const(-7)];
        assert_eq!(render_side(&lhs, "y"), "-3(y - 4) + y - 7");
        assert_eq!(value(&lhs, 2), 6 + 2 - 7);
        assert_eq!(strip_variable(" Y = -3 ", "y").trim(), "-3");
        assert_eq!(strip_variable("x = 3", "y"), "x = 3");
    }
}
