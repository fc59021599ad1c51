//! `group_anagrams`: partition a list of letter strings into groups of anagrams.
//!
//! The strings are random lowercase letter strings (not dictionary words, so no
//! knowledge of English helps or hurts). Each group is several distinct permutations of
//! one random multiset of letters; from level 4 some groups are near misses of each
//! other (their letter multisets differ in exactly one letter), and a group may have a
//! single member. All strings are distinct and shown in shuffled order.
//!
//! Levels (groups, members per group, string length, near-miss groups):
//! 1: 2, 2..=3, 3, no · 2: 2..=3, 2..=3, 3..=4, no · 3: 3..=4, 2..=3, 4..=5, no ·
//! 4: 4..=5, 1..=4, 5..=6, yes · 5: 5..=7, 1..=4, 6..=8, yes.
//!
//! Gold: one group per line in order of first appearance, members separated by spaces
//! in the order shown. Verifier (set comparison, never string comparison): one group
//! per line (or `[[a, b], [c]]`), members separated by whitespace and/or commas,
//! optionally quoted; groups and members in any order, ASCII case ignored. Every given
//! string must appear exactly once and the groups must be exactly the anagram classes.
//! The format example uses strings shorter than any given one, so it is never accepted.
//! Metadata: `words` (the strings in the order shown).

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct GroupAnagrams;

struct Params {
    groups: (usize, usize),
    members: (usize, usize),
    length: (usize, usize),
    near_miss: bool,
}

const PARAMS: [Params; 5] = [
    Params {
        groups: (2, 2),
        members: (2, 3),
        length: (3, 3),
        near_miss: false,
    },
    Params {
        groups: (2, 3),
        members: (2, 3),
        length: (3, 4),
        near_miss: false,
    },
    Params {
        groups: (3, 4),
        members: (2, 3),
        length: (4, 5),
        near_miss: false,
    },
    Params {
        groups: (4, 5),
        members: (1, 4),
        length: (5, 6),
        near_miss: true,
    },
    Params {
        groups: (5, 7),
        members: (1, 4),
        length: (6, 8),
        near_miss: true,
    },
];

/// Letters drawn from a small alphabet so that strings look alike.
const ALPHABET: &[u8] = b"abcdeilmnoprstu";

fn signature(w: &str) -> Vec<u8> {
    let mut b: Vec<u8> = w.bytes().map(|c| c.to_ascii_lowercase()).collect();
    b.sort_unstable();
    b
}

/// `count` distinct permutations of `letters` (which has at least 3 distinct letters,
/// so at least 6 permutations exist), none of them in `taken`.
fn permutations(
    rng: &mut ChaCha20Rng,
    letters: &[u8],
    count: usize,
    taken: &BTreeSet<Vec<u8>>,
) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::with_capacity(count);
    let mut w = letters.to_vec();
    while out.len() < count {
        w.shuffle(rng);
        if !out.contains(&w) && !taken.contains(&w) {
            out.push(w.clone());
        }
    }
    out
}

fn draw_letters(rng: &mut ChaCha20Rng, len: usize) -> Vec<u8> {
    loop {
        let w: Vec<u8> = (0..len)
            .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())])
            .collect();
        let distinct: BTreeSet<u8> = w.iter().copied().collect();
        if distinct.len() >= 3 {
            return w;
        }
    }
}

/// The anagram classes of `words`, as sets of lowercase strings.
fn classes(words: &[&str]) -> BTreeSet<BTreeSet<String>> {
    let mut m: BTreeMap<Vec<u8>, BTreeSet<String>> = BTreeMap::new();
    for w in words {
        m.entry(signature(w))
            .or_default()
            .insert(w.to_ascii_lowercase());
    }
    m.into_values().collect()
}

