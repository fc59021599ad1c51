//! Independent re-solvers for the graph families, and focused verifier tests.
//!
//! Each re-solver reads only `metadata` and uses a different method from the
//! generator: union-find instead of flood fill, Bellman-Ford-style relaxation instead
//! of BFS, backtracking instead of the planted colouring, depth-first search instead
//! of Kahn's algorithm.

use harness_rl::families::{self, Instance, Level};
use serde_json::{Value, json};

use crate::Resolver;

fn grid_i64(inst: &Instance) -> Vec<Vec<i64>> {
    serde_json::from_value(inst.metadata["grid"].clone()).unwrap()
}

fn n(inst: &Instance) -> usize {
    inst.metadata["n"].as_u64().unwrap() as usize
}

fn pairs(inst: &Instance, key: &str) -> Vec<(usize, usize)> {
    let v: Vec<[usize; 2]> = serde_json::from_value(inst.metadata[key].clone()).unwrap();
    v.into_iter().map(|[a, b]| (a, b)).collect()
}

fn root(p: &mut Vec<usize>, x: usize) -> usize {
    if p[x] == x {
        x
    } else {
        let r = root(p, p[x]);
        p[x] = r;
        r
    }
}

/// Union-find over land cells, then the largest class.
fn largest_island(inst: &Instance) -> String {
    let g = grid_i64(inst);
    let (rows, cols) = (g.len(), g[0].len());
    let mut p: Vec<usize> = (0..rows * cols).collect();
    for r in 0..rows {
        for c in 0..cols {
            if g[r][c] != 1 {
                continue;
            }
            if r + 1 < rows && g[r + 1][c] == 1 {
                let (a, b) = (root(&mut p, r * cols + c), root(&mut p, (r + 1) * cols + c));
                p[a] = b;
            }
            if c + 1 < cols && g[r][c + 1] == 1 {
                let (a, b) = (root(&mut p, r * cols + c), root(&mut p, r * cols + c + 1));
                p[a] = b;
            }
        }
    }
    let mut size = vec![0; rows * cols];
    for cell in 0..rows * cols {
        if g[cell / cols][cell % cols] == 1 {
            let x = root(&mut p, cell);
            size[x] += 1;
        }
    }
    size.iter().max().copied().unwrap_or(0).to_string()
}

