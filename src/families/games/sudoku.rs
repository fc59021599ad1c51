//! `sudoku`: complete a standard 9×9 sudoku that has exactly one solution.
//!
//! Generation: a complete grid from the pattern `(3·(r mod 3) + r div 3 + c) mod 9`
//! (a valid sudoku), shuffled by the validity-preserving symmetries — a random digit
//! relabelling, rows within each band, the bands, columns within each stack, the stacks
//! and an optional transpose (about 1.2·10^12 distinct grids, before relabelling).
//! Cells are then blanked in random order; a blank is kept only while a solution
//! counter (a bitmask backtracking search on the cell with the fewest candidates, stopped
//! at two solutions) still finds exactly one solution. Every puzzle is therefore unique.
//!
//! Levels (blank cells): 1: 20 · 2: 35 · 3: 45 · 4: 52 · 5: 58, or as many as the
//! grid allows while the solution stays unique (at least 50; otherwise a new grid is
//! drawn). The number of blanks is in the metadata.
//!
//! Gold: the solution, 9 lines of 9 digits separated by spaces. Verifier (constraints,
//! not strings): 9 rows of 9 digits 1-9 (cells separated by whitespace and/or commas, or
//! a row written as 9 digits in a row, or `[[..], ..]`), every given kept, every row,
//! column and 3×3 box holding each digit once. The format example is a valid sudoku
//! grid that contradicts at least one given (chosen from the givens alone), so it is
//! never accepted. Metadata: `puzzle` (9 rows of 9 digits, 0 = blank), `blanks`.

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::fields;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct Sudoku;

/// Blank cells per level (level 5: a target; see the module docs).
const BLANKS: [usize; 5] = [20, 35, 45, 52, 58];
/// Level 5 accepts a grid with at least this many blanks.
const L5_MIN_BLANKS: usize = 50;

type Grid = [u8; 81];

const fn box_of(i: usize) -> usize {
    (i / 27) * 3 + (i % 9) / 3
}

/// Bit masks of used digits per row, column and box.
struct Masks {
    row: [u16; 9],
    col: [u16; 9],
    bx: [u16; 9],
}

impl Masks {
    fn of(g: &Grid) -> Option<Masks> {
        let mut m = Masks {
            row: [0; 9],
            col: [0; 9],
            bx: [0; 9],
        };
        for (i, &d) in g.iter().enumerate() {
            if d != 0 {
                let bit = 1u16 << d;
                if (m.row[i / 9] | m.col[i % 9] | m.bx[box_of(i)]) & bit != 0 {
                    return None;
                }
                m.set(i, bit);
            }
        }
        Some(m)
    }
    fn used(&self, i: usize) -> u16 {
        self.row[i / 9] | self.col[i % 9] | self.bx[box_of(i)]
    }
    fn set(&mut self, i: usize, bit: u16) {
        self.row[i / 9] |= bit;
        self.col[i % 9] |= bit;
        self.bx[box_of(i)] |= bit;
    }
    fn clear(&mut self, i: usize, bit: u16) {
        self.row[i / 9] &= !bit;
        self.col[i % 9] &= !bit;
        self.bx[box_of(i)] &= !bit;
    }
}

const ALL_DIGITS: u16 = 0b11_1111_1110;

/// Count solutions, stopping at `limit`. Branches on the blank with fewest candidates.
fn count(g: &mut Grid, m: &mut Masks, limit: usize) -> usize {
    let mut best = usize::MAX;
    let mut best_free = 0u16;
    let mut best_n = u32::MAX;
    for (i, &d) in g.iter().enumerate() {
        if d == 0 {
            let free = ALL_DIGITS & !m.used(i);
            let n = free.count_ones();
            if n < best_n {
                (best, best_free, best_n) = (i, free, n);
                if n <= 1 {
                    break;
                }
            }
        }
    }
    if best == usize::MAX {
        return 1;
    }
    let mut found = 0;
    let mut free = best_free;
    while free != 0 {
        let bit = free & free.wrapping_neg();
        free &= free - 1;
        g[best] = bit.trailing_zeros() as u8;
        m.set(best, bit);
        found += count(g, m, limit - found);
        m.clear(best, bit);
        g[best] = 0;
        if found >= limit {
            break;
        }
    }
    found
}

fn unique(g: &Grid) -> bool {
    let mut g = *g;
    match Masks::of(&g) {
        Some(mut m) => count(&mut g, &mut m, 2) == 1,
        None => false,
    }
}

/// The base pattern grid (valid, digits 1-9).
fn pattern() -> Grid {
    std::array::from_fn(|i| {
        let (r, c) = (i / 9, i % 9);
        ((3 * (r % 3) + r / 3 + c) % 9 + 1) as u8
    })
}

/// A random valid grid: the pattern under random validity-preserving symmetries.
fn random_grid(rng: &mut ChaCha20Rng) -> Grid {
    let base = pattern();
    let order = |rng: &mut ChaCha20Rng| {
        let mut bands = [0usize, 1, 2];
        bands.shuffle(rng);
        let mut out = Vec::with_capacity(9);
        for b in bands {
            let mut inner = [0usize, 1, 2];
            inner.shuffle(rng);
            out.extend(inner.iter().map(|k| b * 3 + k));
        }
        out
    };
    let rows = order(rng);
    let cols = order(rng);
    let mut digits: Vec<u8> = (1..=9).collect();
    digits.shuffle(rng);
    let transpose = rng.random_bool(0.5);
    std::array::from_fn(|i| {
        let (mut r, mut c) = (i / 9, i % 9);
        if transpose {
            (r, c) = (c, r);
        }
        digits[usize::from(base[rows[r] * 9 + cols[c]]) - 1]
    })
}

