//! `manipulate_matrix`: apply a sequence of matrix operations and give the result.
//!
//! Operations: rotate clockwise by 90, 180 or 270 degrees; transpose; mirror
//! left-right (reverse the columns) or top-bottom (reverse the rows); remove a row or a
//! column (1-based, only while more than three remain); crop a matrix of at least 5×5
//! to a block of at least 3×3 (1-based, inclusive ranges); replace every occurrence of
//! one value by another.
//!
//! Levels (operations, rows × columns, values, operation kinds):
//! 1: 1, 3×3, 0..=9, transpose / mirror / rotate 180 · 2: 2, 3..=4 square, 0..=9,
//! those and rotations by any angle and removals · 3: 3, 4..=5 by 4..=5, 0..=9, all
//! (adding crop and replace) · 4: 4..=5, 4..=6 by 4..=6, 0..=20, all ·
//! 5: 6..=8, 5..=8 by 5..=8, 0..=99, all.
//!
//! Gold: the final matrix, one row per line, numbers separated by spaces. Verifier: the
//! same matrix, cell by cell (rows as lines or `[[..], [..]]`, cells separated by
//! whitespace and/or commas). Every result is at least 3×3, so the 2×2 format example
//! is never accepted. Metadata: `matrix` and `operations` (objects with `op` and
//! its arguments: `degrees`, `axis`, `index`, `rows`, `cols`, `from`, `to`).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::fields;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::text::{grid, int_grid_is};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct ManipulateMatrix;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Transpose,
    Mirror,
    Rotate180,
    Rotate,
    Remove,
    Crop,
    Replace,
}

struct Params {
    ops: (usize, usize),
    rows: (usize, usize),
    square: bool,
    value_max: i64,
    kinds: &'static [Kind],
}

const BASIC: &[Kind] = &[Kind::Transpose, Kind::Mirror, Kind::Rotate180];
const MORE: &[Kind] = &[Kind::Transpose, Kind::Mirror, Kind::Rotate, Kind::Remove];
const ALL: &[Kind] = &[
    Kind::Transpose,
    Kind::Mirror,
    Kind::Rotate,
    Kind::Remove,
    Kind::Crop,
    Kind::Replace,
];

const PARAMS: [Params; 5] = [
    Params {
        ops: (1, 1),
        rows: (3, 3),
        square: true,
        value_max: 9,
        kinds: BASIC,
    },
    Params {
        ops: (2, 2),
        rows: (3, 4),
        square: true,
        value_max: 9,
        kinds: MORE,
    },
    Params {
        ops: (3, 3),
        rows: (4, 5),
        square: false,
        value_max: 9,
        kinds: ALL,
    },
    Params {
        ops: (4, 5),
        rows: (4, 6),
        square: false,
        value_max: 20,
        kinds: ALL,
    },
    Params {
        ops: (6, 8),
        rows: (5, 8),
        square: false,
        value_max: 99,
        kinds: ALL,
    },
];

/// Removals stop at this many rows or columns; crops keep at least this many.
const MIN_SIDE: usize = 3;
/// Crops apply only to matrices with at least this many rows and columns.
const CROP_FROM: usize = 5;

/// One concrete operation.
#[derive(Clone, Debug, PartialEq)]
enum Op {
    Rotate(u32),
    Transpose,
    /// `true`: left-right (columns reversed); `false`: top-bottom (rows reversed).
    Mirror(bool),
    /// `true`: a row; `false`: a column. 1-based index.
    Remove(bool, usize),
    /// 1-based inclusive row and column ranges.
    Crop((usize, usize), (usize, usize)),
    Replace(i64, i64),
}

type Matrix = Vec<Vec<i64>>;

fn transpose(m: &Matrix) -> Matrix {
    (0..m[0].len())
        .map(|c| m.iter().map(|r| r[c]).collect())
        .collect()
}

