//! `hrl tasks list|gen|score` as commands, run through the binary: exit code 2 for bad
//! usage (unknown family, level outside 1..=5, `--n 0`, a bad `--variant`) with nothing
//! written; `gen`'s exact field set, determinism and `--out`; `--variant` keeping the
//! task and re-wording the question; neighbouring seeds sharing no instances;
//! `score`'s `score`/`extracted` fields, malformed lines reported by line number and
//! skipped, strict scoring and `--lenient` (`"score_mode": "lenient"`).
//!
//! These tests assert behaviour, never question texts (those belong to the families and
//! change with their versions).

use std::collections::BTreeSet;
use std::path::Path;

use assert_cmd::Command;
use harness_rl::families;
use serde_json::{Value, json};

fn hrl() -> Command {
    Command::cargo_bin("hrl").unwrap()
}

fn lines_of(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8(bytes.to_vec())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// `hrl tasks gen ARGS...`, which must succeed; its JSONL lines.
fn generate(args: &[&str]) -> Vec<Value> {
    let out = hrl().args(["tasks", "gen"]).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    lines_of(&out.stdout)
}

fn registry_names() -> Vec<String> {
    families::registry()
        .iter()
        .map(|f| f.name().to_string())
        .collect()
}

#[test]
fn list_shows_every_registered_family() {
    let names = registry_names();
    assert!(names.len() >= 30, "{names:?}");
    let out = hrl().args(["tasks", "list", "--json"]).output().unwrap();
    assert!(out.status.success());
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    let listed: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(listed, names);
    for r in rows {
        assert_eq!(r["levels"], json!([1, 5]), "{r}");
        assert!(r["version"].as_u64().unwrap() >= 1, "{r}");
        assert!(!r["description"].as_str().unwrap().is_empty(), "{r}");
        assert!(!r["category"].as_str().unwrap().is_empty(), "{r}");
        assert_eq!(r["level_params"].as_array().unwrap().len(), 5, "{r}");
    }
    let out = hrl().args(["tasks", "list"]).output().unwrap();
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    let first_words: BTreeSet<&str> = table
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for n in &names {
        assert!(first_words.contains(n.as_str()), "{n} missing:\n{table}");
    }
    assert_eq!(
        table.lines().last().unwrap(),
        format!("{} families", names.len())
    );
}

#[test]
fn bad_usage_exits_2_names_the_problem_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("instances.jsonl");
    let cases: [(&[&str], &str); 9] = [
        (&["no_such_family", "--n", "1"], "no_such_family"),
        (
            &["gdc", "--n", "1"],
            "unknown family `gdc` (did you mean `gcd`?)",
        ),
        (&["gcd", "--n", "1", "--variant", "200"], "variant 200"),
        (&["gcd", "--n", "1", "--variant", "sometimes"], "sometimes"),
        (&["all", "--n", "1", "--variant", "-1"], "-1"),
        (&["count_primes", "--n", "1", "--level", "0"], "level 0"),
        (&["count_primes", "--n", "1", "--level", "6"], "level 6"),
        (&["count_primes", "--n", "0"], "at least 1"),
        (&["all", "--n", "0"], "at least 1"),
    ];
    for (args, named) in cases {
        let out = hrl()
            .args(["tasks", "gen"])
            .args(args)
            .arg("--out")
            .arg(&out_file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(named), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!out_file.exists(), "{args:?} created its --out file");
    }
    // `score` with no line that can be scored is bad input too.
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "not json\n{\"response\": \"x\"}\n").unwrap();
    let out = hrl().args(["tasks", "score"]).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

