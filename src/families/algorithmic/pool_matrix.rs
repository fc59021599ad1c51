//! `pool_matrix`: max or average pooling of an integer matrix.
//!
//! A `k`×`k` window slides over the matrix with stride `s` (windows that would leave
//! the matrix are dropped), so the output has `(rows - k) / s + 1` rows and
//! `(cols - k) / s + 1` columns. Max pooling keeps the largest value of each window;
//! average pooling its mean. Average pooling uses only `k` = 2 or 4, so every mean is
//! an exact decimal (a multiple of 1/4 or 1/16) and no rounding rule is needed.
//!
//! Levels (rows and columns, k, stride, modes, values):
//! 1: 4×4, 2, 2, max, 0..=9 · 2: 4×4 or 6×6, 2, 2, max/average, 0..=9 ·
//! 3: 6..=8 square, 2..=3, = k, max/average, 0..=20 ·
//! 4: 6..=9 by 6..=9, 2..=3, 1..=k, max/average, -20..=20 ·
//! 5: 8..=12 by 8..=12, 2..=4, 1..=k, max/average, -99..=99.
//!
//! Gold: the pooled matrix, one row per line, cells separated by spaces, averages in
//! canonical decimal form (`2.25`, `-3`, `0.5`). Verifier: the same shape (rows as
//! lines, or `[[..], [..]]`; cells separated by whitespace and/or commas), each cell an
//! exact decimal equal to the window's value (`2.50` = `2.5`, `.5`; no rounding).
//! The format example has a different shape from the output, so it is never accepted.
//! Metadata: `matrix`, `kernel`, `stride`, `mode` (`max` or `average`).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::decimal::{Decimal, decimal_text};
use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::text::grid;
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct PoolMatrix;

struct Params {
    rows: (usize, usize),
    /// Square matrices only.
    square: bool,
    kernel: (usize, usize),
    /// Stride equals the kernel size; otherwise drawn from 1..=k.
    stride_is_kernel: bool,
    average: bool,
    values: (i64, i64),
}

const PARAMS: [Params; 5] = [
    Params {
        rows: (4, 4),
        square: true,
        kernel: (2, 2),
        stride_is_kernel: true,
        average: false,
        values: (0, 9),
    },
    Params {
        rows: (4, 6),
        square: true,
        kernel: (2, 2),
        stride_is_kernel: true,
        average: true,
        values: (0, 9),
    },
    Params {
        rows: (6, 8),
        square: true,
        kernel: (2, 3),
        stride_is_kernel: true,
        average: true,
        values: (0, 20),
    },
    Params {
        rows: (6, 9),
        square: false,
        kernel: (2, 3),
        stride_is_kernel: false,
        average: true,
        values: (-20, 20),
    },
    Params {
        rows: (8, 12),
        square: false,
        kernel: (2, 4),
        stride_is_kernel: false,
        average: true,
        values: (-99, 99),
    },
];

/// Largest side accepted from metadata.
const MAX_SIDE: usize = 64;

/// One pooled value as a fraction `num / den` (`den` = 1 for max).
fn pool(m: &[Vec<i64>], k: usize, s: usize, average: bool) -> Vec<Vec<(i64, i64)>> {
    let out_r = (m.len() - k) / s + 1;
    let out_c = (m[0].len() - k) / s + 1;
    (0..out_r)
        .map(|i| {
            (0..out_c)
                .map(|j| {
                    let cells = (0..k).flat_map(|a| (0..k).map(move |b| (a, b)));
                    let vals = cells.map(|(a, b)| m[i * s + a][j * s + b]);
                    if average {
                        (vals.sum(), (k * k) as i64)
                    } else {
                        (vals.max().expect("k >= 1"), 1)
                    }
                })
                .collect()
        })
        .collect()
}

/// Canonical decimal text of `num / den` for `den` in {1, 4, 16}.
fn cell_text(num: i64, den: i64) -> String {
    match den {
        1 => num.to_string(),
        4 => decimal_text(i128::from(num) * 25, 2),
        _ => decimal_text(i128::from(num) * 625, 4),
    }
}