fn apply(m: &Matrix, op: &Op) -> Matrix {
    match *op {
        // A clockwise quarter turn is a transpose followed by a left-right mirror.
        Op::Rotate(deg) => (0..deg / 90).fold(m.clone(), |acc, _| {
            apply(&transpose(&acc), &Op::Mirror(true))
        }),
        Op::Transpose => transpose(m),
        Op::Mirror(true) => m
            .iter()
            .map(|r| r.iter().rev().copied().collect())
            .collect(),
        Op::Mirror(false) => m.iter().rev().cloned().collect(),
        Op::Remove(true, i) => m
            .iter()
            .enumerate()
            .filter(|(k, _)| k + 1 != i)
            .map(|(_, r)| r.clone())
            .collect(),
        Op::Remove(false, i) => m
            .iter()
            .map(|r| {
                r.iter()
                    .enumerate()
                    .filter(|(k, _)| k + 1 != i)
                    .map(|(_, v)| *v)
                    .collect()
            })
            .collect(),
        Op::Crop((r0, r1), (c0, c1)) => m[r0 - 1..r1]
            .iter()
            .map(|r| r[c0 - 1..c1].to_vec())
            .collect(),
        Op::Replace(a, b) => m
            .iter()
            .map(|r| r.iter().map(|&v| if v == a { b } else { v }).collect())
            .collect(),
    }
}

fn describe(op: &Op) -> String {
    match *op {
        Op::Rotate(d) => format!("Rotate the matrix {d} degrees clockwise."),
        Op::Transpose => "Transpose the matrix (row i becomes column i).".to_string(),
        Op::Mirror(true) => {
            "Mirror the matrix left to right (reverse the order of the columns).".to_string()
        }
        Op::Mirror(false) => {
            "Mirror the matrix top to bottom (reverse the order of the rows).".to_string()
        }
        Op::Remove(true, i) => format!("Remove row {i}."),
        Op::Remove(false, i) => format!("Remove column {i}."),
        Op::Crop((r0, r1), (c0, c1)) => {
            format!("Keep only rows {r0} to {r1} and columns {c0} to {c1} (both included).")
        }
        Op::Replace(a, b) => format!("Replace every {a} by {b}."),
    }
}

fn op_json(op: &Op) -> Value {
    match *op {
        Op::Rotate(d) => json!({"op": "rotate", "degrees": d}),
        Op::Transpose => json!({"op": "transpose"}),
        Op::Mirror(lr) => {
            json!({"op": "mirror", "axis": if lr { "left_right" } else { "top_bottom" }})
        }
        Op::Remove(row, i) => {
            json!({"op": if row { "remove_row" } else { "remove_col" }, "index": i})
        }
        Op::Crop(r, c) => json!({"op": "crop", "rows": [r.0, r.1], "cols": [c.0, c.1]}),
        Op::Replace(a, b) => json!({"op": "replace", "from": a, "to": b}),
    }
}

fn draw_op(rng: &mut ChaCha20Rng, p: &Params, m: &Matrix) -> Op {
    let (rows, cols) = (m.len(), m[0].len());
    loop {
        let op = match p.kinds[rng.random_range(0..p.kinds.len())] {
            Kind::Transpose => Op::Transpose,
            Kind::Mirror => Op::Mirror(rng.random_bool(0.5)),
            Kind::Rotate180 => Op::Rotate(180),
            Kind::Rotate => Op::Rotate(90 * rng.random_range(1..=3)),
            Kind::Remove => {
                let row = rng.random_bool(0.5);
                let n = if row { rows } else { cols };
                if n <= MIN_SIDE {
                    continue;
                }
                Op::Remove(row, rng.random_range(1..=n))
            }
            Kind::Crop => {
                if rows < CROP_FROM || cols < CROP_FROM {
                    continue;
                }
                // Keep at least MIN_SIDE rows and columns, and drop at least one of either.
                let r0 = rng.random_range(1..=rows + 1 - MIN_SIDE);
                let r1 = rng.random_range(r0 + MIN_SIDE - 1..=rows);
                let c0 = rng.random_range(1..=cols + 1 - MIN_SIDE);
                let c1 = rng.random_range(c0 + MIN_SIDE - 1..=cols);
                if r1 - r0 + 1 == rows && c1 - c0 + 1 == cols {
                    continue;
                }
                Op::Crop((r0, r1), (c0, c1))
            }
            Kind::Replace => {
                // Replace a value that occurs.
                let a = m[rng.random_range(0..rows)][rng.random_range(0..cols)];
                let b = rng.random_range(0..=p.value_max);
                if a == b {
                    continue;
                }
                Op::Replace(a, b)
            }
        };
        return op;
    }
}

