//! `word_ladder`: turn one word into another by changing one letter at a time, using
//! only words from a given list, in as few steps as possible.
//!
//! The question shows the allowed words, so the task is a shortest-path search over a
//! graph the model can see (no hidden dictionary decides what counts as a word). The
//! list is one shortest ladder from the word lists in `ladder_words` plus distractors:
//! one-letter neighbours of the ladder's words (dead ends and detours) and random words
//! of the same length. The shortest distance within the shown list is computed again
//! after the distractors are added.
//!
//! Levels (word length, steps of the shortest ladder, distractors):
//! 1: 3, 2, 4 · 2: 3, 3, 8 · 3: 4, 3..=4, 12 · 4: 4, 4..=5, 20 · 5: 4, 6..=8, 30.
//!
//! Gold: one shortest ladder, `cold, cord, card, ward, warm`. Verifier (constraint
//! check, any shortest ladder scores 1): words separated by commas, whitespace and/or
//! `->`, ASCII case ignored; the first is the start word and the last the target;
//! every word is in the shown list; consecutive words differ in exactly one position;
//! and the number of steps equals the shortest distance, recomputed by breadth-first
//! search over the list in the metadata. The format example uses words of another
//! length, so it is never accepted.
//! Metadata: `start`, `target`, `words` (the shown list, sorted).

use std::collections::VecDeque;
use std::sync::OnceLock;

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use super::ladder_words::{FOUR, THREE};
use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct WordLadder;

/// (word length, steps min, steps max, distractors) per level.
const PARAMS: [(usize, usize, usize, usize); 5] = [
    (3, 2, 2, 4),
    (3, 3, 3, 8),
    (4, 3, 4, 12),
    (4, 4, 5, 20),
    (4, 6, 8, 30),
];

/// Largest word list accepted from metadata (the generator shows at most 39).
const MAX_WORDS: usize = 512;

/// A word list with its one-letter-change adjacency, built once.
struct Graph {
    words: &'static [&'static str],
    adj: Vec<Vec<u16>>,
}

fn one_apart(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).filter(|(x, y)| x != y).count() == 1
}

fn graph(len: usize) -> &'static Graph {
    static G3: OnceLock<Graph> = OnceLock::new();
    static G4: OnceLock<Graph> = OnceLock::new();
    let (cell, words) = if len == 3 { (&G3, THREE) } else { (&G4, FOUR) };
    cell.get_or_init(|| {
        let adj = words
            .iter()
            .map(|a| {
                (0..words.len())
                    .filter(|&j| one_apart(a.as_bytes(), words[j].as_bytes()))
                    .map(|j| j as u16)
                    .collect()
            })
            .collect();
        Graph { words, adj }
    })
}

/// Breadth-first distances from `from` over `adj` (`u16::MAX` = unreachable).
fn distances(adj: &[Vec<u16>], from: usize) -> Vec<u16> {
    let mut dist = vec![u16::MAX; adj.len()];
    dist[from] = 0;
    let mut q = VecDeque::from([from]);
    while let Some(u) = q.pop_front() {
        for &v in &adj[u] {
            if dist[usize::from(v)] == u16::MAX {
                dist[usize::from(v)] = dist[u] + 1;
                q.push_back(usize::from(v));
            }
        }
    }
    dist
}

/// Shortest number of steps from `start` to `target` using only `words`.
fn shortest_within(words: &[&str], start: &str, target: &str) -> Option<usize> {
    let s = words.iter().position(|w| *w == start)?;
    let t = words.iter().position(|w| *w == target)?;
    let adj: Vec<Vec<u16>> = words
        .iter()
        .map(|a| {
            (0..words.len())
                .filter(|&j| one_apart(a.as_bytes(), words[j].as_bytes()))
                .map(|j| j as u16)
                .collect()
        })
        .collect();
    let d = distances(&adj, s)[t];
    (d != u16::MAX).then_some(usize::from(d))
}

fn ladder_items(answer: &str) -> Vec<&str> {
    answer
        .split(|c: char| c == ',' || c.is_whitespace())
        .flat_map(|p| p.split("->"))
        .filter(|p| !p.is_empty())
        .collect()
}

