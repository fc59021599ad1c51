//! Damaged metadata, over the whole registry.
//!
//! The documented promise (docs/FAMILIES.md): a verifier that re-solves or
//! checks an answer against the structured input in `metadata` gives 0 — never a panic,
//! never credit — when a field it reads is damaged: missing, `null`, of the wrong JSON
//! type (including a number written as a string), with an element of the wrong type,
//! a ragged grid, a truncated pair, a negative or fractional number. Families whose
//! single right answer is compared with the gold do not read `metadata` at all, so
//! damage there changes nothing. The table below names, for every family, exactly the
//! fields its verifier reads; the test checks it both ways (damaging a listed field
//! stops the gold from scoring, damaging any other field does not).

use std::collections::BTreeMap;

use harness_rl::families::{self, Level};
use serde_json::{Value, json};

/// The metadata fields each verifier reads (empty: it compares with the gold answer).
const READS: &[(&str, &[&str])] = &[
    ("arc_1d", &[]),
    ("base_conversion", &["to_base"]),
    ("basic_arithmetic", &[]),
    ("binary_matrix", &["matrix"]),
    ("bitwise_arithmetic", &[]),
    ("caesar_cipher", &["ciphertext", "key"]),
    ("calendar_arithmetic", &["task"]),
    ("chain_sum", &[]),
    ("circuit_logic", &["inputs", "gates", "outputs"]),
    ("connected_components", &["n", "edges"]),
    ("count_bits", &[]),
    ("count_primes", &[]),
    ("course_schedule", &["n", "prerequisites"]),
    ("cryptarithm", &["addends", "sum", "given"]),
    ("decimal_arithmetic", &[]),
    ("family_relationships", &[]),
    ("fraction_simplification", &[]),
    ("game_of_life", &["rows", "cols", "steps", "grid"]),
    ("gcd", &[]),
    ("graph_color", &["n", "colours", "edges"]),
    ("group_anagrams", &["words"]),
    ("isomorphic_strings", &["s", "t"]),
    ("jugs", &["capacities", "target", "max_moves"]),
    ("knights_knaves", &["people"]),
    ("largest_island", &["grid"]),
    ("lcm", &[]),
    ("letter_counting", &["text", "letter"]),
    ("letter_jumble", &["words"]),
    ("manipulate_matrix", &[]),
    ("maze", &[]),
    ("mini_sudoku", &["puzzle"]),
    ("n_queens", &["n", "placed"]),
    ("needle_haystack", &[]),
    ("number_sequence", &[]),
    ("number_sorting", &["numbers", "order"]),
    ("palindrome_generation", &["letters"]),
    ("polynomial_multiplication", &["variable"]),
    ("pool_matrix", &["matrix", "kernel", "stride", "mode"]),
    ("power_function", &[]),
    ("prime_factorization", &["n"]),
    ("propositional_logic", &[]),
    ("puzzle24", &["numbers", "target"]),
    ("rectangle_count", &[]),
    ("rotate_matrix", &["matrix", "degrees"]),
    ("shortest_path", &["grid"]),
    ("simple_equations", &["variable"]),
    ("sokoban", &["board", "max_moves"]),
    ("spell_backward", &["word"]),
    ("spiral_matrix", &["matrix"]),
    ("sudoku", &["puzzle"]),
    ("syllogism", &[]),
    ("tower_of_hanoi", &["disks", "pegs", "source", "target"]),
    ("word_ladder", &["start", "target", "words"]),
    ("word_sorting", &["words", "order"]),
    ("zebra_puzzles", &["names"]),
];

