//! `sokoban`: push every box onto a goal square.
//!
//! The player walks up, down, left or right; walking into a box pushes it one square
//! if the square behind it is free floor (not a wall, not another box). A box can never
//! be pulled. The puzzle is solved when every box stands on a goal.
//!
//! Generation (reverse play): a walled room with random inner walls (its floor kept
//! connected), goals on random floor squares with a box on each, the player on another
//! square; then a random walk in which the player may *pull* the box behind it. Reversed,
//! that walk is a forward solution, so every puzzle is solvable. The solution is then
//! shortened by cutting every loop (a state visited twice) and by stopping at the move
//! that puts the last box on its goal (the reverse walk may wander on after that;
//! version 1 kept those moves), and the puzzle is kept only if every box starts off
//! its goal, the shortened solution pushes at least the level's minimum number of
//! times, and it fits the move limit stated in the question.
//!
//! Levels (boxes, room interior rows × columns, inner walls, walk length, minimum
//! pushes, most moves accepted):
//! 1: 1, 3..=4 × 4, 0, 10..=20, 1, 20 · 2: 1, 4..=5 × 5, 1..=2, 20..=40, 2, 40 ·
//! 3: 2, 5 × 5..=6, 2..=3, 40..=80, 4, 80 · 4: 2, 5..=6 × 6..=7, 3..=5, 60..=120, 6,
//! 120 · 5: 3, 6..=7 × 7..=8, 4..=6, 100..=200, 8, 200.
//!
//! Board text: `#` wall, `_` floor, `.` goal, `$` box, `*` box on a goal, `@` player,
//! `+` player on a goal. Gold: the shortened solution, `R U U L` (letters separated by
//! spaces). Verifier (simulation; any solution scores 1): moves `U D L R` (ASCII case
//! ignored), separated by spaces and/or commas or written together (`RUUL`), or the
//! words `up down left right`; every move must be legal (no walking into a wall, no
//! pushing a box into a wall or another box), at most the stated number of moves, and
//! every box on a goal at the end. The format example is a two-move sequence checked at
//! generation not to solve the puzzle. Metadata: `board` (rows of the board text),
//! `max_moves`.

use rand::Rng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};
use std::collections::HashMap;

use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::{AnswerFormat, Body, Wording};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct Sokoban;

struct Params {
    boxes: usize,
    rows: (usize, usize),
    cols: (usize, usize),
    walls: (usize, usize),
    walk: (usize, usize),
    min_pushes: usize,
    max_moves: usize,
}

const PARAMS: [Params; 5] = [
    Params {
        boxes: 1,
        rows: (3, 4),
        cols: (4, 4),
        walls: (0, 0),
        walk: (10, 20),
        min_pushes: 1,
        max_moves: 20,
    },
    Params {
        boxes: 1,
        rows: (4, 5),
        cols: (5, 5),
        walls: (1, 2),
        walk: (20, 40),
        min_pushes: 2,
        max_moves: 40,
    },
    Params {
        boxes: 2,
        rows: (5, 5),
        cols: (5, 6),
        walls: (2, 3),
        walk: (40, 80),
        min_pushes: 4,
        max_moves: 80,
    },
    Params {
        boxes: 2,
        rows: (5, 6),
        cols: (6, 7),
        walls: (3, 5),
        walk: (60, 120),
        min_pushes: 6,
        max_moves: 120,
    },
    Params {
        boxes: 3,
        rows: (6, 7),
        cols: (7, 8),
        walls: (4, 6),
        walk: (100, 200),
        min_pushes: 8,
        max_moves: 200,
    },
];

/// Largest board side accepted from metadata.
const MAX_SIDE: usize = 64;

/// Up, down, left, right as (row, column) steps, with their letters.
const DIRS: [(isize, isize, char); 4] = [(-1, 0, 'U'), (1, 0, 'D'), (0, -1, 'L'), (0, 1, 'R')];

/// A board: walls and goals are fixed; boxes and the player move.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Board {
    w: usize,
    wall: Vec<bool>,
    goal: Vec<bool>,
    boxes: Vec<bool>,
    player: usize,
}

impl Board {
    fn step(&self, at: usize, d: usize) -> Option<usize> {
        let (r, c) = ((at / self.w) as isize, (at % self.w) as isize);
        let (nr, nc) = (r + DIRS[d].0, c + DIRS[d].1);
        let h = (self.wall.len() / self.w) as isize;
        if nr < 0 || nc < 0 || nr >= h || nc >= self.w as isize {
            return None;
        }
        Some(nr as usize * self.w + nc as usize)
    }

