//! Harness tests: every seed harness kind on real SmolLM2 runs (mechanics), program
//! harnesses (batching across instances, limits, raising / looping / flooding /
//! never-calling harnesses, containment), LiveCodeBench items through the same
//! runtime, run directories (resume), and the `hrl run` / `hrl harness` commands.
//! Property tests of edits and canonical forms are in `props.rs`; bad harness files
//! in `files.rs`.
//!
//! Needs the default model (`make test` fetches it), bubblewrap and writable cgroups
//! (root), as the sandbox tests do.
#![cfg(feature = "llama")]

#[path = "../common/mod.rs"]
mod common;
mod files;
mod props;
mod util;

use std::time::Duration;

use assert_cmd::Command;
use harness_rl::harness::Harness;
use harness_rl::harness::dispatch::DispatchConfig;
use harness_rl::harness::edit::{self, Edit, EditContext};
use harness_rl::harness::rollout::{FailureClass, Rollout, ToolPurpose};
use harness_rl::harness::runtime::{ProgramLimits, RunConfig};
use harness_rl::harness::tools::ToolLimits;
use util::*;

/// A run configuration for the model tests: short generations are set by edits;
/// here the program limits are tight so a runaway harness ends fast.
fn config(concurrency: usize) -> RunConfig {
    RunConfig {
        concurrency,
        program: ProgramLimits {
            max_tokens: 300,
            wall: Duration::from_secs(20),
            ..ProgramLimits::default()
        },
        tool: ToolLimits {
            timeout: Duration::from_secs(5),
            ..ToolLimits::default()
        },
        ..RunConfig::default()
    }
}

/// A seed harness with its token budget cut to `max_tokens` (mechanics only).
fn short_seed(name: &str, max_tokens: u32) -> Harness {
    let Harness::Declarative(d) = Harness::load(&seed_harness(name)).unwrap() else {
        panic!("{name} is declarative")
    };
    let e = Edit::SetSampling {
        temperature: None,
        top_p: None,
        max_tokens: Some(max_tokens),
        stop: None,
    };
    Harness::Declarative(edit::apply(&d, &[e], &EditContext::default()).unwrap())
}

/// Invariants every rollout keeps.
fn check_rollout(r: &Rollout, h: &Harness, model_id: &str) {
    assert_eq!(r.harness_hash, h.hash());
    assert_eq!(r.executor.model_id, model_id);
    assert!(
        r.score == 0.0 || r.score == 1.0,
        "{}: {}",
        r.item_id,
        r.score
    );
    assert_eq!(
        r.failure.is_none(),
        r.score >= 1.0,
        "{}: {:?}",
        r.item_id,
        r.failure
    );
    assert_eq!(r.executor_free, r.calls.is_empty());
    let completion: u64 = r.calls.iter().map(|c| c.completion_tokens as u64).sum();
    assert_eq!(r.tokens.completion, completion);
    for c in &r.calls {
        assert!(!c.cached, "{}: a fresh cache served a call", r.item_id);
        assert!(c.error.is_none(), "{}: {:?}", r.item_id, c.error);
    }
    if let Some(g) = &r.gold {
        if r.score == 1.0 {
            assert!(r.extracted.is_some());
        }
        assert!(!g.is_empty());
    }
}

