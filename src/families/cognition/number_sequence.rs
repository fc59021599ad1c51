//! `number_sequence`: the next term of an integer sequence built from composed rules.
//!
//! Rule pieces: arithmetic (`a + d·n`), geometric (`a·r^n`), polynomial (degree 2 or
//! 3), affine (`x → r·x + d`), two- and three-term additive recurrences
//! (`x_{n+2} = p·x_{n+1} + q·x_n`, tribonacci), alternating operations (`+a, ×b, +a,
//! ×b, ...` or `+a, -c, ...`), and the sum or the interleaving of two pieces.
//!
//! **Why the answer is unique.** Every rule above is a linear recurrence with
//! constant coefficients, and the generator computes an upper bound `U` on the order
//! of the one it used: from the characteristic polynomial (irreducible factors with
//! multiplicities; a sum is annihilated by the lcm of its parts' polynomials, an
//! interleaving of `s` and `t` by `lcm(P_s, P_t)(x²)`, of degree `2·deg lcm`) or, for
//! alternating operations, from their two-step form (order ≤ 4). It then shows at
//! least `2U` terms. If two sequences satisfy constant-coefficient linear recurrences
//! of orders `k ≤ U` and `L ≤ U` and agree on `k + L ≤ 2U` consecutive terms, their
//! difference satisfies a recurrence of order `k + L` with that many zero initial terms,
//! so they agree forever. Hence every rule of the family of complexity at most the one
//! used (any linear recurrence of order ≤ U) that fits the shown terms predicts the
//! same next term: no simpler rule gives a different answer. The tests check this with
//! an independent solver that finds the lowest-order recurrence fitting the terms by
//! Gaussian elimination.
//!
//! Levels (pieces, minimum terms shown; the shown count is `max(minimum, 2U)`):
//! 1: arithmetic or geometric, 5 · 2: + quadratic, Fibonacci-like, 6 ·
//! 3: affine, other additive recurrences, alternating `+a ×b`, arithmetic + geometric, 7 ·
//! 4: cubic, quadratic + geometric, tribonacci, alternating ops, two interleaved
//! arithmetic sequences, 8 · 5: cubic + geometric, sum of two geometric and an
//! arithmetic piece, interleaved arithmetic/geometric or quadratic/arithmetic,
//! additive recurrence + arithmetic, 9.
//! Every term shown and the answer stay within ±10^12 (otherwise the rule is redrawn).
//! Metadata: `terms` (the shown terms), `rule` (a description), `order_bound` (U).
//! Verifier: one integer (`parse::int`).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::fields;
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct NumberSequence;

const LIMIT: i64 = 1_000_000_000_000;
const MIN_SHOWN: [usize; 5] = [5, 6, 7, 8, 9];

/// An irreducible factor of a characteristic polynomial over the rationals.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Factor {
    /// `x - r`
    Lin(i64),
    /// `x² - p·x - q`, irreducible for the (p, q) used here.
    Quad(i64, i64),
    /// `x³ - x² - x - 1` (tribonacci), irreducible.
    Trib,
}

impl Factor {
    fn degree(self) -> usize {
        match self {
            Factor::Lin(_) => 1,
            Factor::Quad(..) => 2,
            Factor::Trib => 3,
        }
    }
}

/// A characteristic polynomial as (factor, multiplicity) pairs.
type CharPoly = Vec<(Factor, usize)>;

fn lcm(a: &CharPoly, b: &CharPoly) -> CharPoly {
    let mut out = a.clone();
    for &(f, m) in b {
        match out.iter_mut().find(|(g, _)| *g == f) {
            Some((_, n)) => *n = (*n).max(m),
            None => out.push((f, m)),
        }
    }
    out
}

fn degree(p: &CharPoly) -> usize {
    p.iter().map(|(f, m)| f.degree() * m).sum()
}

#[derive(Clone, Debug)]
enum Rule {
    Arith {
        a: i64,
        d: i64,
    },
    Geom {
        a: i64,
        r: i64,
    },
    /// `c[0] + c[1]·n + c[2]·n² (+ c[3]·n³)`
    Poly {
        c: Vec<i64>,
    },
    Affine {
        x0: i64,
        r: i64,
        d: i64,
    },
    /// `x_{n+2} = p·x_{n+1} + q·x_n`
    Lin2 {
        x0: i64,
        x1: i64,
        p: i64,
        q: i64,
    },
    Trib {
        x: [i64; 3],
    },
    /// Alternately apply `+a` then `op b` (`op` is `*` or `-`).
    Alt {
        x0: i64,
        a: i64,
        op: u8,
        b: i64,
    },
    Sum(Box<Rule>, Box<Rule>),
    Interleave(Box<Rule>, Box<Rule>),
}

