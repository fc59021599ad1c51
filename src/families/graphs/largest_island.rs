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

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::json;

use super::common::{int_example, meta_int_grid};
use crate::families::algorithmic::common::grid_text;
use crate::families::{Category, Family, Generated, Instance, Level, answer_instruction, parse};

pub struct LargestIsland;

/// (min side, max side, min p land, max p land) per level.
const PARAMS: [(usize, usize, f64, f64); 5] = [
    (3, 4, 0.3, 0.5),
    (4, 6, 0.3, 0.55),
    (6, 8, 0.35, 0.6),
    (8, 11, 0.4, 0.6),
    (11, 15, 0.45, 0.6),
];

/// Largest 4-connected area of 1s; `None` if the grid holds anything but 0 and 1.
fn largest(g: &[Vec<i64>]) -> Option<i64> {
    let rows = g.len();
    let cols = g.first().map_or(0, |r| r.len());
    if g.iter().flatten().any(|&v| v != 0 && v != 1) || g.iter().any(|r| r.len() != cols) {
        return None;
    }
    let mut seen = vec![false; rows * cols];
    let mut stack = Vec::new();
    let mut best = 0;
    for r0 in 0..rows {
        for c0 in 0..cols {
            if g[r0][c0] != 1 || seen[r0 * cols + c0] {
                continue;
            }
            seen[r0 * cols + c0] = true;
            stack.push((r0, c0));
            let mut area = 0;
            while let Some((r, c)) = stack.pop() {
                area += 1;
                let nbrs = [
                    (r.wrapping_sub(1), c),
                    (r + 1, c),
                    (r, c.wrapping_sub(1)),
                    (r, c + 1),
                ];
                for (nr, nc) in nbrs {
                    if nr < rows && nc < cols && g[nr][nc] == 1 && !seen[nr * cols + nc] {
                        seen[nr * cols + nc] = true;
                        stack.push((nr, nc));
                    }
                }
            }
            best = best.max(area);
        }
    }
    Some(best)
}

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
            question: format!(
                "Here is a {rows}x{cols} grid where 1 is land and 0 is water:\n\n{}\n\n\
                 An island is a group of land cells connected horizontally or vertically (not \
                 diagonally); its area is the number of cells in it. What is the area of the \
                 largest island? If there is no land, the answer is 0.\n{}",
                grid_text(&g),
                answer_instruction("as a single integer", &int_example(gold))
            ),
            answer: gold.to_string(),
            metadata: json!({"params": self.level_params(level), "grid": g}),
        }
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let Some(want) = meta_int_grid(instance, "grid").and_then(|g| largest(&g)) else {
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
