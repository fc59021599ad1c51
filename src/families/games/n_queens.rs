//! `n_queens`: complete an n×n board on which some queens are already placed so that
//! n queens stand with no two in the same row, column or diagonal.
//!
//! Levels (board size n, queens the solver must add):
//! 1: n = 4, add 2 · 2: n = 5, add 2 · 3: n = 6, add 3 · 4: n = 8, add 4 · 5: n = 10, add 7.
//! The given queens are a subset of one random solution, so a completion exists.
//!
//! Gold: that solution. Verifier: any valid completion scores 1 — checked by
//! constraints, not string match: exactly n rows of n cells, each `Q` (a queen, case
//! ignored) or `_` / `.` (empty), exactly one queen per row and column, no two on a
//! diagonal, and every pre-placed queen kept. Cells are separated by whitespace and/or
//! commas, or a row may be written unseparated (`_Q__`). Metadata: `params`, `n`,
//! `placed` (0-based `[row, col]` pairs of the given queens), `board` (rows as text).

use rand::seq::SliceRandom;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::{Meta, fields, pairs_value};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::kit::text::{cells, grid};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct NQueens;

/// (n, queens to add) per level.
const PARAMS: [(usize, usize); 5] = [(4, 2), (5, 2), (6, 3), (8, 4), (10, 7)];

/// A random solution: `cols[row]`, found by backtracking with shuffled column orders.
fn random_solution(rng: &mut ChaCha20Rng, n: usize) -> Vec<usize> {
    fn place(
        row: usize,
        n: usize,
        order: &[Vec<usize>],
        cols: &mut Vec<usize>,
        used: &mut [u64; 3],
    ) -> bool {
        if row == n {
            return true;
        }
        for &c in &order[row] {
            let (d1, d2) = (row + c, row + n - 1 - c);
            if used[0] >> c & 1 == 1 || used[1] >> d1 & 1 == 1 || used[2] >> d2 & 1 == 1 {
                continue;
            }
            used[0] |= 1 << c;
            used[1] |= 1 << d1;
            used[2] |= 1 << d2;
            cols.push(c);
            if place(row + 1, n, order, cols, used) {
                return true;
            }
            cols.pop();
            used[0] &= !(1 << c);
            used[1] &= !(1 << d1);
            used[2] &= !(1 << d2);
        }
        false
    }
    let order: Vec<Vec<usize>> = (0..n)
        .map(|_| {
            let mut v: Vec<usize> = (0..n).collect();
            v.shuffle(rng);
            v
        })
        .collect();
    let mut cols = Vec::with_capacity(n);
    let mut used = [0u64; 3];
    // n >= 4 always has a solution, and the search is exhaustive.
    place(0, n, &order, &mut cols, &mut used);
    cols
}

fn board_rows(n: usize, queens: impl Fn(usize, usize) -> bool) -> Vec<Vec<&'static str>> {
    (0..n)
        .map(|r| {
            (0..n)
                .map(|c| if queens(r, c) { "Q" } else { "_" })
                .collect()
        })
        .collect()
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Data("{board|compact}"),
            Piece::Text(
                "The {n}x{n} board above holds {placed|len} queens (Q); _ is an empty square. Add queens until there are exactly {n} queens on the board, keeping the ones already placed, so that no two queens share a row, a column or a diagonal. Write the final board: {n} lines (top row first), each with {n} cells written Q or _ and separated by single spaces.",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Text(
                "Chessboard: {n}x{n}.\nQueens already placed, as (row, column) counted from 0 at the top-left square: {#placed|, }({.0}, {.1}){/}.",
            ),
            Piece::Text(
                "Place queens so that the board holds {n} queens in total, including those already placed, and no queen attacks another (no two in the same row, column or diagonal). Write the full board as {n} lines from top to bottom, each with {n} cells, Q for a queen and _ for an empty square, separated by single spaces.",
            ),
        ],
    ),
];

impl Family for NQueens {
    fn name(&self) -> &'static str {
        "n_queens"
    }
    fn category(&self) -> Category {
        Category::Games
    }
    fn description(&self) -> &'static str {
        "Complete an n-queens board that already holds some queens (any valid completion scores)"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (n, add) = PARAMS[level.idx()];
        json!({"n": n, "queens_to_add": add, "queens_given": n - add})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (n, add) = PARAMS[level.idx()];
        let sol = random_solution(rng, n);
        let mut rows: Vec<usize> = (0..n).collect();
        rows.shuffle(rng);
        let mut given: Vec<usize> = rows[add..].to_vec();
        given.sort_unstable();
        let keep = |r: usize, c: usize| sol[r] == c && given.contains(&r);
        let board = board_rows(n, keep);
        let board_text = grid(board.iter().map(|r| r.iter()));
        let body = Body::new()
            .text(format!(
                "Place queens on the {n}x{n} chessboard below so that there are exactly {n} queens and no two queens \
attack each other: no two in the same row, the same column or the same diagonal. {given_n} queens are already \
placed (Q); empty squares are _. Keep the queens that are already on the board and add {add} more.",
                given_n = n - add,
            ))
            .data(board_text)
            .text(format!(
                "Write the completed board: {n} lines (one per row, top to bottom), each with {n} cells written Q \
or _ and separated by single spaces."
            ));
        // A 2x2 board: no instance is that small.
        let format = AnswerFormat::with_example("as the completed board", "_ Q\nQ _");
        Generated {
            body,
            format,
            answer: grid(board_rows(n, |r, c| sol[r] == c)),
            metadata: fields([
                ("n", Value::from(n)),
                (
                    "placed",
                    pairs_value(&given.iter().map(|&r| (r, sol[r])).collect::<Vec<_>>()),
                ),
                (
                    "board",
                    Value::from(board.iter().map(|r| r.concat()).collect::<Vec<_>>()),
                ),
            ]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let m = Meta::of(instance);
        let Some(n) = m.usize("n", 40).filter(|&n| n > 0) else {
            return 0.0;
        };
        let (Some(given), Some(grid)) = (m.pairs("placed", n), cells(answer, n, n)) else {
            return 0.0;
        };
        let mut queens = Vec::with_capacity(n);
        for (r, row) in grid.iter().enumerate() {
            for (c, cell) in row.iter().enumerate() {
                match cell.as_str() {
                    "Q" | "q" => queens.push((r, c)),
                    "_" | "." => {}
                    _ => return 0.0,
                }
            }
        }
        if queens.len() != n || !given.iter().all(|g| queens.contains(g)) {
            return 0.0;
        }
        for (i, &(r1, c1)) in queens.iter().enumerate() {
            for &(r2, c2) in &queens[i + 1..] {
                if r1 == r2 || c1 == c2 || r1.abs_diff(r2) == c1.abs_diff(c2) {
                    return 0.0;
                }
            }
        }
        1.0
    }
}