impl Rule {
    /// The characteristic polynomial when it is known exactly.
    fn charpoly(&self) -> Option<CharPoly> {
        Some(match self {
            Rule::Arith { .. } => vec![(Factor::Lin(1), 2)],
            Rule::Geom { r, .. } => vec![(Factor::Lin(*r), 1)],
            Rule::Poly { c } => vec![(Factor::Lin(1), c.len())],
            Rule::Affine { r, .. } => vec![(Factor::Lin(*r), 1), (Factor::Lin(1), 1)],
            Rule::Lin2 { p, q, .. } => match (p, q) {
                // x² - x - 2 = (x - 2)(x + 1)
                (1, 2) => vec![(Factor::Lin(2), 1), (Factor::Lin(-1), 1)],
                _ => vec![(Factor::Quad(*p, *q), 1)],
            },
            Rule::Trib { .. } => vec![(Factor::Trib, 1)],
            Rule::Alt { .. } => return None,
            Rule::Sum(a, b) => lcm(&a.charpoly()?, &b.charpoly()?),
            Rule::Interleave(..) => return None,
        })
    }

    /// An upper bound on the order of a linear recurrence satisfied by the sequence.
    fn order_bound(&self) -> usize {
        match self {
            // Both parities follow a two-step affine or arithmetic rule: annihilated by
            // (x² - b)(x² - 1) or (x² - 1)².
            Rule::Alt { .. } => 4,
            Rule::Sum(a, b) => match (a.charpoly(), b.charpoly()) {
                (Some(p), Some(q)) => degree(&lcm(&p, &q)),
                _ => a.order_bound() + b.order_bound(),
            },
            Rule::Interleave(a, b) => match (a.charpoly(), b.charpoly()) {
                (Some(p), Some(q)) => 2 * degree(&lcm(&p, &q)),
                _ => 2 * (a.order_bound() + b.order_bound()),
            },
            // Every other rule has an exact characteristic polynomial.
            _ => self.charpoly().map_or(0, |p| degree(&p)),
        }
    }

    fn describe(&self) -> String {
        match self {
            Rule::Arith { a, d } => format!("arithmetic(start {a}, step {d})"),
            Rule::Geom { a, r } => format!("geometric(start {a}, ratio {r})"),
            Rule::Poly { c } => format!("polynomial(coefficients {c:?}, lowest degree first)"),
            Rule::Affine { x0, r, d } => format!("affine(start {x0}, x -> {r}*x + {d})"),
            Rule::Lin2 { x0, x1, p, q } => {
                format!("recurrence(start {x0}, {x1}; next = {p}*previous + {q}*the one before)")
            }
            Rule::Trib { x } => format!("tribonacci(start {}, {}, {})", x[0], x[1], x[2]),
            Rule::Alt { x0, a, op, b } => {
                format!("alternating(start {x0}; +{a}, then {}{b})", *op as char)
            }
            Rule::Sum(a, b) => format!("sum({}, {})", a.describe(), b.describe()),
            Rule::Interleave(a, b) => format!("interleave({}, {})", a.describe(), b.describe()),
        }
    }

