//! `syllogism`: do categorical premises force a conclusion? (yes/no)
//!
//! Statements have the four classical forms: all X are Y, no X are Y, some X are Y,
//! some X are not Y. The question states that every group mentioned has at least one
//! member (existential import), so the classical valid moods are valid and, say, "all
//! M are P, all M are S, so some S are P" follows.
//!
//! Validity is decided by brute force over set models, never by a rule table: with
//! `t` terms there are `2^t` Venn regions, and a model says which regions are
//! non-empty; the conclusion follows when it holds in every model (out of `2^(2^t)`)
//! that satisfies the premises and leaves no term empty (see `verdicts` for the two
//! shortcuts that cannot change a verdict). An undistributed middle ("all
//! P are M, all S are M, so all S are P") therefore comes out "no", because a model
//! with S inside M but outside P exists. Premise sets with no model are redrawn.
//! "Yes" and "no" instances are drawn with equal probability.
//!
//! Levels (terms, premises, arrangement):
//! 1: 3, 2, first figure (M-P, S-M), conclusion about S-P ·
//! 2: 3, 2, any of the four figures · 3: 3, 2, any figure, conclusion in either order
//! (S-P or P-S) · 4: 4, 3, a chain A-B, B-C, C-D (each premise in either order),
//! conclusion about A and D · 5: as 4 with the premises shuffled and varied wording
//! ("none of the X are Y", "not all X are Y", "there are no X that are not Y", ...).
//!
//! Gold: `yes` or `no`. Verifier: `yes`/`no`, case ignored. Metadata: `params`, `terms`,
//! `premises` and `conclusion` as `{"form": "all"|"no"|"some"|"some_not", "subject",
//! "predicate"}`, `existential_import: true`.

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha20Rng;
use serde_json::json;

use super::answers::yes_no;
use crate::families::kit::lexicon::PLURALS;
use crate::families::kit::meta::object;
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::sample::pick;
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct Syllogism;

const FORMS: [&str; 4] = ["all", "no", "some", "some_not"];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Stmt {
    form: usize,
    subj: usize,
    pred: usize,
}

/// Regions (subsets of terms, as bitmasks over `terms` bits) where `x` is in and
/// `y` is in (`y_in`) or out; returned as a bitmask over the `2^terms` regions.
fn regions(terms: usize, x: usize, y: Option<(usize, bool)>) -> u32 {
    let mut m = 0u32;
    for r in 0..1u32 << terms {
        let xin = r >> x & 1 == 1;
        let ok = match y {
            None => xin,
            Some((y, want)) => xin && (r >> y & 1 == 1) == want,
        };
        if ok {
            m |= 1 << r;
        }
    }
    m
}

impl Stmt {
    /// The regions the statement talks about and whether they must all be empty
    /// (universal forms) or not all empty (particular forms).
    fn key(&self, terms: usize) -> (u32, bool) {
        let (x, y) = (self.subj, self.pred);
        match self.form {
            0 => (regions(terms, x, Some((y, false))), true),
            1 => (regions(terms, x, Some((y, true))), true),
            2 => (regions(terms, x, Some((y, true))), false),
            _ => (regions(terms, x, Some((y, false))), false),
        }
    }
    fn text(&self, names: &[&str], varied: bool, rng: &mut ChaCha20Rng) -> String {
        let (x, y) = (names[self.subj], names[self.pred]);
        let alt = varied && rng.random_bool(0.5);
        match (self.form, alt) {
            (0, false) => format!("All {x} are {y}."),
            (0, true) => format!("There are no {x} that are not {y}."),
            (1, false) => format!("No {x} are {y}."),
            (1, true) => format!("None of the {x} are {y}."),
            (2, false) => format!("Some {x} are {y}."),
            (2, true) => format!("At least one of the {x} is one of the {y}."),
            (_, false) => format!("Some {x} are not {y}."),
            (_, true) => format!("Not all {x} are {y}."),
        }
    }
    fn json(&self, names: &[&str]) -> serde_json::Value {
        json!({"form": FORMS[self.form], "subject": names[self.subj], "predicate": names[self.pred]})
    }
}

fn holds((mask, empty): (u32, bool), model: u32) -> bool {
    if empty {
        model & mask == 0
    } else {
        model & mask != 0
    }
}