#[test]
fn seed_harnesses_run_on_smollm2() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let exec = open_smol(4, dir.path());
    let model_id = exec.identity.model_id.clone();
    let specs = ["families:gcd,count_primes:n=2:seed=3"];
    for (name, max_tokens) in [
        ("zero-shot.toml", 24),
        ("reason.toml", 32),
        ("program.toml", 64),
        ("python-tool.toml", 48),
    ] {
        let h = short_seed(name, max_tokens);
        let out = run(&h, &specs, &exec, &config(4));
        assert_eq!(out.rollouts.len(), 4, "{name}");
        for r in &out.rollouts {
            check_rollout(r, &h, &model_id);
            assert!(!r.calls.is_empty(), "{name}: {}", r.item_id);
            // The harness's rule replaced the question's own instruction.
            let user = &r.calls[0].messages.last().unwrap().content;
            assert!(!user.contains("for example <answer>"), "{name}: {user}");
            match name {
                "program.toml" => {
                    let ran = r.tools.iter().any(|t| t.purpose == ToolPurpose::Program);
                    assert_eq!(ran, r.program.is_some(), "{name}: {}", r.item_id);
                    if r.program.is_none() {
                        assert!(matches!(
                            r.failure,
                            Some(FailureClass::NoAnswer | FailureClass::Truncated)
                        ));
                    }
                }
                "python-tool.toml" => {
                    assert!(r.tools.iter().all(|t| t.purpose == ToolPurpose::Tool));
                    assert!(r.calls.len() <= 1 + 3 + 1, "{}", r.calls.len());
                    assert_eq!(r.calls.len() >= 2, !r.tools.is_empty());
                }
                _ => assert_eq!(r.calls.len(), 1, "{name}"),
            }
        }
        assert!(out.batches.batches >= 1);
    }
    // The program-kind zero-shot: one llm call per item.
    let h = Harness::load(&seed_harness("zero-shot.py")).unwrap();
    let out = run(&h, &specs, &exec, &config(4));
    for r in &out.rollouts {
        check_rollout(r, &h, &model_id);
        assert_eq!(r.calls.len(), 1, "{}: {:?}", r.item_id, r.detail);
        assert_ne!(
            r.failure,
            Some(FailureClass::HarnessError),
            "{:?}",
            r.detail
        );
        assert_eq!(r.response, r.calls[0].completion);
    }
}

#[test]
fn greedy_runs_repeat_exactly_and_the_cache_answers_a_rerun() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let h = short_seed("zero-shot.toml", 16);
    let specs = ["families:spell_backward,gcd:n=3"];
    let a = run(&h, &specs, &open_smol(4, dir.path()), &config(6));
    let other = tempfile::tempdir().unwrap();
    let b = run(&h, &specs, &open_smol(2, other.path()), &config(2));
    for (x, y) in a.rollouts.iter().zip(&b.rollouts) {
        assert_eq!(x.item_id, y.item_id);
        assert_eq!(x.response, y.response, "{}", x.item_id);
        assert_eq!(x.score, y.score);
    }
    // Same cache: every call is a hit, results identical.
    let c = run(&h, &specs, &open_smol(4, dir.path()), &config(6));
    for (x, z) in a.rollouts.iter().zip(&c.rollouts) {
        assert!(z.calls.iter().all(|c| c.cached));
        assert_eq!(x.response, z.response);
    }
}

const BATCHING_HARNESS: &str = r#"
def solve(question, llm, python):
    first = llm("Say one word about: " + question.body[:60], max_tokens=4)
    second = llm("Repeat: " + first, max_tokens=4)
    return "<answer>" + second + "</answer>"
"#;

#[test]
fn program_harness_llm_calls_are_batched_across_instances() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let exec = open_smol(4, dir.path());
    let h = program(BATCHING_HARNESS);
    let mut cfg = config(4);
    // A batch leaves only when every running instance is waiting on the executor.
    cfg.dispatch = DispatchConfig {
        window: Duration::from_secs(120),
        ..DispatchConfig::default()
    };
    let out = run(&h, &["families:gcd:n=4"], &exec, &cfg);
    for r in &out.rollouts {
        assert_eq!(r.calls.len(), 2, "{}: {:?}", r.item_id, r.detail);
        assert_ne!(
            r.failure,
            Some(FailureClass::HarnessError),
            "{:?}",
            r.detail
        );
        assert!(!r.executor_free);
    }
    // The first calls of all four instances leave as one batch (nothing is in flight
    // yet, so the dispatcher waits until every instance is waiting). Second calls go
    // out as their callers get answers (a caller is answered when its own request is
    // done, not the whole batch) and join the executor's continuous batch; all eight
    // requests are accounted for.
    assert_eq!(out.batches.sizes.first(), Some(&4), "{:?}", out.batches);
    assert_eq!(out.batches.requests, 8, "{:?}", out.batches);
    assert_eq!(
        out.batches.sizes.iter().sum::<u32>(),
        8,
        "{:?}",
        out.batches
    );
    let llama = exec.llama.as_ref().unwrap().stats();
    assert!(llama.max_concurrent > 1, "{llama:?}");
}

/// Run one program harness on one gcd item with tight limits.
fn run_one(source: &str, limits: ProgramLimits) -> Rollout {
    let dir = tempfile::tempdir().unwrap();
    let exec = open_smol(2, dir.path());
    let mut cfg = config(1);
    cfg.program = limits;
    let out = run(&program(source), &["families:gcd:n=1:seed=11"], &exec, &cfg);
    out.rollouts.into_iter().next().unwrap()
}