    /// The first `n` terms, `None` if any leaves ±LIMIT.
    fn terms(&self, n: usize) -> Option<Vec<i64>> {
        let ok = |v: i64| (v.abs() <= LIMIT).then_some(v);
        let mut out = Vec::with_capacity(n);
        match self {
            Rule::Arith { a, d } => {
                for i in 0..n as i64 {
                    out.push(ok(a.checked_add(d.checked_mul(i)?)?)?);
                }
            }
            Rule::Geom { a, r } => {
                let mut v = *a;
                for _ in 0..n {
                    out.push(ok(v)?);
                    v = v.checked_mul(*r)?;
                }
            }
            Rule::Poly { c } => {
                for i in 0..n as i64 {
                    let mut v: i64 = 0;
                    for &k in c.iter().rev() {
                        v = v.checked_mul(i)?.checked_add(k)?;
                    }
                    out.push(ok(v)?);
                }
            }
            Rule::Affine { x0, r, d } => {
                let mut v = *x0;
                for _ in 0..n {
                    out.push(ok(v)?);
                    v = v.checked_mul(*r)?.checked_add(*d)?;
                }
            }
            Rule::Lin2 { x0, x1, p, q } => {
                let (mut a, mut b) = (*x0, *x1);
                for _ in 0..n {
                    out.push(ok(a)?);
                    let c = p.checked_mul(b)?.checked_add(q.checked_mul(a)?)?;
                    (a, b) = (b, c);
                }
            }
            Rule::Trib { x } => {
                let [mut a, mut b, mut c] = *x;
                for _ in 0..n {
                    out.push(ok(a)?);
                    let d = a.checked_add(b)?.checked_add(c)?;
                    (a, b, c) = (b, c, d);
                }
            }
            Rule::Alt { x0, a, op, b } => {
                let mut v = *x0;
                for i in 0..n {
                    out.push(ok(v)?);
                    v = if i % 2 == 0 {
                        v.checked_add(*a)?
                    } else if *op == b'*' {
                        v.checked_mul(*b)?
                    } else {
                        v.checked_sub(*b)?
                    };
                }
            }
            Rule::Sum(a, b) => {
                let (x, y) = (a.terms(n)?, b.terms(n)?);
                for (p, q) in x.into_iter().zip(y) {
                    out.push(ok(p.checked_add(q)?)?);
                }
            }
            Rule::Interleave(a, b) => {
                let (x, y) = (a.terms(n.div_ceil(2))?, b.terms(n / 2)?);
                for i in 0..n {
                    out.push(if i % 2 == 0 { x[i / 2] } else { y[i / 2] });
                }
            }
        }
        Some(out)
    }
}

fn nonzero(rng: &mut ChaCha20Rng, lo: i64, hi: i64) -> i64 {
    loop {
        let v = rng.random_range(lo..=hi);
        if v != 0 {
            return v;
        }
    }
}

fn arith(rng: &mut ChaCha20Rng, amax: i64, dmax: i64) -> Rule {
    Rule::Arith {
        a: rng.random_range(-amax / 4..=amax),
        d: nonzero(rng, -dmax, dmax),
    }
}

fn geom(rng: &mut ChaCha20Rng, rs: &[i64]) -> Rule {
    Rule::Geom {
        a: nonzero(rng, -3, 6),
        r: rs[rng.random_range(0..rs.len())],
    }
}

fn poly(rng: &mut ChaCha20Rng, deg: usize, cmax: i64) -> Rule {
    let mut c: Vec<i64> = (0..=deg).map(|_| rng.random_range(-cmax..=cmax)).collect();
    c[deg] = nonzero(rng, -cmax.min(3), cmax.min(3));
    Rule::Poly { c }
}

fn lin2(rng: &mut ChaCha20Rng, pqs: &[(i64, i64)]) -> Rule {
    let (p, q) = pqs[rng.random_range(0..pqs.len())];
    Rule::Lin2 {
        x0: rng.random_range(0..=6),
        x1: rng.random_range(1..=8),
        p,
        q,
    }
}

fn alt(rng: &mut ChaCha20Rng, allow_minus: bool) -> Rule {
    let minus = allow_minus && rng.random_bool(0.5);
    if minus {
        Rule::Alt {
            x0: rng.random_range(0..=30),
            a: rng.random_range(2..=15),
            op: b'-',
            b: rng.random_range(1..=12),
        }
    } else {
        Rule::Alt {
            x0: rng.random_range(1..=9),
            a: rng.random_range(1..=6),
            op: b'*',
            b: rng.random_range(2..=3),
        }
    }
}