    /// Forward move in direction `d`: `Some(pushed)` when legal.
    fn push_move(&mut self, d: usize) -> Option<bool> {
        let to = self.step(self.player, d)?;
        if self.wall[to] {
            return None;
        }
        if self.boxes[to] {
            let beyond = self.step(to, d)?;
            if self.wall[beyond] || self.boxes[beyond] {
                return None;
            }
            self.boxes[to] = false;
            self.boxes[beyond] = true;
            self.player = to;
            return Some(true);
        }
        self.player = to;
        Some(false)
    }

    fn solved(&self) -> bool {
        self.boxes.iter().zip(&self.goal).all(|(&b, &g)| !b || g)
    }

    fn text(&self) -> Vec<String> {
        self.wall
            .chunks(self.w)
            .enumerate()
            .map(|(r, row)| {
                (0..row.len())
                    .map(|c| {
                        let i = r * self.w + c;
                        match (self.wall[i], self.boxes[i], self.goal[i], self.player == i) {
                            (true, ..) => '#',
                            (_, true, true, _) => '*',
                            (_, true, false, _) => '$',
                            (_, _, true, true) => '+',
                            (_, _, false, true) => '@',
                            (_, _, true, false) => '.',
                            _ => '_',
                        }
                    })
                    .collect()
            })
            .collect()
    }

    fn parse(rows: &[&str]) -> Option<Board> {
        let h = rows.len();
        let w = rows.first()?.len();
        if h < 3 || w < 3 || h > MAX_SIDE || w > MAX_SIDE || rows.iter().any(|r| r.len() != w) {
            return None;
        }
        let n = h * w;
        let mut b = Board {
            w,
            wall: vec![false; n],
            goal: vec![false; n],
            boxes: vec![false; n],
            player: usize::MAX,
        };
        for (i, ch) in rows.iter().flat_map(|r| r.bytes()).enumerate() {
            match ch {
                b'#' => b.wall[i] = true,
                b'_' => {}
                b'.' => b.goal[i] = true,
                b'$' => b.boxes[i] = true,
                b'*' => (b.boxes[i], b.goal[i]) = (true, true),
                b'@' | b'+' => {
                    if b.player != usize::MAX {
                        return None;
                    }
                    b.player = i;
                    b.goal[i] = ch == b'+';
                }
                _ => return None,
            }
        }
        let boxes = b.boxes.iter().filter(|&&x| x).count();
        let goals = b.goal.iter().filter(|&&x| x).count();
        (b.player != usize::MAX && boxes > 0 && boxes == goals).then_some(b)
    }
}