fn tight() -> ProgramLimits {
    ProgramLimits {
        max_llm_calls: 3,
        max_tokens: 2000,
        max_tool_calls: 2,
        wall: Duration::from_secs(4),
        memory_mb: 512,
        output_bytes: 64 << 10,
        max_message_bytes: 64 << 10,
    }
}

#[test]
fn program_harness_limits_and_failure_classes() {
    let _g = heavy();
    // Raises: harness_error with the exception in the detail.
    let r = run_one(
        "def solve(question, llm, python):\n    raise ValueError('boom in the harness')\n",
        tight(),
    );
    assert_eq!(r.failure, Some(FailureClass::HarnessError));
    assert!(
        r.detail.as_deref().unwrap().contains("boom in the harness"),
        "{:?}",
        r.detail
    );
    assert!(r.executor_free);

    // Loops forever: timeout.
    let r = run_one(
        "def solve(question, llm, python):\n    while True:\n        pass\n",
        tight(),
    );
    assert_eq!(r.failure, Some(FailureClass::Timeout), "{:?}", r.detail);

    // Sleeps: the wall clock stops it too.
    let r = run_one(
        "import time\ndef solve(question, llm, python):\n    time.sleep(600)\n    return ''\n",
        tight(),
    );
    assert_eq!(r.failure, Some(FailureClass::Timeout), "{:?}", r.detail);

    // Floods its output: harness_error, and the output kept is capped.
    let r = run_one(
        "import sys\ndef solve(question, llm, python):\n    while True:\n        sys.stdout.write('x' * 65536)\n",
        tight(),
    );
    assert_eq!(r.failure, Some(FailureClass::HarnessError));
    assert!(
        r.detail.as_deref().unwrap().contains("printed more than"),
        "{:?}",
        r.detail
    );

    // Calls the executor past its limit: the fourth call raises LimitExceeded.
    let r = run_one(
        "def solve(question, llm, python):\n    for i in range(10):\n        llm('Say hi', max_tokens=2)\n    return 'never'\n",
        tight(),
    );
    assert_eq!(r.calls.len(), 3);
    assert_eq!(r.failure, Some(FailureClass::HarnessError));
    let d = r.detail.unwrap();
    assert!(
        d.contains("limit: 3 llm calls") && d.contains("LimitExceeded"),
        "{d}"
    );

    // A harness that catches the limit still answers; the limit is recorded.
    let r = run_one(
        "def solve(question, llm, python):\n    n = 0\n    try:\n        while True:\n            llm('Say hi', max_tokens=2)\n            n += 1\n    except Exception:\n        return str(n)\n",
        tight(),
    );
    assert_eq!(r.calls.len(), 3);
    assert_eq!(r.response, "3");
    assert!(
        r.detail.as_deref().unwrap_or("").contains("limit"),
        "{:?}",
        r.detail
    );

    // Token limit: 2000 tokens of prompt and completion in total.
    let mut limits = tight();
    limits.max_llm_calls = 1000;
    limits.max_tokens = 60;
    let r = run_one(
        "def solve(question, llm, python):\n    while True:\n        llm('Count from one to one hundred.', max_tokens=50)\n",
        limits,
    );
    let used: u64 = r
        .calls
        .iter()
        .map(|c| (c.prompt_tokens + c.completion_tokens) as u64)
        .sum();
    assert!(!r.calls.is_empty() && used >= 60, "{used}");
    assert!(
        r.detail.as_deref().unwrap().contains("tokens per instance"),
        "{:?}",
        r.detail
    );

    // Tool-call limit.
    let r = run_one(
        "def solve(question, llm, python):\n    for i in range(5):\n        python('print(1)')\n    return 'x'\n",
        tight(),
    );
    assert_eq!(r.tools.len(), 2);
    assert!(
        r.detail.as_deref().unwrap().contains("python calls"),
        "{:?}",
        r.detail
    );

    // Returns a non-string.
    let r = run_one(
        "def solve(question, llm, python):\n    return 42\n",
        tight(),
    );
    assert_eq!(r.failure, Some(FailureClass::HarnessError));
    assert!(r.detail.as_deref().unwrap().contains("not str"));
}

