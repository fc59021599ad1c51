//! `circuit_logic`: evaluate a boolean circuit of AND/OR/XOR/NOT gates on given inputs.
//!
//! Inputs `x1..xk` carry 0 or 1; gates `g1..gm` are listed in an order where every
//! gate reads only inputs and earlier gates. AND, OR and XOR take 2 or more inputs
//! (XOR is 1 when an odd number of its inputs are 1); NOT takes one. The question asks
//! for the values of the last `r` gates (r >= 2).
//!
//! Levels (inputs, gates, largest fan-in, outputs asked):
//! 1: 2, 2, 2, 2 · 2: 3, 4, 2, 2 · 3: 4, 7, 2, 2 · 4: 5, 12, 3, 3 · 5: 6, 20, 3, 4.
//! At least two outputs are asked, so a blind guess is right at most a quarter of the
//! time. The format example is a 0/1 pattern one value longer than the answer, so it
//! is never right and says nothing about the gold.
//! Gate inputs are drawn preferring signals no gate has read yet, so circuits are deep
//! rather than wide.
//!
//! Gold: the output values in order, `1, 0, 1`. Verifier: a list of exactly `r`
//! values, each 0 or 1, separated by commas and/or whitespace (optionally in `[...]`),
//! equal to the values recomputed from the metadata. Metadata: `params`, `inputs`
//! (name -> 0/1, in order), `gates` (`{"name", "op", "args"}` in order), `outputs`.

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Map, json};

use crate::families::kit::meta::{LIST_LIMIT, Meta, object};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct CircuitLogic;

/// (inputs, gates, max fan-in, outputs) per level.
const PARAMS: [(usize, usize, usize, usize); 5] = [
    (2, 2, 2, 2),
    (3, 4, 2, 2),
    (4, 7, 2, 2),
    (5, 12, 3, 3),
    (6, 20, 3, 4),
];
const OPS: [&str; 4] = ["AND", "OR", "XOR", "NOT"];

fn apply(op: &str, vals: &[bool]) -> Option<bool> {
    match (op, vals.len()) {
        ("NOT", 1) => Some(!vals[0]),
        ("AND", 2..) => Some(vals.iter().all(|&v| v)),
        ("OR", 2..) => Some(vals.iter().any(|&v| v)),
        ("XOR", 2..) => Some(vals.iter().filter(|&&v| v).count() % 2 == 1),
        _ => None,
    }
}

/// Output values recomputed from (possibly corrupted) metadata.
fn evaluate(meta: Meta) -> Option<Vec<bool>> {
    let mut env: Vec<(&str, bool)> = Vec::new();
    let inputs = meta.get("inputs")?.as_object()?;
    if inputs.len() > LIST_LIMIT {
        return None;
    }
    for (k, v) in inputs {
        env.push((k.as_str(), v.as_u64().filter(|&v| v <= 1)? == 1));
    }
    for g in meta.array("gates")? {
        let name = g.get("name")?.as_str()?;
        let op = g.get("op")?.as_str()?;
        let vals: Vec<bool> = g
            .get("args")?
            .as_array()?
            .iter()
            .map(|a| {
                let a = a.as_str()?;
                env.iter().find(|(n, _)| *n == a).map(|&(_, v)| v)
            })
            .collect::<Option<_>>()?;
        env.push((name, apply(op, &vals)?));
    }
    meta.strs("outputs")?
        .into_iter()
        .map(|o| env.iter().find(|(n, _)| *n == o).map(|&(_, v)| v))
        .collect()
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Data("{@1}"),
            Piece::Text(
                "Above is a boolean circuit: the first lines give its inputs, the others define its gates. AND is 1 only when all of its inputs are 1, OR is 1 when at least one input is 1, XOR is 1 when an odd number of its inputs are 1, and NOT inverts its single input. Compute {outputs|and} and answer with these {outputs|len} values (each 0 or 1) separated by commas, in that order.",
            ),
        ],
    ),
    Template::new(
        Wording::Respond,
        &[
            Piece::Text(
                "Gate rules: AND gives 1 only if every input is 1; OR gives 1 if at least one input is 1; XOR gives 1 if an odd number of its inputs are 1; NOT gives the opposite of its one input.",
            ),
            Piece::Text("Circuit (inputs first, then gates):"),
            Piece::Data("{@1.lines|bullets}"),
            Piece::Text("Outputs wanted, in this order: {outputs|comma}."),
        ],
    ),
];