/// Realistic damage to one value: what a truncated download, a hand edit or a tool
/// that stringifies numbers does. Every item is invalid for any metadata field.
fn damaged(v: &Value) -> Vec<(String, Value)> {
    let mut out = vec![("null".to_string(), Value::Null)];
    match v {
        Value::Number(n) => {
            out.push(("as a string".into(), json!(n.to_string())));
            out.push(("word".into(), json!("x")));
            out.push(("negative".into(), json!(-1)));
            out.push(("fractional".into(), json!(1.5)));
            out.push(("array".into(), json!([n])));
        }
        Value::String(s) => {
            out.push(("number".into(), json!(7)));
            out.push(("array".into(), json!([s])));
        }
        Value::Array(items) => {
            out.push(("string".into(), json!("x")));
            out.push(("object".into(), json!({"a": 1})));
            if !items.is_empty() {
                let mut first_bad = items.clone();
                first_bad[0] = json!({"a": 1});
                out.push(("element of the wrong type".into(), Value::Array(first_bad)));
            }
            // Rows or pairs: one shorter than the others.
            match items.first() {
                Some(Value::Array(row)) if !row.is_empty() => {
                    let mut ragged = items.clone();
                    ragged[0] = Value::Array(row[..row.len() - 1].to_vec());
                    out.push(("ragged".into(), Value::Array(ragged)));
                }
                // Strings (grid rows, names, words): the first one grows a character
                // no field allows.
                Some(Value::String(row)) => {
                    let mut ragged = items.clone();
                    ragged[0] = json!(format!("{row}?"));
                    out.push(("first string longer".into(), Value::Array(ragged)));
                }
                _ => {}
            }
        }
        Value::Object(map) => {
            out.push(("array".into(), json!([])));
            out.push(("string".into(), json!("x")));
            if let Some(k) = map.keys().next() {
                let mut m = map.clone();
                m[k] = json!({"a": 1});
                out.push(("entry of the wrong type".into(), Value::Object(m)));
            }
        }
        Value::Bool(_) | Value::Null => {}
    }
    out
}

#[test]
fn the_table_covers_the_registry() {
    let table: BTreeMap<&str, &[&str]> = READS.iter().copied().collect();
    let names: Vec<&str> = families::registry().iter().map(|f| f.name()).collect();
    let listed: Vec<&str> = table.keys().copied().collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(listed, sorted);
}

#[test]
fn damaged_input_fields_stop_the_gold_and_other_fields_do_not_matter() {
    let table: BTreeMap<&str, &[&str]> = READS.iter().copied().collect();
    for f in families::registry() {
        let reads = table[f.name()];
        for level in Level::all() {
            for index in 0..3 {
                let inst = families::generate(*f, level, 21, index);
                assert_eq!(f.verify(&inst, &inst.answer), 1.0, "{}", inst.id);
                let obj = inst.metadata.as_object().expect("metadata is an object");
                for key in obj.keys() {
                    let input = reads.contains(&key.as_str());
                    let mut cases = damaged(&obj[key]);
                    cases.push(("missing".into(), Value::Null));
                    for (what, bad) in cases {
                        let mut m = obj.clone();
                        if what == "missing" {
                            m.remove(key);
                        } else {
                            m[key] = bad;
                        }
                        let mut b = inst.clone();
                        b.metadata = Value::Object(m);
                        let s = f.verify(&b, &inst.answer);
                        let want = if input { 0.0 } else { 1.0 };
                        assert_eq!(
                            s,
                            want,
                            "{}: `{key}` {what}: gold scores {s} ({})",
                            inst.id,
                            if input {
                                "the verifier reads this field"
                            } else {
                                "the verifier does not read this field"
                            }
                        );
                    }
                }
                for key in reads {
                    assert!(obj.contains_key(*key), "{}: no `{key}`", inst.id);
                }
                // The whole metadata replaced.
                for whole in [json!({}), json!(null), json!([1, 2, 3]), json!("x")] {
                    let mut b = inst.clone();
                    b.metadata = whole.clone();
                    let want = if reads.is_empty() { 1.0 } else { 0.0 };
                    assert_eq!(f.verify(&b, &inst.answer), want, "{}: {whole}", inst.id);
                }
            }
        }
    }
}

/// Wild values in any field, including ones no realistic damage produces: the
/// verifier returns a score in `0..=1` and never panics.
#[test]
fn wild_metadata_never_panics() {
    let wild = [
        json!(null),
        json!("x"),
        json!(-1),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(1e300),
        json!([]),
        json!([[]]),
        json!([[99, 99], [-1]]),
        json!([[u64::MAX, 0]]),
        json!(["", ""]),
        json!({"a": 1}),
        json!(["x".repeat(5000)]),
    ];
    for f in families::registry() {
        for level in Level::all() {
            let inst = families::generate(*f, level, 21, 0);
            let obj = inst.metadata.as_object().unwrap();
            for key in obj.keys() {
                for bad in &wild {
                    let mut b = inst.clone();
                    b.metadata[key] = bad.clone();
                    for answer in [inst.answer.as_str(), "", "0", "1 2\n3 4"] {
                        let s = f.verify(&b, answer);
                        assert!((0.0..=1.0).contains(&s), "{}: `{key}` = {bad}", inst.id);
                    }
                }
            }
        }
    }
}