#[test]
fn a_harness_that_never_calls_the_executor_is_flagged() {
    let _g = heavy();
    // Solves gcd in Python from the question text: right answers, no executor.
    let src = r#"
import math, re
def solve(question, llm, python):
    a, b = [int(x) for x in re.findall(r"\d+", question.body)[:2]]
    return str(math.gcd(a, b))
"#;
    let dir = tempfile::tempdir().unwrap();
    let exec = open_smol(2, dir.path());
    let out = run(&program(src), &["families:gcd:n=3"], &exec, &config(3));
    for r in &out.rollouts {
        assert!(r.executor_free);
        assert_eq!(r.score, 1.0, "{:?}", r.detail);
    }
    let agg = harness_rl::harness::execution_report::Aggregates::from_rollouts(&out.rollouts);
    assert_eq!(agg.executor_free, 3);
    assert_eq!(agg.executor_free_rate, 1.0);
    assert!(agg.table().contains("gcd"));
    assert_eq!(out.batches.batches, 0);
}

#[test]
fn nothing_escapes_a_program_harness() {
    let _g = heavy();
    let tok = token();
    // The harness tries the host: network, files outside, the model cache, a process
    // that outlives it, and garbage on the channel. It reports what it could do.
    let src = format!(
        r#"
import json, os, socket, subprocess
def attempt(f):
    try:
        return repr(f())[:80]
    except BaseException as e:
        return "blocked: " + type(e).__name__
def solve(question, llm, python):
    out = {{}}
    out["net"] = attempt(lambda: socket.create_connection(("127.0.0.1", 22), timeout=2))
    out["home"] = attempt(lambda: os.listdir("/root"))
    out["write"] = attempt(lambda: open("/usr/hrl-escape", "w"))
    out["models"] = attempt(lambda: os.listdir("{models}"))
    out["files"] = sorted(os.listdir("."))
    subprocess.Popen(["python3", "-c", "import time; time.sleep(300)", "{tok}"], start_new_session=True)
    nested = python("import socket\ntry:\n    socket.create_connection(('127.0.0.1', 22), timeout=2)\n    print('connected')\nexcept OSError as e:\n    print('blocked', type(e).__name__)")
    out["nested"] = nested.stdout.strip()
    return json.dumps(out)
"#,
        models = harness_rl::models::models_dir().display()
    );
    let r = run_one(&src, tight());
    assert!(
        r.failure.is_none()
            || r.failure == Some(FailureClass::BadFormat)
            || r.failure == Some(FailureClass::Wrong),
        "{:?}",
        r.detail
    );
    let v: serde_json::Value = serde_json::from_str(&r.response).expect(&r.response);
    for k in ["net", "write", "models"] {
        assert!(v[k].as_str().unwrap().starts_with("blocked"), "{k}: {v}");
    }
    // Of the host's home only the interpreter's own install (bound read-only when it
    // lives there, e.g. pyenv) may be visible; no cache, keys or project files.
    let home = v["home"].as_str().unwrap();
    for secret in [".cache", ".ssh", ".cargo", "harness-rl", ".bash_history"] {
        assert!(!home.contains(secret), "home: {home}");
    }
    // The harness sees its own file and nothing of the question's gold answer.
    assert_eq!(v["files"], serde_json::json!(["harness.py", "main.py"]));
    assert!(v["nested"].as_str().unwrap().starts_with("blocked"), "{v}");
    assert_eq!(
        survivors(&tok),
        Vec::<i32>::new(),
        "a process survived the harness"
    );

    // Garbage on the channel is a protocol violation: the harness is stopped.
    let r = run_one(
        "import sys\ndef solve(question, llm, python):\n    sys.modules['__main__']._call({'op': 'steal'})\n    return 'x'\n",
        tight(),
    );
    assert_eq!(r.failure, Some(FailureClass::HarnessError));
    assert!(
        r.detail.as_deref().unwrap().contains("protocol violation"),
        "{:?}",
        r.detail
    );
    // An oversized message too.
    let r = run_one(
        "def solve(question, llm, python):\n    return llm('x' * 200000)\n",
        tight(),
    );
    assert_eq!(r.failure, Some(FailureClass::HarnessError));
    assert!(
        r.detail.as_deref().unwrap().contains("exceeded"),
        "{:?}",
        r.detail
    );
}

