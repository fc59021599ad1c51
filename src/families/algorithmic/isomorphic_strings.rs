//! `isomorphic_strings`: can one string be turned into the other by a one-to-one
//! replacement of characters?
//!
//! Two strings are isomorphic when there is a bijection between their characters that
//! maps the first string onto the second position by position (so they have equal
//! length, equal characters map to equal characters, and different characters to
//! different characters). Answer `true` or `false`, case-insensitive; nothing else.
//!
//! Levels (string length, alphabet size for the first string):
//! 1: 2..=3, 2..=3 letters · 2: 4..=5, 3..=4 · 3: 6..=8, 3..=6 · 4: 9..=12, 4..=8 ·
//! 5: 13..=20, 5..=12. Half the instances are isomorphic; a non-isomorphic pair
//! differs from an isomorphic one by a single character (a merge or a split of a
//! mapping), which is what makes it hard.
//!
//! The question names the two allowed answers and shows no tagged example: with a
//! true/false answer any example is right half the time, so a response that merely
//! echoed the question would earn credit.

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::sample::distinct_indices;
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct IsomorphicStrings;

/// (min len, max len, min alphabet, max alphabet) per level.
const PARAMS: [(usize, usize, usize, usize); 5] = [
    (2, 3, 2, 3),
    (4, 5, 3, 4),
    (6, 8, 3, 6),
    (9, 12, 4, 8),
    (13, 20, 5, 12),
];

/// Canonical pattern check in both directions with fixed 256-entry tables.
fn isomorphic(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut fwd = [0u16; 256];
    let mut back = [0u16; 256];
    for (&x, &y) in a.iter().zip(b) {
        let (fx, by) = (fwd[x as usize], back[y as usize]);
        if fx == 0 && by == 0 {
            fwd[x as usize] = u16::from(y) + 1;
            back[y as usize] = u16::from(x) + 1;
        } else if fx != u16::from(y) + 1 || by != u16::from(x) + 1 {
            return false;
        }
    }
    true
}

fn letters(idx: &[usize]) -> Vec<u8> {
    idx.iter().map(|&i| b'a' + i as u8).collect()
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[
            Piece::Text(
                "Two strings are isomorphic when the characters of the first can be replaced to give the second: every occurrence of a character is replaced by the same character, no two different characters are replaced by the same character, and the order is kept (a character may map to itself).",
            ),
            Piece::Data("first: {s}\nsecond: {t}"),
            Piece::Text("Are these two strings isomorphic?"),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[Piece::Text(
            "Decide whether {s|quoted} and {t|quoted} are isomorphic strings, that is, whether one consistent one-to-one replacement of characters (a character may map to itself, and the order of the characters is kept) turns the first string into the second.",
        )],
    ),
];

impl Family for IsomorphicStrings {
    fn name(&self) -> &'static str {
        "isomorphic_strings"
    }
    fn category(&self) -> Category {
        Category::Algorithmic
    }
    fn description(&self) -> &'static str {
        "Decide whether two strings are isomorphic (true/false)"
    }
    fn version(&self) -> u32 {
        // 2: no tagged example (`true` made an echoed question score on every true instance).
        2
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi, amin, amax) = PARAMS[level.idx()];
        json!({"length_min": lo, "length_max": hi, "alphabet_min": amin, "alphabet_max": amax,
               "p_isomorphic": 0.5})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi, amin, amax) = PARAMS[level.idx()];
        let want = rng.random_bool(0.5);
        let (s, t) = loop {
            let n = rng.random_range(lo..=hi);
            let k = rng.random_range(amin..=amax).min(n);
            let src = letters(&distinct_indices(rng, 26, k));
            let s: Vec<u8> = (0..n).map(|_| src[rng.random_range(0..k)]).collect();
            let image = letters(&distinct_indices(rng, 26, 26));
            let mut t: Vec<u8> = s.iter().map(|&c| image[(c - b'a') as usize]).collect();
            if !want {
                // Replace one position by another letter: either one already used in
                // `t` (merging two classes) or a fresh one (splitting a class).
                let i = rng.random_range(0..n);
                let pick = if rng.random_bool(0.5) {
                    t[rng.random_range(0..n)]
                } else {
                    image[rng.random_range(0..26)]
                };
                t[i] = pick;
            }
            let (s, t) = (
                String::from_utf8(s).unwrap_or_default(),
                String::from_utf8(t).unwrap_or_default(),
            );
            if isomorphic(&s, &t) == want {
                break (s, t);
            }
        };
        Generated {
            body: Body::of(format!(
                "Are the strings \"{s}\" and \"{t}\" isomorphic? Two strings are isomorphic if \
                 the characters of the first can be replaced to get the second, where every \
                 occurrence of a character is replaced by the same character, no two different \
                 characters are replaced by the same character, and the order is kept (a \
                 character may map to itself)."
            )),
            format: AnswerFormat::new("as the single word true or false"),
            answer: want.to_string(),
            metadata: fields([("s", Value::from(s)), ("t", Value::from(t))]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let m = Meta::of(instance);
        let (Some(s), Some(t)) = (m.str("s"), m.str("t")) else {
            return 0.0;
        };
        let want = isomorphic(s, t);
        let got = match answer.trim().to_ascii_lowercase().as_str() {
            "true" => true,
            "false" => false,
            _ => return 0.0,
        };
        if got == want { 1.0 } else { 0.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::isomorphic;

    #[test]
    fn classic_cases() {
        assert!(isomorphic("egg", "add"));
        assert!(!isomorphic("foo", "bar"));
        assert!(isomorphic("paper", "title"));
        assert!(!isomorphic("ab", "aa"));
        assert!(!isomorphic("aa", "ab"));
        assert!(!isomorphic("abc", "ab"));
    }
}