fn draw(rng: &mut ChaCha20Rng, level: usize) -> Rule {
    let b = Box::new;
    match level {
        0 => match rng.random_range(0..2) {
            0 => Rule::Arith {
                a: rng.random_range(0..=20),
                d: nonzero(rng, -5, 9),
            },
            _ => Rule::Geom {
                a: rng.random_range(1..=5),
                r: rng.random_range(2..=3),
            },
        },
        1 => match rng.random_range(0..4) {
            0 => arith(rng, 50, 20),
            1 => geom(rng, &[2, 3, 4, -2]),
            2 => poly(rng, 2, 5),
            _ => lin2(rng, &[(1, 1)]),
        },
        2 => match rng.random_range(0..5) {
            0 => Rule::Affine {
                x0: rng.random_range(0..=10),
                r: rng.random_range(2..=3),
                d: nonzero(rng, -9, 9),
            },
            1 => lin2(rng, &[(1, 1), (1, 2), (2, 1)]),
            2 => poly(rng, 2, 10),
            3 => alt(rng, false),
            _ => Rule::Sum(b(arith(rng, 20, 9)), b(geom(rng, &[2, 3]))),
        },
        3 => match rng.random_range(0..6) {
            0 => poly(rng, 3, 6),
            1 => Rule::Sum(b(poly(rng, 2, 6)), b(geom(rng, &[2, 3, -2]))),
            2 => Rule::Trib {
                x: [
                    rng.random_range(0..=2),
                    rng.random_range(0..=3),
                    rng.random_range(1..=4),
                ],
            },
            3 => alt(rng, true),
            4 => Rule::Interleave(b(arith(rng, 30, 9)), b(arith(rng, 30, 9))),
            _ => Rule::Sum(b(lin2(rng, &[(1, 1), (2, 1)])), b(arith(rng, 10, 5))),
        },
        _ => match rng.random_range(0..5) {
            0 => Rule::Sum(b(poly(rng, 3, 8)), b(geom(rng, &[2, 3, -2, -3]))),
            1 => Rule::Sum(
                b(Rule::Sum(b(geom(rng, &[2, 3])), b(geom(rng, &[-2, 4, 5])))),
                b(arith(rng, 20, 9)),
            ),
            2 => Rule::Interleave(b(arith(rng, 40, 12)), b(geom(rng, &[2, 3, -2]))),
            3 => Rule::Interleave(b(poly(rng, 2, 6)), b(arith(rng, 40, 12))),
            _ => Rule::Sum(b(lin2(rng, &[(1, 1), (1, 2), (2, 1)])), b(poly(rng, 2, 4))),
        },
    }
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Text("Here are the first {terms|len} terms of an integer sequence:"),
            Piece::Data("{terms|lines}"),
            Piece::Text(
                "It follows a simple rule (constant differences or ratios, polynomial terms, each term computed from the previous ones, alternating operations, or a sum or interleaving of such patterns), and the terms given determine the next one. What comes next?",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[Piece::Text(
            "Sequence: {terms|json}\nFind the next term. The rule is simple (constant differences or ratios, polynomial terms, terms computed from earlier terms, alternating operations, or sums or interleavings of these), and the terms shown are enough to fix the next one.",
        )],
    ),
];

impl Family for NumberSequence {
    fn name(&self) -> &'static str {
        "number_sequence"
    }
    fn category(&self) -> Category {
        Category::Cognition
    }
    fn description(&self) -> &'static str {
        "Continue an integer sequence built from composed rules (answer provably unique)"
    }
    fn version(&self) -> u32 {
        // 2: no format example (no integer is ruled out by the question alone).
        2
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let pieces: &[&str] = match level.idx() {
            0 => &["arithmetic", "geometric"],
            1 => &["arithmetic", "geometric", "quadratic", "fibonacci"],
            2 => &[
                "affine",
                "additive_recurrence",
                "quadratic",
                "alternating_ops",
                "arithmetic+geometric",
            ],
            3 => &[
                "cubic",
                "quadratic+geometric",
                "tribonacci",
                "alternating_ops",
                "interleave(arithmetic,arithmetic)",
                "additive_recurrence+arithmetic",
            ],
            _ => &[
                "cubic+geometric",
                "geometric+geometric+arithmetic",
                "interleave(arithmetic,geometric)",
                "interleave(quadratic,arithmetic)",
                "additive_recurrence+quadratic",
            ],
        };
        json!({"pieces": pieces, "min_terms_shown": MIN_SHOWN[level.idx()], "terms_shown": "max(min_terms_shown, 2 * order_bound)", "value_limit": LIMIT})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (rule, shown, terms) = loop {
            let rule = draw(rng, level.idx());
            let shown = MIN_SHOWN[level.idx()].max(2 * rule.order_bound());
            if let Some(t) = rule.terms(shown + 1) {
                // A constant tail would make the puzzle degenerate; redraw it.
                if t.windows(2).any(|w| w[0] != w[1]) {
                    break (rule, shown, t);
                }
            }
        };
        let next = terms[shown];
        let list: Vec<String> = terms[..shown].iter().map(i64::to_string).collect();
        Generated {
            body: Body::new()
                .text("What is the next term of this integer sequence?")
                .data(format!("{}, ?", list.join(", ")))
                .text(
                    "The sequence follows a simple rule: constant differences or ratios, \
                     polynomial terms, each term computed from the previous ones, alternating \
                     operations, or a sum or interleaving of such patterns. The terms shown are \
                     enough to determine the next one.",
                ),
            format: AnswerFormat::new("as a single integer"),
            answer: next.to_string(),
            metadata: fields([
                ("terms", Value::from(&terms[..shown])),
                ("rule", Value::from(rule.describe())),
                ("order_bound", Value::from(rule.order_bound())),
            ]),
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
