//! `mini_sudoku`: fill a 4×4 sudoku (digits 1-4, each once per row, column and 2×2 box).
//!
//! Levels (number of blank cells): 1: 4 · 2: 6 · 3: 8 · 4: 10 · 5: 11.
//! Generation: a random complete grid (backtracking with shuffled digits), then cells
//! are blanked in random order, keeping a blank only while a solution counter (stops at
//! two) still finds exactly one solution; a grid that cannot reach the level's number of
//! blanks is redrawn. Every puzzle therefore has a unique solution.
//!
//! Gold: that solution. Verifier: checks the constraints rather than the string (so it
//! would accept any valid completion consistent with the givens; with a unique solution
//! that is the gold): 4 rows of 4 digits 1-4 separated by whitespace and/or commas (a
//! row may be written `1234`), every row, column and box a permutation of 1-4, every
//! given kept. Metadata: `params`, `puzzle` (rows of digits, 0 = blank).

use rand::seq::SliceRandom;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::kit::text::{cells, grid};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct MiniSudoku;

const BLANKS: [usize; 5] = [4, 6, 8, 10, 11];

/// Box index of cell `i` (0..16).
const fn box_of(i: usize) -> usize {
    (i / 8) * 2 + (i % 4) / 2
}

/// Bitmask (bits 1..=4) of digits already used in the row, column and box of `i`.
fn used(g: &[u8; 16], i: usize) -> u8 {
    let mut m = 0u8;
    for (j, &d) in g.iter().enumerate() {
        if j != i && (j / 4 == i / 4 || j % 4 == i % 4 || box_of(j) == box_of(i)) {
            m |= 1 << d;
        }
    }
    m
}

/// Count solutions of `g` (0 = blank), stopping once `limit` are found.
fn count_solutions(g: &mut [u8; 16], limit: usize) -> usize {
    let Some(i) = g.iter().position(|&d| d == 0) else {
        return 1;
    };
    let u = used(g, i);
    let mut n = 0;
    for d in 1..=4u8 {
        if u >> d & 1 == 0 {
            g[i] = d;
            n += count_solutions(g, limit - n);
            g[i] = 0;
            if n >= limit {
                break;
            }
        }
    }
    n
}

fn fill(g: &mut [u8; 16], rng: &mut ChaCha20Rng) -> bool {
    let Some(i) = g.iter().position(|&d| d == 0) else {
        return true;
    };
    let mut ds = [1u8, 2, 3, 4];
    ds.shuffle(rng);
    let u = used(g, i);
    for d in ds {
        if u >> d & 1 == 0 {
            g[i] = d;
            if fill(g, rng) {
                return true;
            }
            g[i] = 0;
        }
    }
    false
}

fn show(g: &[u8; 16]) -> String {
    grid(g.chunks(4).map(|r| {
        r.iter().map(|&d| {
            if d == 0 {
                "_".to_string()
            } else {
                d.to_string()
            }
        })
    }))
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[
            Piece::Text("Complete this 4x4 sudoku, in which 0 marks an empty cell:"),
            Piece::Data("{puzzle|grid}"),
            Piece::Text(
                "Every row, every column and each of the four 2x2 boxes (top-left, top-right, bottom-left, bottom-right) must contain each of the digits 1 to 4 exactly once, and the given digits stay as they are; the solution is unique. Write the solved grid as 4 lines (top to bottom) of 4 digits separated by single spaces.",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Data("{puzzle|json}"),
            Piece::Text(
                "The JSON above is a 4x4 sudoku, row by row, with 0 for each blank cell. Fill the blanks with digits 1 to 4 so that each row, each column and each 2x2 box (the four corner quadrants) holds 1, 2, 3 and 4 once each; there is exactly one solution. Write the completed grid as 4 lines, one per row from the top, with the 4 digits separated by single spaces.",
            ),
        ],
    ),
];

impl Family for MiniSudoku {
    fn name(&self) -> &'static str {
        "mini_sudoku"
    }
    fn category(&self) -> Category {
        Category::Games
    }
    fn description(&self) -> &'static str {
        "Complete a 4x4 sudoku with a unique solution"
    }
    fn version(&self) -> u32 {
        // 2: the format example has two rows (it was a full grid chosen by looking at the gold).
        2
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        json!({"size": 4, "box": "2x2", "blanks": BLANKS[level.idx()]})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let blanks = BLANKS[level.idx()];
        let (solution, puzzle) = loop {
            let mut sol = [0u8; 16];
            fill(&mut sol, rng);
            let mut puz = sol;
            let mut order: Vec<usize> = (0..16).collect();
            order.shuffle(rng);
            let mut removed = 0;
            for i in order {
                if removed == blanks {
                    break;
                }
                puz[i] = 0;
                if count_solutions(&mut puz.clone(), 2) == 1 {
                    removed += 1;
                } else {
                    puz[i] = sol[i];
                }
            }
            if removed == blanks {
                break (sol, puz);
            }
        };
        let gold = show(&solution);
        // Two rows only: shows the row format and can never be a completed grid.
        let example = "1 2 3 4\n3 4 1 2";
        let body = Body::new()
            .text(
                "Solve this 4x4 sudoku. Fill every blank cell (_) with a digit from 1 to 4 so that each row, each \
column and each of the four 2x2 boxes (top-left, top-right, bottom-left, bottom-right) contains each of the \
digits 1, 2, 3 and 4 exactly once. The puzzle has exactly one solution.",
            )
            .data(show(&puzzle))
            .text(
                "Write the completed grid: 4 lines (one per row, top to bottom), each with 4 digits separated by \
single spaces.",
            );
        let format = AnswerFormat::with_example("as the completed grid", example);
        Generated {
            body,
            format,
            answer: gold,
            metadata: fields([(
                "puzzle",
                Value::from(puzzle.chunks(4).map(Value::from).collect::<Vec<_>>()),
            )]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let Some(puzzle) = Meta::of(instance).digit_grid("puzzle", 4) else {
            return 0.0;
        };
        if puzzle.len() != 4 || puzzle[0].len() != 4 {
            return 0.0;
        }
        let Some(rows) = cells(answer, 4, 4) else {
            return 0.0;
        };
        let mut g = [0u8; 16];
        for (i, c) in rows.iter().flatten().enumerate() {
            match c.as_str() {
                "1" => g[i] = 1,
                "2" => g[i] = 2,
                "3" => g[i] = 3,
                "4" => g[i] = 4,
                _ => return 0.0,
            }
            let given = puzzle[i / 4][i % 4];
            if given != 0 && given != g[i] {
                return 0.0;
            }
        }
        let ok = (0..16).all(|i| used(&g, i) >> g[i] & 1 == 0);
        if ok { 1.0 } else { 0.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_solutions() {
        let mut empty = [0u8; 16];
        // There are 288 complete 4x4 sudoku grids.
        assert_eq!(count_solutions(&mut empty, 1000), 288);
        let mut full = [1, 2, 3, 4, 3, 4, 1, 2, 2, 1, 4, 3, 4, 3, 2, 1];
        assert_eq!(count_solutions(&mut full, 2), 1);
    }
}