/// Check every candidate conclusion against every model (set of non-empty regions)
/// that leaves no term empty and satisfies `premises`. Returns `None` when there is no
/// such model, else a bitmask: bit i set when conclusion i holds in all of them.
///
/// The enumeration is exhaustive over the regions that can matter: the region outside
/// every term is left empty (no statement mentions it, so it cannot change a verdict),
/// and regions that a universal premise requires to be empty are not switched on (a
/// model with them would fail that premise). Every other subset is checked.
fn verdicts(premises: &[Stmt], terms: usize, conclusions: &[Stmt]) -> Option<u32> {
    let mut term_masks = [0u32; 4];
    for (t, m) in term_masks.iter_mut().enumerate().take(terms) {
        *m = regions(terms, t, None);
    }
    let term_masks = &term_masks[..terms];
    let mut keys = [(0u32, false); 4];
    for (k, p) in keys.iter_mut().zip(premises) {
        *k = p.key(terms);
    }
    let keys = &keys[..premises.len()];
    let mut ckeys = [(0u32, false); 8];
    for (k, c) in ckeys.iter_mut().zip(conclusions) {
        *k = c.key(terms);
    }
    let ckeys = &ckeys[..conclusions.len()];
    let every: u32 = (1u32 << (1u32 << terms)) - 1;
    let forced_empty = keys.iter().filter(|k| k.1).fold(1u32, |acc, k| acc | k.0);
    let free = every & !forced_empty;
    let mut any = false;
    let mut follow = (1u32 << conclusions.len()) - 1;
    let mut m = free;
    loop {
        if term_masks.iter().all(|&t| m & t != 0) && keys.iter().all(|&k| holds(k, m)) {
            any = true;
            for (i, &c) in ckeys.iter().enumerate() {
                if !holds(c, m) {
                    follow &= !(1 << i);
                }
            }
        }
        if m == 0 {
            break;
        }
        m = (m - 1) & free;
    }
    any.then_some(follow)
}

fn pair(rng: &mut ChaCha20Rng, a: usize, b: usize) -> (usize, usize) {
    if rng.random_bool(0.5) { (a, b) } else { (b, a) }
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[
            Piece::Text("Conclusion to test: {@2.words.1:|space}"),
            Piece::Text(
                "Premises (assume each is true and that every group mentioned has at least one member):",
            ),
            Piece::Data("{#@1.lines.1:|\n}- {.words.1:|space}{/}"),
            Piece::Text(
                "Must the conclusion be true whenever the premises are true? Reason by logic alone, not from knowledge of the world, and answer yes or no.",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Data("{@1.lines.1:|lines}\nTherefore: {@2.words.1:|space}"),
            Piece::Text(
                "Suppose the statements above the last line are true and every group they mention is non-empty. Does the last line follow necessarily, that is, is it true in every situation in which those statements hold? Judge by logic only, not by what you know about the world.",
            ),
        ],
    ),
];