impl Family for CircuitLogic {
    fn name(&self) -> &'static str {
        "circuit_logic"
    }
    fn category(&self) -> Category {
        Category::Logic
    }
    fn description(&self) -> &'static str {
        "Evaluate a boolean circuit of AND/OR/XOR/NOT gates on given inputs"
    }
    fn version(&self) -> u32 {
        // 2: the format example is one value too long (it was a random pattern redrawn until it differed from the gold).
        // 3: the question no longer says "Answer with n values, ..." (an instruction
        // of its own that competed with the answer rule, whose phrase was only "as
        // described": Qwen2.5-Coder-0.5B answered bare values, no tags, on 24 of 24
        // under zero-shot and reason); the phrase says it.
        3
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (i, g, f, o) = PARAMS[level.idx()];
        json!({"inputs": i, "gates": g, "max_fan_in": f, "outputs": o})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (n_in, n_gates, fan, n_out) = PARAMS[level.idx()];
        let names: Vec<String> = (1..=n_in)
            .map(|i| format!("x{i}"))
            .chain((1..=n_gates).map(|i| format!("g{i}")))
            .collect();
        let mut values: Vec<bool> = (0..n_in).map(|_| rng.random_bool(0.5)).collect();
        let mut read = vec![false; n_in + n_gates];
        let mut gates = Vec::with_capacity(n_gates);
        let mut lines = Vec::with_capacity(n_in + n_gates);
        for (i, v) in values.iter().enumerate() {
            lines.push(format!("{} = {}", names[i], u8::from(*v)));
        }
        for g in 0..n_gates {
            let avail = n_in + g;
            let op = OPS[rng.random_range(0..4)];
            // `avail >= 2` because every level has at least two inputs.
            let arity = if op == "NOT" {
                1
            } else {
                rng.random_range(2..=fan).min(avail)
            };
            let mut args: Vec<usize> = Vec::with_capacity(arity);
            while args.len() < arity {
                let unread = |s: &usize| !read[*s] && !args.contains(s);
                let n_unread = (0..avail).filter(unread).count();
                let s = if n_unread > 0 && rng.random_bool(0.7) {
                    let k = rng.random_range(0..n_unread);
                    (0..avail).filter(unread).nth(k).unwrap_or(0)
                } else {
                    rng.random_range(0..avail)
                };
                if !args.contains(&s) {
                    args.push(s);
                }
            }
            for &a in &args {
                read[a] = true;
            }
            let vals: Vec<bool> = args.iter().map(|&a| values[a]).collect();
            // `apply` accepts every (op, arity) built above.
            values.push(apply(op, &vals).unwrap_or(false));
            let arg_names: Vec<&str> = args.iter().map(|&a| names[a].as_str()).collect();
            lines.push(format!(
                "{} = {op}({})",
                names[n_in + g],
                arg_names.join(", ")
            ));
            gates.push(json!({"name": names[n_in + g], "op": op, "args": arg_names}));
        }
        let outputs: Vec<&str> = names[names.len() - n_out..]
            .iter()
            .map(String::as_str)
            .collect();
        let gold: Vec<String> = values[values.len() - n_out..]
            .iter()
            .map(|&v| u8::from(v).to_string())
            .collect();
        let ask = format!(
            "What are the values of {}, in this order?",
            outputs.join(", ")
        );
        // A format example one value longer than the answer: never right.
        let example: Vec<&str> = (0..=n_out)
            .map(|i| if i % 2 == 0 { "1" } else { "0" })
            .collect();
        let example = example.join(", ");
        let body = Body::new()
            .text(
                "A boolean circuit has inputs and gates. AND outputs 1 only when all its inputs are 1; OR outputs 1 when \
at least one input is 1; XOR outputs 1 when an odd number of its inputs are 1; NOT outputs the opposite of its \
single input. The inputs and gates are:",
            )
            .data(lines.join("\n"))
            .text(ask);
        let format = AnswerFormat::with_example(
            format!("as {n_out} values, each 0 or 1, in the order asked, separated by commas"),
            example,
        );
        let mut inputs = Map::new();
        for i in 0..n_in {
            inputs.insert(names[i].clone(), json!(u8::from(values[i])));
        }
        Generated {
            body,
            format,
            answer: gold.join(", "),
            metadata: object(json!({
                "inputs": inputs,
                "gates": gates,
                "outputs": outputs,
            })),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let (Some(want), Some(got)) = (evaluate(Meta::of(instance)), parse::int_list(answer))
        else {
            return 0.0;
        };
        let ok = got.len() == want.len()
            && got
                .iter()
                .zip(&want)
                .all(|(&g, &w)| g == i128::from(u8::from(w)));
        if ok { 1.0 } else { 0.0 }
    }
}