fn show(g: &Grid) -> String {
    let mut s = String::with_capacity(170);
    for r in 0..9 {
        if r > 0 {
            s.push('\n');
        }
        for c in 0..9 {
            if c > 0 {
                s.push(' ');
            }
            let d = g[r * 9 + c];
            s.push(if d == 0 { '_' } else { char::from(b'0' + d) });
        }
    }
    s
}

/// Read 9 rows of 9 digits 1-9 from an answer.
fn read_answer(answer: &str) -> Option<Grid> {
    let rows = parse::grid(answer)?;
    if rows.len() != 9 {
        return None;
    }
    let mut g = [0u8; 81];
    for (r, row) in rows.iter().enumerate() {
        let cells: Vec<u8> = if row.len() == 9 {
            row.iter()
                .map(|c| match c.as_bytes() {
                    [d @ b'1'..=b'9'] => Some(d - b'0'),
                    _ => None,
                })
                .collect::<Option<_>>()?
        } else if row.len() == 1 && row[0].len() == 9 {
            row[0]
                .bytes()
                .map(|d| (b'1'..=b'9').contains(&d).then(|| d - b'0'))
                .collect::<Option<_>>()?
        } else {
            return None;
        };
        g[r * 9..r * 9 + 9].copy_from_slice(&cells);
    }
    Some(g)
}

fn read_puzzle(v: &Value) -> Option<Grid> {
    let rows = v.as_array()?;
    if rows.len() != 9 {
        return None;
    }
    let mut g = [0u8; 81];
    for (r, row) in rows.iter().enumerate() {
        let row = row.as_array()?;
        if row.len() != 9 {
            return None;
        }
        for (c, d) in row.iter().enumerate() {
            g[r * 9 + c] = u8::try_from(d.as_u64()?).ok().filter(|&d| d <= 9)?;
        }
    }
    Some(g)
}

impl Family for Sudoku {
    fn name(&self) -> &'static str {
        "sudoku"
    }
    fn category(&self) -> Category {
        Category::Games
    }
    fn description(&self) -> &'static str {
        "Complete a 9x9 sudoku with a unique solution"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> Value {
        let blanks = BLANKS[level.idx()];
        if level.get() == 5 {
            json!({"size": 9, "box": "3x3", "blanks_target": blanks, "blanks_min": L5_MIN_BLANKS})
        } else {
            json!({"size": 9, "box": "3x3", "blanks": blanks})
        }
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let target = BLANKS[level.idx()];
        let need = if level.get() == 5 {
            L5_MIN_BLANKS
        } else {
            target
        };
        let (solution, puzzle, blanks) = loop {
            let sol = random_grid(rng);
            let mut puz = sol;
            let mut order: Vec<usize> = (0..81).collect();
            order.shuffle(rng);
            let mut removed = 0;
            for i in order {
                if removed == target {
                    break;
                }
                puz[i] = 0;
                if unique(&puz) {
                    removed += 1;
                } else {
                    puz[i] = sol[i];
                }
            }
            if removed >= need {
                break (sol, puz, removed);
            }
        };
        // Example: the pattern grid, relabelled if needed so that it contradicts a given.
        let mut example = pattern();
        let first_given = puzzle.iter().position(|&d| d != 0).expect("has givens");
        if (0..81).all(|i| puzzle[i] == 0 || puzzle[i] == example[i]) {
            let d = example[first_given];
            let e = if d == 9 { 1 } else { d + 1 };
            for x in example.iter_mut() {
                if *x == d {
                    *x = e;
                } else if *x == e {
                    *x = d;
                }
            }
        }
        let body = Body::new()
            .text(
                "Solve this sudoku. Fill every blank cell (_) with a digit from 1 to 9 so that \
                 each row, each column and each of the nine 3x3 boxes contains every digit from 1 \
                 to 9 exactly once. The puzzle has exactly one solution.",
            )
            .data(show(&puzzle))
            .text(
                "Write the completed grid: 9 lines (one per row, top to bottom), each with 9 \
                 digits separated by single spaces.",
            );
        Generated {
            body,
            format: AnswerFormat::with_example("as the completed grid", show(&example)),
            answer: show(&solution),
            metadata: fields([
                ("puzzle", json!(puzzle.chunks(9).collect::<Vec<_>>())),
                ("blanks", Value::from(blanks)),
            ]),
        }
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let (Some(puzzle), Some(g)) = (
            instance.metadata.get("puzzle").and_then(read_puzzle),
            read_answer(answer),
        ) else {
            return 0.0;
        };
        let keeps_givens = (0..81).all(|i| puzzle[i] == 0 || puzzle[i] == g[i]);
        // Masks::of rejects any repeated digit in a row, column or box; with 81 digits
        // from 1-9 and no repeats, every unit holds each digit once.
        if keeps_givens && Masks::of(&g).is_some() {
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
    fn pattern_and_random_grids_are_valid() {
        assert!(Masks::of(&pattern()).is_some());
        let mut rng = <ChaCha20Rng as rand::SeedableRng>::seed_from_u64(1);
        for _ in 0..50 {
            let g = random_grid(&mut rng);
            assert!(g.iter().all(|&d| (1..=9).contains(&d)));
            assert!(Masks::of(&g).is_some());
        }
    }

    #[test]
    fn counter_sees_multiple_solutions() {
        // Blanking the first two rows leaves at least two solutions: the grid and the
        // grid with those rows swapped (rows of one band may be permuted).
        let mut g = pattern();
        g[..18].fill(0);
        assert!(!unique(&g));
        let mut one = pattern();
        one[..9].fill(0);
        assert!(unique(&one));
        let mut empty = [0u8; 81];
        let mut m = Masks::of(&empty).unwrap();
        assert_eq!(count(&mut empty, &mut m, 2), 2);
    }
}