impl Family for WordLadder {
    fn name(&self) -> &'static str {
        "word_ladder"
    }
    fn category(&self) -> Category {
        Category::Games
    }
    fn description(&self) -> &'static str {
        "Shortest word ladder within a given word list (any shortest ladder scores)"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> Value {
        let (len, lo, hi, extra) = PARAMS[level.idx()];
        json!({"word_length": len, "steps_min": lo, "steps_max": hi, "distractors": extra})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (len, lo, hi, extra) = PARAMS[level.idx()];
        let g = graph(len);
        let n = g.words.len();
        let steps = rng.random_range(lo..=hi);
        let (start, target, dist) = loop {
            let s = rng.random_range(0..n);
            let dist = distances(&g.adj, s);
            let at: Vec<usize> = (0..n).filter(|&i| usize::from(dist[i]) == steps).collect();
            if !at.is_empty() {
                break (s, at[rng.random_range(0..at.len())], dist);
            }
        };
        // Walk back from the target along strictly decreasing distances.
        let mut path = vec![target];
        let mut cur = target;
        while cur != start {
            let prev: Vec<usize> = g.adj[cur]
                .iter()
                .map(|&v| usize::from(v))
                .filter(|&v| dist[v] + 1 == dist[cur])
                .collect();
            cur = prev[rng.random_range(0..prev.len())];
            path.push(cur);
        }
        path.reverse();
        let mut chosen: Vec<usize> = path.clone();
        let mut near: Vec<usize> = path
            .iter()
            .flat_map(|&p| g.adj[p].iter().map(|&v| usize::from(v)))
            .filter(|v| !path.contains(v))
            .collect();
        near.sort_unstable();
        near.dedup();
        near.shuffle(rng);
        for v in near.into_iter().take(extra.div_ceil(2)) {
            chosen.push(v);
        }
        while chosen.len() < path.len() + extra {
            let v = rng.random_range(0..n);
            if !chosen.contains(&v) {
                chosen.push(v);
            }
        }
        let mut words: Vec<&str> = chosen.iter().map(|&i| g.words[i]).collect();
        words.sort_unstable();
        let (s, t) = (g.words[start], g.words[target]);
        debug_assert_eq!(shortest_within(&words, s, t), Some(steps));
        let gold: Vec<&str> = path.iter().map(|&i| g.words[i]).collect();
        let example = if len == 3 {
            "cold, cord, card, ward, warm"
        } else {
            "cat, cot, dot, dog"
        };
        Generated {
            body: Body::new()
                .text(format!(
                    "Turn the word \"{s}\" into \"{t}\" by changing exactly one letter at a \
                     time. Every word along the way, including the first and the last, must be \
                     in this list:"
                ))
                .data(words.join(", "))
                .text(format!(
                    "Use as few changes as possible. Write the whole ladder from {s} to {t}, \
                     words separated by commas."
                )),
            format: AnswerFormat::with_example("as the ladder of words", example),
            answer: gold.join(", "),
            metadata: fields([
                ("start", Value::from(s)),
                ("target", Value::from(t)),
                ("words", json!(words)),
            ]),
        }
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let meta = Meta::of(instance);
        let (Some(start), Some(target), Some(words)) =
            (meta.str("start"), meta.str("target"), meta.strs("words"))
        else {
            return 0.0;
        };
        // A damaged list (a word of another length, a character that is not a lowercase
        // letter) is a corrupted instance, not a different puzzle.
        let well_formed =
            |w: &str| w.len() == start.len() && w.bytes().all(|b| b.is_ascii_lowercase());
        if words.len() > MAX_WORDS || !words.iter().all(|w| well_formed(w)) || !well_formed(target)
        {
            return 0.0;
        }
        let items = ladder_items(answer);
        if items.len() < 2 || items.len() > words.len() + 1 {
            return 0.0;
        }
        let lower: Vec<String> = items.iter().map(|w| w.to_ascii_lowercase()).collect();
        let valid = lower.first().map(String::as_str) == Some(start)
            && lower.last().map(String::as_str) == Some(target)
            && lower.iter().all(|w| words.contains(&w.as_str()))
            && lower
                .windows(2)
                .all(|p| one_apart(p[0].as_bytes(), p[1].as_bytes()));
        if valid && shortest_within(&words, start, target) == Some(lower.len() - 1) {
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
    fn ladders_parse_and_graphs_connect() {
        assert_eq!(
            ladder_items("cat -> cot->dot, dog"),
            vec!["cat", "cot", "dot", "dog"]
        );
        assert!(one_apart(b"cold", b"cord"));
        assert!(!one_apart(b"cold", b"cold"));
        assert!(!one_apart(b"cold", b"card"));
        // Every level's longest ladder exists in its word list.
        for (len, _, hi, _) in PARAMS {
            let g = graph(len);
            assert!(
                (0..g.words.len())
                    .any(|s| distances(&g.adj, s).iter().any(|&d| usize::from(d) == hi))
            );
        }
    }
}
