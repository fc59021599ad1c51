//! `course_schedule`: find an order in which all courses can be taken, given their
//! prerequisites, or say that none exists.
//!
//! Courses are `0..n-1`; a prerequisite `(a, b)` means course `b` must be finished
//! before course `a`. The answer is every course exactly once, separated by commas
//! and/or spaces, in an order that respects every prerequisite — any such order scores
//! 1 — or the single word `impossible` (case-insensitive) when the prerequisites
//! contain a cycle. Feasibility is recomputed from the stored prerequisites when
//! scoring (Kahn's algorithm).
//!
//! Generation: a hidden random order of the courses; prerequisites point backwards in
//! that order (so they are acyclic); an infeasible instance also gets one cycle of
//! `c` courses threaded through that order, so most prerequisites still look
//! consistent.
//!
//! Levels (courses, prerequisites per course, cycle length, probability infeasible):
//! 1: 3..=4, 0.7..=1.0, 2..=2, 0.3 · 2: 5..=6, 0.8..=1.2, 2..=3, 0.35 ·
//! 3: 7..=9, 1.0..=1.4, 3..=4, 0.4 · 4: 10..=14, 1.0..=1.6, 3..=6, 0.4 ·
//! 5: 15..=22, 1.2..=1.8, 4..=8, 0.4.
//! Gold: Kahn's algorithm taking the smallest available course first.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::{LIST_LIMIT, Meta, fields, pairs_value};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::sample::distinct_indices;
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct CourseSchedule;

/// (min n, max n, min prereqs per course, max prereqs per course, min cycle, max cycle,
/// p infeasible) per level.
const PARAMS: [(usize, usize, f64, f64, usize, usize, f64); 5] = [
    (3, 4, 0.7, 1.0, 2, 2, 0.3),
    (5, 6, 0.8, 1.2, 2, 3, 0.35),
    (7, 9, 1.0, 1.4, 3, 4, 0.4),
    (10, 14, 1.0, 1.6, 3, 6, 0.4),
    (15, 22, 1.2, 1.8, 4, 8, 0.4),
];

