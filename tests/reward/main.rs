//! The reward service end to end on the real SmolLM2: `hrl contexts export` and `hrl
//! reward-server` as processes, spoken to from a real Python process with the request
//! shapes of OpenRLHF's remote reward, TRL's `reward_funcs` and verl's
//! `compute_score` (the shims of `examples/`). Rewards are checked against `hrl run`
//! of the same revised harness on the same instances (an independent path: another
//! command, instances generated from the task spec, no completion cache).
//!
//! Needs bubblewrap and writable cgroups (root), as the sandbox tests do.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use harness_rl::harness::rollout::Rollout;
use serde_json::{Value, json};

#[path = "../common/mod.rs"]
mod common;
use common::{cap, heavy, hrl, private_home, repo, succeed};

/// The executor of the smoke suite (greedy, prefix reuse off: a completion does not
/// depend on its batch).
const EXECUTOR: &str = "llama:smollm2-135m,threads=1,n_parallel=8,ctx=2048,prefix_reuse=off";

/// `hrl contexts export` of the smoke suite (sets cut to 2) into `out`.
fn export(home: &Path, out: &Path) -> Vec<Value> {
    succeed(
        Command::new(hrl())
            .env("HRL_HOME", home)
            .args(["contexts", "export", "--limit", "2", "--suite"])
            .arg(repo().join("suites/smoke.toml"))
            .arg("--out")
            .arg(out),
    );
    std::fs::read_to_string(out.join("contexts.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A running `hrl reward-server`, killed on drop.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `hrl reward-server` on the smoke suite (with `extra` flags), writing to `out`.
fn start_server(home: &Path, out: &Path, extra: &[&str]) -> Server {
    let mut child = Command::new(hrl())
        .env("HRL_HOME", home)
        .args(["reward-server", "--limit", "2", "--no-cache", "--suite"])
        .arg(repo().join("suites/smoke.toml"))
        .args(["--addr", "127.0.0.1:0", "--validity-bonus", "0.25"])
        .args(["--invalid-reward", "-0.5", "--out"])
        .arg(out)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "first line: {line:?}");
    Server { child, url }
}

/// Run `code` in a real Python process (the shims on its path) with `arg` as
/// `sys.argv[1]`; its stdout is JSON.
fn python(code: &str, arg: &Value) -> Value {
    let out = Command::new("python3")
        .arg("-c")
        .arg(code)
        .arg(arg.to_string())
        .env("PYTHONPATH", repo().join("examples"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "python printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// POST like OpenRLHF's remote reward client does (requests.post(url, json=...)).
const OPENRLHF: &str = r#"
import json, sys, urllib.request
a = json.loads(sys.argv[1])
req = urllib.request.Request(a["url"] + "/get_reward", data=json.dumps(a["body"]).encode(),
                             headers={"Content-Type": "application/json"})
print(urllib.request.urlopen(req, timeout=3600).read().decode())
"#;

/// The native endpoint.
const NATIVE: &str = r#"
import json, sys
from reward_trl import post_json
a = json.loads(sys.argv[1])
print(json.dumps(post_json(a["url"] + "/score", a["body"], 3600)))
"#;

/// A declarative revision that calls the model (a longer reply budget).
const DECLARATIVE: &str = "The replies were cut short.\n```toml\nname = \"longer\"\n[format]\nrule = \"Give your final answer {format} inside <answer></answer> tags.\"\n[sampling]\nmax_tokens = 40\n```\n";

/// A program revision that answers every gcd question without the model.
const PROGRAM: &str = "```python\nimport math\nimport re\n\n\ndef solve(question, llm, python):\n    nums = [int(x) for x in re.findall(r\"\\d+\", question.body)]\n    g = 0\n    for n in nums:\n        g = math.gcd(g, n)\n    return \"<answer>%d</answer>\" % g\n```\n";

/// A program revision that raises: valid, but it does not execute.
const RAISES: &str =
    "```python\ndef solve(question, llm, python):\n    raise ValueError(\"boom\")\n```\n";

/// Write a completion's harness to a file for `hrl run`.
fn harness_file(dir: &Path, name: &str, completion: &str) -> PathBuf {
    let (tag, ext) = if completion.contains("```python") {
        ("```python\n", "py")
    } else {
        ("```toml\n", "toml")
    };
    let body = completion
        .split(tag)
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let p = dir.join(format!("{name}.{ext}"));
    std::fs::write(&p, body).unwrap();
    p
}

/// `hrl run` of `harness` on the dev items (by family, level, seed and start index),
/// without a cache: the rollouts in item order.
fn hrl_run(home: &Path, harness: &Path, dev_items: &[String], out: &Path) -> Vec<Rollout> {
    // gcd/L1/s0/i1000000 → seed 0, start 1000000 (the sets are consecutive indices
    // unless a repeated question was skipped, which the id check below would catch).
    let first = &dev_items[0];
    let parts: Vec<&str> = first.split('/').collect();
    let seed = parts[2].trim_start_matches('s');
    let start = parts[3].trim_start_matches('i');
    let spec = format!(
        "families:gcd:level=1:n={}:seed={seed}:start={start}",
        dev_items.len()
    );
    succeed(
        Command::new(hrl())
            .env("HRL_HOME", home)
            .args([
                "run",
                "--no-cache",
                "--executor",
                EXECUTOR,
                "--tasks",
                &spec,
            ])
            .arg("--harness")
            .arg(harness)
            .arg("--out")
            .arg(out),
    );
    let mut rs: Vec<Rollout> = harness_rl::records::read(&out.join("rollouts.jsonl")).unwrap();
    rs.sort_by_key(|r| dev_items.iter().position(|d| *d == r.item_id));
    let ids: Vec<&String> = rs.iter().map(|r| &r.item_id).collect();
    assert_eq!(
        ids,
        dev_items.iter().collect::<Vec<_>>(),
        "the same instances"
    );
    assert!(rs.iter().all(|r| r.calls.iter().all(|c| !c.cached)));
    rs
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn reward_server_answers_the_trainers_shapes_with_rewards_hrl_run_confirms() {
    let _g = heavy();
    let home = private_home();
    let h = home.path();
    let rows = export(h, &h.join("ctx"));
    assert_eq!(rows.len(), 1, "the smoke suite has one task");
    let row = &rows[0];
    let cid = row["context_id"].as_str().unwrap().to_string();
    let server = start_server(h, &h.join("srv"), &[]);
    // The server's contexts are the export's.
    let listed = python(
        "import json,sys,urllib.request\na=json.loads(sys.argv[1])\nprint(urllib.request.urlopen(a['url']+'/contexts').read().decode())",
        &json!({"url": server.url}),
    );
    assert_eq!(listed["contexts"][0]["id"], cid);
    let dev: Vec<String> =
        serde_json::from_value(listed["contexts"][0]["dev_items"].clone()).unwrap();
    assert_eq!(dev.len(), 2);

    // OpenRLHF: query = prompt + completion, labels = the dataset's label column. Row 1
    // has no label: its context is recovered from a chat-template-rendered prompt.
    let user = row["prompt"][1]["content"].as_str().unwrap();
    let system = row["prompt"][0]["content"].as_str().unwrap();
    let chat = format!(
        "<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
    );
    let query = row["query"].as_str().unwrap();
    let completions = [
        DECLARATIVE,
        PROGRAM,
        RAISES,
        "garbage {{{ not a harness",
        PROGRAM,
    ];
    let prompts = [query, chat.as_str(), query, query, query];
    let labels = [
        cid.as_str(),
        "",
        cid.as_str(),
        cid.as_str(),
        "ctx-00000000000000000000",
    ];
    let body = json!({
        "query": prompts.iter().zip(&completions).map(|(p, c)| format!("{p}{c}<|im_end|>")).collect::<Vec<_>>(),
        "prompts": prompts,
        "labels": labels,
    });
    let r = python(OPENRLHF, &json!({"url": server.url, "body": body}));
    let rewards = r["rewards"].as_array().unwrap();
    let logs = &r["extra_logs"];
    assert_eq!(rewards.len(), 5, "{r}");
    assert_eq!(r["context_ids"][1], cid, "recovered from the prompt text");
    // The gcd program: every dev item right without a model call; + the bonus.
    assert_eq!(f(&r["scores"][1]), 1.0, "{r}");
    assert_eq!(f(&rewards[1]), 1.25);
    assert_eq!(f(&logs["executor_free_rate"][1]), 1.0);
    assert_eq!((f(&logs["valid"][1]), f(&logs["executes"][1])), (1.0, 1.0));
    // The raising program is valid but does not execute: no bonus.
    assert_eq!((f(&logs["valid"][2]), f(&logs["executes"][2])), (1.0, 0.0));
    assert_eq!((f(&rewards[2]), f(&r["scores"][2])), (0.0, 0.0));
    // Garbage: an invalid revision with its reason, the invalid reward.
    assert_eq!(f(&logs["valid"][3]), 0.0);
    assert_eq!(f(&rewards[3]), -0.5);
    assert!(
        r["invalid_reasons"][3]
            .as_str()
            .unwrap()
            .contains("code block"),
        "{r}"
    );
    // An unknown label: unscorable, never guessed from the text.
    assert_eq!(f(&rewards[4]), -0.5);
    assert!(
        r["invalid_reasons"][4]
            .as_str()
            .unwrap()
            .contains("unknown context id")
    );
    // The declarative revision ran on the model.
    assert_eq!((f(&logs["valid"][0]), f(&logs["executes"][0])), (1.0, 1.0));
    assert!(f(&logs["tokens"][0]) > 0.0);

    // The native endpoint: the same completion again is answered by the memo, with
    // the same parts.
    let n = python(
        NATIVE,
        &json!({"url": server.url, "body": {"items": [
            {"context_id": cid, "completion": DECLARATIVE},
            {"context_id": cid, "completion": PROGRAM},
        ]}}),
    );
    let decl = &n["results"][0];
    assert_eq!(decl["memo"], true);
    assert_eq!(f(&decl["reward"]), f(&rewards[0]));
    assert_eq!(decl["form"], "toml");

    // Independent path: `hrl run` of the same revised harnesses on the same instances.
    let dir = h.join("check");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, c, parts) in [
        ("decl", DECLARATIVE, decl),
        ("prog", PROGRAM, &n["results"][1]),
    ] {
        let rs = hrl_run(h, &harness_file(&dir, name, c), &dev, &dir.join(name));
        let scores: Vec<f64> = rs.iter().map(|x| x.score).collect();
        let item_scores: Vec<f64> = serde_json::from_value(parts["item_scores"].clone()).unwrap();
        assert_eq!(item_scores, scores, "{name}: per-item scores");
        let mean = scores.iter().sum::<f64>() / scores.len() as f64;
        assert_eq!(f(&parts["score"]), mean, "{name}");
        let tokens: u64 = rs
            .iter()
            .map(|x| x.tokens.prompt + x.tokens.completion)
            .sum();
        assert_eq!(
            parts["tokens"].as_u64().unwrap(),
            tokens,
            "{name}: the same model calls"
        );
        assert_eq!(
            parts["harness_hash"].as_str().unwrap(),
            rs[0].harness_hash,
            "{name}: the same harness"
        );
    }

    // TRL: reward_funcs(prompts=..., completions=..., context_id=[...]) with
    // conversational completions; a row of an unknown context is None.
    let trl = python(
        r#"
import json, sys
from reward_trl import HarnessReward
a = json.loads(sys.argv[1])
fn = HarnessReward(a["url"])
out = fn(prompts=[[{"role": "user", "content": "x"}]] * 3,
         completions=[[{"role": "assistant", "content": c}] for c in a["completions"]],
         context_id=a["ids"], task=["gcd/L1"] * 3)
print(json.dumps({"rewards": out, "name": fn.__name__}))
"#,
        &json!({"url": server.url, "completions": [PROGRAM, "nonsense", PROGRAM],
                "ids": [cid, cid, "ctx-unknown"]}),
    );
    assert_eq!(trl["rewards"], json!([1.25, -0.5, null]), "{trl}");
    // verl: compute_score(data_source, solution_str, ground_truth, extra_info).
    let verl = python(
        r#"
import json, os, sys
from reward_verl import compute_score
a = json.loads(sys.argv[1])
os.environ["HRL_REWARD_URL"] = a["url"]
print(json.dumps([compute_score("harness-rl", a["solution"], a["id"], {"context_id": a["id"]}),
                  compute_score("harness-rl", "junk", a["id"], None)]))
"#,
        &json!({"url": server.url, "solution": PROGRAM, "id": cid}),
    );
    assert_eq!(f(&verl[0]["score"]), 1.25, "{verl}");
    assert_eq!(f(&verl[0]["dev_score"]), 1.0);
    assert_eq!(f(&verl[1]["valid"]), 0.0);
    assert_eq!(f(&verl[1]["score"]), -0.5);

    // A request that is not the shape is a 400 with an error body; a bad completion
    // never is (above).
    let errors = python(
        r#"
import json, sys, urllib.request, urllib.error
a = json.loads(sys.argv[1])
out = []
for path, body in [("/get_reward", b"not json"), ("/get_reward", b'{"x": 1}'),
                   ("/score", b'{"items": 3}'), ("/nowhere", b"{}")]:
    try:
        urllib.request.urlopen(urllib.request.Request(a["url"] + path, data=body))
        out.append([200, None])
    except urllib.error.HTTPError as e:
        out.append([e.code, json.loads(e.read())["error"]["message"]])
print(json.dumps(out))
"#,
        &json!({"url": server.url}),
    );
    let codes: Vec<u64> = errors
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e[0].as_u64().unwrap())
        .collect();
    assert_eq!(codes, vec![400, 400, 400, 404], "{errors}");
    assert!(errors[0][1].as_str().unwrap().contains("not JSON"));

    // Everything scored is logged with its completion.
    drop(server);
    let log = std::fs::read_to_string(h.join("srv/rewards.jsonl")).unwrap();
    assert!(log.lines().count() >= 8, "{log}");
    assert!(log.contains("garbage {{{"));
}

/// Issue 35 for `hrl reward-server --max-connections 8`: the cap holds exactly when
/// connections close and new ones open at once (the steps are `common::cap`'s, as
/// for `hrl serve` in tests/executor_http.rs), on one server for 60 cycles and on
/// fresh servers; `/health` counts every open connection.
#[test]
fn reward_server_holds_its_connection_cap_exactly() {
    let _g = heavy();
    let home = private_home();
    let h = home.path();
    let request = cap::Request {
        method: "GET",
        path: "/contexts",
        body: "",
    };
    for (i, cycles) in [60, 10, 10].into_iter().enumerate() {
        let server = start_server(h, &h.join(format!("srv{i}")), &["--max-connections", "8"]);
        let addr = server.url.trim_start_matches("http://").parse().unwrap();
        cap::cycles(addr, 8, &request, cycles, &format!("hrl reward-server {i}"));
    }
}

#[test]
fn context_ids_are_stable_across_exports() {
    let _g = heavy();
    let home = private_home();
    let a = export(home.path(), &home.path().join("a"));
    // A second export with an empty cache recomputes everything.
    let home2 = private_home();
    let b = export(home2.path(), &home2.path().join("b"));
    assert_eq!(a, b, "same suite, same greedy executor: the same dataset");
    let row = &a[0];
    for col in [
        "prompt",
        "query",
        "label",
        "context_id",
        "data_source",
        "reward_model",
        "extra_info",
        "task",
        "harness_kind",
        "parent_hash",
    ] {
        assert!(!row[col].is_null(), "column {col}");
    }
    assert_eq!(row["label"], row["context_id"]);
    assert_eq!(row["reward_model"]["ground_truth"], row["context_id"]);
    assert_eq!(row["prompt"][0]["role"], "system");
    assert!(
        row["prompt"][1]["content"]
            .as_str()
            .unwrap()
            .contains("# Current harness")
    );
    // The prompt is the one an `llm:` proposer is shown in round 1 of `hrl eval`.
    let run = home.path().join("eval");
    succeed(
        Command::new(hrl())
            .env("HRL_HOME", home.path())
            .args([
                "eval",
                "--limit",
                "2",
                "--samples",
                "1",
                "--candidates",
                "1",
                "--rounds",
                "1",
            ])
            .arg("--suite")
            .arg(repo().join("suites/smoke.toml"))
            .arg("--out")
            .arg(&run)
            .arg("--no-progress"),
    );
    let proposal: Value = serde_json::from_str(
        std::fs::read_to_string(run.join("proposals.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(proposal["round"], 1);
    assert_eq!(proposal["prompt"], row["prompt"][1]["content"]);
    // Another set size is another scoring problem: another id.
    let st = Command::new(hrl())
        .env("HRL_HOME", home.path())
        .args(["contexts", "export", "--limit", "1", "--suite"])
        .arg(repo().join("suites/smoke.toml"))
        .arg("--out")
        .arg(home.path().join("c"))
        .output()
        .unwrap();
    assert!(st.status.success());
    let c: Value = serde_json::from_str(
        std::fs::read_to_string(home.path().join("c/contexts.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_ne!(c["context_id"], row["context_id"]);
}

#[test]
fn bad_flags_are_usage_errors_before_any_model_loads() {
    for (args, what) in [
        (
            vec!["reward-server", "--addr", "0.0.0.0:0"],
            "not a loopback address",
        ),
        (
            vec![
                "reward-server",
                "--addr",
                "127.0.0.1:0",
                "--validity-bonus",
                "nan",
            ],
            "finite",
        ),
        (
            vec!["contexts", "export", "--out", "/tmp/never-written"],
            "no-such-suite",
        ),
    ] {
        let st = Command::new(hrl())
            .args(&args)
            .args(["--suite", "no-such-suite.toml"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&st.stderr);
        assert_eq!(st.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(what), "{args:?}: {err}");
    }
    assert!(!Path::new("/tmp/never-written").exists());
}
