//! Independent re-solvers for the games families, and focused verifier tests.
//!
//! Each solver reads only `metadata` and uses a different algorithm from the
//! generator: a live-cell set for the Game of Life, breadth-first search over whole
//! peg states for Hanoi, Bellman-Ford relaxation for mazes, a fewest-candidates search
//! for sudoku, pairwise attack checks for queens and a subset table of every reachable
//! value for puzzle24.

use std::collections::{HashMap, HashSet, VecDeque};

use harness_rl::families::{self, Instance, Level};
use serde_json::{Value, json};

use crate::Resolver;

fn u(inst: &Instance, key: &str) -> usize {
    inst.metadata[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{}: metadata.{key}", inst.id)) as usize
}

fn matrix(v: &Value) -> Vec<Vec<i64>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap())
                .collect()
        })
        .collect()
}

fn join_rows(rows: &[Vec<String>]) -> String {
    rows.iter()
        .map(|r| r.join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Live cells as a set of coordinates; neighbour counts accumulated in a map.
fn game_of_life(inst: &Instance) -> String {
    let (rows, cols, steps) = (
        u(inst, "rows") as i64,
        u(inst, "cols") as i64,
        u(inst, "steps"),
    );
    let g = matrix(&inst.metadata["grid"]);
    let mut live: HashSet<(i64, i64)> = HashSet::new();
    for (r, row) in g.iter().enumerate() {
        for (c, &v) in row.iter().enumerate() {
            if v == 1 {
                live.insert((r as i64, c as i64));
            }
        }
    }
    for _ in 0..steps {
        let mut counts: HashMap<(i64, i64), u32> = HashMap::new();
        for &(r, c) in &live {
            for dr in -1..=1 {
                for dc in -1..=1 {
                    if (dr, dc) != (0, 0) {
                        *counts
                            .entry(((r + dr).rem_euclid(rows), (c + dc).rem_euclid(cols)))
                            .or_default() += 1;
                    }
                }
            }
        }
        live = counts
            .into_iter()
            .filter(|&(p, n)| n == 3 || (n == 2 && live.contains(&p)))
            .map(|(p, _)| p)
            .collect();
    }
    let out: Vec<Vec<String>> = (0..rows)
        .map(|r| {
            (0..cols)
                .map(|c| if live.contains(&(r, c)) { "1" } else { "0" }.to_string())
                .collect()
        })
        .collect();
    join_rows(&out)
}

/// Row-by-row search with explicit pairwise attack checks, keeping the given queens.
fn n_queens(inst: &Instance) -> String {
    let n = u(inst, "n");
    let mut fixed: Vec<Option<usize>> = vec![None; n];
    for p in inst.metadata["placed"].as_array().unwrap() {
        let p = p.as_array().unwrap();
        fixed[p[0].as_u64().unwrap() as usize] = Some(p[1].as_u64().unwrap() as usize);
    }
    fn go(row: usize, n: usize, fixed: &[Option<usize>], q: &mut Vec<usize>) -> bool {
        if row == n {
            return true;
        }
        let choices: Vec<usize> = match fixed[row] {
            Some(c) => vec![c],
            None => (0..n).collect(),
        };
        for c in choices {
            let safe = q
                .iter()
                .enumerate()
                .all(|(r, &qc)| qc != c && (row - r) != qc.abs_diff(c));
            // Later fixed queens must not be attacked either.
            let safe = safe
                && fixed
                    .iter()
                    .enumerate()
                    .skip(row + 1)
                    .all(|(r, f)| f.is_none_or(|fc| fc != c && r - row != fc.abs_diff(c)));
            if safe {
                q.push(c);
                if go(row + 1, n, fixed, q) {
                    return true;
                }
                q.pop();
            }
        }
        false
    }
    let mut q = Vec::new();
    assert!(go(0, n, &fixed, &mut q), "{}: no completion", inst.id);
    let rows: Vec<Vec<String>> = q
        .iter()
        .map(|&c| {
            (0..n)
                .map(|j| if j == c { "Q" } else { "_" }.to_string())
                .collect()
        })
        .collect();
    join_rows(&rows)
}

/// Search that always branches on the blank with the fewest candidates.
fn mini_sudoku(inst: &Instance) -> String {
    let p = matrix(&inst.metadata["puzzle"]);
    let mut g: Vec<Vec<i64>> = p.clone();
    fn cands(g: &[Vec<i64>], r: usize, c: usize) -> Vec<i64> {
        (1..=4)
            .filter(|&d| {
                (0..4).all(|k| g[r][k] != d && g[k][c] != d)
                    && (0..4).all(|k| g[r / 2 * 2 + k / 2][c / 2 * 2 + k % 2] != d)
            })
            .collect()
    }
    fn go(g: &mut Vec<Vec<i64>>) -> bool {
        let mut best: Option<(usize, usize, Vec<i64>)> = None;
        for r in 0..4 {
            for c in 0..4 {
                if g[r][c] == 0 {
                    let cs = cands(g, r, c);
                    if best.as_ref().is_none_or(|b| cs.len() < b.2.len()) {
                        best = Some((r, c, cs));
                    }
                }
            }
        }
        let Some((r, c, cs)) = best else { return true };
        for d in cs {
            g[r][c] = d;
            if go(g) {
                return true;
            }
        }
        g[r][c] = 0;
        false
    }
    assert!(go(&mut g), "{}: unsolvable", inst.id);
    join_rows(
        &g.iter()
            .map(|r| r.iter().map(|d| d.to_string()).collect())
            .collect::<Vec<_>>(),
    )
}

/// Breadth-first search over peg states (disk i's peg), then the path back.
fn tower_of_hanoi(inst: &Instance) -> String {
    let n = u(inst, "disks");
    let pegs: Vec<String> = inst.metadata["pegs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    let idx = |k: &str| {
        pegs.iter()
            .position(|p| p == inst.metadata[k].as_str().unwrap())
            .unwrap()
    };
    let (s, t) = (idx("source"), idx("target"));
    let start = vec![s; n];
    let goal = vec![t; n];
    let mut prev: HashMap<Vec<usize>, (Vec<usize>, usize, usize)> = HashMap::new();
    let mut q = VecDeque::from([start.clone()]);
    let mut seen = HashSet::from([start.clone()]);
    while let Some(st) = q.pop_front() {
        if st == goal {
            break;
        }
        for from in 0..3 {
            // The top disk of a peg is the smallest disk on it.
            let Some(d) = (0..n).find(|&d| st[d] == from) else {
                continue;
            };
            for to in 0..3 {
                if to == from || (0..d).any(|e| st[e] == to) {
                    continue;
                }
                let mut nx = st.clone();
                nx[d] = to;
                if seen.insert(nx.clone()) {
                    prev.insert(nx.clone(), (st.clone(), from, to));
                    q.push_back(nx);
                }
            }
        }
    }
    let mut moves = Vec::new();
    let mut cur = goal;
    while cur != start {
        let (p, f, t) = prev[&cur].clone();
        moves.push(format!("{}->{}", pegs[f], pegs[t]));
        cur = p;
    }
    moves.reverse();
    moves.join(", ")
}

/// Bellman-Ford style relaxation to a fixed point over the text grid.
fn maze(inst: &Instance) -> String {
    let grid: Vec<Vec<char>> = inst.metadata["grid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().chars().collect())
        .collect();
    let (h, w) = (grid.len(), grid[0].len());
    let find = |ch: char| {
        (0..h)
            .flat_map(|r| (0..w).map(move |c| (r, c)))
            .find(|&(r, c)| grid[r][c] == ch)
            .unwrap()
    };
    let (s, g) = (find('S'), find('G'));
    let mut d = vec![vec![u64::MAX; w]; h];
    d[s.0][s.1] = 0;
    loop {
        let mut changed = false;
        for r in 0..h {
            for c in 0..w {
                if grid[r][c] == '#' {
                    continue;
                }
                let mut best = d[r][c];
                for (dr, dc) in [(0i64, 1i64), (0, -1), (1, 0), (-1, 0)] {
                    let (nr, nc) = (r as i64 + dr, c as i64 + dc);
                    if nr >= 0 && nc >= 0 && (nr as usize) < h && (nc as usize) < w {
                        let v = d[nr as usize][nc as usize];
                        if v != u64::MAX {
                            best = best.min(v + 1);
                        }
                    }
                }
                if best < d[r][c] {
                    d[r][c] = best;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    d[g.0][g.1].to_string()
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

/// Every value reachable from every subset of the numbers (with one expression each).
fn puzzle24(inst: &Instance) -> String {
    let nums: Vec<i128> = inst.metadata["numbers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap() as i128)
        .collect();
    let target = inst.metadata["target"].as_i64().unwrap() as i128;
    let k = nums.len();
    let full = (1usize << k) - 1;
    let mut table: Vec<HashMap<(i128, i128), String>> = vec![HashMap::new(); full + 1];
    for (i, &x) in nums.iter().enumerate() {
        table[1 << i].insert((x, 1), x.to_string());
    }
    let norm = |n: i128, d: i128| {
        let g = gcd(n, d).max(1);
        let (n, d) = (n / g, d / g);
        if d < 0 { (-n, -d) } else { (n, d) }
    };
    for mask in 1..=full {
        if mask.count_ones() < 2 {
            continue;
        }
        let mut out: HashMap<(i128, i128), String> = HashMap::new();
        let mut a = (mask - 1) & mask;
        while a > 0 {
            let b = mask & !a;
            if b > 0 {
                for (&(an, ad), ae) in &table[a] {
                    for (&(bn, bd), be) in &table[b] {
                        let mut cands = vec![
                            (norm(an * bd + bn * ad, ad * bd), format!("({ae} + {be})")),
                            (norm(an * bd - bn * ad, ad * bd), format!("({ae} - {be})")),
                            (norm(an * bn, ad * bd), format!("({ae} * {be})")),
                        ];
                        if bn != 0 {
                            cands.push((norm(an * bd, ad * bn), format!("({ae} / {be})")));
                        }
                        for (v, e) in cands {
                            out.entry(v).or_insert(e);
                        }
                    }
                }
            }
            a = (a - 1) & mask;
        }
        table[mask] = out;
    }
    table[full]
        .get(&(target, 1))
        .cloned()
        .unwrap_or_else(|| panic!("{}: unsolvable", inst.id))
}

pub fn resolvers() -> Vec<Resolver> {
    vec![
        Resolver {
            family: "game_of_life",
            unique: true,
            solve: game_of_life,
        },
        Resolver {
            family: "n_queens",
            unique: false,
            solve: n_queens,
        },
        Resolver {
            family: "mini_sudoku",
            unique: true,
            solve: mini_sudoku,
        },
        Resolver {
            family: "tower_of_hanoi",
            unique: true,
            solve: tower_of_hanoi,
        },
        Resolver {
            family: "maze",
            unique: true,
            solve: maze,
        },
        Resolver {
            family: "puzzle24",
            unique: false,
            solve: puzzle24,
        },
        Resolver {
            family: "word_ladder",
            unique: false,
            solve: word_ladder,
        },
        Resolver {
            family: "jugs",
            unique: false,
            solve: jugs,
        },
        Resolver {
            family: "sudoku",
            unique: true,
            solve: sudoku,
        },
        Resolver {
            family: "sokoban",
            unique: false,
            solve: sokoban,
        },
    ]
}

fn manual(family: &str, answer: &str, metadata: Value) -> Instance {
    Instance {
        id: format!("{family}/manual"),
        family: family.to_string(),
        level: 1,
        seed: 0,
        index: 0,
        question: String::new(),
        answer: answer.to_string(),
        metadata,
    }
}

fn verify(family: &str, inst: &Instance, answer: &str) -> f64 {
    families::get(family).unwrap().verify(inst, answer)
}

#[test]
fn game_of_life_has_no_partial_credit_and_accepts_documented_formats() {
    let f = families::get("game_of_life").unwrap();
    for seed in 0..20 {
        let inst = families::generate(f, Level::new(3).unwrap(), seed, 0);
        let rows = u(&inst, "rows");
        let zeros = vec![vec!["0"; rows].join(" "); rows].join("\n");
        assert_eq!(f.verify(&inst, &zeros), 0.0, "all-dead grid scored");
        // Flip any one cell: zero.
        let mut flipped: Vec<char> = inst.answer.chars().collect();
        let i = flipped.iter().position(|&c| c == '0' || c == '1').unwrap();
        flipped[i] = if flipped[i] == '0' { '1' } else { '0' };
        assert_eq!(
            f.verify(&inst, &flipped.into_iter().collect::<String>()),
            0.0
        );
        let commas = inst.answer.replace(' ', ",");
        assert_eq!(f.verify(&inst, &commas), 1.0);
        let packed = inst.answer.replace(' ', "");
        assert_eq!(f.verify(&inst, &packed), 1.0);
        let starting = join_rows(
            &matrix(&inst.metadata["grid"])
                .iter()
                .map(|r| r.iter().map(|d| d.to_string()).collect())
                .collect::<Vec<_>>(),
        );
        assert_eq!(f.verify(&inst, &starting), 0.0, "echoing the start scored");
    }
}

#[test]
fn n_queens_accepts_every_valid_completion_and_keeps_given_queens() {
    let a = "_ Q _ _\n_ _ _ Q\nQ _ _ _\n_ _ Q _";
    let b = "_ _ Q _\nQ _ _ _\n_ _ _ Q\n_ Q _ _";
    let free = manual("n_queens", a, json!({"n": 4, "placed": []}));
    assert_eq!(verify("n_queens", &free, a), 1.0);
    assert_eq!(
        verify("n_queens", &free, b),
        1.0,
        "the other 4-queens solution is valid too"
    );
    assert_eq!(
        verify("n_queens", &free, &b.to_lowercase().replace('_', ".")),
        1.0
    );
    let pinned = manual("n_queens", a, json!({"n": 4, "placed": [[0, 1]]}));
    assert_eq!(
        verify("n_queens", &pinned, b),
        0.0,
        "dropped the given queen at (0, 1)"
    );
    // Diagonal attack, too few queens, wrong size.
    assert_eq!(
        verify("n_queens", &free, "Q _ _ _\n_ Q _ _\n_ _ _ Q\n_ _ Q _"),
        0.0
    );
    assert_eq!(
        verify("n_queens", &free, "_ Q _ _\n_ _ _ Q\nQ _ _ _\n_ _ _ _"),
        0.0
    );
    assert_eq!(verify("n_queens", &free, "_ Q _\n_ _ Q\nQ _ _"), 0.0);
    // Level-5 boards often have several completions; the re-solver's is checked above,
    // here a corrupted instance must score 0 without panicking.
    let broken = manual("n_queens", a, json!({"n": 4, "placed": [[9, 9]]}));
    assert_eq!(verify("n_queens", &broken, a), 0.0);
}

#[test]
fn mini_sudoku_checks_constraints_and_givens() {
    let f = families::get("mini_sudoku").unwrap();
    for level in Level::all() {
        let inst = families::generate(f, level, 5, 2);
        let blanks = matrix(&inst.metadata["puzzle"])
            .iter()
            .flatten()
            .filter(|&&d| d == 0)
            .count();
        assert_eq!(
            blanks as u64,
            inst.metadata["params"]["blanks"].as_u64().unwrap()
        );
    }
    let sol = "1 2 3 4\n3 4 1 2\n2 1 4 3\n4 3 2 1";
    let other = "1 2 4 3\n3 4 1 2\n2 1 3 4\n4 3 2 1";
    let free = manual(
        "mini_sudoku",
        sol,
        json!({"puzzle": [[1, 2, 0, 0], [3, 4, 1, 2], [2, 1, 0, 0], [4, 3, 2, 1]]}),
    );
    assert_eq!(verify("mini_sudoku", &free, sol), 1.0);
    assert_eq!(
        verify("mini_sudoku", &free, other),
        1.0,
        "a second completion is also valid"
    );
    assert_eq!(verify("mini_sudoku", &free, "1234\n3412\n2143\n4321"), 1.0);
    let given = manual(
        "mini_sudoku",
        sol,
        json!({"puzzle": [[1, 2, 3, 0], [3, 4, 1, 2], [2, 1, 0, 0], [4, 3, 2, 1]]}),
    );
    assert_eq!(verify("mini_sudoku", &given, other), 0.0, "changed a given");
    // A Latin square whose boxes repeat digits.
    assert_eq!(
        verify("mini_sudoku", &free, "1 2 3 4\n2 3 4 1\n3 4 1 2\n4 1 2 3"),
        0.0
    );
    assert_eq!(
        verify("mini_sudoku", &free, "1 2 3 4\n3 4 1 2\n2 1 4 3\n4 3 2 1 0"),
        0.0
    );
}

#[test]
fn tower_of_hanoi_is_checked_by_simulation() {
    let inst = manual(
        "tower_of_hanoi",
        "A->B, A->C, B->C",
        json!({"disks": 2, "pegs": ["A", "B", "C"], "source": "A", "target": "C"}),
    );
    assert_eq!(verify("tower_of_hanoi", &inst, "A->B, A->C, B->C"), 1.0);
    assert_eq!(
        verify("tower_of_hanoi", &inst, "a -> b\na -> c\nb -> c"),
        1.0
    );
    assert_eq!(verify("tower_of_hanoi", &inst, "A→B; A→C; B→C"), 1.0);
    assert_eq!(verify("tower_of_hanoi", &inst, "A->B A->C B->C"), 1.0);
    // Legal but not minimal (5 moves), illegal (big on small), wrong goal, unknown peg.
    assert_eq!(
        verify("tower_of_hanoi", &inst, "A->B, B->C, A->B, C->A, A->B"),
        0.0
    );
    assert_eq!(verify("tower_of_hanoi", &inst, "A->B, A->B, C->C"), 0.0);
    assert_eq!(verify("tower_of_hanoi", &inst, "A->C, A->B, C->B"), 0.0);
    assert_eq!(verify("tower_of_hanoi", &inst, "A->D, A->C, D->C"), 0.0);
    assert_eq!(
        verify("tower_of_hanoi", &inst, "1. A->B, 2. A->C, 3. B->C"),
        0.0
    );
}

#[test]
fn puzzle24_accepts_any_exact_expression_using_each_number_once() {
    let inst = manual(
        "puzzle24",
        "8 / (3 - 8 / 3)",
        json!({"numbers": [3, 3, 8, 8], "target": 24}),
    );
    assert_eq!(verify("puzzle24", &inst, "8 / (3 - 8 / 3)"), 1.0);
    assert_eq!(verify("puzzle24", &inst, "8/(3-(8/3))"), 1.0);
    assert_eq!(verify("puzzle24", &inst, "8 ÷ (3 − 8 ÷ 3)"), 1.0);
    // Floating-point would call 8/(3-2.6667) 24.000000000000004; exact arithmetic is exact,
    // and a wrong value, a missing or reused number or a concatenation scores 0.
    assert_eq!(verify("puzzle24", &inst, "8 * 3 + 8 - 3"), 0.0);
    assert_eq!(verify("puzzle24", &inst, "8 * 3"), 0.0);
    assert_eq!(verify("puzzle24", &inst, "8 * 3 * (8 / 8)"), 0.0);
    assert_eq!(verify("puzzle24", &inst, "(3 - 3) * 8 + 8 + 8 + 8"), 0.0);
    assert_eq!(verify("puzzle24", &inst, "8 / (3 - 8 / 3) = 24"), 0.0);
    let two = manual(
        "puzzle24",
        "4 * 6 * 1 * 1",
        json!({"numbers": [4, 6, 1, 1], "target": 24}),
    );
    for ok in [
        "4 * 6 * 1 * 1",
        "(4 * 6) / (1 * 1)",
        "4 * 6 + 1 - 1",
        "(1 + 1) * 6 * 4 / 2 * 1",
    ] {
        let want = if ok.contains("/ 2") { 0.0 } else { 1.0 };
        assert_eq!(verify("puzzle24", &two, ok), want, "{ok}");
    }
    assert_eq!(verify("puzzle24", &two, "4 6 * 1 1"), 0.0);
    assert_eq!(verify("puzzle24", &two, "46 - 11 - 11"), 0.0);
    // Leading zeros do not change a number (as for every integer answer): `06` is the
    // given 6. No given number is 0, so a leading zero cannot join two numbers.
    assert_eq!(verify("puzzle24", &two, "04 * 06 * 01 * 1"), 1.0);
    assert_eq!(verify("puzzle24", &two, "4 * 6 * 011"), 0.0);
}

// ---------------------------------------------------------------------------------
// Families added for issue 8: word_ladder, jugs, sudoku, sokoban.
// ---------------------------------------------------------------------------------

fn str_list(inst: &Instance, key: &str) -> Vec<String> {
    inst.metadata[key]
        .as_array()
        .unwrap_or_else(|| panic!("{}: metadata.{key}", inst.id))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// Iterative-deepening depth-first search from the target back to the start (the
/// generator runs breadth-first search forwards over the full word list).
fn word_ladder(inst: &Instance) -> String {
    let words = str_list(inst, "words");
    let start = inst.metadata["start"].as_str().unwrap();
    let target = inst.metadata["target"].as_str().unwrap();
    let differ_by_one =
        |a: &str, b: &str| a.chars().zip(b.chars()).filter(|(x, y)| x != y).count() == 1;
    fn dfs<'a>(
        cur: &'a str,
        goal: &str,
        left: usize,
        words: &'a [String],
        path: &mut Vec<&'a str>,
        one: &dyn Fn(&str, &str) -> bool,
    ) -> bool {
        if cur == goal {
            return true;
        }
        if left == 0 {
            return false;
        }
        for w in words {
            if !path.contains(&w.as_str()) && one(cur, w) {
                path.push(w);
                if dfs(w, goal, left - 1, words, path, one) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    for depth in 0..=words.len() {
        let mut path = vec![target];
        if dfs(target, start, depth, &words, &mut path, &differ_by_one) {
            path.reverse();
            return path.join(" -> ");
        }
    }
    panic!("{}: no ladder", inst.id);
}

/// Depth-first search with iterative deepening over jug states, pruning a state
/// reached before with at least as many moves left (the generator runs breadth-first
/// search over encoded states with parent pointers).
fn jugs(inst: &Instance) -> String {
    let caps: Vec<u32> = inst.metadata["capacities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap() as u32)
        .collect();
    let target = inst.metadata["target"].as_u64().unwrap() as u32;
    let n = caps.len();
    assert!(n <= 4);
    /// (kind, a, b): 0 = fill a, 1 = empty a, 2 = pour a into b.
    type Mv = (u8, usize, usize);
    let moves: Vec<Mv> = (0..n)
        .flat_map(|a| {
            [(0, a, a), (1, a, a)]
                .into_iter()
                .chain((0..n).filter(move |&b| b != a).map(move |b| (2, a, b)))
        })
        .collect();
    struct Search<'a> {
        caps: &'a [u32],
        target: u32,
        moves: &'a [Mv],
        /// Moves left when a state (mixed-radix index) was last expanded; 0 = never.
        best: Vec<u8>,
        path: Vec<Mv>,
    }
    impl Search<'_> {
        fn go(&mut self, s: [u32; 4], left: u8) -> bool {
            let n = self.caps.len();
            if s[..n].contains(&self.target) {
                return true;
            }
            let i = (0..n).fold(0, |acc, k| {
                acc * (self.caps[k] as usize + 1) + s[k] as usize
            });
            if left == 0 || self.best[i] >= left {
                return false;
            }
            self.best[i] = left;
            for &(kind, a, b) in self.moves {
                let mut t = s;
                match kind {
                    0 => t[a] = self.caps[a],
                    1 => t[a] = 0,
                    _ => {
                        let amount = t[a].min(self.caps[b] - t[b]);
                        t[a] -= amount;
                        t[b] += amount;
                    }
                }
                self.path.push((kind, a, b));
                if self.go(t, left - 1) {
                    return true;
                }
                self.path.pop();
            }
            false
        }
    }
    let size: usize = caps.iter().map(|&c| c as usize + 1).product();
    let names = ['A', 'B', 'C', 'D'];
    for depth in 0..=40u8 {
        let mut search = Search {
            caps: &caps,
            target,
            moves: &moves,
            best: vec![0; size],
            path: Vec::new(),
        };
        if search.go([0; 4], depth) {
            return search
                .path
                .iter()
                .map(|&(k, a, b)| match k {
                    0 => format!("fill {}", names[a]),
                    1 => format!("empty {}", names[a]),
                    _ => format!("pour {} into {}", names[a], names[b]),
                })
                .collect::<Vec<_>>()
                .join("; ");
        }
    }
    panic!("{}: unsolvable", inst.id);
}

/// Constraint propagation (naked and hidden singles) with backtracking on the first
/// open cell (the generator counts solutions with bitmasks and fewest-candidates
/// branching).
fn sudoku(inst: &Instance) -> String {
    type G = Vec<Vec<u8>>;
    let g: G = matrix(&inst.metadata["puzzle"])
        .iter()
        .map(|r| r.iter().map(|&d| d as u8).collect())
        .collect();
    fn candidates(g: &G, r: usize, c: usize) -> Vec<u8> {
        (1..=9u8)
            .filter(|&d| {
                (0..9).all(|k| g[r][k] != d && g[k][c] != d)
                    && (0..9).all(|k| g[r / 3 * 3 + k / 3][c / 3 * 3 + k % 3] != d)
            })
            .collect()
    }
    fn propagate(g: &mut G) -> bool {
        loop {
            let mut changed = false;
            for r in 0..9 {
                for c in 0..9 {
                    if g[r][c] == 0 {
                        let cand = candidates(g, r, c);
                        match cand.len() {
                            0 => return false,
                            1 => {
                                g[r][c] = cand[0];
                                changed = true;
                            }
                            _ => {}
                        }
                    }
                }
            }
            // Hidden singles in rows.
            for r in 0..9 {
                for d in 1..=9u8 {
                    if g[r].contains(&d) {
                        continue;
                    }
                    let spots: Vec<usize> = (0..9)
                        .filter(|&c| g[r][c] == 0 && candidates(g, r, c).contains(&d))
                        .collect();
                    match spots.len() {
                        0 => return false,
                        1 => {
                            g[r][spots[0]] = d;
                            changed = true;
                        }
                        _ => {}
                    }
                }
            }
            if !changed {
                return true;
            }
        }
    }
    fn solve(g: &mut G) -> bool {
        if !propagate(g) {
            return false;
        }
        let Some((r, c)) = (0..81).map(|i| (i / 9, i % 9)).find(|&(r, c)| g[r][c] == 0) else {
            return true;
        };
        for d in candidates(g, r, c) {
            let mut h = g.clone();
            h[r][c] = d;
            if solve(&mut h) {
                *g = h;
                return true;
            }
        }
        false
    }
    let mut g = g;
    assert!(solve(&mut g), "{}: unsolvable", inst.id);
    g.iter()
        .map(|r| {
            r.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Breadth-first search over pushes on bit boards: a state is the box set plus the
/// player's reachable region (both `u128` masks; the region comes from a bit-parallel
/// flood fill), each edge one push; the walks between pushes are filled in afterwards
/// along the solution only. The generator plays random pulls backwards instead.
fn sokoban(inst: &Instance) -> String {
    let rows = str_list(inst, "board");
    let w = rows[0].len();
    let cells: Vec<u8> = rows.iter().flat_map(|r| r.bytes()).collect();
    let n = cells.len();
    assert!(n <= 128, "board too large for the bit-board re-solver");
    let bit = |i: usize| 1u128 << i;
    let mask_of = |f: &dyn Fn(u8) -> bool| {
        (0..n)
            .filter(|&i| f(cells[i]))
            .fold(0u128, |m, i| m | bit(i))
    };
    let wall = mask_of(&|c| c == b'#');
    let goals = mask_of(&|c| matches!(c, b'.' | b'*' | b'+'));
    let boxes0 = mask_of(&|c| matches!(c, b'$' | b'*'));
    let player0 = (0..n).find(|&i| matches!(cells[i], b'@' | b'+')).unwrap();
    // Walls surround the board, so shifting across a row end lands on a wall bit.
    let flood = |from: usize, boxes: u128| -> u128 {
        let free = !wall & !boxes & (u128::MAX >> (128 - n));
        let mut reach = bit(from);
        loop {
            let next = reach | ((reach << 1 | reach >> 1 | reach << w | reach >> w) & free);
            if next == reach {
                return reach;
            }
            reach = next;
        }
    };
    let dirs: [(isize, char); 4] = [(-(w as isize), 'U'), (w as isize, 'D'), (-1, 'L'), (1, 'R')];
    let step = |i: usize, d: isize| (i as isize + d) as usize;
    // key (boxes, region) -> (parent key, player square before the push, box square, dir)
    type Key = (u128, u128);
    let mut parent: HashMap<Key, Option<(Key, usize, usize, usize)>> = HashMap::new();
    let start = (boxes0, flood(player0, boxes0));
    parent.insert(start, None);
    let mut q = VecDeque::from([(start, player0)]);
    let mut end = None;
    while let Some(((boxes, reach), player)) = q.pop_front() {
        if boxes & !goals == 0 {
            end = Some((boxes, reach));
            break;
        }
        for b in (0..n).filter(|&i| boxes & bit(i) != 0) {
            for (k, &(d, _)) in dirs.iter().enumerate() {
                let (stand, dest) = (step(b, -d), step(b, d));
                if reach & bit(stand) == 0 || (wall | boxes) & bit(dest) != 0 {
                    continue;
                }
                let nb = boxes & !bit(b) | bit(dest);
                let key = (nb, flood(b, nb));
                if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(key) {
                    e.insert(Some(((boxes, reach), player, b, k)));
                    q.push_back((key, b));
                }
            }
        }
    }
    let mut pushes = Vec::new();
    let mut cur = end.unwrap_or_else(|| panic!("{}: unsolvable", inst.id));
    while let Some(Some((prev, player, b, k))) = parent.get(&cur) {
        pushes.push((*prev, *player, *b, *k));
        cur = *prev;
    }
    pushes.reverse();
    // Fill in each walk to the pushing square by breadth-first search.
    let mut moves = String::new();
    for ((boxes, _), player, b, k) in pushes {
        let stand = step(b, -dirs[k].0);
        let mut prev: HashMap<usize, (usize, char)> = HashMap::new();
        let mut q = VecDeque::from([player]);
        let mut seen = bit(player);
        while let Some(u) = q.pop_front() {
            if u == stand {
                break;
            }
            for &(d, ch) in &dirs {
                let v = step(u, d);
                if (wall | boxes | seen) & bit(v) == 0 {
                    seen |= bit(v);
                    prev.insert(v, (u, ch));
                    q.push_back(v);
                }
            }
        }
        let mut walk = Vec::new();
        let mut at = stand;
        while at != player {
            let (p, ch) = prev[&at];
            walk.push(ch);
            at = p;
        }
        moves.extend(walk.iter().rev());
        moves.push(dirs[k].1);
    }
    moves
        .chars()
        .map(String::from)
        .collect::<Vec<_>>()
        .join(", ")
}

fn move_count(s: &str) -> usize {
    s.chars().filter(|c| "UDLRudlr".contains(*c)).count()
}

/// Sudoku has one answer: the re-solver must reproduce the gold text. For the
/// multi-answer families the canonical form compared is the number of steps of a
/// shortest solution (word ladder and jugs: the gold is a shortest one too). Sokoban's
/// gold is not a shortest solution, so there only the re-solver's answer is verified
/// (by simulation, like any answer).
#[test]
fn new_games_resolvers_match_the_gold() {
    let steps = |s: &str| {
        s.split(|c: char| c == ',' || c == ';' || c == '\n' || c.is_whitespace())
            .filter(|p| !p.is_empty() && *p != "->")
            .count()
    };
    for name in ["word_ladder", "jugs", "sudoku", "sokoban"] {
        let f = families::get(name).unwrap();
        for level in Level::all() {
            for i in 0..12 {
                let x = families::generate(f, level, 17, i);
                let mine = match name {
                    "word_ladder" => {
                        let a = word_ladder(&x);
                        assert_eq!(steps(&a), steps(&x.answer), "{}: {a} vs {}", x.id, x.answer);
                        a
                    }
                    "jugs" => {
                        let a = jugs(&x);
                        assert_eq!(a.split("; ").count(), x.answer.lines().count(), "{}", x.id);
                        a
                    }
                    "sudoku" => {
                        let a = sudoku(&x);
                        assert_eq!(a, x.answer, "{}", x.id);
                        a
                    }
                    _ => {
                        let a = sokoban(&x);
                        assert!(move_count(&a) > 0);
                        a
                    }
                };
                assert_eq!(f.verify(&x, &mine), 1.0, "{}: {mine:?}", x.id);
            }
        }
    }
}

#[test]
fn word_ladder_accepts_any_shortest_ladder_only() {
    let words = json!(["cat", "cot", "cog", "dog", "dot", "cut", "hat"]);
    let x = manual(
        "word_ladder",
        "cat, cot, dot, dog",
        json!({"start": "cat", "target": "dog", "words": words}),
    );
    for ok in [
        "cat, cot, dot, dog",
        "CAT -> COT -> COG -> DOG",
        "cat cot cog dog",
    ] {
        assert_eq!(verify("word_ladder", &x, ok), 1.0, "{ok}");
    }
    for bad in [
        "cat, cot, dog",           // two letters at once
        "cat, cut, cot, dot, dog", // valid but not shortest
        "cat, hat, cat, cot, dot, dog",
        "cot, dot, dog",             // wrong start
        "cat, cot, dot",             // wrong end
        "cat, cit, dit, dig, dog",   // words not in the list
        "cat, cot, cog, \u{212a}og", // lookalike
        "cat, cot, dot, dog, dog",
    ] {
        assert_eq!(verify("word_ladder", &x, bad), 0.0, "{bad}");
    }
}

#[test]
fn jugs_and_sokoban_are_checked_by_simulation() {
    let x = manual(
        "jugs",
        "",
        json!({"capacities": [3, 5], "target": 4, "max_moves": 8}),
    );
    let six = "fill B\npour B->A\nempty A\npour B->A\nfill B\npour B->A";
    let other = "fill A, pour A->B, fill A, pour A into B, empty B, pour A to B, fill A, pour A B";
    assert_eq!(verify("jugs", &x, six), 1.0);
    assert_eq!(
        verify("jugs", &x, other),
        1.0,
        "the other way round works too"
    );
    assert_eq!(
        verify("jugs", &x, &format!("{other}; empty A")),
        0.0,
        "over the limit"
    );
    for bad in [
        "fill B",
        "fill B\npour B->B",
        "fill C",
        "fill B\npour B->A\nempty A\npour B->A\nfill B",
    ] {
        assert_eq!(verify("jugs", &x, bad), 0.0, "{bad}");
    }
    let board = json!(["######", "#@$_.#", "#____#", "######"]);
    let s = manual("sokoban", "R R", json!({"board": board, "max_moves": 10}));
    for ok in ["R R", "RR", "right, right", "r r", "R L R R"] {
        assert_eq!(verify("sokoban", &s, ok), 1.0, "{ok}");
    }
    for bad in ["R", "R R R", "U R R", "R L", "R\u{212a}", "R R X"] {
        assert_eq!(verify("sokoban", &s, bad), 0.0, "{bad}");
    }
}

#[test]
fn new_games_corrupted_metadata_scores_zero() {
    for name in ["word_ladder", "jugs", "sudoku", "sokoban"] {
        let fam = families::get(name).unwrap();
        for level in Level::all() {
            let good = families::generate(fam, level, 3, 9);
            for bad in [
                json!(null),
                json!({}),
                json!({"words": [1], "start": 5, "capacities": [], "target": -1,
                       "puzzle": [[1, 2]], "board": ["#"], "max_moves": "x"}),
                json!({"board": ["####", "#@_#", "####"], "max_moves": 5,
                       "capacities": [100000], "target": 1}),
            ] {
                let mut b = good.clone();
                b.metadata = bad.clone();
                assert_eq!(fam.verify(&b, &good.answer), 0.0, "{name} with {bad}");
            }
        }
    }
}
