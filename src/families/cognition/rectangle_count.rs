//! `rectangle_count`: count the complete rectangles drawn in an ASCII grid.
//!
//! Rectangles are outlines: `+` at the corners, `-` along horizontal sides, `|` along
//! vertical sides, on a background of `.`. Outlines never touch or cross: every outline
//! cell keeps at least one background cell (8-neighbourhood) between itself and any
//! other outline, so rectangles may be nested but no extra rectangle can be formed
//! from pieces of two drawn ones, and the count is unambiguous. From level 3 on the
//! grid may also hold *broken* rectangles — an outline with one non-corner side cell
//! replaced by background — which do not count; the question says so.
//! Levels (width × height, rectangles placed, broken outlines, side length range):
//! 1: 12×6, 1..=2, 0, 2..=5 · 2: 20×8, 2..=4, 0, 2..=7 · 3: 28×12, 3..=6, 0..=1, 2..=10 ·
//! 4: 40×16, 5..=9, 1..=2, 2..=14 · 5: 56×24, 8..=14, 2..=3, 2..=20.
//! Shapes are placed by rejection sampling (at most 300 tries each); a shape that does
//! not fit is skipped, and the gold answer is the number of complete rectangles drawn.
//! Metadata: `grid` (rows as strings), `rectangles` and `broken` (each
//! `[top, left, bottom, right]`, inclusive). Verifier: one integer (`parse::int`).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::fields;
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct RectangleCount;

struct Params {
    w: usize,
    h: usize,
    rects: (usize, usize),
    broken: (usize, usize),
    max_side: usize,
}

const PARAMS: [Params; 5] = [
    Params {
        w: 12,
        h: 6,
        rects: (1, 2),
        broken: (0, 0),
        max_side: 5,
    },
    Params {
        w: 20,
        h: 8,
        rects: (2, 4),
        broken: (0, 0),
        max_side: 7,
    },
    Params {
        w: 28,
        h: 12,
        rects: (3, 6),
        broken: (0, 1),
        max_side: 10,
    },
    Params {
        w: 40,
        h: 16,
        rects: (5, 9),
        broken: (1, 2),
        max_side: 14,
    },
    Params {
        w: 56,
        h: 24,
        rects: (8, 14),
        broken: (2, 3),
        max_side: 20,
    },
];

const TRIES: usize = 300;

struct Canvas {
    w: usize,
    h: usize,
    cells: Vec<u8>,
    /// Outline cells and their 8-neighbours: no new outline cell may land here.
    blocked: Vec<bool>,
}

impl Canvas {
    fn outline(t: usize, l: usize, b: usize, r: usize) -> impl Iterator<Item = (usize, usize)> {
        let top_bottom = (l..=r).flat_map(move |x| [(t, x), (b, x)]);
        let sides = (t + 1..b).flat_map(move |y| [(y, l), (y, r)]);
        top_bottom.chain(sides)
    }

    /// Try to place a rectangle with sides in `2..=max_side`; returns its corners.
    fn place(&mut self, rng: &mut ChaCha20Rng, max_side: usize) -> Option<[usize; 4]> {
        for _ in 0..TRIES {
            let rw = rng.random_range(2..=max_side.min(self.w));
            let rh = rng.random_range(2..=max_side.min(self.h));
            let l = rng.random_range(0..=self.w - rw);
            let t = rng.random_range(0..=self.h - rh);
            let (b, r) = (t + rh - 1, l + rw - 1);
            if Self::outline(t, l, b, r).any(|(y, x)| self.blocked[y * self.w + x]) {
                continue;
            }
            for (y, x) in Self::outline(t, l, b, r) {
                let corner = (y == t || y == b) && (x == l || x == r);
                self.cells[y * self.w + x] = if corner {
                    b'+'
                } else if y == t || y == b {
                    b'-'
                } else {
                    b'|'
                };
                for dy in y.saturating_sub(1)..=(y + 1).min(self.h - 1) {
                    for dx in x.saturating_sub(1)..=(x + 1).min(self.w - 1) {
                        self.blocked[dy * self.w + dx] = true;
                    }
                }
            }
            return Some([t, l, b, r]);
        }
        None
    }
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[
            Piece::Data("{grid|lines}"),
            Piece::Text(
                "The picture above ({grid|cols} columns, {grid|len} rows) is made of rectangle outlines: '+' at the corners, '-' on horizontal sides, '|' on vertical sides, and '.' for empty space. Outlines never touch or cross, though one rectangle can be drawn inside another.{#params.broken_max} An outline with a gap (a missing edge cell) is not a complete rectangle and is not counted.{/} How many complete rectangles are there?",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Text(
                "Count the complete rectangles in this ASCII drawing. Corners are '+', horizontal edges '-', vertical edges '|', and '.' is blank; no two outlines touch or cross, but rectangles may be nested.{#params.broken_max} A shape whose outline is missing an edge cell does not count.{/}",
            ),
            Piece::Data("{grid|labeled}"),
        ],
    ),
];