#[test]
fn the_question_object_is_documented_and_has_no_gold() {
    let _g = heavy();
    let src = r#"
import json
def solve(question, llm, python):
    return json.dumps({k: question[k] for k in question.keys()})
"#;
    let dir = tempfile::tempdir().unwrap();
    let exec = open_smol(2, dir.path());
    let tasks = items(&["families:gcd:n=1:seed=5"]);
    let out = run_items(&program(src), &tasks.items, &exec, &config(1));
    let r = &out.rollouts[0];
    let v: serde_json::Value = serde_json::from_str(&r.response).unwrap();
    let item = &tasks.items[0];
    // The task-agnostic view by default: no task id, family or level to dispatch on.
    assert!(v["id"].is_null(), "{v}");
    assert!(v["group"].is_null(), "{v}");
    assert!(v["level"].is_null(), "{v}");
    // The full view only when the program asks for it (part of its source and hash).
    let full = format!(
        "{}\n{src}",
        harness_rl::harness::program::FULL_VIEW_DIRECTIVE
    );
    let out_full = run_items(&program(&full), &tasks.items, &exec, &config(1));
    let f: serde_json::Value = serde_json::from_str(&out_full.rollouts[0].response).unwrap();
    assert_eq!(f["id"], item.id().as_str());
    assert_eq!(f["group"], "gcd");
    assert_eq!(f["level"], 1);
    assert_eq!(v["kind"], "answer");
    assert_eq!(v["body"], item.body());
    assert_eq!(v["text"], item.question().as_str());
    assert_eq!(v["answer_format"], item.answer_format());
    assert_eq!(v["instruction"], item.answer_instruction());
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "id",
            "group",
            "kind",
            "text",
            "body",
            "answer_format",
            "instruction",
            "level",
            "io",
            "starter_code",
            "entry_point",
            "contract"
        ]
    );
    // No field carries the gold answer (the keys above are all there is).
}

#[test]
fn code_items_are_graded_through_the_same_runtime() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let exec = open_smol(2, dir.path());
    let lcb = format!("lcb:{}:n=2", repo().join("fixtures/lcb").display());
    // A program harness that answers the first fixture problem with its reference
    // solution, without the executor.
    let reference = r#"
def solve(question, llm, python):
    if question.io == "stdin" and "Even" in question.body:
        return "```python\ns = input().strip()\nt = 0\nfor ch in s:\n    t ^= int(ch) & 1\nprint('Odd' if t else 'Even')\n```"
    return "print(0)"
"#;
    let out = run(&program(reference), &[&lcb], &exec, &config(2));
    assert_eq!(out.rollouts.len(), 2);
    let first = &out.rollouts[0];
    assert_eq!(first.item_id, "lcb:hrc001_a");
    assert_eq!(first.group, "atcoder/easy");
    assert_eq!(first.score, 1.0, "{:?}", first.detail);
    assert!(first.executor_free);
    let second = &out.rollouts[1];
    assert_eq!(second.score, 0.0);
    assert_eq!(second.failure, Some(FailureClass::Wrong));
    assert!(
        second.detail.as_deref().unwrap().contains("tests run"),
        "{:?}",
        second.detail
    );
    // The zero-shot seed on code items: LiveCodeBench's prompt, graded.
    let h = short_seed("zero-shot.toml", 48);
    let out = run(&h, &[&lcb], &exec, &config(2));
    for r in &out.rollouts {
        assert_eq!(r.calls.len(), 1);
        assert!(r.calls[0].messages[0].content.starts_with("### Question:"));
        assert!(matches!(
            r.failure,
            None | Some(FailureClass::Wrong | FailureClass::NoAnswer | FailureClass::Truncated)
        ));
    }
}