/// Kahn's algorithm, smallest course first: `Some(order)` or `None` on a cycle.
fn kahn(n: usize, prereqs: &[(usize, usize)]) -> Option<Vec<usize>> {
    let mut indeg = vec![0usize; n];
    let mut out = vec![Vec::new(); n];
    for &(a, b) in prereqs {
        indeg[a] += 1;
        out[b].push(a);
    }
    let mut heap: BinaryHeap<Reverse<usize>> =
        (0..n).filter(|&v| indeg[v] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(v)) = heap.pop() {
        order.push(v);
        for &w in &out[v] {
            indeg[w] -= 1;
            if indeg[w] == 0 {
                heap.push(Reverse(w));
            }
        }
    }
    (order.len() == n).then_some(order)
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[
            Piece::Text(
                "{n} courses are numbered from 0. Each line below, written as A <- B, means that course B has to be completed before course A can be taken:",
            ),
            Piece::Data("{#prerequisites|\n}{.0} <- {.1}{/}{^prerequisites}(no prerequisites){/}"),
            Piece::Text(
                "Find an order in which to take all {n} courses, each exactly once, so that every course comes after all of its prerequisites; write it as course numbers separated by commas. If there is no such order, answer impossible.",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[Piece::Text(
            "There are {n} courses, numbered from 0. The prerequisites, as [course, required course] pairs: {prerequisites|json}.\nList all the courses, each exactly once and separated by commas, in an order that puts every course after each course it requires. If the prerequisites make that impossible, answer impossible.",
        )],
    ),
];

impl Family for CourseSchedule {
    fn name(&self) -> &'static str {
        "course_schedule"
    }
    fn category(&self) -> Category {
        Category::Graphs
    }
    fn description(&self) -> &'static str {
        "Order courses so every prerequisite comes first, or say it is impossible"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi, dmin, dmax, cmin, cmax, pi) = PARAMS[level.idx()];
        json!({"courses_min": lo, "courses_max": hi, "prereqs_per_course_min": dmin,
               "prereqs_per_course_max": dmax, "cycle_min": cmin, "cycle_max": cmax,
               "p_infeasible": pi})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi, dmin, dmax, cmin, cmax, pi) = PARAMS[level.idx()];
        let n = rng.random_range(lo..=hi);
        let infeasible = rng.random_bool(pi);
        // order[i] is the i-th course of the hidden valid order.
        let order = distinct_indices(rng, n, n);
        let max_pairs = n * (n - 1) / 2;
        let m = ((n as f64 * rng.random_range(dmin..=dmax)).round() as usize).clamp(1, max_pairs);
        let mut pairs: Vec<(usize, usize)> = Vec::with_capacity(m + cmax);
        if infeasible {
            let c = rng.random_range(cmin..=cmax).min(n);
            let mut pos = distinct_indices(rng, n, c);
            pos.sort_unstable();
            for w in pos.windows(2) {
                pairs.push((order[w[1]], order[w[0]]));
            }
            pairs.push((order[pos[0]], order[pos[c - 1]]));
        }
        while pairs.len() < m + usize::from(infeasible) {
            let i = rng.random_range(0..n - 1);
            let j = rng.random_range(i + 1..n);
            let p = (order[j], order[i]);
            if !pairs.contains(&p) && !pairs.contains(&(p.1, p.0)) {
                pairs.push(p);
            } else if pairs.len() >= max_pairs {
                break;
            }
        }
        // Shuffle the listing so the cycle edges are not adjacent.
        for i in (1..pairs.len()).rev() {
            let j = rng.random_range(0..=i);
            pairs.swap(i, j);
        }
        let gold = match kahn(n, &pairs) {
            Some(o) => o
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            None => "impossible".to_string(),
        };
        let listing: Vec<String> = pairs
            .iter()
            .map(|&(a, b)| format!("course {a} requires course {b}"))
            .collect();
        Generated {
            body: Body::new()
                .text(format!(
                    "There are {n} courses, numbered 0 to {}. Each prerequisite below says which \
                     course must be finished before another can be taken:\n{}",
                    n - 1,
                    listing.join("\n"),
                ))
                .text(format!(
                    "Give an order in which all {n} courses can be taken, each exactly once, \
                     with every course after all of its prerequisites, as course numbers \
                     separated by commas. If no such order exists, answer impossible."
                )),
            // Two courses; every instance has at least three.
            format: AnswerFormat::with_example(
                "as the course order (or the word impossible)",
                "1, 0",
            ),
            answer: gold,
            metadata: fields([
                ("n", Value::from(n)),
                ("prerequisites", pairs_value(&pairs)),
            ]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let m = Meta::of(instance);
        let Some(n) = m.usize("n", LIST_LIMIT) else {
            return 0.0;
        };
        let Some(pairs) = m.pairs("prerequisites", n) else {
            return 0.0;
        };
        if kahn(n, &pairs).is_none() {
            return if parse::eq_ci(answer, "impossible") {
                1.0
            } else {
                0.0
            };
        }
        let Some(items) = parse::list_items(answer) else {
            return 0.0;
        };
        if items.len() != n {
            return 0.0;
        }
        let mut pos = vec![usize::MAX; n];
        for (i, it) in items.iter().enumerate() {
            let Some(v) = parse::int(it).and_then(|v| usize::try_from(v).ok()) else {
                return 0.0;
            };
            if v >= n || pos[v] != usize::MAX {
                return 0.0;
            }
            pos[v] = i;
        }
        if pairs.iter().all(|&(a, b)| pos[b] < pos[a]) {
            1.0
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::kahn;

    #[test]
    fn kahn_orders_and_cycles() {
        assert_eq!(kahn(3, &[(0, 1), (1, 2)]), Some(vec![2, 1, 0]));
        assert_eq!(kahn(3, &[(0, 1), (1, 2), (2, 0)]), None);
        assert_eq!(kahn(2, &[]), Some(vec![0, 1]));
    }
}