impl Family for RectangleCount {
    fn name(&self) -> &'static str {
        "rectangle_count"
    }
    fn category(&self) -> Category {
        Category::Cognition
    }
    fn description(&self) -> &'static str {
        "Count the complete rectangles drawn in an ASCII grid"
    }
    fn version(&self) -> u32 {
        // 2: the format example no longer depends on the gold answer (one more than the outlines drawn).
        2
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let p = &PARAMS[level.idx()];
        json!({
            "width": p.w, "height": p.h,
            "rectangles_min": p.rects.0, "rectangles_max": p.rects.1,
            "broken_min": p.broken.0, "broken_max": p.broken.1,
            "side_min": 2, "side_max": p.max_side,
        })
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let p = &PARAMS[level.idx()];
        let mut c = Canvas {
            w: p.w,
            h: p.h,
            cells: vec![b'.'; p.w * p.h],
            blocked: vec![false; p.w * p.h],
        };
        let n_rects = rng.random_range(p.rects.0..=p.rects.1);
        let n_broken = rng.random_range(p.broken.0..=p.broken.1);
        // Draw the kinds in a random order so broken shapes are not always placed last.
        let mut kinds: Vec<bool> = (0..n_rects + n_broken).map(|i| i >= n_rects).collect();
        for i in (1..kinds.len()).rev() {
            kinds.swap(i, rng.random_range(0..=i));
        }
        let (mut rects, mut broken) = (Vec::new(), Vec::new());
        for is_broken in kinds {
            // A broken outline needs a side with a non-corner cell.
            let side = if is_broken {
                p.max_side.max(3)
            } else {
                p.max_side
            };
            let Some([t, l, b, r]) = c.place(rng, side) else {
                continue;
            };
            if !is_broken {
                rects.push([t, l, b, r]);
                continue;
            }
            let mut gaps: Vec<(usize, usize)> = Vec::new();
            if r - l >= 2 {
                gaps.push((t, rng.random_range(l + 1..r)));
                gaps.push((b, rng.random_range(l + 1..r)));
            }
            if b - t >= 2 {
                gaps.push((rng.random_range(t + 1..b), l));
                gaps.push((rng.random_range(t + 1..b), r));
            }
            if gaps.is_empty() {
                // A 2×2 outline cannot be broken without losing a corner: keep it whole.
                rects.push([t, l, b, r]);
                continue;
            }
            let (y, x) = gaps[rng.random_range(0..gaps.len())];
            c.cells[y * c.w + x] = b'.';
            broken.push([t, l, b, r]);
        }
        let grid: Vec<String> = c
            .cells
            .chunks(c.w)
            .map(|row| String::from_utf8_lossy(row).into_owned())
            .collect();
        let count = rects.len();
        let broken_note = if p.broken.1 > 0 {
            " A shape whose outline has a gap (a missing edge cell) is not a complete rectangle \
             and does not count."
        } else {
            ""
        };
        // Every drawn outline, complete or broken, has four `+` corners, so one more
        // than a quarter of the `+` signs in the grid is never the answer.
        let corners = c.cells.iter().filter(|&&b| b == b'+').count();
        let example = (corners / 4 + 1).to_string();
        Generated {
            body: Body::new()
                .text(format!(
                    "The grid below ({} columns × {} rows) shows rectangle outlines drawn with '+' \
                     at the corners, '-' along horizontal sides and '|' along vertical sides; '.' is \
                     empty space. Outlines never touch or cross each other, but one rectangle may be \
                     drawn inside another.{broken_note} How many complete rectangles are drawn?",
                    p.w,
                    p.h,
                ))
                .data(grid.join("\n")),
            format: AnswerFormat::with_example("as a single integer", example),
            answer: count.to_string(),
            metadata: fields([
                    ("grid", Value::from(grid)),
                    ("rectangles", Value::from(rects)),
                    ("broken", Value::from(broken)),
                ],
            ),
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
