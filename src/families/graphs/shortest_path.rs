//! `shortest_path`: a shortest route through a grid from `*` to `#`, avoiding `X`.
//!
//! The grid uses `*` (start), `#` (destination), `O` (open) and `X` (blocked); moves are
//! one cell `up`, `down`, `left` or `right`. The answer is the sequence of moves,
//! separated by spaces and/or commas, or the single word `infeasible` when no route
//! exists. Moves and `infeasible` are case-insensitive; single letters `U D L R` are
//! accepted for the moves.
//!
//! Verifier: simulation. The route must stay inside the grid, never enter an `X`,
//! end on `#`, and be exactly as long as the shortest route (computed by BFS from the
//! stored grid), so every shortest route scores 1 and longer ones score 0.
//!
//! Levels (rows and columns, probability of a blocked cell, probability that the
//! instance is infeasible): 1: 3..=4, 0.15, 0.1 · 2: 4..=5, 0.25, 0.15 ·
//! 3: 5..=7, 0.3, 0.2 · 4: 7..=9, 0.3, 0.2 · 5: 9..=12, 0.33, 0.2.

use std::collections::VecDeque;

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct ShortestPath;

/// (min side, max side, p blocked, p infeasible) per level.
const PARAMS: [(usize, usize, f64, f64); 5] = [
    (3, 4, 0.15, 0.1),
    (4, 5, 0.25, 0.15),
    (5, 7, 0.3, 0.2),
    (7, 9, 0.3, 0.2),
    (9, 12, 0.33, 0.2),
];

/// (row delta, column delta, name) of each move, in BFS order.
const MOVES: [(isize, isize, &str); 4] = [
    (-1, 0, "up"),
    (1, 0, "down"),
    (0, -1, "left"),
    (0, 1, "right"),
];

fn find(g: &[Vec<u8>], ch: u8) -> Option<(usize, usize)> {
    let mut found = None;
    for (r, row) in g.iter().enumerate() {
        for (c, &v) in row.iter().enumerate() {
            if v == ch {
                if found.is_some() {
                    return None;
                }
                found = Some((r, c));
            }
        }
    }
    found
}

fn step(g: &[Vec<u8>], (r, c): (usize, usize), (dr, dc): (isize, isize)) -> Option<(usize, usize)> {
    let nr = r.checked_add_signed(dr)?;
    let nc = c.checked_add_signed(dc)?;
    let cell = *g.get(nr)?.get(nc)?;
    (cell != b'X').then_some((nr, nc))
}

/// BFS from `*`: the move names of one shortest route to `#`, or `None` when `#` is
/// unreachable. `Err` when the grid lacks exactly one `*` and one `#`.
fn bfs(g: &[Vec<u8>]) -> Result<Option<Vec<&'static str>>, ()> {
    let start = find(g, b'*').ok_or(())?;
    let goal = find(g, b'#').ok_or(())?;
    let cols = g.first().map_or(0, |r| r.len());
    let mut prev: Vec<Option<(usize, usize, usize)>> = vec![None; g.len() * cols];
    let mut seen = vec![false; g.len() * cols];
    seen[start.0 * cols + start.1] = true;
    let mut q = VecDeque::from([start]);
    while let Some(p) = q.pop_front() {
        if p == goal {
            let mut path = Vec::new();
            let mut cur = p;
            while let Some((pr, pc, m)) = prev[cur.0 * cols + cur.1] {
                path.push(MOVES[m].2);
                cur = (pr, pc);
            }
            path.reverse();
            return Ok(Some(path));
        }
        for (m, &(dr, dc, _)) in MOVES.iter().enumerate() {
            if let Some(n) = step(g, p, (dr, dc)) {
                if !seen[n.0 * cols + n.1] {
                    seen[n.0 * cols + n.1] = true;
                    prev[n.0 * cols + n.1] = Some((p.0, p.1, m));
                    q.push_back(n);
                }
            }
        }
    }
    Ok(None)
}

fn parse_move(s: &str) -> Option<(isize, isize)> {
    let l = s.to_ascii_lowercase();
    MOVES
        .iter()
        .find(|(_, _, name)| *name == l || (l.len() == 1 && name.as_bytes()[0] == l.as_bytes()[0]))
        .map(|&(dr, dc, _)| (dr, dc))
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Text(
                "Grid legend: * is the start, # the target, O an open cell and X a blocked cell.",
            ),
            Piece::Data("{grid|grid}"),
            Piece::Text(
                "Moving one cell at a time up, down, left or right (never diagonally, never into an X cell and never off the grid), find a shortest sequence of moves from * to #. Write the moves in order, separated by spaces, each one of up, down, left, right; if # cannot be reached, answer infeasible.",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Data("{grid|labeled}"),
            Piece::Text(
                "Above is a grid, row by row: O is open, X is blocked, * is where you start and # is the goal. A move goes one cell up, down, left or right, never diagonally, never into an X cell and never off the grid. Give a shortest route from * to # as moves separated by spaces, each up, down, left or right, or the word infeasible if # cannot be reached.",
            ),
        ],
    ),
];