impl Family for PoolMatrix {
    fn name(&self) -> &'static str {
        "pool_matrix"
    }
    fn category(&self) -> Category {
        Category::Algorithmic
    }
    fn description(&self) -> &'static str {
        "Max or average pooling of an integer matrix (exact decimals)"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> Value {
        let p = &PARAMS[level.idx()];
        let modes: &[&str] = if p.average {
            &["max", "average"]
        } else {
            &["max"]
        };
        json!({
            "side_min": p.rows.0, "side_max": p.rows.1, "square": p.square,
            "kernel_min": p.kernel.0, "kernel_max": p.kernel.1,
            "stride": if p.stride_is_kernel { "kernel" } else { "1..=kernel" },
            "modes": modes, "average_kernels": [2, 4],
            "value_min": p.values.0, "value_max": p.values.1,
        })
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let p = &PARAMS[level.idx()];
        let side = |rng: &mut ChaCha20Rng| {
            if level.get() == 2 {
                if rng.random_bool(0.5) { 4 } else { 6 }
            } else {
                rng.random_range(p.rows.0..=p.rows.1)
            }
        };
        let rows = side(rng);
        let cols = if p.square { rows } else { side(rng) };
        let average = p.average && rng.random_bool(0.5);
        let k = if average {
            // Only kernels whose mean is an exact decimal: 2, or 4 where allowed.
            if p.kernel.1 >= 4 && rng.random_bool(0.3) {
                4
            } else {
                2
            }
        } else {
            rng.random_range(p.kernel.0..=p.kernel.1)
        };
        let s = if p.stride_is_kernel {
            k
        } else {
            rng.random_range(1..=k)
        };
        let m: Vec<Vec<i64>> = (0..rows)
            .map(|_| {
                (0..cols)
                    .map(|_| rng.random_range(p.values.0..=p.values.1))
                    .collect()
            })
            .collect();
        let out = pool(&m, k, s, average);
        let gold: Vec<Vec<String>> = out
            .iter()
            .map(|r| r.iter().map(|&(n, d)| cell_text(n, d)).collect())
            .collect();
        let example = if out.len() == 2 && out[0].len() == 2 {
            "1 2 3\n4 5 6"
        } else {
            "1 2\n3 4"
        };
        let mode = if average { "average" } else { "max" };
        let what = if average {
            "the mean (average) of the window's values, written as an exact decimal"
        } else {
            "the largest value in the window"
        };
        Generated {
            body: Body::new()
                .text(format!(
                    "Apply {mode} pooling to this {rows}x{cols} matrix with a {k}x{k} window and \
                     stride {s}: slide the window from the top-left corner {s} cell(s) at a time \
                     to the right and down, keep only positions where the whole window fits, and \
                     replace each window by {what}."
                ))
                .data(grid(&m))
                .text("Write the pooled matrix, one row per line, values separated by spaces."),
            format: AnswerFormat::with_example("as the pooled matrix", example),
            answer: grid(&gold),
            metadata: fields([
                ("matrix", json!(m)),
                ("kernel", Value::from(k)),
                ("stride", Value::from(s)),
                ("mode", Value::from(mode)),
            ]),
        }
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let meta = Meta::of(instance);
        let (Some(m), Some(k), Some(s), Some(mode)) = (
            meta.int_grid("matrix"),
            meta.usize("kernel", MAX_SIDE),
            meta.usize("stride", MAX_SIDE),
            meta.str("mode"),
        ) else {
            return 0.0;
        };
        let average = match mode {
            "max" => false,
            "average" => true,
            _ => return 0.0,
        };
        if k == 0 || s == 0 || k > m.len() || k > m[0].len() {
            return 0.0;
        }
        let want = pool(&m, k, s, average);
        let Some(rows) = parse::grid(answer) else {
            return 0.0;
        };
        let ok = rows.len() == want.len()
            && rows.iter().zip(&want).all(|(r, w)| {
                r.len() == w.len()
                    && r.iter().zip(w).all(|(cell, &(n, d))| {
                        Decimal::parse(cell)
                            .is_some_and(|x| x.equals_fraction(i128::from(n), i128::from(d)))
                    })
            });
        if ok { 1.0 } else { 0.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooling_by_hand() {
        let m = vec![
            vec![1, 2, 3, 4],
            vec![5, 6, 7, 8],
            vec![9, 10, 11, 12],
            vec![13, 14, 15, 16],
        ];
        assert_eq!(
            pool(&m, 2, 2, false),
            vec![vec![(6, 1), (8, 1)], vec![(14, 1), (16, 1)]]
        );
        let avg = pool(&m, 3, 1, true);
        assert_eq!(avg.len(), 2);
        assert_eq!(avg[0][0], (54, 9));
        assert_eq!(cell_text(9, 4), "2.25");
        assert_eq!(cell_text(-8, 4), "-2");
        assert_eq!(cell_text(1, 16), "0.0625");
    }
}
