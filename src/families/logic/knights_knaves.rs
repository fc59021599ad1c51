//! `knights_knaves`: knights always tell the truth, knaves always lie; from what each
//! islander says, decide who is which.
//!
//! Every islander makes one statement. Statement kinds: `X is a knight/knave`;
//! `X and Y are of the same kind` / `of different kinds`; `A and B` / `A or B`
//! (inclusive) / `if A then B` over two such claims; `exactly k of us are knights`.
//! Levels (islanders, statement kinds allowed):
//! 1: 2, simple claims and same/different · 2: 3, the same · 3: 3, + and/or ·
//! 4: 4, + if-then and exactly-k · 5: 5, all kinds.
//! Generation: statements are drawn at random and the draw is kept only when brute
//! force over all 2^n knight/knave assignments finds exactly one consistent
//! assignment (a speaker's statement is true iff the speaker is a knight).
//!
//! Gold: `Name: knight, Name: knave, ...` in the order the islanders are introduced.
//! Verifier: every islander exactly once, in any order; items separated by commas,
//! semicolons or newlines; each item `Name: role` or `Name is a role` (names and roles
//! case-insensitive, a final `.` ignored). Metadata: `params`, `people`, `statements`
//! (per speaker a claim tree: `["is", name, "knight"|"knave"]`, `["same", a, b]`,
//! `["different", a, b]`, `["and"|"or"|"implies", c1, c2]`, `["exactly", k, "knights"]`).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use super::answers::norm_words;
use crate::families::kit::lexicon::{FEMALE, MALE};
use crate::families::kit::meta::{Meta, object};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::sample::pick;
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct KnightsKnaves;

/// (islanders, highest statement kind index allowed) per level.
const PARAMS: [(usize, u8); 5] = [(2, 1), (3, 1), (3, 2), (4, 3), (5, 3)];

#[derive(Clone, Debug)]
enum Claim {
    /// Person is a knight (`true`) or a knave.
    Is(usize, bool),
    Same(usize, usize),
    Different(usize, usize),
    And(Box<Claim>, Box<Claim>),
    Or(Box<Claim>, Box<Claim>),
    Implies(Box<Claim>, Box<Claim>),
    ExactlyKnights(usize),
}

impl Claim {
    /// Truth under `knights` (bit i set = person i is a knight).
    fn eval(&self, knights: u32) -> bool {
        let k = |p: usize| knights >> p & 1 == 1;
        match self {
            Claim::Is(p, knight) => k(*p) == *knight,
            Claim::Same(a, b) => k(*a) == k(*b),
            Claim::Different(a, b) => k(*a) != k(*b),
            Claim::And(a, b) => a.eval(knights) && b.eval(knights),
            Claim::Or(a, b) => a.eval(knights) || b.eval(knights),
            Claim::Implies(a, b) => !a.eval(knights) || b.eval(knights),
            Claim::ExactlyKnights(n) => knights.count_ones() as usize == *n,
        }
    }
    fn text(&self, names: &[&str], speaker: usize) -> String {
        let who = |p: usize| {
            if p == speaker {
                "I".to_string()
            } else {
                names[p].to_string()
            }
        };
        let be = |p: usize| if p == speaker { "am" } else { "is" };
        let role = |k: bool| if k { "a knight" } else { "a knave" };
        // The speaker names themself last: "Bob and I are".
        let pair = |a: usize, b: usize| {
            if a == speaker {
                format!("{} and I are", names[b])
            } else if b == speaker {
                format!("{} and I are", names[a])
            } else {
                format!("{} and {} are", names[a], names[b])
            }
        };
        match self {
            Claim::Is(p, k) => format!("{} {} {}", who(*p), be(*p), role(*k)),
            Claim::Same(a, b) => format!("{} of the same kind", pair(*a, *b)),
            Claim::Different(a, b) => format!("{} of different kinds", pair(*a, *b)),
            Claim::And(a, b) => {
                format!("{} and {}", a.text(names, speaker), b.text(names, speaker))
            }
            Claim::Or(a, b) => format!("{} or {}", a.text(names, speaker), b.text(names, speaker)),
            Claim::Implies(a, b) => format!(
                "if {}, then {}",
                a.text(names, speaker),
                b.text(names, speaker)
            ),
            Claim::ExactlyKnights(n) => {
                format!(
                    "exactly {n} of us {} knight{}",
                    if *n == 1 { "is a" } else { "are" },
                    if *n == 1 { "" } else { "s" }
                )
            }
        }
    }
    fn json(&self, names: &[&str]) -> Value {
        match self {
            Claim::Is(p, k) => json!(["is", names[*p], if *k { "knight" } else { "knave" }]),
            Claim::Same(a, b) => json!(["same", names[*a], names[*b]]),
            Claim::Different(a, b) => json!(["different", names[*a], names[*b]]),
            Claim::And(a, b) => json!(["and", a.json(names), b.json(names)]),
            Claim::Or(a, b) => json!(["or", a.json(names), b.json(names)]),
            Claim::Implies(a, b) => json!(["implies", a.json(names), b.json(names)]),
            Claim::ExactlyKnights(n) => json!(["exactly", n, "knights"]),
        }
    }
}