/// Moves from an answer: letters `UDLR` (together or separated) or direction words.
fn parse_moves(answer: &str, limit: usize) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for tok in answer
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
    {
        let word = ["up", "down", "left", "right"]
            .iter()
            .position(|w| w.eq_ignore_ascii_case(tok));
        if let Some(d) = word {
            out.push(d);
        } else {
            for b in tok.bytes() {
                let d = match b.to_ascii_uppercase() {
                    b'U' => 0,
                    b'D' => 1,
                    b'L' => 2,
                    b'R' => 3,
                    _ => return None,
                };
                out.push(d);
            }
        }
        if out.len() > limit {
            return None;
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Play `moves` from `board`: `true` when all are legal and the puzzle ends solved.
fn plays_to_solution(board: &Board, moves: &[usize]) -> bool {
    let mut b = board.clone();
    moves.iter().all(|&d| b.push_move(d).is_some()) && b.solved()
}

fn opposite(d: usize) -> usize {
    d ^ 1
}

/// One attempt at a puzzle; `None` when it misses the level's requirements.
fn attempt(rng: &mut ChaCha20Rng, p: &Params) -> Option<(Board, Vec<usize>)> {
    let (ih, iw) = (
        rng.random_range(p.rows.0..=p.rows.1),
        rng.random_range(p.cols.0..=p.cols.1),
    );
    let (h, w) = (ih + 2, iw + 2);
    let n = h * w;
    let mut wall: Vec<bool> = (0..n)
        .map(|i| {
            let (r, c) = (i / w, i % w);
            r == 0 || c == 0 || r == h - 1 || c == w - 1
        })
        .collect();
    let inner: Vec<usize> = (0..n).filter(|&i| !wall[i]).collect();
    let k = rng.random_range(p.walls.0..=p.walls.1);
    for &i in inner.choose_multiple(rng, k) {
        wall[i] = true;
    }
    let floor: Vec<usize> = (0..n).filter(|&i| !wall[i]).collect();
    let mut board = Board {
        w,
        wall,
        goal: vec![false; n],
        boxes: vec![false; n],
        player: 0,
    };
    // The floor must be connected.
    let mut seen = vec![false; n];
    let mut stack = vec![floor[0]];
    seen[floor[0]] = true;
    while let Some(u) = stack.pop() {
        for d in 0..4 {
            if let Some(v) = board.step(u, d) {
                if !board.wall[v] && !seen[v] {
                    seen[v] = true;
                    stack.push(v);
                }
            }
        }
    }
    if floor.iter().any(|&i| !seen[i]) {
        return None;
    }
    let picks: Vec<usize> = floor.choose_multiple(rng, p.boxes + 1).copied().collect();
    for &g in &picks[..p.boxes] {
        board.goal[g] = true;
        board.boxes[g] = true;
    }
    board.player = picks[p.boxes];
    // Reverse play: the player steps to a free square, pulling the box behind it.
    let steps = rng.random_range(p.walk.0..=p.walk.1);
    let mut reverse: Vec<(usize, bool)> = Vec::with_capacity(steps);
    for _ in 0..steps {
        let d = rng.random_range(0..4);
        let Some(to) = board.step(board.player, d) else {
            continue;
        };
        if board.wall[to] || board.boxes[to] {
            continue;
        }
        let behind = board.step(board.player, opposite(d));
        let pull = behind.is_some_and(|b| board.boxes[b]) && rng.random_bool(0.7);
        if pull {
            let b = behind.expect("checked");
            board.boxes[b] = false;
            board.boxes[board.player] = true;
        }
        board.player = to;
        reverse.push((d, pull));
    }
    if (0..n).any(|i| board.boxes[i] && board.goal[i]) {
        return None;
    }
    // Forward solution: the reverse walk backwards, each step in the opposite direction.
    let forward: Vec<usize> = reverse.iter().rev().map(|&(d, _)| opposite(d)).collect();
    // Cut loops: whenever a state repeats, drop the moves in between.
    let start = board.clone();
    let mut cur = board;
    let mut seen: HashMap<(usize, Vec<bool>), usize> = HashMap::new();
    seen.insert((cur.player, cur.boxes.clone()), 0);
    let mut kept: Vec<(usize, bool)> = Vec::with_capacity(forward.len());
    for d in forward {
        let pushed = cur.push_move(d).expect("reverse play yields legal moves");
        kept.push((d, pushed));
        let key = (cur.player, cur.boxes.clone());
        if let Some(&j) = seen.get(&key) {
            kept.truncate(j);
            seen.retain(|_, &mut v| v <= j);
        } else {
            seen.insert(key, kept.len());
        }
    }
    debug_assert!(cur.solved());
    // Stop at the first move after which every box is on a goal.
    let mut replay = start.clone();
    if let Some(end) = kept.iter().position(|&(d, _)| {
        replay.push_move(d).expect("a legal shortened solution");
        replay.solved()
    }) {
        kept.truncate(end + 1);
    }
    let pushes = kept.iter().filter(|(_, p)| *p).count();
    if pushes < p.min_pushes || kept.len() > p.max_moves {
        return None;
    }
    Some((start, kept.into_iter().map(|(d, _)| d).collect()))
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Data("{board|lines}"),
            Piece::Text(
                "Push every box ($) onto a goal square (.) in no more than {max_moves} moves. Legend: # wall, _ floor, . goal, $ box, * box already on a goal, @ the player, + the player on a goal. Each move takes the player one square up (U), down (D), left (L) or right (R); moving into a box pushes it one square onward, which works only when that square is floor or a goal (not a wall and not another box). Boxes can never be pulled.",
            ),
            Piece::Text("Answer with the moves as the letters U, D, L, R, separated by spaces."),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Text("Sokoban, solve in at most {max_moves} moves:"),
            Piece::Data("{board|grid}"),
            Piece::Text(
                "Symbols: '#' wall, '_' floor, '.' goal, '$' box, '*' box on a goal, '@' player, '+' player on a goal. The player steps U (up), D (down), L (left) or R (right); stepping into a box pushes it one square in the same direction, if that square is floor or a goal. Boxes cannot be pulled. Get every box onto a goal and list the moves as letters U, D, L, R separated by spaces.",
            ),
        ],
    ),
];

