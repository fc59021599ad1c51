//! `maze`: the minimum number of steps from S to G in a grid maze.
//!
//! Moves go one cell up, down, left or right (never diagonally), only through open
//! cells, never off the grid. Walls are `#`, open cells `.`.
//!
//! Levels (rows × columns, wall probability, minimum shortest-path length):
//! 1: 5×5, 0.20, ≥ 3 · 2: 7×7, 0.25, ≥ 5 · 3: 9×9, 0.30, ≥ 8 · 4: 12×12, 0.33, ≥ 12 ·
//! 5: 16×16, 0.35, ≥ 20.
//! Generation: random walls; S is a random open cell; G is drawn among the open cells
//! whose breadth-first distance from S is at least the level's minimum (the grid is
//! redrawn when there is none), so G is always reachable.
//!
//! Gold: the BFS distance. Verifier: one integer (`families::parse::int`), compared to
//! the gold. Metadata: `params`, `rows`, `cols`, `grid` (rows as text, with `S`, `G`),
//! `start` and `goal` (0-based `[row, col]`).

use std::collections::VecDeque;

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::fields;
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct Maze;

/// (rows, cols, wall probability, minimum distance) per level.
const PARAMS: [(usize, usize, f64, u32); 5] = [
    (5, 5, 0.20, 3),
    (7, 7, 0.25, 5),
    (9, 9, 0.30, 8),
    (12, 12, 0.33, 12),
    (16, 16, 0.35, 20),
];

/// BFS distances from `s` over open cells (`u32::MAX` = unreachable).
fn bfs(open: &[bool], rows: usize, cols: usize, s: usize) -> Vec<u32> {
    let mut dist = vec![u32::MAX; open.len()];
    let mut q = VecDeque::with_capacity(open.len());
    dist[s] = 0;
    q.push_back(s);
    while let Some(u) = q.pop_front() {
        let (r, c) = (u / cols, u % cols);
        let d = dist[u] + 1;
        let mut visit = |v: usize| {
            if open[v] && dist[v] == u32::MAX {
                dist[v] = d;
                q.push_back(v);
            }
        };
        if r > 0 {
            visit(u - cols);
        }
        if r + 1 < rows {
            visit(u + cols);
        }
        if c > 0 {
            visit(u - 1);
        }
        if c + 1 < cols {
            visit(u + 1);
        }
    }
    dist
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Data("{grid|grid}"),
            Piece::Text(
                "Maze legend: # wall, . open cell, S start, G goal (S and G are open cells). You can step to the neighbouring cell above, below, left or right (no diagonal steps) if it is open, and you can never leave the grid. What is the smallest number of steps that takes you from S to G?",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Text(
                "A {rows}x{cols} maze is shown as a table (# = wall, . = open, S = start, G = goal; S and G are open):",
            ),
            Piece::Data("{grid|table}"),
            Piece::Text(
                "Each step moves to an adjacent open cell up, down, left or right, never diagonally and never off the grid. How many steps does the shortest route from S to G take?",
            ),
        ],
    ),
];

impl Family for Maze {
    fn name(&self) -> &'static str {
        "maze"
    }
    fn category(&self) -> Category {
        Category::Games
    }
    fn description(&self) -> &'static str {
        "Minimum number of steps from start to goal in a grid maze"
    }
    fn version(&self) -> u32 {
        // 2: the format example is the number of open cells (never the answer), not a value chosen by looking at the gold.
        2
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (rows, cols, p, min) = PARAMS[level.idx()];
        json!({"rows": rows, "cols": cols, "wall_probability": p, "min_distance": min})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (rows, cols, p, min) = PARAMS[level.idx()];
        let mut open = vec![false; rows * cols];
        let (s, g, d) = loop {
            for c in open.iter_mut() {
                *c = !rng.random_bool(p);
            }
            let s = rng.random_range(0..open.len());
            if !open[s] {
                continue;
            }
            let dist = bfs(&open, rows, cols, s);
            let far = dist.iter().filter(|&&d| d != u32::MAX && d >= min).count();
            if far == 0 {
                continue;
            }
            let k = rng.random_range(0..far);
            let g = dist
                .iter()
                .enumerate()
                .filter(|&(_, &d)| d != u32::MAX && d >= min)
                .nth(k)
                .map(|(i, _)| i)
                .unwrap_or(s);
            break (s, g, dist[g]);
        };
        let grid: Vec<String> = (0..rows)
            .map(|r| {
                (0..cols)
                    .map(|c| {
                        let i = r * cols + c;
                        if i == s {
                            'S'
                        } else if i == g {
                            'G'
                        } else if open[i] {
                            '.'
                        } else {
                            '#'
                        }
                    })
                    .collect()
            })
            .collect();
        // A shortest route visits distinct open cells, so it has fewer steps than there
        // are open cells: their number (read off the grid) is never the answer.
        let open_cells = open.iter().filter(|&&o| o).count();
        let body = Body::new()
            .text(
                "In the maze below, # is a wall, . is an open cell, S is the start and G is the goal (both open). \
A step moves to the next cell up, down, left or right (not diagonally), only onto open cells and never off the \
grid. What is the minimum number of steps needed to go from S to G?",
            )
            .data(grid.join("\n"));
        let format = AnswerFormat::with_example("as a single integer", open_cells.to_string());
        Generated {
            body,
            format,
            answer: d.to_string(),
            metadata: fields([
                ("rows", Value::from(rows)),
                ("cols", Value::from(cols)),
                ("grid", Value::from(grid)),
                ("start", Value::from(vec![s / cols, s % cols])),
                ("goal", Value::from(vec![g / cols, g % cols])),
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