#[test]
fn gen_writes_exactly_the_documented_fields_for_every_family() {
    let names = registry_names();
    let rows = generate(&["all", "--n", "2", "--seed", "7", "--level", "3"]);
    assert_eq!(rows.len(), 2 * names.len());
    let fields: BTreeSet<&str> = [
        "id", "family", "level", "seed", "index", "question", "answer", "metadata",
    ]
    .into();
    let mut ids = BTreeSet::new();
    for (k, r) in rows.iter().enumerate() {
        let keys: BTreeSet<&str> = r.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        assert_eq!(keys, fields, "{r}");
        // Families in registry order, N instances each, indices from 0.
        assert_eq!(r["family"], names[k / 2].as_str(), "{r}");
        assert_eq!(r["index"], (k % 2) as u64);
        assert_eq!(r["level"], 3);
        assert_eq!(r["seed"], 7);
        assert!(!r["question"].as_str().unwrap().trim().is_empty(), "{r}");
        assert!(!r["answer"].as_str().unwrap().trim().is_empty(), "{r}");
        assert!(r["metadata"].is_object(), "{r}");
        assert!(ids.insert(r["id"].as_str().unwrap().to_string()), "{r}");
    }
    // Deterministic: the same command gives the same bytes, on stdout or in --out.
    let args = [
        "tasks", "gen", "all", "--n", "2", "--seed", "7", "--level", "3",
    ];
    let a = hrl().args(args).output().unwrap().stdout;
    let b = hrl().args(args).output().unwrap().stdout;
    assert_eq!(a, b);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("i.jsonl");
    let out = hrl().args(args).arg("--out").arg(&file).output().unwrap();
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read(&file).unwrap(), a);
    // A different seed gives different instances.
    let other = generate(&["all", "--n", "2", "--seed", "8", "--level", "3"]);
    let differ = rows
        .iter()
        .zip(&other)
        .filter(|(x, y)| x["question"] != y["question"])
        .count();
    assert!(differ > rows.len() / 2, "{differ}/{}", rows.len());
}

/// Instance i of seed s is not instance i+1 of seed s-1 (each instance has its own
/// stream): the whole shifted run of instances never lines up, for any family.
#[test]
fn gen_variant_rewords_the_question_and_keeps_the_task() {
    let canonical = generate(&["all", "--n", "2", "--seed", "5", "--level", "2"]);
    let explicit = generate(&[
        "all",
        "--n",
        "2",
        "--seed",
        "5",
        "--level",
        "2",
        "--variant",
        "0",
    ]);
    assert_eq!(canonical, explicit, "--variant 0 is the default output");
    for k in ["1", "2"] {
        let varied = generate(&[
            "all",
            "--n",
            "2",
            "--seed",
            "5",
            "--level",
            "2",
            "--variant",
            k,
        ]);
        assert_eq!(varied.len(), canonical.len());
        for (v, c) in varied.iter().zip(&canonical) {
            assert_eq!(v["id"], format!("{}/v{k}", c["id"].as_str().unwrap()));
            assert_eq!(v["answer"], c["answer"]);
            assert_eq!(v["metadata"]["variant"], k.parse::<u64>().unwrap());
            assert_ne!(v["question"], c["question"]);
        }
    }
    let random = generate(&["gcd", "--n", "30", "--variant", "random"]);
    let again = generate(&["gcd", "--n", "30", "--variant", "random"]);
    assert_eq!(random, again);
    let used: BTreeSet<u64> = random
        .iter()
        .map(|r| {
            r["metadata"]
                .get("variant")
                .map_or(0, |v| v.as_u64().unwrap())
        })
        .collect();
    assert_eq!(used, BTreeSet::from([0, 1, 2]), "random used {used:?}");
    let out = hrl().args(["tasks", "list", "--json"]).output().unwrap();
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        rows.as_array()
            .unwrap()
            .iter()
            .all(|r| r["variants"].as_u64().unwrap() >= 3)
    );
}