#[test]
fn hrl_run_writes_a_run_directory_and_resumes() {
    let _g = heavy();
    let home = private_home();
    let out = tempfile::tempdir().unwrap();
    let h = out.path().join("h.toml");
    std::fs::write(
        &h,
        "name = \"tiny\"\n[format]\nrule = \"Answer {format} in <answer></answer> tags.\"\n[sampling]\nmax_tokens = 12\n",
    )
    .unwrap();
    let run_dir = out.path().join("run");
    let args = [
        "run",
        "--harness",
        h.to_str().unwrap(),
        "--tasks",
        "families:gcd:n=2",
        "--tasks",
        "families:count_primes:n=1",
        "--executor",
        "llama:smollm2-135m,threads=1,n_parallel=2",
        "--out",
        run_dir.to_str().unwrap(),
        "--json",
    ];
    // One invocation with these arguments: its summary (--json).
    let run_json = || -> serde_json::Value {
        let o = Command::cargo_bin("hrl")
            .unwrap()
            .env("HRL_HOME", home.path())
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let s = run_json();
    assert_eq!(s["items"], 3);
    assert_eq!(s["aggregates"]["n"], 3);
    assert_eq!(s["reused"], 0);
    assert_eq!(s["cache"]["misses"], 3);
    assert_eq!(s["aggregates"]["groups"].as_array().unwrap().len(), 2);
    assert!(
        s["executor"]["build"]["llama_features"]
            .as_array()
            .is_some()
    );
    let log = std::fs::read_to_string(run_dir.join("rollouts.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 3);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary, s);
    // The sandbox's interpreter is recorded and hashed into every rollout's config hash.
    let py = &s["sandbox_python"];
    assert!(
        py["version"].as_str().unwrap().starts_with("cpython 3."),
        "{py}"
    );
    assert_eq!(py["hash"].as_str().unwrap().len(), 16, "{py}");
    assert!(py["packages"].is_array(), "{py}");
    for line in log.lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(r["config_hash"], s["config_hash"]);
    }
    let harness_copy = run_dir
        .join("harnesses")
        .join(format!("{}.toml", s["harness"]["hash"].as_str().unwrap()));
    assert!(harness_copy.is_file());
    // A torn last line (a killed run) is ignored; a rerun reuses the three rollouts.
    std::fs::write(
        run_dir.join("rollouts.jsonl"),
        format!("{log}{{\"schema\": 1, \"item_"),
    )
    .unwrap();
    let s2 = run_json();
    assert_eq!(s2["reused"], 3);
    assert_eq!(s2["aggregates"]["score"], s["aggregates"]["score"]);
    // The resumed summary keeps the first invocation's wall time in its total.
    assert_eq!(s["invocations"], 1);
    assert_eq!(s2["invocations"], 2);
    let total = |v: &serde_json::Value| v["wall_s_total"].as_f64().unwrap();
    let wall = |v: &serde_json::Value| v["wall_s"].as_f64().unwrap();
    assert_eq!(total(&s), wall(&s));
    assert!((total(&s2) - (wall(&s) + wall(&s2))).abs() < 1e-9);
    // The table form.
    let o = Command::cargo_bin("hrl")
        .unwrap()
        .env("HRL_HOME", home.path())
        .args(&args[..args.len() - 1])
        .arg("--no-progress")
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("95% CI") && table.contains("overall"),
        "{table}"
    );
    assert!(table.contains("executor-free rollouts: 0"), "{table}");
    // A rollout of the same item id whose question differs (an older generator
    // version of the family) is not reused: that item runs again.
    let log = std::fs::read_to_string(run_dir.join("rollouts.jsonl")).unwrap();
    // (The torn line written above is still last; it is left out.)
    let mut lines: Vec<String> = log.lines().take(3).map(String::from).collect();
    let mut first: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    first["question"] = "The question an older version of the family asked.".into();
    lines[0] = first.to_string();
    std::fs::write(run_dir.join("rollouts.jsonl"), lines.join("\n") + "\n").unwrap();
    let s3 = run_json();
    assert_eq!(s3["reused"], 2);
    assert_eq!(s3["items"], 3);
    let log = std::fs::read_to_string(run_dir.join("rollouts.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 4);
    // Another interpreter (a venv, here with no packages at all) is another result
    // identity: nothing is reused, though every completion comes from the cache.
    let venv_dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let venv = venv_dir.path().join("v");
    let st = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(st.success());
    let o = Command::cargo_bin("hrl")
        .unwrap()
        .env("HRL_HOME", home.path())
        .args(args)
        .arg("--python")
        .arg(venv.join("bin/python3"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s4: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s4["reused"], 0);
    assert_eq!(s4["cache"]["misses"], 0);
    assert_ne!(s4["config_hash"], s["config_hash"]);
    assert_eq!(s4["sandbox_python"]["packages"], serde_json::json!([]));
    assert_eq!(s4["sandbox_python"]["version"], py["version"]);
    assert_eq!(s4["aggregates"]["score"], s["aggregates"]["score"]);
}

/// A session's worker has no parent-death signal (it outlives the thread that started
/// it), so it watches its control pipe: when `hrl` is killed mid-run, the tool program
/// (and what it started) dies at once, not at the end of its time limit.
#[test]
fn a_killed_hrl_run_leaves_no_tool_program_running() {
    let _g = heavy();
    let home = private_home();
    let dir = tempfile::tempdir().unwrap();
    let tok = token();
    let h = dir.path().join("sleeper.py");
    std::fs::write(
        &h,
        format!(
            "def solve(question, llm, python):\n    python(\"import subprocess, time\\nsubprocess.Popen(['python3', '-c', 'import time; time.sleep(60)', '{tok}'])\\ntime.sleep(60)\\n\")\n    return '1'\n"
        ),
    )
    .unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hrl"))
        .env("HRL_HOME", home.path())
        .args(["run", "--harness"])
        .arg(&h)
        .args([
            "--tasks",
            "families:gcd:n=1",
            "--executor",
            "llama:smollm2-135m,threads=1,n_parallel=1",
            "--no-cache",
            "--no-progress",
            "--out",
        ])
        .arg(dir.path().join("run"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while survivors(&tok).is_empty() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "hrl run ended before its tool program started"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the tool program never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL: no destructor runs
    child.wait().unwrap();
    let killed = std::time::Instant::now();
    while !survivors(&tok).is_empty() {
        assert!(
            killed.elapsed() < Duration::from_secs(5),
            "the tool program outlived the killed hrl by 5 s (its limit is 10 s): {:?}",
            survivors(&tok)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn hrl_harness_commands() {
    let dir = tempfile::tempdir().unwrap();
    let zs = seed_harness("zero-shot.toml");
    let prog = seed_harness("program.toml");
    let hrl = |args: &[&str]| {
        let o = Command::cargo_bin("hrl")
            .unwrap()
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, out, _) = hrl(&[
        "harness",
        "hash",
        zs.to_str().unwrap(),
        prog.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0));
    let h = Harness::load(&zs).unwrap().hash();
    assert!(out.starts_with(&h), "{out}");
    let (_, out, _) = hrl(&[
        "harness",
        "diff",
        zs.to_str().unwrap(),
        prog.to_str().unwrap(),
    ]);
    assert!(
        out.contains("-kind = \"direct\"") && out.contains("+kind = \"program\""),
        "{out}"
    );
    let (_, out, _) = hrl(&[
        "harness",
        "show",
        zs.to_str().unwrap(),
        "--render",
        "families:gcd:n=1",
    ]);
    assert!(
        out.contains("# messages for gcd/L1/s0/i0") && out.contains("--- user ---"),
        "{out}"
    );
    // apply-edit: the result is the canonical form of the edited harness.
    let edited = dir.path().join("e.toml");
    let (code, _, err) = hrl(&[
        "harness",
        "apply-edit",
        zs.to_str().unwrap(),
        "--edit",
        r#"{"op": "set_strategy", "strategy": {"kind": "program", "repl_print": true}}"#,
        "--edit",
        r#"{"op": "add_example", "from_feedback": "gcd/L1/s9/i0"}"#,
        "--feedback",
        "families:gcd:n=1:seed=9",
        "--out",
        edited.to_str().unwrap(),
    ]);
    // A program strategy has no response to show for a feedback item without a
    // solved rollout: the edit is refused with its index and reason.
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("edit 1 (add_example)"), "{err}");
    let (code, _, err) = hrl(&[
        "harness",
        "apply-edit",
        zs.to_str().unwrap(),
        "--edit",
        r#"{"op": "add_example", "from_feedback": "gcd/L1/s9/i0"}"#,
        "--edit",
        r#"{"op": "add_instruction", "snippet": "answer-only"}"#,
        "--feedback",
        "families:gcd:n=1:seed=9",
        "--out",
        edited.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let e = Harness::load(&edited).unwrap();
    let Harness::Declarative(d) = &e else {
        panic!()
    };
    assert_eq!(d.examples.len(), 1);
    assert!(d.examples[0].response.starts_with("<answer>"));
    assert_eq!(d.instructions.len(), 1);
    assert!(err.contains(&e.hash()[..12]), "{err}");
    let (code, out, _) = hrl(&["harness", "snippets", "--json"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("\"no-input\""));
}

#[test]
fn the_thread_count_is_part_of_the_executor_identity_and_the_slot_count_is_not() {
    // Threads change long greedy generations (docs/RESULTS.md), so a run or a cache
    // entry made with one thread count must not be taken for another's.
    let _g = heavy();
    let open = |extra: &str| {
        harness_rl::executor::spec::ExecutorSpec::parse(&format!(
            "llama:{},ctx=512,{extra}",
            smol()
        ))
        .unwrap()
        .open(&harness_rl::executor::spec::OpenOptions {
            cache: harness_rl::executor::spec::CacheSetting::Off,
        })
        .expect("SmolLM2 opens")
        .identity
    };
    let one = open("threads=1,n_parallel=1");
    let two = open("threads=2,n_parallel=1");
    let one_wide = open("threads=1,n_parallel=4");
    assert_eq!(one.output_settings["threads"], 1);
    assert_eq!(two.output_settings["threads"], 2);
    assert_ne!(one.hash, two.hash);
    assert_eq!(one.hash, one_wide.hash);
}

/// A program harness whose timing changes from run to run: it sleeps a random time
/// (seeded by the wall clock) before each llm() call, and makes one to three calls
/// (how many depends on the question), all sharing a preamble of several prefill
/// blocks (so prefixes are copied from live sequences or kept ones: the recorded
/// `cached_prompt_tokens` follow the schedule).
const JITTER_HARNESS: &str = r#"
import random, time
random.seed(time.time_ns())
PREAMBLE = "You answer briefly and plainly, in one sentence, without lists. " * 24

def solve(question, llm, python):
    calls = 1 + len(question.body) % 3
    said = ""
    for k in range(calls):
        time.sleep(random.random() * 0.25)
        said = llm(PREAMBLE + "Say one short sentence about: " + question.body[:80] + said, max_tokens=8)
    return "<answer>" + said + "</answer>"
"#;

/// The log with the fields that measure time removed (everything else must repeat).
fn untimed(log: &str) -> Vec<serde_json::Value> {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                for k in ["ms", "wall_ms", "cpu_ms"] {
                    m.remove(k);
                }
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    log.lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            strip(&mut v);
            v
        })
        .collect()
}

#[test]
fn waves_make_a_rerun_and_a_resume_repeat_the_rollouts_under_random_sandbox_delays() {
    let _g = heavy();
    let home = private_home();
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().join("jitter.py");
    std::fs::write(&h, JITTER_HARNESS).unwrap();
    let hrl_run = |out: &std::path::Path| {
        let o = Command::cargo_bin("hrl")
            .unwrap()
            .env("HRL_HOME", home.path())
            .args(["run", "--harness", h.to_str().unwrap()])
            .args(["--tasks", "families:gcd,count_primes:n=4"])
            .args(["--executor", "llama:smollm2-135m,threads=1,n_parallel=3"])
            .args(["--concurrency", "6", "--waves", "4", "--no-cache", "--json"])
            .arg("--out")
            .arg(out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let log = std::fs::read_to_string(out.join("rollouts.jsonl")).unwrap();
        (s, log)
    };
    let (s1, log1) = hrl_run(&dir.path().join("a"));
    let (s2, log2) = hrl_run(&dir.path().join("b"));
    let (a, b) = (untimed(&log1), untimed(&log2));
    assert_eq!(a.len(), 8);
    // Something to compare: several calls per rollout, and kept or shared prefixes.
    assert!(a.iter().any(|r| r["calls"].as_array().unwrap().len() > 1));
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y, "the rerun's rollout differs");
    }
    assert_eq!(s1["aggregates"], s2["aggregates"]);
    assert_eq!(s1["batching"]["sizes"], s2["batching"]["sizes"]);
    assert!(s1["batching"]["sizes"].is_array(), "{s1}");
    // An interrupted run (the log is written in item order, so it is a prefix; cut it
    // inside the second wave group) resumed gives the same log.
    let c = dir.path().join("c");
    std::fs::create_dir_all(&c).unwrap();
    for f in std::fs::read_dir(dir.path().join("a")).unwrap() {
        let f = f.unwrap();
        if f.file_type().unwrap().is_file() {
            std::fs::copy(f.path(), c.join(f.file_name())).unwrap();
        }
    }
    let head: String = log1.lines().take(5).map(|l| format!("{l}\n")).collect();
    std::fs::write(c.join("rollouts.jsonl"), head).unwrap();
    std::fs::remove_file(c.join("summary.json")).ok();
    let (s3, log3) = hrl_run(&c);
    assert_eq!(s3["reused"], 5, "{s3}");
    assert_eq!(untimed(&log3), a, "the resumed log differs");
    assert_eq!(s3["aggregates"], s1["aggregates"]);
}
