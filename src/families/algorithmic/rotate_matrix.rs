//! `rotate_matrix`: rotate a square matrix clockwise by 90, 180 or 270 degrees.
//!
//! Answer: the rotated matrix, one row per line, numbers separated by spaces (the
//! bracketed form `[[1, 2], [3, 4]]` is accepted too, see `families::parse::grid`).
//! Compared exactly, cell by cell.
//!
//! Levels (side n, cell values, angles): 1: n = 2, 0..=9, 90 or 180 ·
//! 2: n = 3, 0..=9, 90/180/270 · 3: n = 4, 0..=20, 90/180/270 ·
//! 4: n = 5..=6, 0..=99, 90/180/270 · 5: n = 7..=9, 0..=99, 90/180/270.

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::kit::text::{grid, int_grid_is};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct RotateMatrix;

/// (min side, max side, max value, number of angles from [90, 180, 270]) per level.
const PARAMS: [(usize, usize, i64, usize); 5] = [
    (2, 2, 9, 2),
    (3, 3, 9, 3),
    (4, 4, 20, 3),
    (5, 6, 99, 3),
    (7, 9, 99, 3),
];

/// Rotate clockwise by `quarter` quarter turns, one quarter turn at a time:
/// cell (r, c) of a clockwise quarter turn comes from (n-1-c, r).
fn rotate(m: &[Vec<i64>], quarters: u64) -> Vec<Vec<i64>> {
    let mut cur = m.to_vec();
    for _ in 0..quarters % 4 {
        let n = cur.len();
        let w = cur.first().map_or(0, |r| r.len());
        let next: Vec<Vec<i64>> = (0..w)
            .map(|r| (0..n).map(|c| cur[n - 1 - c][r]).collect())
            .collect();
        cur = next;
    }
    cur
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Data("{matrix|csv}"),
            Piece::Text(
                "The lines above are the rows of a square matrix, with entries separated by commas. Rotate the matrix clockwise by {degrees} degrees.",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Text("Turn this {matrix|len}x{matrix|cols} matrix {degrees} degrees clockwise:"),
            Piece::Data("{matrix|table}"),
        ],
    ),
];

impl Family for RotateMatrix {
    fn name(&self) -> &'static str {
        "rotate_matrix"
    }
    fn category(&self) -> Category {
        Category::Algorithmic
    }
    fn description(&self) -> &'static str {
        "Rotate a square matrix clockwise by 90, 180 or 270 degrees"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi, vmax, angles) = PARAMS[level.idx()];
        json!({"side_min": lo, "side_max": hi, "value_min": 0, "value_max": vmax,
               "angles": &[90, 180, 270][..angles]})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi, vmax, angles) = PARAMS[level.idx()];
        let n = rng.random_range(lo..=hi);
        let m: Vec<Vec<i64>> = (0..n)
            .map(|_| (0..n).map(|_| rng.random_range(0..=vmax)).collect())
            .collect();
        let degrees = 90 * rng.random_range(1..=angles as u64);
        let gold = rotate(&m, degrees / 90);
        // A 2x2 or 3x3 example of a different size than the matrix is never the gold.
        let example = if n == 2 {
            "1 2 3\n4 5 6\n7 8 9"
        } else {
            "1 2\n3 4"
        };
        Generated {
            body: Body::new()
                .text(format!(
                    "Rotate this {n}x{n} matrix {degrees} degrees clockwise."
                ))
                .data(grid(&m)),
            format: AnswerFormat::with_example(
                "as the rotated matrix, one row per line, numbers separated by spaces",
                example,
            ),
            answer: grid(&gold),
            metadata: fields([
                ("matrix", Value::from(m)),
                ("degrees", Value::from(degrees)),
            ]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let meta = Meta::of(instance);
        let (Some(m), Some(deg)) = (meta.int_grid("matrix"), meta.u64("degrees")) else {
            return 0.0;
        };
        if deg % 90 != 0 || m.len() != m[0].len() {
            return 0.0;
        }
        if int_grid_is(answer, &rotate(&m, deg / 90)) {
            1.0
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::rotate;

    #[test]
    fn quarter_turns() {
        let m = vec![vec![1, 2], vec![3, 4]];
        assert_eq!(rotate(&m, 1), vec![vec![3, 1], vec![4, 2]]);
        assert_eq!(rotate(&m, 2), vec![vec![4, 3], vec![2, 1]]);
        assert_eq!(rotate(&m, 3), vec![vec![2, 4], vec![1, 3]]);
        assert_eq!(rotate(&m, 4), m);
    }
}
