//! `largest_island`: area of the largest island of 1s in a 0/1 grid.
//!
//! An island is a maximal set of 1-cells connected up, down, left or right (not
//! diagonally); its area is its number of cells. The answer is 0 when the grid has no
//! 1s. Verifier: one integer (`families::parse::int`).
//!
//! Levels (rows and columns, probability of land per cell):
//! 1: 3..=4, 0.3..=0.5 · 2: 4..=6, 0.3..=0.55 · 3: 6..=8, 0.35..=0.6 ·
//! 4: 8..=11, 0.4..=0.6 · 5: 11..=15, 0.45..=0.6 (near the percolation threshold, so
//! islands are large and winding).
//! Gold: iterative flood fill with an explicit stack.
//! The format example in the question is one more than the largest possible answer,
//! so it is never the gold and says nothing about it.

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::kit::text::grid;
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct LargestIsland;

/// (min side, max side, min p land, max p land) per level.
const PARAMS: [(usize, usize, f64, f64); 5] = [
    (3, 4, 0.3, 0.5),
    (4, 6, 0.3, 0.55),
    (6, 8, 0.35, 0.6),
    (8, 11, 0.4, 0.6),
    (11, 15, 0.45, 0.6),
];

/// Largest 4-connected area of 1s; `None` if the grid is ragged or holds anything but
/// 0 and 1.
fn largest(g: &[Vec<i64>]) -> Option<i64> {
    let rows = g.len();
    let cols = g.first().map_or(0, |r| r.len());
    // Flat copy with a water border, so neighbours need no bounds checks.
    let w = cols + 2;
    let mut land = vec![false; (rows + 2) * w];
    for (r, row) in g.iter().enumerate() {
        if row.len() != cols {
            return None;
        }
        for (c, &v) in row.iter().enumerate() {
            match v {
                0 => {}
                1 => land[(r + 1) * w + c + 1] = true,
                _ => return None,
            }
        }
    }
    let mut stack = Vec::new();
    let mut best = 0;
    for start in 0..land.len() {
        if !land[start] {
            continue;
        }
        land[start] = false;
        stack.push(start);
        let mut area = 0;
        while let Some(i) = stack.pop() {
            area += 1;
            for j in [i - w, i + w, i - 1, i + 1] {
                if land[j] {
                    land[j] = false;
                    stack.push(j);
                }
            }
        }
        best = best.max(area);
    }
    Some(best)
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[
            Piece::Text(
                "In the map below, 1 marks land and 0 marks water ({grid|len} rows, {grid|cols} columns).",
            ),
            Piece::Data("{grid|compact}"),
            Piece::Text(
                "Land cells that touch horizontally or vertically (not diagonally) belong to the same island, and an island's area is its number of cells. How large is the largest island? If there is no land at all, the answer is 0.",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Data("{grid|table}"),
            Piece::Text(
                "The table is a map: 1 = land, 0 = water. An island is a group of land cells joined up, down, left or right (touching diagonally does not count). Give the area, in cells, of the biggest island, or 0 if there is no land.",
            ),
        ],
    ),
];

impl Family for LargestIsland {
    fn name(&self) -> &'static str {
        "largest_island"
    }
    fn category(&self) -> Category {
        Category::Graphs
    }
    fn description(&self) -> &'static str {
        "Area of the largest 4-connected island of 1s in a grid (0 if none)"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi, pmin, pmax) = PARAMS[level.idx()];
        json!({"side_min": lo, "side_max": hi, "p_land_min": pmin, "p_land_max": pmax})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi, pmin, pmax) = PARAMS[level.idx()];
        let rows = rng.random_range(lo..=hi);
        let cols = rng.random_range(lo..=hi);
        let p = rng.random_range(pmin..=pmax);
        let g: Vec<Vec<i64>> = (0..rows)
            .map(|_| (0..cols).map(|_| i64::from(rng.random_bool(p))).collect())
            .collect();
        let gold = largest(&g).unwrap_or_default();
        Generated {
            body: Body::new()
                .text(format!(
                    "Here is a {rows}x{cols} grid where 1 is land and 0 is water:"
                ))
                .data(grid(&g))
                .text(
                    "An island is a group of land cells connected horizontally or vertically \
                     (not diagonally); its area is the number of cells in it. What is the area \
                     of the largest island? If there is no land, the answer is 0.",
                ),
            // No island is larger than the grid.
            format: AnswerFormat::with_example(
                "as a single integer",
                (rows * cols + 1).to_string(),
            ),
            answer: gold.to_string(),
            metadata: fields([("grid", Value::from(g))]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let Some(want) = Meta::of(instance)
            .int_grid("grid")
            .and_then(|g| largest(&g))
        else {
            return 0.0;
        };
        match parse::int(answer) {
            Some(a) if a == i128::from(want) => 1.0,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::largest;

    #[test]
    fn areas() {
        let g = vec![vec![1, 1, 0], vec![0, 1, 0], vec![1, 0, 1]];
        assert_eq!(largest(&g), Some(3));
        assert_eq!(largest(&[vec![0, 0]]), Some(0));
        assert_eq!(largest(&[vec![1, 0], vec![0, 1]]), Some(1));
        assert_eq!(largest(&[vec![2]]), None);
    }
}