impl Family for ShortestPath {
    fn name(&self) -> &'static str {
        "shortest_path"
    }
    fn category(&self) -> Category {
        Category::Graphs
    }
    fn description(&self) -> &'static str {
        "Shortest route through a grid from * to # avoiding X (or infeasible)"
    }
    fn version(&self) -> u32 {
        // 2: the canonical body no longer ends "Answer with the moves in order, ...,
        // each one of up, down, left, right." (an instruction of its own beside the
        // answer rule; Qwen2.5-Coder-0.5B answered that vocabulary, `up, down, left,
        // right`, on most zero-shot items); the phrase says it.
        2
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi, pb, pi) = PARAMS[level.idx()];
        json!({"side_min": lo, "side_max": hi, "p_blocked": pb, "p_infeasible": pi})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi, pb, pi) = PARAMS[level.idx()];
        let want_feasible = !rng.random_bool(pi);
        let (grid, path) = loop {
            let rows = rng.random_range(lo..=hi);
            let cols = rng.random_range(lo..=hi);
            let mut g: Vec<Vec<u8>> = (0..rows)
                .map(|_| {
                    (0..cols)
                        .map(|_| if rng.random_bool(pb) { b'X' } else { b'O' })
                        .collect()
                })
                .collect();
            let s = rng.random_range(0..rows * cols);
            let mut t = rng.random_range(0..rows * cols - 1);
            if t >= s {
                t += 1;
            }
            g[s / cols][s % cols] = b'*';
            g[t / cols][t % cols] = b'#';
            if let Ok(path) = bfs(&g) {
                if path.is_some() == want_feasible {
                    break (g, path);
                }
            }
        };
        let rows: Vec<String> = grid
            .iter()
            .map(|r| String::from_utf8_lossy(r).into_owned())
            .collect();
        let gold = path.map_or_else(|| "infeasible".to_string(), |p| p.join(" "));
        Generated {
            body: Body::new()
                .text(
                    "Find a shortest path from * to # in this grid. O cells are open, X cells \
                     are blocked, and each move goes one cell up, down, left or right (no \
                     diagonal moves, never into an X cell, never outside the grid).",
                )
                .data(rows.join("\n")),
            // Three moves that end one step below the start, which one move reaches.
            format: AnswerFormat::with_example(
                "as the moves of one shortest path in order, separated by spaces, each up, \
                 down, left or right (or the single word infeasible if # cannot be reached)",
                "right down left",
            ),
            answer: gold,
            metadata: fields([("grid", Value::from(rows))]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let Some(g) = Meta::of(instance).char_grid("grid") else {
            return 0.0;
        };
        let Ok(best) = bfs(&g) else {
            return 0.0;
        };
        let Some(best) = best else {
            return if parse::eq_ci(answer, "infeasible") {
                1.0
            } else {
                0.0
            };
        };
        let Some(items) = parse::list_items(answer) else {
            return 0.0;
        };
        if items.len() != best.len() {
            return 0.0;
        }
        let (Some(mut pos), Some(goal)) = (find(&g, b'*'), find(&g, b'#')) else {
            return 0.0;
        };
        for item in items {
            let Some(d) = parse_move(item) else {
                return 0.0;
            };
            match step(&g, pos, d) {
                Some(p) => pos = p,
                None => return 0.0,
            }
        }
        if pos == goal { 1.0 } else { 0.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::bfs;

    #[test]
    fn routes() {
        let g: Vec<Vec<u8>> = ["*OX", "XOO", "XX#"]
            .iter()
            .map(|r| r.as_bytes().to_vec())
            .collect();
        assert_eq!(
            bfs(&g).unwrap().unwrap(),
            vec!["right", "down", "right", "down"]
        );
        let g: Vec<Vec<u8>> = ["*X", "X#"].iter().map(|r| r.as_bytes().to_vec()).collect();
        assert_eq!(bfs(&g).unwrap(), None);
        let g: Vec<Vec<u8>> = ["OO", "X#"].iter().map(|r| r.as_bytes().to_vec()).collect();
        assert!(bfs(&g).is_err());
    }
}
