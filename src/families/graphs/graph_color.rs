//! `graph_color`: colour the vertices of a graph with `k` colours so that no edge joins
//! two vertices of the same colour.
//!
//! The generator plants a colouring (every vertex gets a random colour, and edges are
//! only drawn between differently coloured vertices), so a valid colouring always
//! exists; the planted one is the gold answer. Any valid colouring scores 1.
//!
//! Answer: one `vertex:colour` pair per vertex, separated by commas or newlines, e.g.
//! `0:1, 1:2, 2:1`; vertices `0..n-1`, colours `1..=k`. One pair of braces and quotes
//! around vertex numbers (a JSON object such as `{"0": 1, "1": 2}`) are tolerated.
//! Every vertex must appear exactly once; a missing, repeated or out-of-range vertex or
//! colour, or any extra text, scores 0.
//!
//! Levels (vertices, colours, probability of an edge between differently coloured
//! vertices): 1: 4..=5, 3, 0.4 · 2: 6..=7, 3, 0.45 · 3: 8..=10, 3, 0.5 ·
//! 4: 10..=13, 3, 0.6 · 5: 14..=18, 4, 0.6.

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::{LIST_LIMIT, Meta, fields, pairs_value};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::kit::text::edges as edges_text;
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct GraphColor;

/// (min vertices, max vertices, colours, p edge) per level.
const PARAMS: [(usize, usize, u64, f64); 5] = [
    (4, 5, 3, 0.4),
    (6, 7, 3, 0.45),
    (8, 10, 3, 0.5),
    (10, 13, 3, 0.6),
    (14, 18, 4, 0.6),
];

/// Parse `v:c` pairs into a colour per vertex; `None` unless every vertex `0..n`
/// appears exactly once with a colour in `1..=k`.
fn parse_colouring(s: &str, n: usize, k: u64) -> Option<Vec<u64>> {
    let mut t = s.trim();
    if let Some(inner) = t.strip_prefix('{').and_then(|x| x.strip_suffix('}')) {
        t = inner;
    }
    let mut colour = vec![0u64; n];
    let mut count = 0usize;
    for piece in t.split([',', '\n']) {
        let piece = piece.trim();
        if piece.is_empty() {
            continue;
        }
        let (v, c) = piece.split_once(':')?;
        let v = v.trim();
        let v = v
            .strip_prefix('"')
            .and_then(|x| x.strip_suffix('"'))
            .unwrap_or(v);
        let v = usize::try_from(parse::int(v)?).ok()?;
        let c = u64::try_from(parse::int(c)?).ok()?;
        if v >= n || colour[v] != 0 || !(1..=k).contains(&c) {
            return None;
        }
        colour[v] = c;
        count += 1;
    }
    (count == n).then_some(colour)
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Data("{#edges|\n}{.0} -- {.1}{/}"),
            Piece::Text(
                "The lines above are the edges of an undirected graph on {n} vertices, numbered from 0. Give each vertex one of the colours 1 to {colours} so that the two ends of every edge get different colours.",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Data(
                "number of vertices: {n} (numbered from 0)\ncolours: 1 to {colours}\nedges: {edges|json}",
            ),
            Piece::Text(
                "Find a colouring of this undirected graph in which no edge joins two vertices of the same colour, and list one vertex:colour pair for every vertex, separated by commas.",
            ),
        ],
    ),
];

impl Family for GraphColor {
    fn name(&self) -> &'static str {
        "graph_color"
    }
    fn category(&self) -> Category {
        Category::Graphs
    }
    fn description(&self) -> &'static str {
        "Colour a graph with k colours so that no edge joins equal colours"
    }
    fn version(&self) -> u32 {
        // 2: the body no longer ends "Answer with one vertex:colour pair for every
        // vertex, separated by commas." (an instruction of its own that competed with
        // the answer rule: Qwen2.5-Coder-0.5B answered bare pairs, no tags, on 24 of
        // 24 under zero-shot and reason); the phrase says it.
        2
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi, k, p) = PARAMS[level.idx()];
        json!({"vertices_min": lo, "vertices_max": hi, "colours": k, "p_edge": p})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi, k, p) = PARAMS[level.idx()];
        let n = rng.random_range(lo..=hi);
        let (planted, edges) = loop {
            let planted: Vec<u64> = (0..n).map(|_| rng.random_range(1..=k)).collect();
            let mut edges = Vec::new();
            for u in 0..n {
                for v in u + 1..n {
                    if planted[u] != planted[v] && rng.random_bool(p) {
                        edges.push((u, v));
                    }
                }
            }
            if edges.len() >= n - 1 {
                break (planted, edges);
            }
        };
        let gold: Vec<String> = planted
            .iter()
            .enumerate()
            .map(|(v, c)| format!("{v}:{c}"))
            .collect();
        Generated {
            body: Body::new()
                .text(format!(
                    "Colour the vertices of this undirected graph using the colours 1 to {k} so \
                     that no edge joins two vertices of the same colour."
                ))
                .data(format!(
                    "Vertices: 0 to {}\nEdges: {}",
                    n - 1,
                    edges_text(&edges, "-")
                )),
            // Three vertices; every graph has at least four.
            format: AnswerFormat::with_example(
                "as one vertex:colour pair for every vertex, separated by commas",
                "0:1, 1:2, 2:1",
            ),
            answer: gold.join(", "),
            metadata: fields([
                ("n", Value::from(n)),
                ("colours", Value::from(k)),
                ("edges", pairs_value(&edges)),
            ]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let m = Meta::of(instance);
        let (Some(n), Some(k)) = (m.usize("n", LIST_LIMIT), m.u64("colours")) else {
            return 0.0;
        };
        let Some(edges) = m.pairs("edges", n) else {
            return 0.0;
        };
        let Some(col) = parse_colouring(answer, n, k) else {
            return 0.0;
        };
        if edges.iter().all(|&(u, v)| col[u] != col[v]) {
            1.0
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_colouring;

    #[test]
    fn colourings_parse_strictly() {
        assert_eq!(parse_colouring("0:1, 1:2,2:3", 3, 3), Some(vec![1, 2, 3]));
        assert_eq!(
            parse_colouring("{\"0\": 1, \"1\": 2}", 2, 3),
            Some(vec![1, 2])
        );
        assert_eq!(parse_colouring("0:1\n1:2", 2, 2), Some(vec![1, 2]));
        assert_eq!(parse_colouring("0:1, 1:2", 3, 3), None, "missing vertex");
        assert_eq!(
            parse_colouring("0:1, 0:2, 1:1", 2, 3),
            None,
            "repeated vertex"
        );
        assert_eq!(
            parse_colouring("0:1, 1:4", 2, 3),
            None,
            "colour out of range"
        );
        assert_eq!(parse_colouring("0:0, 1:1", 2, 3), None, "colour 0");
        assert_eq!(parse_colouring("0:1, 1:2 ok", 2, 3), None, "trailing junk");
        assert_eq!(
            parse_colouring("0:1, 5:2", 2, 3),
            None,
            "vertex out of range"
        );
    }
}
