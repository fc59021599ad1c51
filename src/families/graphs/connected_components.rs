//! `connected_components`: how many connected components an undirected graph has.
//!
//! The graph is given as its vertex range `0..n-1`, an edge list, and the list of
//! isolated vertices (each of which is a component by itself). Verifier: one integer
//! (`families::parse::int`), compared with a union-find count over the stored edges.
//!
//! Generation: vertices get random group labels; each group is joined by a random
//! spanning tree plus a few extra edges, and edges are listed in random order, so the
//! number of components is the number of non-empty groups (recounted, not assumed).
//!
//! Levels (vertices, groups, extra edges per vertex): 1: 4..=6, 1..=3, 0.0 ·
//! 2: 6..=9, 1..=4, 0.1 · 3: 9..=14, 2..=5, 0.2 · 4: 14..=22, 2..=7, 0.3 ·
//! 5: 22..=35, 3..=10, 0.4.
//! The format example in the question is one more than the largest possible answer,
//! so it is never the gold and says nothing about it.

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::{LIST_LIMIT, Meta, fields, pairs_value};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::kit::text::edges as edges_text;
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct ConnectedComponents;

/// (min n, max n, min groups, max groups, extra edges per vertex) per level.
const PARAMS: [(usize, usize, usize, usize, f64); 5] = [
    (4, 6, 1, 3, 0.0),
    (6, 9, 1, 4, 0.1),
    (9, 14, 2, 5, 0.2),
    (14, 22, 2, 7, 0.3),
    (22, 35, 3, 10, 0.4),
];

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

/// Number of components by union-find with path halving.
fn components(n: usize, edges: &[(usize, usize)]) -> usize {
    let mut parent: Vec<usize> = (0..n).collect();
    let mut count = n;
    for &(u, v) in edges {
        let (a, b) = (find(&mut parent, u), find(&mut parent, v));
        if a != b {
            parent[a] = b;
            count -= 1;
        }
    }
    count
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Text(
                "Count the connected components of an undirected graph with {n} vertices, numbered from 0. A vertex that lies on no edge forms a component by itself.",
            ),
            Piece::Data(
                "Edges:\n{#edges|\n}{.0} -- {.1}{/}{^edges}(none){/}\nVertices on no edge: {^isolated}none{/}{isolated|comma}",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Data(
                "vertices: {n} (numbered from 0)\nedge list: {edges|json}\nisolated vertices: {isolated|json}",
            ),
            Piece::Text(
                "How many connected components does this undirected graph have? An isolated vertex counts as a component of its own.",
            ),
        ],
    ),
];

impl Family for ConnectedComponents {
    fn name(&self) -> &'static str {
        "connected_components"
    }
    fn category(&self) -> Category {
        Category::Graphs
    }
    fn description(&self) -> &'static str {
        "Count the connected components of an undirected graph"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi, gmin, gmax, extra) = PARAMS[level.idx()];
        json!({"vertices_min": lo, "vertices_max": hi, "groups_min": gmin, "groups_max": gmax,
               "extra_edges_per_vertex": extra})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi, gmin, gmax, extra) = PARAMS[level.idx()];
        let n = rng.random_range(lo..=hi);
        let groups = rng.random_range(gmin..=gmax.min(n));
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); groups];
        for v in 0..n {
            members[rng.random_range(0..groups)].push(v);
        }
        let mut edges: Vec<(usize, usize)> = Vec::new();
        for g in &members {
            // Random spanning tree: each member after the first attaches to an earlier one.
            for i in 1..g.len() {
                let j = rng.random_range(0..i);
                edges.push((g[j], g[i]));
            }
            let k = (g.len() as f64 * extra).round() as usize;
            for _ in 0..k {
                let (a, b) = (
                    g[rng.random_range(0..g.len())],
                    g[rng.random_range(0..g.len())],
                );
                if a != b && !edges.contains(&(a, b)) && !edges.contains(&(b, a)) {
                    edges.push((a, b));
                }
            }
        }
        for i in (1..edges.len()).rev() {
            let j = rng.random_range(0..=i);
            edges.swap(i, j);
        }
        for e in edges.iter_mut() {
            if rng.random_bool(0.5) {
                *e = (e.1, e.0);
            }
        }
        let mut touched = vec![false; n];
        for &(u, v) in &edges {
            touched[u] = true;
            touched[v] = true;
        }
        let isolated: Vec<String> = (0..n)
            .filter(|&v| !touched[v])
            .map(|v| v.to_string())
            .collect();
        let gold = components(n, &edges);
        let edge_line = if edges.is_empty() {
            "none".to_string()
        } else {
            edges_text(&edges, "-")
        };
        let iso_line = if isolated.is_empty() {
            "none".to_string()
        } else {
            isolated.join(", ")
        };
        Generated {
            body: Body::new()
                .text(format!(
                    "An undirected graph has the vertices 0 to {}.\nEdges: {edge_line}\n\
                     Isolated vertices (in no edge): {iso_line}",
                    n - 1
                ))
                .text(
                    "How many connected components does the graph have? An isolated vertex is \
                     a component by itself.",
                ),
            // At most one component per vertex.
            format: AnswerFormat::with_example("as a single integer", (n + 1).to_string()),
            answer: gold.to_string(),
            metadata: fields([
                ("n", Value::from(n)),
                ("edges", pairs_value(&edges)),
                (
                    "isolated",
                    Value::from((0..n).filter(|&v| !touched[v]).collect::<Vec<_>>()),
                ),
            ]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let m = Meta::of(instance);
        let Some(n) = m.usize("n", LIST_LIMIT) else {
            return 0.0;
        };
        let Some(edges) = m.pairs("edges", n) else {
            return 0.0;
        };
        match parse::int(answer) {
            Some(a) if a == components(n, &edges) as i128 => 1.0,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::components;

    #[test]
    fn counts() {
        assert_eq!(components(5, &[(0, 1), (1, 2)]), 3);
        assert_eq!(components(3, &[]), 3);
        assert_eq!(components(4, &[(0, 1), (2, 3), (3, 0)]), 1);
    }
}