impl Family for ManipulateMatrix {
    fn name(&self) -> &'static str {
        "manipulate_matrix"
    }
    fn category(&self) -> Category {
        Category::Algorithmic
    }
    fn description(&self) -> &'static str {
        "Apply a sequence of rotations, mirrors, removals, crops and replacements to a matrix"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> Value {
        let p = &PARAMS[level.idx()];
        let kinds: Vec<&str> = p
            .kinds
            .iter()
            .map(|k| match k {
                Kind::Transpose => "transpose",
                Kind::Mirror => "mirror",
                Kind::Rotate180 => "rotate_180",
                Kind::Rotate => "rotate",
                Kind::Remove => "remove_row_or_col",
                Kind::Crop => "crop",
                Kind::Replace => "replace",
            })
            .collect();
        json!({
            "operations_min": p.ops.0, "operations_max": p.ops.1,
            "side_min": p.rows.0, "side_max": p.rows.1, "square": p.square,
            "value_min": 0, "value_max": p.value_max, "kinds": kinds,
        })
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let p = &PARAMS[level.idx()];
        let rows = rng.random_range(p.rows.0..=p.rows.1);
        let cols = if p.square {
            rows
        } else {
            rng.random_range(p.rows.0..=p.rows.1)
        };
        let m: Matrix = (0..rows)
            .map(|_| {
                (0..cols)
                    .map(|_| rng.random_range(0..=p.value_max))
                    .collect()
            })
            .collect();
        let n = rng.random_range(p.ops.0..=p.ops.1);
        let mut cur = m.clone();
        let mut ops = Vec::with_capacity(n);
        for _ in 0..n {
            let op = draw_op(rng, p, &cur);
            cur = apply(&cur, &op);
            ops.push(op);
        }
        let steps: String = ops
            .iter()
            .enumerate()
            .map(|(i, op)| format!("{}. {}\n", i + 1, describe(op)))
            .collect();
        // Results have at least MIN_SIDE rows and columns (removals and crops stop
        // there, and every level starts at least that large), so a 2x2 example is never
        // the answer, whatever the operations.
        let example = "1 2\n3 4";
        Generated {
            body: Body::new()
                .text(format!(
                    "Start from this {rows}x{cols} matrix and apply the operations below in order \
                     (rows and columns are numbered from 1, top to bottom and left to right, in \
                     the matrix as it is at that step)."
                ))
                .data(grid(&m))
                .data(steps.trim_end().to_string())
                .text("Write the final matrix, one row per line, numbers separated by spaces."),
            format: AnswerFormat::with_example("as the final matrix", example),
            answer: grid(&cur),
            metadata: fields([
                ("matrix", json!(m)),
                (
                    "operations",
                    Value::Array(ops.iter().map(op_json).collect()),
                ),
            ]),
        }
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let Some(gold) = parse::int_grid(&instance.answer) else {
            return 0.0;
        };
        let Some(want) = gold
            .iter()
            .map(|r| r.iter().map(|&v| i64::try_from(v).ok()).collect())
            .collect::<Option<Vec<Vec<i64>>>>()
        else {
            return 0.0;
        };
        if int_grid_is(answer, &want) { 1.0 } else { 0.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_never_smaller_than_the_example() {
        assert!(PARAMS.iter().all(|p| p.rows.0 >= MIN_SIDE));
        const { assert!(MIN_SIDE > 2) };
    }

    #[test]
    fn operations_by_hand() {
        let m = vec![vec![1, 2, 3], vec![4, 5, 6]];
        assert_eq!(
            apply(&m, &Op::Rotate(90)),
            vec![vec![4, 1], vec![5, 2], vec![6, 3]]
        );
        assert_eq!(
            apply(&m, &Op::Rotate(180)),
            vec![vec![6, 5, 4], vec![3, 2, 1]]
        );
        assert_eq!(
            apply(&m, &Op::Rotate(270)),
            vec![vec![3, 6], vec![2, 5], vec![1, 4]]
        );
        assert_eq!(
            apply(&m, &Op::Remove(false, 2)),
            vec![vec![1, 3], vec![4, 6]]
        );
        assert_eq!(apply(&m, &Op::Remove(true, 1)), vec![vec![4, 5, 6]]);
        assert_eq!(
            apply(&m, &Op::Crop((1, 2), (2, 3))),
            vec![vec![2, 3], vec![5, 6]]
        );
        assert_eq!(
            apply(&m, &Op::Replace(5, 0)),
            vec![vec![1, 2, 3], vec![4, 0, 6]]
        );
    }
}