fn other(rng: &mut ChaCha20Rng, n: usize, not: usize) -> usize {
    let x = rng.random_range(0..n - 1);
    if x >= not { x + 1 } else { x }
}

fn simple(rng: &mut ChaCha20Rng, n: usize, speaker: usize) -> Claim {
    Claim::Is(other(rng, n, speaker), rng.random_bool(0.5))
}

fn claim(rng: &mut ChaCha20Rng, n: usize, speaker: usize, max_kind: u8) -> Claim {
    let kind = rng.random_range(0..=max_kind);
    match kind {
        0 => simple(rng, n, speaker),
        1 => {
            let a = rng.random_range(0..n);
            let b = other(rng, n, a);
            if rng.random_bool(0.5) {
                Claim::Same(a, b)
            } else {
                Claim::Different(a, b)
            }
        }
        2 => {
            // Two claims about two different people (possibly the speaker).
            let a = rng.random_range(0..n);
            let b = other(rng, n, a);
            let (x, y) = (
                Box::new(Claim::Is(a, rng.random_bool(0.5))),
                Box::new(Claim::Is(b, rng.random_bool(0.5))),
            );
            if rng.random_bool(0.5) {
                Claim::And(x, y)
            } else {
                Claim::Or(x, y)
            }
        }
        _ => {
            if rng.random_bool(0.5) {
                let a = rng.random_range(0..n);
                let b = other(rng, n, a);
                Claim::Implies(
                    Box::new(Claim::Is(a, rng.random_bool(0.5))),
                    Box::new(Claim::Is(b, rng.random_bool(0.5))),
                )
            } else {
                Claim::ExactlyKnights(rng.random_range(1..n))
            }
        }
    }
}

/// Every assignment (bitmask of knights) consistent with the statements.
fn consistent(statements: &[Claim]) -> Vec<u32> {
    let n = statements.len();
    (0..1u32 << n)
        .filter(|&k| {
            statements
                .iter()
                .enumerate()
                .all(|(i, s)| s.eval(k) == (k >> i & 1 == 1))
        })
        .collect()
}