fn unquote(s: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|x| x.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

impl Family for GroupAnagrams {
    fn name(&self) -> &'static str {
        "group_anagrams"
    }
    fn category(&self) -> Category {
        Category::Algorithmic
    }
    fn description(&self) -> &'static str {
        "Group letter strings into anagram classes (any order of groups and members)"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> Value {
        let p = &PARAMS[level.idx()];
        json!({
            "groups_min": p.groups.0, "groups_max": p.groups.1,
            "members_min": p.members.0, "members_max": p.members.1,
            "length_min": p.length.0, "length_max": p.length.1,
            "near_miss_groups": p.near_miss, "alphabet": std::str::from_utf8(ALPHABET).expect("ASCII"),
        })
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let p = &PARAMS[level.idx()];
        let k = rng.random_range(p.groups.0..=p.groups.1);
        let mut sigs: BTreeSet<Vec<u8>> = BTreeSet::new();
        let mut all: BTreeSet<Vec<u8>> = BTreeSet::new();
        let mut groups: Vec<Vec<Vec<u8>>> = Vec::with_capacity(k);
        while groups.len() < k {
            let letters = match groups.last() {
                // A near miss: the previous group's letters with one letter replaced.
                Some(prev) if p.near_miss && rng.random_bool(0.5) => {
                    let mut l = prev[0].clone();
                    let i = rng.random_range(0..l.len());
                    l[i] = ALPHABET[rng.random_range(0..ALPHABET.len())];
                    l
                }
                _ => {
                    let len = rng.random_range(p.length.0..=p.length.1);
                    draw_letters(rng, len)
                }
            };
            let mut sig = letters.clone();
            sig.sort_unstable();
            let distinct: BTreeSet<u8> = sig.iter().copied().collect();
            if distinct.len() < 3 || !sigs.insert(sig) {
                continue;
            }
            let m = rng.random_range(p.members.0..=p.members.1);
            let members = permutations(rng, &letters, m, &all);
            all.extend(members.iter().cloned());
            groups.push(members);
        }
        let mut words: Vec<String> = groups
            .iter()
            .flatten()
            .map(|w| String::from_utf8(w.clone()).expect("ASCII"))
            .collect();
        words.shuffle(rng);
        // Gold: groups in order of first appearance, members in the order shown.
        let mut order: Vec<Vec<u8>> = Vec::new();
        let mut by_sig: BTreeMap<Vec<u8>, Vec<&str>> = BTreeMap::new();
        for w in &words {
            let s = signature(w);
            if !by_sig.contains_key(&s) {
                order.push(s.clone());
            }
            by_sig.entry(s).or_default().push(w);
        }
        let gold: Vec<String> = order.iter().map(|s| by_sig[s].join(" ")).collect();
        Generated {
            body: Body::new()
                .text(
                    "Group these strings so that two strings are in the same group exactly when \
                     one is an anagram of the other (same letters, each as often). A string with \
                     no anagram in the list forms a group on its own.",
                )
                .data(words.join(", "))
                .text(
                    "Write one group per line, its strings separated by spaces; the order of \
                     groups and of strings within a group does not matter.",
                ),
            format: AnswerFormat::with_example("as the groups, one per line", "ab ba\nc"),
            answer: gold.join("\n"),
            metadata: fields([("words", json!(words))]),
        }
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let Some(words) = Meta::of(instance).strs("words") else {
            return 0.0;
        };
        let Some(rows) = parse::grid(answer) else {
            return 0.0;
        };
        let mut seen: BTreeSet<String> = BTreeSet::new();
        let mut groups: BTreeSet<BTreeSet<String>> = BTreeSet::new();
        for row in rows {
            let mut g = BTreeSet::new();
            for cell in row {
                let w = unquote(&cell).to_ascii_lowercase();
                if !seen.insert(w.clone()) {
                    return 0.0;
                }
                g.insert(w);
            }
            groups.insert(g);
        }
        let given: BTreeSet<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
        if seen == given && groups == classes(&words) {
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
    fn partitions_compare_as_sets() {
        let words = ["abc", "cab", "xyz", "bca", "zyx", "qrs"];
        let c = classes(&words);
        assert_eq!(c.len(), 3);
        let inst = Instance {
            id: String::new(),
            family: "group_anagrams".into(),
            level: 1,
            seed: 0,
            index: 0,
            question: String::new(),
            answer: String::new(),
            metadata: json!({"words": words}),
        };
        let f = GroupAnagrams;
        assert_eq!(f.verify(&inst, "qrs\nzyx xyz\nbca, CAB, abc"), 1.0);
        assert_eq!(
            f.verify(&inst, "[[\"abc\", \"cab\", \"bca\"], [xyz, zyx], [qrs]]"),
            1.0
        );
        assert_eq!(f.verify(&inst, "abc cab bca\nxyz zyx"), 0.0);
        assert_eq!(f.verify(&inst, "abc cab\nbca\nxyz zyx\nqrs"), 0.0);
        assert_eq!(f.verify(&inst, "abc cab bca abc\nxyz zyx\nqrs"), 0.0);
        assert_eq!(f.verify(&inst, "abc cab bca\nxyz zyx qrs"), 0.0);
        assert_eq!(f.verify(&inst, "abc cab bca\nxyz zyx\nqrs\nfoo"), 0.0);
    }
}
