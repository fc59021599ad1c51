//! `game_of_life`: the whole board after k steps of Conway's Game of Life on a torus.
//!
//! The board wraps around at its edges (a torus), so every cell has exactly eight
//! neighbours; the question says so. Rules: a live cell with 2 or 3 live neighbours
//! survives, a dead cell with exactly 3 becomes alive, every other cell is dead next.
//!
//! Levels (rows × columns, steps, probability that a starting cell is live):
//! 1: 4×4, 1 step, 0.35 · 2: 5×5, 1 step, 0.35 · 3: 6×6, 2 steps, 0.35 ·
//! 4: 8×8, 3 steps, 0.35 · 5: 10×10, 5 steps, 0.35.
//! Starting boards whose final board is all dead or identical to the starting board
//! are redrawn, so neither an empty grid nor an echo of the input can be right.
//!
//! Gold: direct simulation. Verifier: the whole grid must match exactly (no per-cell
//! credit): `rows` lines of `cols` cells, each `0` or `1`, separated by whitespace
//! and/or commas (a row may also be written unseparated, `0110`, or the grid as
//! `[[0,1],[1,0]]`). Metadata: `params`, `rows`, `cols`, `steps`, `wrap` ("torus"),
//! `grid` (the starting board, rows of 0/1).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::kit::text::{cells, grid};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct GameOfLife;

/// (rows, cols, steps) per level; live probability is `DENSITY` everywhere.
const PARAMS: [(usize, usize, usize); 5] =
    [(4, 4, 1), (5, 5, 1), (6, 6, 2), (8, 8, 3), (10, 10, 5)];
const DENSITY: f64 = 0.35;

/// One synchronous step on a torus.
fn step(cur: &[u8], rows: usize, cols: usize, next: &mut [u8]) {
    for i in 0..rows {
        let up = (i + rows - 1) % rows * cols;
        let dn = (i + 1) % rows * cols;
        let me = i * cols;
        for j in 0..cols {
            let l = (j + cols - 1) % cols;
            let r = (j + 1) % cols;
            let n = cur[up + l]
                + cur[up + j]
                + cur[up + r]
                + cur[me + l]
                + cur[me + r]
                + cur[dn + l]
                + cur[dn + j]
                + cur[dn + r];
            next[me + j] = u8::from(n == 3 || (n == 2 && cur[me + j] == 1));
        }
    }
}

fn simulate(start: &[u8], rows: usize, cols: usize, steps: usize) -> Vec<u8> {
    let mut cur = start.to_vec();
    let mut next = vec![0u8; cur.len()];
    for _ in 0..steps {
        step(&cur, rows, cols, &mut next);
        std::mem::swap(&mut cur, &mut next);
    }
    cur
}

fn rows_of(flat: &[u8], cols: usize) -> Vec<&[u8]> {
    flat.chunks(cols).collect()
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[
            Piece::Data("{grid|grid}"),
            Piece::Text(
                "This {rows}x{cols} board (1 = alive, 0 = dead) follows the rules of Conway's Game of Life on a torus: the edges wrap around, so the top row neighbours the bottom row and the leftmost column neighbours the rightmost one, and every cell has exactly 8 neighbours (including diagonals). All cells update together at each step: a live cell with 2 or 3 live neighbours survives and any other live cell dies; a dead cell with exactly 3 live neighbours comes alive and any other dead cell stays dead.",
            ),
            Piece::Text(
                "Number of steps: {steps}\nWrite the whole board after that many steps: {rows} lines, top to bottom, each with {cols} cells (0 or 1) separated by single spaces.",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Text(
                "Game of Life rules: at every step all cells change at the same time. A live cell stays alive if exactly 2 or 3 of its 8 neighbours (horizontal, vertical and diagonal) are alive, otherwise it dies; a dead cell becomes alive if exactly 3 of its neighbours are alive, otherwise it stays dead. The board wraps around like a torus: the row above the top row is the bottom row and the column left of the first column is the last column.",
            ),
            Piece::Data("{grid|json}"),
            Piece::Text(
                "The board above is given as JSON, one list per row (1 = live, 0 = dead). Apply the rules {steps} time(s) and write the resulting board: {rows} lines (one per row, top to bottom), each with {cols} cells written 0 or 1 and separated by single spaces.",
            ),
        ],
    ),
];

