//! `binary_matrix`: for every cell of a 0/1 matrix, the distance to the nearest 0.
//!
//! Distance is the number of steps up, down, left or right (Manhattan distance); cells
//! holding 0 have distance 0. Every matrix contains at least one 0.
//! Answer: the distance matrix, one row per line, numbers separated by spaces (the
//! bracketed form is accepted too); compared exactly.
//!
//! Levels (side n of the n x n matrix, probability of a 0 per cell):
//! 1: n = 3, 0.4 · 2: n = 4, 0.35 · 3: n = 5..=6, 0.3 · 4: n = 7..=8, 0.2 ·
//! 5: n = 9..=12, 0.12.
//! Gold: multi-source breadth-first search from every 0.

use std::collections::VecDeque;

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::kit::text::{grid, int_grid_is};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct BinaryMatrix;

/// (min side, max side, p zero) per level.
const PARAMS: [(usize, usize, f64); 5] = [
    (3, 3, 0.4),
    (4, 4, 0.35),
    (5, 6, 0.3),
    (7, 8, 0.2),
    (9, 12, 0.12),
];

/// Distances to the nearest 0 by BFS; `None` if the matrix has no 0 or holds values
/// other than 0 and 1.
fn distances(m: &[Vec<i64>]) -> Option<Vec<Vec<i64>>> {
    let rows = m.len();
    let cols = m.first()?.len();
    let mut d = vec![vec![-1i64; cols]; rows];
    let mut q = VecDeque::new();
    for (r, row) in m.iter().enumerate() {
        if row.len() != cols {
            return None;
        }
        for (c, &v) in row.iter().enumerate() {
            match v {
                0 => {
                    d[r][c] = 0;
                    q.push_back((r, c));
                }
                1 => {}
                _ => return None,
            }
        }
    }
    if q.is_empty() {
        return None;
    }
    while let Some((r, c)) = q.pop_front() {
        let next = d[r][c] + 1;
        let mut visit = |nr: usize, nc: usize| {
            if d[nr][nc] < 0 {
                d[nr][nc] = next;
                q.push_back((nr, nc));
            }
        };
        if r > 0 {
            visit(r - 1, c);
        }
        if r + 1 < rows {
            visit(r + 1, c);
        }
        if c > 0 {
            visit(r, c - 1);
        }
        if c + 1 < cols {
            visit(r, c + 1);
        }
    }
    Some(d)
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[
            Piece::Text(
                "Below is a binary matrix with {matrix|len} rows and {matrix|cols} columns, written as JSON (one list per row):",
            ),
            Piece::Data("{matrix|json}"),
            Piece::Text(
                "Replace every cell by its distance to the nearest cell containing 0, where one step goes up, down, left or right (a cell containing 0 has distance 0).",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Data("{matrix|table}"),
            Piece::Text(
                "The table above is a {matrix|len}x{matrix|cols} matrix of 0s and 1s. For each cell, find the number of steps (up, down, left or right) to the nearest cell holding 0; cells holding 0 have distance 0.",
            ),
        ],
    ),
];

impl Family for BinaryMatrix {
    fn name(&self) -> &'static str {
        "binary_matrix"
    }
    fn category(&self) -> Category {
        Category::Algorithmic
    }
    fn description(&self) -> &'static str {
        "Distance from every cell of a 0/1 matrix to the nearest 0"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi, p) = PARAMS[level.idx()];
        json!({"side_min": lo, "side_max": hi, "p_zero": p})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi, p) = PARAMS[level.idx()];
        let n = rng.random_range(lo..=hi);
        let mut m: Vec<Vec<i64>> = (0..n)
            .map(|_| (0..n).map(|_| i64::from(!rng.random_bool(p))).collect())
            .collect();
        if m.iter().flatten().all(|&v| v == 1) {
            let (r, c) = (rng.random_range(0..n), rng.random_range(0..n));
            m[r][c] = 0;
        }
        let gold = distances(&m).unwrap_or_default();
        // An example of a different size than the matrix is never the gold.
        let example = if n == 3 {
            "0 1\n1 2"
        } else {
            "0 1 2\n1 2 1\n0 1 0"
        };
        Generated {
            body: Body::new()
                .text(format!(
                    "For every cell of this {n}x{n} binary matrix, find the distance to the \
                     nearest cell containing 0, counting steps up, down, left or right (cells \
                     containing 0 have distance 0)."
                ))
                .data(grid(&m)),
            format: AnswerFormat::with_example(
                "as the matrix of distances, one row per line, numbers separated by spaces",
                example,
            ),
            answer: grid(&gold),
            metadata: fields([("matrix", Value::from(m))]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let Some(d) = Meta::of(instance)
            .int_grid("matrix")
            .and_then(|m| distances(&m))
        else {
            return 0.0;
        };
        if int_grid_is(answer, &d) { 1.0 } else { 0.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::distances;

    #[test]
    fn bfs_distances() {
        let m = vec![vec![0, 1, 1], vec![1, 1, 1], vec![1, 1, 0]];
        assert_eq!(
            distances(&m).unwrap(),
            vec![vec![0, 1, 2], vec![1, 2, 1], vec![2, 1, 0]]
        );
        assert!(distances(&[vec![1, 1]]).is_none());
        assert!(distances(&[vec![0, 2]]).is_none());
    }
}