/// Parse `Name: role` items into a role per person (`None` on anything malformed).
fn parse_roles(answer: &str, people: &[&str]) -> Option<Vec<bool>> {
    let mut roles: Vec<Option<bool>> = vec![None; people.len()];
    let items: Vec<&str> = answer
        .split([',', ';', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if items.len() != people.len() {
        return None;
    }
    for item in items {
        let item = item.strip_suffix('.').unwrap_or(item);
        let (name, role) = match item.split_once(':') {
            Some((n, r)) => (norm_words(n), norm_words(r)),
            None => {
                let w = norm_words(item);
                let (n, r) = w.split_once(" is ")?;
                (n.to_string(), r.strip_prefix("a ").unwrap_or(r).to_string())
            }
        };
        let knight = match role.as_str() {
            "knight" => true,
            "knave" => false,
            _ => return None,
        };
        let p = people.iter().position(|x| norm_words(x) == name)?;
        if roles[p].replace(knight).is_some() {
            return None;
        }
    }
    roles.into_iter().collect()
}

fn render(people: &[&str], knights: u32) -> String {
    people
        .iter()
        .enumerate()
        .map(|(i, p)| {
            format!(
                "{p}: {}",
                if knights >> i & 1 == 1 {
                    "knight"
                } else {
                    "knave"
                }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Text(
                "Every inhabitant of an island is a knight (always tells the truth) or a knave (always lies). There are {people|len} inhabitants here: {people|and}. They say:",
            ),
            Piece::Data("{@0.lines.1:-2|bullets}"),
            Piece::Text(
                "In these statements \"or\" is inclusive (at least one, possibly both), \"if A, then B\" is false only when A is true and B is false, and \"us\" means all {people|len} inhabitants. Determine each inhabitant's kind and write every one as Name: knight or Name: knave, separated by commas.",
            ),
        ],
    ),
    Template::new(
        Wording::Respond,
        &[
            Piece::Data("{@0.lines.1:-2|lines}"),
            Piece::Text(
                "Each speaker above is either a knight, who always tells the truth, or a knave, who always lies; the inhabitants are {people|comma}. (\"or\" means at least one, possibly both; \"if A, then B\" is false only when A is true and B is false; \"us\" means all {people|len} of them.) Who is a knight and who is a knave? Give every inhabitant as Name: knight or Name: knave, separated by commas.",
            ),
        ],
    ),
];

impl Family for KnightsKnaves {
    fn name(&self) -> &'static str {
        "knights_knaves"
    }
    fn category(&self) -> Category {
        Category::Logic
    }
    fn description(&self) -> &'static str {
        "Knights tell the truth, knaves lie: deduce everyone's kind (unique solution checked by brute force)"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (n, kind) = PARAMS[level.idx()];
        let kinds = ["is", "same/different", "and/or", "implies/exactly"];
        json!({"islanders": n, "statement_kinds": kinds[..=kind as usize]})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (n, max_kind) = PARAMS[level.idx()];
        let (people, statements, knights) = loop {
            let mut pool: Vec<&str> = pick(rng, MALE, n);
            pool.extend(pick(rng, FEMALE, n));
            let people: Vec<&str> = (0..n)
                .map(|i| pool[if rng.random_bool(0.5) { i } else { n + i }])
                .collect();
            let statements: Vec<Claim> = (0..n).map(|s| claim(rng, n, s, max_kind)).collect();
            if let [only] = consistent(&statements)[..] {
                break (people, statements, only);
            }
        };
        let said: Vec<String> = statements
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let t = s.text(&people, i);
                let mut c = t.chars();
                let t = c
                    .next()
                    .map(|f| f.to_uppercase().chain(c).collect::<String>())
                    .unwrap_or_default();
                format!("{} says: \"{t}.\"", people[i])
            })
            .collect();
        let list = people.join(", ");
        let body = Body::of(format!(
            "On an island every inhabitant is either a knight, who always tells the truth, or a knave, who always \
lies. You meet {n} inhabitants: {list}.\n{}\n(\"or\" means at least one, possibly both; \"if A, then B\" is false \
only when A is true and B is false; \"us\" means all {n} inhabitants.)\nWho is a knight and who is a knave? Name \
every inhabitant with their kind, separated by commas, in the format Name: knight or Name: knave.",
            said.join("\n"),
        ));
        // Nobody on any island has these names (a unit test checks the lists).
        let format = AnswerFormat::with_example("in that format", "Quill: knave, Ysolde: knight");
        Generated {
            body,
            format,
            answer: render(&people, knights),
            metadata: object(json!({
                "people": people,
                "statements": statements.iter().enumerate().map(|(i, s)| json!({"speaker": people[i], "claim": s.json(&people)})).collect::<Vec<_>>(),
            })),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let Some(people) = Meta::of(instance).strs("people") else {
            return 0.0;
        };
        match (
            parse_roles(answer, &people),
            parse_roles(&instance.answer, &people),
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
    fn classic_puzzle_has_one_solution() {
        // A: "B is a knave"; B: "A and I are of the same kind" -> A knight, B knave.
        let s = vec![Claim::Is(1, false), Claim::Same(0, 1)];
        assert_eq!(consistent(&s), vec![0b01]);
        // "I am a knave" can be said by nobody.
        assert!(consistent(&[Claim::Is(0, false)]).is_empty());
    }

    #[test]
    fn the_format_example_names_nobody_on_the_island() {
        for name in ["Quill", "Ysolde"] {
            assert!(!MALE.contains(&name) && !FEMALE.contains(&name), "{name}");
        }
    }

    #[test]
    fn parses_roles() {
        let p = vec!["Ada", "Milo"];
        assert_eq!(
            parse_roles("Ada: knight, Milo: knave", &p),
            Some(vec![true, false])
        );
        assert_eq!(
            parse_roles("milo is a KNAVE.\nAda is a knight", &p),
            Some(vec![true, false])
        );
        assert_eq!(parse_roles("Ada: knight, Ada: knave", &p), None);
        assert_eq!(parse_roles("Ada: knight", &p), None);
        assert_eq!(
            parse_roles("Ada: knight, Milo: knave, Bob: knave", &p),
            None
        );
        assert_eq!(parse_roles("Ada: knight or knave, Milo: knave", &p), None);
    }
}