impl Family for Sokoban {
    fn name(&self) -> &'static str {
        "sokoban"
    }
    fn category(&self) -> Category {
        Category::Games
    }
    fn description(&self) -> &'static str {
        "Push every box onto a goal (any legal solution within the move limit scores)"
    }
    fn version(&self) -> u32 {
        2
    }
    fn level_params(&self, level: Level) -> Value {
        let p = &PARAMS[level.idx()];
        json!({
            "boxes": p.boxes, "rows_min": p.rows.0, "rows_max": p.rows.1,
            "cols_min": p.cols.0, "cols_max": p.cols.1,
            "inner_walls_min": p.walls.0, "inner_walls_max": p.walls.1,
            "walk_min": p.walk.0, "walk_max": p.walk.1,
            "min_pushes": p.min_pushes, "max_moves": p.max_moves,
        })
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let p = &PARAMS[level.idx()];
        let (board, solution) = loop {
            if let Some(found) = attempt(rng, p) {
                break found;
            }
        };
        let example = ["U D", "L R"]
            .into_iter()
            .find(|e| !plays_to_solution(&board, &parse_moves(e, 2).expect("valid")))
            .expect("one push cannot solve in two directions");
        let rows = board.text();
        let gold: Vec<String> = solution.iter().map(|&d| DIRS[d].2.to_string()).collect();
        Generated {
            body: Body::new()
                .text(format!(
                    "Solve this Sokoban puzzle. Symbols: # wall, _ floor, . goal, $ box, * box on \
                     a goal, @ you, + you standing on a goal. You move up (U), down (D), left (L) \
                     or right (R) by one square. Walking into a box pushes it one square further, \
                     which is only possible if that square is floor or a goal (not a wall or \
                     another box); boxes cannot be pulled. Put every box on a goal using at most \
                     {} moves.",
                    p.max_moves
                ))
                .data(rows.join("\n"))
                .text("Write your moves as letters U, D, L, R separated by spaces."),
            format: AnswerFormat::with_example("as the sequence of moves", example),
            answer: gold.join(" "),
            metadata: fields([
                ("board", json!(rows)),
                ("max_moves", Value::from(p.max_moves)),
            ]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let meta = Meta::of(instance);
        let (Some(rows), Some(max_moves)) = (meta.strs("board"), meta.usize("max_moves", 100_000))
        else {
            return 0.0;
        };
        let (Some(board), Some(moves)) = (Board::parse(&rows), parse_moves(answer, max_moves))
        else {
            return 0.0;
        };
        if plays_to_solution(&board, &moves) {
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
    fn pushing_by_hand() {
        let rows = ["#####", "#@$.#", "#####"];
        let b = Board::parse(&rows).unwrap();
        assert!(plays_to_solution(&b, &[3]));
        assert!(!plays_to_solution(&b, &[3, 3]), "box into a wall");
        assert!(!plays_to_solution(&b, &[2]), "walking into a wall");
        assert_eq!(b.text(), rows);
        assert_eq!(parse_moves("r, Right RL", 10), Some(vec![3, 3, 3, 2]));
        assert_eq!(parse_moves("R X", 10), None);
        assert_eq!(parse_moves("RRRR", 3), None);
    }

    #[test]
    fn gold_solutions_stop_at_the_solving_move() {
        // Over many instances of every level: the gold solves, no proper prefix of it
        // does (it ends at the move that puts the last box on its goal), and it fits
        // the stated limit.
        let mut checked = 0;
        for level in Level::all() {
            for seed in 0..4 {
                for inst in crate::families::generate_many(&Sokoban, level, seed, 30).unwrap() {
                    let meta = Meta::of(&inst);
                    let rows = meta.strs("board").unwrap();
                    let board = Board::parse(&rows).unwrap();
                    let max = meta.usize("max_moves", 1000).unwrap();
                    let gold = parse_moves(&inst.answer, max).unwrap();
                    assert!(plays_to_solution(&board, &gold), "{}", inst.id);
                    for k in 0..gold.len() {
                        assert!(
                            !plays_to_solution(&board, &gold[..k]),
                            "{}: solved after {k} of {} moves",
                            inst.id,
                            gold.len()
                        );
                    }
                    assert_eq!(Sokoban.verify(&inst, &inst.answer), 1.0);
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 600);
    }
}