impl Family for Syllogism {
    fn name(&self) -> &'static str {
        "syllogism"
    }
    fn category(&self) -> Category {
        Category::Logic
    }
    fn description(&self) -> &'static str {
        "Does a categorical conclusion follow from the premises? (validity by brute force over Venn models)"
    }
    fn version(&self) -> u32 {
        // 2: no tagged example (an echoed question scored on every "no" instance).
        2
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (terms, premises, arrangement) = match level.get() {
            1 => (3, 2, "figure 1, conclusion S-P"),
            2 => (3, 2, "any figure, conclusion S-P"),
            3 => (3, 2, "any figure, conclusion S-P or P-S"),
            4 => (4, 3, "chain A-B, B-C, C-D, conclusion about A and D"),
            _ => (4, 3, "chain, premises shuffled, varied wording"),
        };
        json!({"terms": terms, "premises": premises, "arrangement": arrangement, "existential_import": true})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let l = level.get();
        let terms = if l >= 4 { 4 } else { 3 };
        let want_yes = rng.random_bool(0.5);
        let (premises, conclusion) = loop {
            // Term indices: 3 terms are S=0, M=1, P=2; 4 terms are a chain 0-1-2-3.
            let (premises, ends): (Vec<Stmt>, (usize, usize)) = if terms == 3 {
                let figure = if l == 1 { 1 } else { rng.random_range(1..=4) };
                let (major, minor) = match figure {
                    1 => ((1, 2), (0, 1)),
                    2 => ((2, 1), (0, 1)),
                    3 => ((1, 2), (1, 0)),
                    _ => ((2, 1), (1, 0)),
                };
                let p = vec![
                    Stmt {
                        form: rng.random_range(0..4),
                        subj: major.0,
                        pred: major.1,
                    },
                    Stmt {
                        form: rng.random_range(0..4),
                        subj: minor.0,
                        pred: minor.1,
                    },
                ];
                (p, (0, 2))
            } else {
                let p = (0..3)
                    .map(|i| {
                        let (a, b) = pair(rng, i, i + 1);
                        Stmt {
                            form: rng.random_range(0..4),
                            subj: a,
                            pred: b,
                        }
                    })
                    .collect();
                (p, (0, 3))
            };
            let orders: &[(usize, usize)] = if l >= 3 {
                &[(ends.0, ends.1), (ends.1, ends.0)]
            } else {
                &[(ends.0, ends.1)]
            };
            let mut all = [Stmt {
                form: 0,
                subj: 0,
                pred: 0,
            }; 8];
            let mut k = 0;
            for &(s, p) in orders {
                for form in 0..4 {
                    all[k] = Stmt {
                        form,
                        subj: s,
                        pred: p,
                    };
                    k += 1;
                }
            }
            let all = &all[..k];
            let Some(follow) = verdicts(&premises, terms, all) else {
                continue;
            };
            let cands: Vec<Stmt> = all
                .iter()
                .enumerate()
                .filter(|&(i, _)| (follow >> i & 1 == 1) == want_yes)
                .map(|(_, &c)| c)
                .collect();
            if cands.is_empty() {
                continue;
            }
            let c = cands[rng.random_range(0..cands.len())];
            break (premises, c);
        };
        let names = pick(rng, PLURALS, terms);
        let mut shown = premises.clone();
        if l == 5 {
            shown.shuffle(rng);
        }
        let varied = l == 5;
        let prem_text: Vec<String> = shown
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{}. {}", i + 1, p.text(&names, varied, rng)))
            .collect();
        let concl_text = conclusion.text(&names, false, rng);
        let body = Body::new()
            .text(
                "Assume that the premises below are true and that each group mentioned has at least one member.",
            )
            .data(format!("Premises:\n{}", prem_text.join("\n")))
            .data(format!("Conclusion: {concl_text}"))
            .text(
                "Does the conclusion necessarily follow from the premises (is it true in \
every situation where the premises are true)? Judge only by logic, not by what you know about the world. Answer yes \
or no.",
            );
        let format = AnswerFormat::new("as yes or no");
        Generated {
            body,
            format,
            answer: if want_yes { "yes" } else { "no" }.to_string(),
            metadata: object(json!({
                "terms": names,
                "premises": shown.iter().map(|p| p.json(&names)).collect::<Vec<_>>(),
                "conclusion": conclusion.json(&names),
                "existential_import": true,
            })),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        match (yes_no(answer), yes_no(&instance.answer)) {
            (Some(a), Some(g)) if a == g => 1.0,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn follows(premises: &[Stmt], c: Stmt) -> bool {
        verdicts(premises, 3, &[c]) == Some(1)
    }
    const fn s(form: usize, subj: usize, pred: usize) -> Stmt {
        Stmt { form, subj, pred }
    }

    #[test]
    fn classical_cases() {
        // S=0, M=1, P=2. Barbara: all M are P, all S are M => all S are P.
        assert!(follows(&[s(0, 1, 2), s(0, 0, 1)], s(0, 0, 2)));
        // Undistributed middle: all P are M, all S are M =/=> all S are P (nor some).
        assert!(!follows(&[s(0, 2, 1), s(0, 0, 1)], s(0, 0, 2)));
        assert!(!follows(&[s(0, 2, 1), s(0, 0, 1)], s(2, 0, 2)));
        // Darapti needs existential import: all M are P, all M are S => some S are P.
        assert!(follows(&[s(0, 1, 2), s(0, 1, 0)], s(2, 0, 2)));
        // Celarent: no M are P, all S are M => no S are P.
        assert!(follows(&[s(1, 1, 2), s(0, 0, 1)], s(1, 0, 2)));
        // Two particular premises never suffice.
        assert!(!follows(&[s(2, 1, 2), s(2, 0, 1)], s(2, 0, 2)));
    }
}
