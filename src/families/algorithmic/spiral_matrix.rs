//! `spiral_matrix`: list a matrix's entries in clockwise spiral order.
//!
//! The spiral starts at the top-left cell, goes right along the top row, down the
//! right column, left along the bottom row, up the left column, and continues inwards.
//! Answer: the numbers in that order separated by spaces or commas (one pair of
//! brackets allowed, see `families::parse::int_list`); compared exactly.
//!
//! Levels (rows, columns, cell values): 1: 2..=3 square, 0..=9 · 2: 3..=4 square,
//! 0..=9 · 3: 4..=5 rows and columns, 0..=20 · 4: 5..=7 rows and columns, 0..=99 ·
//! 5: 7..=10 rows and columns, 0..=99.

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::kit::text::{grid, int_list_is};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct SpiralMatrix;

/// (min side, max side, square only, max value) per level.
const PARAMS: [(usize, usize, bool, i64); 5] = [
    (2, 3, true, 9),
    (3, 4, true, 9),
    (4, 5, false, 20),
    (5, 7, false, 99),
    (7, 10, false, 99),
];

/// Spiral order by shrinking the four boundaries.
fn spiral(m: &[Vec<i64>]) -> Vec<i64> {
    let rows = m.len();
    let cols = m.first().map_or(0, |r| r.len());
    let mut out = Vec::with_capacity(rows * cols);
    if rows == 0 || cols == 0 {
        return out;
    }
    let (mut top, mut bottom, mut left, mut right) = (0usize, rows - 1, 0usize, cols - 1);
    loop {
        out.extend((left..=right).map(|c| m[top][c]));
        if top == bottom {
            break;
        }
        top += 1;
        out.extend((top..=bottom).map(|r| m[r][right]));
        if left == right {
            break;
        }
        right -= 1;
        out.extend((left..=right).rev().map(|c| m[bottom][c]));
        if top == bottom {
            break;
        }
        bottom -= 1;
        out.extend((top..=bottom).rev().map(|r| m[r][left]));
        if left == right {
            break;
        }
        left += 1;
    }
    out
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Text(
                "Walk through this matrix ({matrix|len} rows, {matrix|cols} columns, given as JSON with one list per row) in a clockwise spiral and list every element once: start at the top-left element, go right along the top row, down the right column, left along the bottom row, up the left column, then continue inwards.",
            ),
            Piece::Data("{matrix|json}"),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Data("{matrix|labeled}"),
            Piece::Text(
                "List the elements of the matrix above in clockwise spiral order: begin with the top-left element, move right along the first row, then down the last column, left along the bottom row and up the first column, and keep going inwards until every element has been listed once.",
            ),
        ],
    ),
];

impl Family for SpiralMatrix {
    fn name(&self) -> &'static str {
        "spiral_matrix"
    }
    fn category(&self) -> Category {
        Category::Algorithmic
    }
    fn description(&self) -> &'static str {
        "List the entries of a matrix in clockwise spiral order"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi, square, vmax) = PARAMS[level.idx()];
        json!({"side_min": lo, "side_max": hi, "square": square, "value_min": 0, "value_max": vmax})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi, square, vmax) = PARAMS[level.idx()];
        let rows = rng.random_range(lo..=hi);
        let cols = if square {
            rows
        } else {
            rng.random_range(lo..=hi)
        };
        let m: Vec<Vec<i64>> = (0..rows)
            .map(|_| (0..cols).map(|_| rng.random_range(0..=vmax)).collect())
            .collect();
        let gold = spiral(&m);
        let gold_s: Vec<String> = gold.iter().map(i64::to_string).collect();
        Generated {
            body: Body::new()
                .text(format!(
                    "List the elements of this {rows}x{cols} matrix in clockwise spiral order: start \
                     at the top-left element, go right along the top row, then down the right \
                     column, left along the bottom row, up the left column, and continue inwards \
                     until every element is listed once."
                ))
                .data(grid(&m)),
            // Three numbers; every matrix has at least four.
            format: AnswerFormat::with_example(
                "as the numbers in spiral order separated by spaces",
                "1 2 3",
            ),
            answer: gold_s.join(" "),
            metadata: fields([("matrix", Value::from(m))]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let Some(m) = Meta::of(instance).int_grid("matrix") else {
            return 0.0;
        };
        if int_list_is(answer, &spiral(&m)) {
            1.0
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::spiral;

    #[test]
    fn spirals() {
        let m = vec![vec![1, 2, 3], vec![4, 5, 6], vec![7, 8, 9]];
        assert_eq!(spiral(&m), vec![1, 2, 3, 6, 9, 8, 7, 4, 5]);
        let r = vec![vec![1, 2, 3, 4], vec![5, 6, 7, 8]];
        assert_eq!(spiral(&r), vec![1, 2, 3, 4, 8, 7, 6, 5]);
        let c = vec![vec![1], vec![2], vec![3]];
        assert_eq!(spiral(&c), vec![1, 2, 3]);
        assert_eq!(spiral(&[vec![1, 2, 3]]), vec![1, 2, 3]);
    }
}