#[test]
fn splits_lists_the_named_splits_and_checks_a_file() {
    let out = hrl().args(["tasks", "splits", "--json"]).output().unwrap();
    assert!(out.status.success());
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["paper-like", "category-holdout"]);
    for r in rows {
        let roles = r["roles"].as_array().unwrap();
        let role_names: Vec<&str> = roles.iter().map(|x| x["name"].as_str().unwrap()).collect();
        assert_eq!(role_names, ["warm_start", "rl", "held_out"], "{r}");
        for x in roles {
            assert_eq!(
                x["count"].as_u64().unwrap() as usize,
                x["families"].as_array().unwrap().len()
            );
        }
        assert!(r["unassigned"].is_array());
    }
    let out = hrl().args(["tasks", "splits"]).output().unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("paper-like (built-in)") && table.contains("  held_out "),
        "{table}"
    );
    // A file of one's own is checked strictly: errors name FILE:LINE, exit 2.
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("mine.toml");
    std::fs::write(
        &good,
        "description = \"mine\"\n[[role]]\nname = \"held_out\"\nfamilies = [\"maze\"]\n",
    )
    .unwrap();
    let out = hrl()
        .args(["tasks", "splits", "--json"])
        .arg(&good)
        .output()
        .unwrap();
    assert!(out.status.success());
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows[0]["name"], "mine");
    assert_eq!(rows[0]["roles"][0]["families"], json!(["maze"]));
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "description = \"bad\"\n[[role]]\nname = \"held_out\"\nfamilies = [\"maze\",\n  \"mazes\"]\n",
    )
    .unwrap();
    let out = hrl().args(["tasks", "splits"]).arg(&bad).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{}:5: role[0].families: unknown family `mazes` (did you mean `maze`?)",
            bad.display()
        )),
        "{err}"
    );
    let out = hrl()
        .args(["tasks", "splits", "no-such-split"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn neighbouring_seeds_do_not_share_instances() {
    let content = |r: &Value| (r["question"].clone(), r["answer"].clone());
    let s5 = generate(&["all", "--n", "4", "--seed", "5", "--level", "3"]);
    let s4 = generate(&["all", "--n", "4", "--seed", "4", "--level", "3"]);
    for (f, name) in registry_names().iter().enumerate() {
        let a: Vec<_> = s5[4 * f..4 * f + 3].iter().map(content).collect();
        let b: Vec<_> = s4[4 * f + 1..4 * f + 4].iter().map(content).collect();
        assert_eq!(s5[4 * f]["family"], name.as_str());
        assert_ne!(a, b, "{name}: seed 5 is seed 4 shifted by one");
    }
}

/// Instances of every family at level 2, each with a `response`, as JSONL text.
fn with_responses(response: impl Fn(&Value) -> String) -> (Vec<Value>, String) {
    let insts = generate(&["all", "--n", "1", "--seed", "11", "--level", "2"]);
    let mut text = String::new();
    for i in &insts {
        let mut line = i.clone();
        line["response"] = json!(response(i));
        text.push_str(&line.to_string());
        text.push('\n');
    }
    (insts, text)
}

fn score(input: &Path, extra: &[&str]) -> (Vec<Value>, String, Option<i32>) {
    let out = hrl()
        .args(["tasks", "score"])
        .arg(input)
        .args(extra)
        .output()
        .unwrap();
    (
        lines_of(&out.stdout),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

#[test]
fn score_adds_score_and_extracted_and_skips_malformed_lines_by_number() {
    let dir = tempfile::tempdir().unwrap();
    let (insts, gold) = with_responses(|i| {
        format!(
            "Let me think.\n<answer>{}</answer>",
            i["answer"].as_str().unwrap()
        )
    });
    let gold_lines: Vec<&str> = gold.lines().collect();
    let wrong = {
        let mut v: Value = serde_json::from_str(gold_lines[0]).unwrap();
        v["response"] = json!("<answer>certainly not the answer</answer>");
        v["run"] = json!("extra fields are kept");
        v.to_string()
    };
    let unknown_family = {
        let mut v: Value = serde_json::from_str(gold_lines[1]).unwrap();
        v["family"] = json!("no_such_family");
        v.to_string()
    };
    let no_tag = {
        let mut v: Value = serde_json::from_str(gold_lines[2]).unwrap();
        v["response"] = json!(v["answer"].clone());
        v.to_string()
    };
    // Lines 2, 4, 5, 6 and 8 are malformed; line 9 is blank (ignored).
    let mut input: Vec<String> = vec![
        gold_lines[0].to_string(),                               // 1
        "{not json".into(),                                      // 2
        wrong.clone(),                                           // 3
        "[1, 2]".into(),                                         // 4
        r#"{"family": "count_primes", "question": "q"}"#.into(), // 5
        r#"{"family": "count_primes", "response": 42}"#.into(),  // 6
        no_tag,                                                  // 7
        unknown_family,                                          // 8
        String::new(),                                           // 9
    ];
    input.extend(gold_lines[3..].iter().map(|s| s.to_string()));
    let file = dir.path().join("responses.jsonl");
    std::fs::write(&file, input.join("\n") + "\n").unwrap();
    let (out, err, code) = score(&file, &[]);
    assert_eq!(code, Some(0), "{err}");
    let name = file.display().to_string();
    for n in [2, 4, 5, 6, 8] {
        assert!(
            err.contains(&format!("{name}:{n}: skipped")),
            "line {n} not reported: {err}"
        );
    }
    for n in [1, 3, 7, 9, 10] {
        assert!(!err.contains(&format!("{name}:{n}:")), "line {n}: {err}");
    }
    assert!(err.contains("skipped 5 malformed"), "{err}");
    // Every good line comes back, in order, with all its fields plus the two new ones.
    assert_eq!(out.len(), gold_lines.len());
    let good_inputs: Vec<Value> = input
        .iter()
        .enumerate()
        .filter(|(k, _)| [0, 2, 6].contains(k) || *k >= 9)
        .map(|(_, l)| serde_json::from_str(l).unwrap())
        .collect();
    for (o, i) in out.iter().zip(&good_inputs) {
        let mut stripped = o.as_object().unwrap().clone();
        assert!(stripped.remove("score").is_some());
        assert!(stripped.remove("extracted").is_some());
        assert_eq!(&Value::Object(stripped), i, "fields changed");
        assert!(o.get("score_mode").is_none(), "strict lines carry no mode");
    }
    // The gold answer in tags scores 1 for every family, and `extracted` is it.
    let gold_out: Vec<&Value> = std::iter::once(&out[0]).chain(&out[3..]).collect();
    assert_eq!(gold_out.len(), insts.len() - 2);
    for o in gold_out {
        assert_eq!(o["score"], 1.0, "{o}");
        assert_eq!(o["extracted"], o["answer"], "{o}");
    }
    assert_eq!(out[1]["score"], 0.0);
    assert_eq!(out[1]["extracted"], "certainly not the answer");
    assert_eq!(out[1]["run"], "extra fields are kept");
    // Strict: a bare answer without tags scores 0 and nothing is extracted.
    assert_eq!(out[2]["score"], 0.0, "{}", out[2]);
    assert_eq!(out[2]["extracted"], Value::Null);
}

#[test]
fn lenient_falls_back_to_the_last_line_and_marks_every_line() {
    let dir = tempfile::tempdir().unwrap();
    // Bare answers (no tags) after some reasoning, for single-line answers.
    let (insts, text) = with_responses(|i| {
        format!(
            "Some reasoning first.\n{}\n\n",
            i["answer"].as_str().unwrap()
        )
    });
    let single: Vec<bool> = insts
        .iter()
        .map(|i| !i["answer"].as_str().unwrap().contains('\n'))
        .collect();
    assert!(single.iter().filter(|&&s| s).count() >= 20);
    let file = dir.path().join("bare.jsonl");
    std::fs::write(&file, &text).unwrap();
    let (strict, _, code) = score(&file, &[]);
    assert_eq!(code, Some(0));
    let (lenient, _, code) = score(&file, &["--lenient"]);
    assert_eq!(code, Some(0));
    assert_eq!(strict.len(), insts.len());
    assert_eq!(lenient.len(), insts.len());
    for ((s, l), single) in strict.iter().zip(&lenient).zip(&single) {
        assert_eq!(s["score"], 0.0, "strict needs the tags: {s}");
        assert!(s.get("score_mode").is_none());
        assert_eq!(l["score_mode"], "lenient", "{l}");
        if *single {
            assert_eq!(l["score"], 1.0, "{l}");
            assert_eq!(l["extracted"], l["answer"]);
        }
    }
    // With tags, lenient still takes the last tag, not the last line.
    let (_, tagged) = with_responses(|i| {
        format!(
            "<answer>{}</answer>\nsome trailing line",
            i["answer"].as_str().unwrap()
        )
    });
    let file = dir.path().join("tagged.jsonl");
    std::fs::write(&file, &tagged).unwrap();
    let (lenient, _, _) = score(&file, &["--lenient"]);
    for l in &lenient {
        assert_eq!(l["score"], 1.0, "{l}");
        assert_eq!(l["score_mode"], "lenient");
    }
    // Standard input: `-` and no argument read the same lines.
    for arg in [&["-"][..], &[][..]] {
        let out = hrl()
            .args(["tasks", "score"])
            .args(arg)
            .write_stdin(tagged.clone())
            .output()
            .unwrap();
        assert!(out.status.success(), "{arg:?}");
        let rows = lines_of(&out.stdout);
        assert_eq!(rows.len(), insts.len());
        assert!(rows.iter().all(|r| r["score"] == 1.0));
    }
}