/// Relax distances over the whole grid until nothing changes, then walk back from the
/// goal along decreasing distances.
fn shortest_path(inst: &Instance) -> String {
    let rows: Vec<Vec<u8>> = inst.metadata["grid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().as_bytes().to_vec())
        .collect();
    let (h, w) = (rows.len() as i64, rows[0].len() as i64);
    let at = |ch: u8| -> (i64, i64) {
        for r in 0..h {
            for c in 0..w {
                if rows[r as usize][c as usize] == ch {
                    return (r, c);
                }
            }
        }
        panic!("no {}", ch as char)
    };
    let (s, t) = (at(b'*'), at(b'#'));
    let open =
        |r: i64, c: i64| r >= 0 && c >= 0 && r < h && c < w && rows[r as usize][c as usize] != b'X';
    let inf = i64::MAX / 2;
    let mut d = vec![vec![inf; w as usize]; h as usize];
    d[s.0 as usize][s.1 as usize] = 0;
    let moves = [
        (-1, 0, "up"),
        (1, 0, "down"),
        (0, -1, "left"),
        (0, 1, "right"),
    ];
    loop {
        let mut changed = false;
        for r in 0..h {
            for c in 0..w {
                if !open(r, c) {
                    continue;
                }
                for (dr, dc, _) in moves {
                    let (pr, pc) = (r - dr, c - dc);
                    if open(pr, pc) && d[pr as usize][pc as usize] + 1 < d[r as usize][c as usize] {
                        d[r as usize][c as usize] = d[pr as usize][pc as usize] + 1;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    if d[t.0 as usize][t.1 as usize] >= inf {
        return "infeasible".into();
    }
    let mut path = Vec::new();
    let mut cur = t;
    while cur != s {
        let here = d[cur.0 as usize][cur.1 as usize];
        let (dr, dc, name) = moves
            .iter()
            .copied()
            .find(|&(dr, dc, _)| {
                let (pr, pc) = (cur.0 - dr, cur.1 - dc);
                open(pr, pc) && d[pr as usize][pc as usize] == here - 1
            })
            .unwrap();
        path.push(name);
        cur = (cur.0 - dr, cur.1 - dc);
    }
    path.reverse();
    path.join(" ")
}

/// Backtracking search over colours, vertex by vertex.
fn graph_color(inst: &Instance) -> String {
    let n = n(inst);
    let k = inst.metadata["colours"].as_u64().unwrap() as usize;
    let e = pairs(inst, "edges");
    let mut adj = vec![vec![false; n]; n];
    for &(u, v) in &e {
        adj[u][v] = true;
        adj[v][u] = true;
    }
    fn go(v: usize, n: usize, k: usize, adj: &[Vec<bool>], col: &mut Vec<usize>) -> bool {
        if v == n {
            return true;
        }
        for c in 1..=k {
            if (0..v).all(|u| !adj[u][v] || col[u] != c) {
                col[v] = c;
                if go(v + 1, n, k, adj, col) {
                    return true;
                }
            }
        }
        false
    }
    let mut col = vec![0; n];
    assert!(go(0, n, k, &adj, &mut col), "{}: not colourable", inst.id);
    col.iter()
        .enumerate()
        .map(|(v, c)| format!("{v}:{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Depth-first search with three colours; reverse post-order of the "must come
/// before" graph, or `impossible` on a back edge.
fn course_schedule(inst: &Instance) -> String {
    let n = n(inst);
    let mut before = vec![Vec::new(); n]; // before[a] = courses that must precede a
    for (a, b) in pairs(inst, "prerequisites") {
        before[a].push(b);
    }
    fn visit(v: usize, before: &[Vec<usize>], state: &mut [u8], out: &mut Vec<usize>) -> bool {
        match state[v] {
            1 => return false,
            2 => return true,
            _ => {}
        }
        state[v] = 1;
        for &b in &before[v] {
            if !visit(b, before, state, out) {
                return false;
            }
        }
        state[v] = 2;
        out.push(v);
        true
    }
    let mut state = vec![0u8; n];
    let mut out = Vec::new();
    for v in (0..n).rev() {
        if !visit(v, &before, &mut state, &mut out) {
            return "impossible".into();
        }
    }
    out.iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Breadth-first search from every unvisited vertex.
fn connected_components(inst: &Instance) -> String {
    let n = n(inst);
    let mut adj = vec![Vec::new(); n];
    for (u, v) in pairs(inst, "edges") {
        adj[u].push(v);
        adj[v].push(u);
    }
    let mut seen = vec![false; n];
    let mut count = 0;
    for s in 0..n {
        if seen[s] {
            continue;
        }
        count += 1;
        seen[s] = true;
        let mut q = std::collections::VecDeque::from([s]);
        while let Some(x) = q.pop_front() {
            for &y in &adj[x] {
                if !seen[y] {
                    seen[y] = true;
                    q.push_back(y);
                }
            }
        }
    }
    // The listed isolated vertices must be exactly those in no edge.
    let listed: Vec<usize> = serde_json::from_value(inst.metadata["isolated"].clone()).unwrap();
    let truly: Vec<usize> = (0..n).filter(|&v| adj[v].is_empty()).collect();
    assert_eq!(listed, truly, "{}: isolated list", inst.id);
    count.to_string()
}

pub fn resolvers() -> Vec<Resolver> {
    vec![
        Resolver {
            family: "largest_island",
            unique: true,
            solve: largest_island,
        },
        Resolver {
            family: "shortest_path",
            unique: false,
            solve: shortest_path,
        },
        Resolver {
            family: "graph_color",
            unique: false,
            solve: graph_color,
        },
        Resolver {
            family: "course_schedule",
            unique: false,
            solve: course_schedule,
        },
        Resolver {
            family: "connected_components",
            unique: true,
            solve: connected_components,
        },
    ]
}

// ---- focused verifier tests -------------------------------------------------------

fn inst(family: &str, metadata: Value, answer: &str) -> Instance {
    Instance {
        id: format!("{family}/test"),
        family: family.into(),
        level: 1,
        seed: 0,
        index: 0,
        question: String::new(),
        answer: answer.into(),
        metadata,
    }
}

fn verify(family: &str, i: &Instance, answer: &str) -> f64 {
    families::get(family).unwrap().verify(i, answer)
}

#[test]
fn shortest_path_accepts_every_shortest_route_only() {
    let i = inst(
        "shortest_path",
        json!({"grid": ["*OO", "OXO", "OO#"]}),
        "right right down down",
    );
    for ok in [
        "right right down down",
        "down down right right",
        "RIGHT, right, Down, down",
        "R R D D",
        "[d, d, r, r]",
    ] {
        assert_eq!(verify("shortest_path", &i, ok), 1.0, "{ok}");
    }
    for bad in [
        "right down right down",            // through the X
        "right right down",                 // stops short
        "right right down down left right", // too long, still ends on #
        "down down right right right",      // leaves the grid
        "infeasible",
        "right right down down junk",
        "northeast",
    ] {
        assert_eq!(verify("shortest_path", &i, bad), 0.0, "{bad}");
    }
    let blocked = inst("shortest_path", json!({"grid": ["*X", "X#"]}), "infeasible");
    assert_eq!(verify("shortest_path", &blocked, " Infeasible "), 1.0);
    assert_eq!(verify("shortest_path", &blocked, "right down"), 0.0);
    assert_eq!(verify("shortest_path", &blocked, "infeasible because"), 0.0);
}

#[test]
fn graph_color_checks_constraints_not_strings() {
    // A 4-cycle with a chord 0-2: colours of 0 and 2 differ, 1 and 3 may share.
    let i = inst(
        "graph_color",
        json!({"n": 4, "colours": 3, "edges": [[0, 1], [1, 2], [2, 3], [3, 0], [0, 2]]}),
        "0:1, 1:2, 2:3, 3:2",
    );
    for ok in [
        "0:1, 1:2, 2:3, 3:2",
        "0:3,1:1,2:2,3:1",
        "3:2, 2:3, 1:2, 0:1",
        "{\"0\": 2, \"1\": 1, \"2\": 3, \"3\": 1}",
        "0:1\n1:2\n2:3\n3:2",
    ] {
        assert_eq!(verify("graph_color", &i, ok), 1.0, "{ok}");
    }
    for bad in [
        "0:1, 1:2, 2:1, 3:2",
        "0:1, 1:2, 2:3",
        "0:1, 1:2, 2:3, 3:2, 3:2",
        "0:1, 1:2, 2:3, 3:4",
        "0:1, 1:2, 2:3, 3:2 done",
        "1 2 3 2",
        "0:1, 1:2, 2:3, 4:2",
    ] {
        assert_eq!(verify("graph_color", &i, bad), 0.0, "{bad}");
    }
}

#[test]
fn course_schedule_accepts_any_topological_order() {
    // 2 before 0, 2 before 1, 0 before 3.
    let i = inst(
        "course_schedule",
        json!({"n": 4, "prerequisites": [[0, 2], [1, 2], [3, 0]]}),
        "2, 0, 1, 3",
    );
    for ok in ["2, 0, 1, 3", "2 1 0 3", "[2, 0, 3, 1]"] {
        assert_eq!(verify("course_schedule", &i, ok), 1.0, "{ok}");
    }
    for bad in [
        "0, 2, 1, 3",
        "2, 0, 1",
        "2, 0, 1, 3, 3",
        "2, 0, 0, 3",
        "2, 0, 1, 4",
        "impossible",
        "2, 0, 1, 3 done",
    ] {
        assert_eq!(verify("course_schedule", &i, bad), 0.0, "{bad}");
    }
    let c = inst(
        "course_schedule",
        json!({"n": 3, "prerequisites": [[0, 1], [1, 2], [2, 0]]}),
        "impossible",
    );
    assert_eq!(verify("course_schedule", &c, "IMPOSSIBLE"), 1.0);
    assert_eq!(verify("course_schedule", &c, "0, 1, 2"), 0.0);
}

#[test]
fn island_and_component_counts() {
    let i = inst(
        "largest_island",
        json!({"grid": [[1, 0, 1], [1, 0, 1], [0, 1, 1]]}),
        "4",
    );
    assert_eq!(verify("largest_island", &i, "4"), 1.0);
    assert_eq!(
        verify("largest_island", &i, "2"),
        0.0,
        "diagonal neighbours do not join islands"
    );
    let z = inst("largest_island", json!({"grid": [[0, 0], [0, 0]]}), "0");
    assert_eq!(verify("largest_island", &z, "0"), 1.0);
    let c = inst(
        "connected_components",
        json!({"n": 5, "edges": [[0, 1], [3, 1]], "isolated": [2, 4]}),
        "3",
    );
    assert_eq!(verify("connected_components", &c, "3"), 1.0);
    assert_eq!(verify("connected_components", &c, "2"), 0.0);
}

#[test]
fn generated_instances_mix_feasible_and_infeasible() {
    for f in ["shortest_path", "course_schedule"] {
        let fam = families::get(f).unwrap();
        for level in Level::all() {
            let infeasible = (0..200)
                .filter(|&i| {
                    let a = families::generate(fam, level, 1, i).answer;
                    a == "infeasible" || a == "impossible"
                })
                .count();
            assert!(
                (5..=120).contains(&infeasible),
                "{f} L{}: {infeasible}/200 infeasible",
                level.get()
            );
        }
    }
}