impl Family for GameOfLife {
    fn name(&self) -> &'static str {
        "game_of_life"
    }
    fn category(&self) -> Category {
        Category::Games
    }
    fn description(&self) -> &'static str {
        "The whole board after k steps of Conway's Game of Life on a wrap-around grid (exact match)"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (rows, cols, steps) = PARAMS[level.idx()];
        json!({"rows": rows, "cols": cols, "steps": steps, "density": DENSITY, "wrap": "torus"})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (rows, cols, steps) = PARAMS[level.idx()];
        let mut start = vec![0u8; rows * cols];
        let end = loop {
            for c in start.iter_mut() {
                *c = u8::from(rng.random_bool(DENSITY));
            }
            let end = simulate(&start, rows, cols, steps);
            if end.contains(&1) && end != start {
                break end;
            }
        };
        let grid_text = grid(rows_of(&start, cols));
        let plural = if steps == 1 { "step" } else { "steps" };
        let body = Body::new()
            .text(format!(
                "Conway's Game of Life is played on the {rows}x{cols} grid below (1 = live cell, 0 = dead cell). \
The grid wraps around at its edges, like a torus: the row above the top row is the bottom row and the \
column to the left of the first column is the last column, so every cell has exactly 8 neighbours \
(horizontal, vertical and diagonal). At each step all cells update at the same time: a live cell with 2 or \
3 live neighbours stays alive, any other live cell dies; a dead cell with exactly 3 live neighbours becomes \
alive, any other dead cell stays dead."
            ))
            .data(grid_text)
            .text(format!(
                "What is the grid after {steps} {plural}? Write the whole grid: {rows} lines (one per row, top \
to bottom), each with {cols} cells written 0 or 1 and separated by single spaces."
            ));
        // Two rows of three cells: no board has that size.
        let format = AnswerFormat::with_example("as the whole grid", "0 1 0\n1 0 0");
        Generated {
            body,
            format,
            answer: grid(rows_of(&end, cols)),
            metadata: fields([
                ("rows", Value::from(rows)),
                ("cols", Value::from(cols)),
                ("steps", Value::from(steps)),
                ("wrap", Value::from("torus")),
                (
                    "grid",
                    Value::from(
                        rows_of(&start, cols)
                            .into_iter()
                            .map(Value::from)
                            .collect::<Vec<_>>(),
                    ),
                ),
            ]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let m = Meta::of(instance);
        let (Some(rows), Some(cols), Some(steps), Some(grid)) = (
            m.usize("rows", 64),
            m.usize("cols", 64),
            m.usize("steps", 1000),
            m.digit_grid("grid", 1),
        ) else {
            return 0.0;
        };
        if rows == 0 || cols == 0 || grid.len() != rows || grid[0].len() != cols {
            return 0.0;
        }
        let start: Vec<u8> = grid.concat();
        let want = simulate(&start, rows, cols, steps);
        let Some(got) = cells(answer, rows, cols) else {
            return 0.0;
        };
        let ok = got
            .iter()
            .flatten()
            .zip(&want)
            .all(|(g, &w)| match g.as_str() {
                "0" => w == 0,
                "1" => w == 1,
                _ => false,
            });
        if ok { 1.0 } else { 0.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blinker_oscillates_and_glider_wraps() {
        // A blinker in a 5x5 torus flips between horizontal and vertical.
        let mut g = vec![0u8; 25];
        g[2 * 5 + 1] = 1;
        g[2 * 5 + 2] = 1;
        g[2 * 5 + 3] = 1;
        let one = simulate(&g, 5, 5, 1);
        let mut v = vec![0u8; 25];
        v[5 + 2] = 1;
        v[2 * 5 + 2] = 1;
        v[3 * 5 + 2] = 1;
        assert_eq!(one, v);
        assert_eq!(simulate(&g, 5, 5, 2), g);
        // A glider on a 6x6 torus returns to its start after 4*6 = 24 steps.
        let mut gl = vec![0u8; 36];
        for (r, c) in [(0, 1), (1, 2), (2, 0), (2, 1), (2, 2)] {
            gl[r * 6 + c] = 1;
        }
        assert_eq!(simulate(&gl, 6, 6, 24), gl);
        assert_ne!(simulate(&gl, 6, 6, 4), gl);
    }
}
