//! HumanEval as a code task source: fetching the real data with pip (into a private
//! home), the loader against Python's own decoding, the sandboxed grader on real
//! problems (canonical solutions pass, broken ones fail with the right code), hostile
//! solutions, the shared `CodeGrader` interface from many threads, and `hrl humaneval`.
//!
//! The real data comes from `$HRL_HOME/humaneval` as `make test` fetches it (`make
//! humaneval`, i.e. `hrl humaneval fetch`); a test that needs it and does not find it
//! fails naming that command.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use assert_cmd::Command as Cmd;
use harness_rl::grading::{CodeGrader, SampleResult, TestCode};
use harness_rl::humaneval::{self, GradeConfig, Grader, Problem, Solution};
use harness_rl::sandbox::SandboxConfig;
use serde_json::Value;

fn hrl() -> Cmd {
    Cmd::cargo_bin("hrl").unwrap()
}

fn data() -> PathBuf {
    humaneval::default_data()
        .unwrap_or_else(|e| panic!("{e} (make test runs `make humaneval` first)"))
}

fn problems() -> Vec<Problem> {
    humaneval::load(&data()).unwrap()
}

fn by_id(ps: &[Problem]) -> BTreeMap<String, Problem> {
    ps.iter().map(|p| (p.task_id.clone(), p.clone())).collect()
}

fn grader(timeout_s: u64) -> Grader {
    Grader::new(
        SandboxConfig::default(),
        GradeConfig {
            timeout: Duration::from_secs(timeout_s),
            ..GradeConfig::default()
        },
    )
    .expect("the isolated sandbox is available")
}

fn python_sha256(path: &Path) -> String {
    let out = Command::new("python3")
        .args(["-c", "import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())"])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn fetch_into_a_private_home_verifies_and_is_idempotent() {
    let home = tempfile::tempdir().unwrap();
    let run = || {
        let out = hrl()
            .args(["humaneval", "fetch"])
            .env("HRL_HOME", home.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(run().starts_with("installed:"));
    let file = home.path().join("humaneval").join(humaneval::DATA_FILE);
    assert_eq!(python_sha256(&file), humaneval::DATA_SHA256);
    assert!(run().starts_with("already installed:"));
    // A damaged file is replaced by a verified one; no scratch directory is left.
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.push(0);
    std::fs::write(&file, bytes).unwrap();
    assert!(run().starts_with("installed:"));
    assert_eq!(python_sha256(&file), humaneval::DATA_SHA256);
    let names: Vec<_> = std::fs::read_dir(home.path().join("humaneval"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from(humaneval::DATA_FILE)]);
    // Without data, grading names the fetch command (exit 2).
    let empty = tempfile::tempdir().unwrap();
    hrl()
        .args(["humaneval", "grade", "--canonical"])
        .env("HRL_HOME", empty.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("hrl humaneval fetch"));
}

#[test]
fn loader_reads_humaneval_like_python() {
    let path = data();
    let script = r#"
import gzip, json, sys
for line in gzip.open(sys.argv[1], "rt", encoding="utf-8"):
    print(json.dumps(json.loads(line)))
"#;
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let rows: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ps = problems();
    assert_eq!(ps.len(), humaneval::HUMANEVAL_PROBLEMS);
    assert_eq!(rows.len(), ps.len());
    for (i, (p, r)) in ps.iter().zip(&rows).enumerate() {
        assert_eq!(p.task_id, r["task_id"].as_str().unwrap());
        assert_eq!(p.task_id, format!("HumanEval/{i}"));
        assert_eq!(p.prompt, r["prompt"].as_str().unwrap());
        assert_eq!(p.entry_point, r["entry_point"].as_str().unwrap());
        assert_eq!(
            p.canonical_solution,
            r["canonical_solution"].as_str().unwrap()
        );
        assert_eq!(p.test, r["test"].as_str().unwrap());
        assert_eq!(p.source.as_ref().unwrap().1, i + 1);
    }
}

/// A few real problems of different shapes: floats, strings, lists, integers.
const SOME: [&str; 6] = [
    "HumanEval/0",
    "HumanEval/2",
    "HumanEval/12",
    "HumanEval/32",
    "HumanEval/53",
    "HumanEval/101",
];

fn codes(rs: &[SampleResult]) -> Vec<i32> {
    rs.iter().map(|r| r.result_code().code()).collect()
}

#[test]
fn canonical_solutions_pass_and_broken_ones_fail() {
    let ps = problems();
    let ids = by_id(&ps);
    let g = grader(3);
    let some: Vec<&Problem> = SOME.iter().map(|id| &ids[*id]).collect();
    let canonical: Vec<(&Problem, Solution, usize)> = some
        .iter()
        .map(|p| (*p, Solution::Completion(p.canonical_solution.clone()), 0))
        .collect();
    let rs: Vec<SampleResult> = g
        .grade_many(&canonical, &|_| {})
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(codes(&rs), vec![1; SOME.len()], "{rs:?}");
    assert!(rs.iter().all(|r| r.score() == 1.0 && r.n_tests == 1));
    // The same code as a self-contained program passes too.
    for p in &some {
        let r = g
            .grade(p, &Solution::Program(p.canonical_program()), 0)
            .unwrap();
        assert!(r.passed, "{}: {:?}", p.task_id, r.failure());
    }
    // Broken completions, each failing in its own way.
    let broken: [(&str, &[i32]); 6] = [
        ("    return None\n", &[-2, -4]),
        ("    raise ValueError('broken on purpose')\n", &[-4]),
        ("    while True:\n        pass\n", &[-3]),
        ("    return (\n", &[-4]),
        ("    import os\n    os._exit(0)\n", &[-4]),
        ("    import sys\n    sys.exit(0)\n", &[-4]),
    ];
    let g1 = grader(1);
    for p in &some {
        for (completion, allowed) in &broken {
            let r = g1
                .grade(p, &Solution::Completion(completion.to_string()), 0)
                .unwrap();
            let code = r.result_code().code();
            assert!(
                !r.passed && allowed.contains(&code),
                "{} {completion:?}: {:?}",
                p.task_id,
                r.failure()
            );
            let msg = &r.failure().unwrap().message;
            match *completion {
                c if c.contains("ValueError") => {
                    assert!(msg.contains("ValueError: broken on purpose"), "{msg}")
                }
                c if c.contains("return (") => {
                    assert!(msg.starts_with("Compilation Error"), "{msg}")
                }
                c if c.contains("os._exit") => assert!(msg.contains("ended the process"), "{msg}"),
                c if c.contains("sys.exit") => assert!(msg.contains("SystemExit"), "{msg}"),
                c if c.contains("while True") => assert!(msg.contains("Time Limit"), "{msg}"),
                _ => {}
            }
        }
    }
    // An off-by-one answer fails an assertion, and the message names the assert line.
    let add = &ids["HumanEval/53"];
    let r = g
        .grade(
            add,
            &Solution::Completion("    return x + y + 1\n".into()),
            0,
        )
        .unwrap();
    assert_eq!(r.result_code(), TestCode::WrongAnswer);
    let msg = &r.failure().unwrap().message;
    assert!(
        msg.contains("assert") && msg.contains("candidate("),
        "{msg}"
    );
    // A `__main__` block does not run (the program is executed as HumanEval does).
    let guarded = format!(
        "{}\nif __name__ == '__main__':\n    raise SystemExit(1)\n",
        add.canonical_solution
    );
    assert!(
        g.grade(add, &Solution::Completion(guarded), 0)
            .unwrap()
            .passed
    );
    // A program without the entry point is a runtime error naming it.
    let r = g
        .grade(
            add,
            &Solution::Program("def plus(x, y):\n    return x + y\n".into()),
            0,
        )
        .unwrap();
    assert_eq!(r.result_code(), TestCode::RuntimeError);
    assert!(
        r.failure().unwrap().message.contains("NameError"),
        "{:?}",
        r.failure()
    );
}

#[test]
fn hostile_solutions_are_contained() {
    // Each solution of `add` answers correctly only if its attack failed, so a pass
    // means the attack was contained; the host is checked afterwards too.
    let ids = by_id(&problems());
    let add = &ids["HumanEval/53"];
    let g = grader(3);
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("pwned");
    let project_file = Path::new(env!("CARGO_MANIFEST_DIR")).join("PWNED_BY_HUMANEVAL");
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "host secret").unwrap();
    let attacks = [
        "import socket\n    socket.create_connection(('1.1.1.1', 53), timeout=2).close()"
            .to_string(),
        "import socket\n    socket.getaddrinfo('example.com', 443)".to_string(),
        format!("open({:?}, 'w').write('x')", target.display().to_string()),
        format!(
            "open({:?}, 'w').write('x')",
            project_file.display().to_string()
        ),
        format!("open({:?}).read()", secret.display().to_string()),
    ];
    for attack in &attacks {
        let code = format!(
            "def add(x: int, y: int):\n    try:\n        {}\n    except Exception:\n        return x + y\n    return -12345\n",
            attack.replace("\n    ", "\n        ")
        );
        let r = g.grade(add, &Solution::Program(code), 0).unwrap();
        assert!(
            r.passed,
            "attack not contained: {attack}: {:?}",
            r.failure()
        );
    }
    assert!(!target.exists());
    assert!(!project_file.exists());
    // A fork bomb at module level is stopped by the sandbox and fails; the grader goes on.
    let bomb =
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n";
    let r = g.grade(add, &Solution::Program(bomb.into()), 0).unwrap();
    assert!(!r.passed);
    assert!(
        matches!(
            r.result_code(),
            TestCode::TimeLimit | TestCode::RuntimeError
        ),
        "{r:?}"
    );
    // A memory bomb fails as a runtime error.
    let r = g
        .grade(
            add,
            &Solution::Program("x = bytearray(16 << 30)\n".into()),
            0,
        )
        .unwrap();
    assert_eq!(r.result_code(), TestCode::RuntimeError);
    assert!(
        g.grade(
            add,
            &Solution::Completion(add.canonical_solution.clone()),
            0
        )
        .unwrap()
        .passed
    );
    // Garbage written into the driver's own report channel is a grading error, never a pass.
    let forge = "import os\nfor fd in range(3, 20):\n    try:\n        os.write(fd, b'{\"code\": 1}\\n')\n    except OSError:\n        pass\ndef add(x, y):\n    return 0\n";
    let err = g
        .grade(add, &Solution::Program(forge.into()), 0)
        .unwrap_err();
    assert!(err.to_string().contains("driver report"), "{err}");
}

/// Grade `items` from four threads through the shared interface.
fn grade_from_threads<G: CodeGrader>(g: &G, items: &[(&G::Problem, String)]) -> Vec<SampleResult> {
    let slots = std::sync::Mutex::new(vec![None; items.len()]);
    std::thread::scope(|s| {
        for t in 0..4 {
            let slots = &slots;
            s.spawn(move || {
                for (i, (p, code)) in items.iter().enumerate().filter(|(i, _)| i % 4 == t) {
                    let r = g.grade_code(p, code, i).unwrap();
                    slots.lock().unwrap()[i] = Some(r);
                }
            });
        }
    });
    slots
        .into_inner()
        .unwrap()
        .into_iter()
        .map(Option::unwrap)
        .collect()
}

#[test]
fn code_graders_share_one_interface_and_many_threads() {
    let ids = by_id(&problems());
    let he = grader(3);
    let items: Vec<(&Problem, String)> = SOME
        .iter()
        .flat_map(|id| {
            let p = &ids[*id];
            [
                (p, p.canonical_program()),
                (p, format!("{}    raise RuntimeError('no')\n", p.prompt)),
            ]
        })
        .collect();
    let rs = grade_from_threads(&he, &items);
    for (i, r) in rs.iter().enumerate() {
        assert_eq!(r.sample, i);
        assert_eq!(r.question_id, items[i].0.task_id);
        assert_eq!(r.score(), if i % 2 == 0 { 1.0 } else { 0.0 }, "{r:?}");
        if i % 2 == 1 {
            assert_eq!(r.result_code(), TestCode::RuntimeError);
            assert!(r.failure().unwrap().message.contains("RuntimeError: no"));
        }
    }
    // The LiveCodeBench grader behind the same interface.
    let lcb = harness_rl::lcb::Grader::new(
        SandboxConfig::default(),
        harness_rl::lcb::GradeConfig {
            clock: harness_rl::lcb::TimeoutClock::Cpu,
            ..Default::default()
        },
    )
    .unwrap();
    let ds = harness_rl::lcb::load_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/lcb"),
        &harness_rl::lcb::LoadOptions::default(),
    )
    .unwrap();
    let p = ds.get("9101").unwrap();
    let good = "class Solution:\n    def countPairs(self, nums, target):\n        return sum(1 for i in range(len(nums)) for j in range(i + 1, len(nums)) if nums[i] + nums[j] == target)".to_string();
    let items: Vec<_> = (0..6)
        .map(|i| {
            (
                p,
                if i % 3 == 0 {
                    "print(".to_string()
                } else {
                    good.clone()
                },
            )
        })
        .collect();
    let rs = grade_from_threads(&lcb, &items);
    for (i, r) in rs.iter().enumerate() {
        assert_eq!(r.score(), if i % 3 == 0 { 0.0 } else { 1.0 });
    }
}

#[test]
fn cli_grade_reports_pass_at_k_with_an_interval() {
    let ids = by_id(&problems());
    let tmp = tempfile::tempdir().unwrap();
    // A small file in the same format: five real problems (also tests --data).
    let five: Vec<&Problem> = SOME[..5].iter().map(|id| &ids[*id]).collect();
    let data_file = tmp.path().join("five.jsonl");
    std::fs::write(
        &data_file,
        five.iter()
            .map(|p| serde_json::to_string(p).unwrap() + "\n")
            .collect::<String>(),
    )
    .unwrap();
    let line = |id: &str, key: &str, text: &str| {
        serde_json::json!({"task_id": id, key: text}).to_string() + "\n"
    };
    let p0 = five[0];
    let sols = [
        line(&p0.task_id, "completion", &p0.canonical_solution),
        line(&p0.task_id, "completion", "    return False\n"),
        line(
            &five[1].task_id,
            "solution",
            &format!("Sure:\n```python\n{}\n```\n", five[1].canonical_program()),
        ),
        line(&five[2].task_id, "completion", &five[2].canonical_solution),
        line(&five[3].task_id, "completion", "    return 0.0\n"),
        line(&five[4].task_id, "solution", &five[4].canonical_program()),
    ]
    .concat();
    let sols_file = tmp.path().join("s.jsonl");
    std::fs::write(&sols_file, &sols).unwrap();
    let out_file = tmp.path().join("out.json");
    let out = hrl()
        .args(["humaneval", "grade", "--data"])
        .arg(&data_file)
        .arg("--solutions")
        .arg(&sols_file)
        .arg("--out")
        .arg(&out_file)
        .args(["--extract", "--json", "--quiet", "--k", "1,2"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v,
        serde_json::from_str::<Value>(&std::fs::read_to_string(&out_file).unwrap()).unwrap()
    );
    let per: Vec<(String, u64, u64)> = v["summary"]["per_problem"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["task_id"].as_str().unwrap().into(),
                p["n"].as_u64().unwrap(),
                p["c"].as_u64().unwrap(),
            )
        })
        .collect();
    // --extract: only the fenced block of problem 1's response is graded (it passes);
    // the completions without a fence extract to nothing and fail.
    assert_eq!(
        per,
        vec![
            (five[0].task_id.clone(), 2, 0),
            (five[1].task_id.clone(), 1, 1),
            (five[2].task_id.clone(), 1, 0),
            (five[3].task_id.clone(), 1, 0),
            (five[4].task_id.clone(), 1, 0),
        ]
    );
    // pass@2 is not reported (not every problem has two samples); pass@1 has an interval.
    assert!(v["summary"]["pass_at"].get("pass@2").is_none());
    let p1 = &v["summary"]["pass_at"]["pass@1"];
    assert!((p1["mean"].as_f64().unwrap() - 0.2).abs() < 1e-12);
    assert_eq!(p1["method"], "wilson"); // problem 0 scores 0/2 = 0, the others 0 or 1
    assert!(v["data_sha256"].as_str().unwrap().len() == 64);
    // Without --extract the completions are graded as written.
    let out = hrl()
        .args(["humaneval", "grade", "--data"])
        .arg(&data_file)
        .arg("--solutions")
        .arg(&sols_file)
        .args(["--json", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cs: Vec<u64> = v["summary"]["per_problem"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["c"].as_u64().unwrap())
        .collect();
    assert_eq!(cs, vec![1, 0, 1, 0, 1]); // problem 1's response is not a program
    let p1 = &v["summary"]["pass_at"]["pass@1"];
    assert!((p1["mean"].as_f64().unwrap() - 0.5).abs() < 1e-12, "{p1}");
    assert_eq!(p1["method"], "normal");
    // The table prints pass@1 with its interval.
    let out = hrl()
        .args(["humaneval", "grade", "--data"])
        .arg(&data_file)
        .args(["--canonical", "--quiet"])
        .output()
        .unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("5 problems, 5 samples, 5 passed"), "{table}");
    assert!(
        table.contains("pass@1: 1.0000 (95% interval 0.5"),
        "{table}"
    );
}

#[test]
fn cli_grade_errors_name_the_place() {
    let ids = by_id(&problems());
    let tmp = tempfile::tempdir().unwrap();
    let data_file = tmp.path().join("one.jsonl");
    let p = &ids["HumanEval/53"];
    std::fs::write(&data_file, serde_json::to_string(p).unwrap() + "\n").unwrap();
    let sols = tmp.path().join("s.jsonl");
    let grade = |text: &str| {
        std::fs::write(&sols, text).unwrap();
        hrl()
            .args(["humaneval", "grade", "--data"])
            .arg(&data_file)
            .arg("--solutions")
            .arg(&sols)
            .args(["--json", "--quiet"])
            .output()
            .unwrap()
    };
    for (text, needle) in [
        (
            "{\"task_id\": \"HumanEval/53\"}\n",
            "s.jsonl:1: expected exactly one",
        ),
        (
            "\n{\"task_id\": \"HumanEval/9\", \"completion\": \"\"}\n",
            "s.jsonl:2: task_id `HumanEval/9` is not in",
        ),
        ("not json\n", "s.jsonl:1: not JSON"),
    ] {
        let out = grade(text);
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(needle),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // A bad data row is named by file and line.
    std::fs::write(
        &data_file,
        format!(
            "{}\n{{\"task_id\": 3}}\n",
            serde_json::to_string(p).unwrap()
        ),
    )
    .unwrap();
    let out = grade("");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("one.jsonl:2: field `task_id` is not a string")
    );
    // One ungradable solution: exit 1, the other still reported.
    std::fs::write(&data_file, serde_json::to_string(p).unwrap() + "\n").unwrap();
    let forge = "import os\nfor fd in range(3, 20):\n    try:\n        os.write(fd, b'garbage\\n')\n    except OSError:\n        pass\n";
    let out = grade(&format!(
        "{}{}",
        serde_json::json!({"task_id": "HumanEval/53", "solution": forge}),
        "\n".to_string()
            + &serde_json::json!({"task_id": "HumanEval/53", "completion": p.canonical_solution})
                .to_string()
            + "\n"
    ));
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["samples"].as_array().unwrap().len(), 1);
    assert_eq!(v["samples"][0]["passed"], true);
    assert_eq!(v["errors"].as_array().unwrap().len(), 1);
}

/// How the scripted executor continues the prefill for a problem.
type Answer = Box<dyn Fn(&Problem) -> String + Send + Sync>;

/// A scripted stand-in for a model, for the runtime test below only: it answers each
/// request with the continuation `answer` gives for the problem named in the user
/// turn, as a model would continue the assistant prefill (the closing fence already
/// removed by the stop string), and finishes with `finish`.
struct ScriptedExecutor {
    answer: Answer,
    problems: Vec<Problem>,
    finish: harness_rl::executor::FinishReason,
}

impl harness_rl::executor::Executor for ScriptedExecutor {
    fn model_id(&self) -> &str {
        "scripted"
    }

    fn complete_batch(
        &self,
        requests: &[harness_rl::executor::Request],
    ) -> Vec<Result<harness_rl::executor::Completion, harness_rl::executor::ExecutorError>> {
        use harness_rl::executor::{Completion, Prompt};
        requests
            .iter()
            .map(|r| {
                let Prompt::Chat(m) = &r.prompt else {
                    panic!("the runtime sends chat prompts")
                };
                let user = &m.iter().rev().find(|x| x.role == "user").unwrap().content;
                let p = self
                    .problems
                    .iter()
                    .find(|p| user.contains(p.prompt.trim()))
                    .expect("the user turn shows the problem's prompt");
                Ok(Completion {
                    text: (self.answer)(p),
                    finish_reason: self.finish,
                    usage: Default::default(),
                    timings: Default::default(),
                    cached: false,
                })
            })
            .collect()
    }
}

fn run_maker(
    problems: &[Problem],
    items: &[harness_rl::task::Item],
    answer: Answer,
    finish: harness_rl::executor::FinishReason,
) -> Vec<harness_rl::harness::rollout::Rollout> {
    use harness_rl::harness::runtime::{self, RunConfig, RunContext};
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let harness =
        harness_rl::harness::Harness::load(&repo.join("suites/harnesses/humaneval-maker.toml"))
            .unwrap();
    let exec = std::sync::Arc::new(ScriptedExecutor {
        answer,
        problems: problems.to_vec(),
        finish,
    });
    let sandbox = harness_rl::sandbox::Sandbox::new(SandboxConfig::default()).unwrap();
    let config = RunConfig {
        concurrency: 4,
        ..RunConfig::default()
    };
    let ctx = RunContext {
        harness: &harness,
        origin: "humaneval-maker.toml",
        executor: exec,
        executor_ref: harness_rl::executor::ExecutorRef {
            hash: "scripted".into(),
            model_id: "scripted".into(),
            backend: "scripted".into(),
            build: String::new(),
            device: None,
        },
        sandbox: &sandbox,
        config: &config,
    };
    runtime::run(
        &ctx,
        items,
        &std::collections::HashMap::new(),
        &mut |_| Ok(()),
        &|_| {},
    )
    .unwrap()
    .rollouts
}

#[test]
fn humaneval_items_go_through_the_harness_runtime() {
    use harness_rl::executor::FinishReason;
    use harness_rl::harness::rollout::FailureClass;
    use harness_rl::task::{TaskSet, spec::GradingSetup};
    // The task SPEC grammar: the installed data by default, n and start, and a path.
    let specs = vec!["humaneval:n=3:start=10".to_string()];
    let set = TaskSet::load(&specs, &GradingSetup::default()).unwrap();
    let ids: Vec<String> = set.items.iter().map(|i| i.id()).collect();
    assert_eq!(
        ids,
        [
            "humaneval:HumanEval/10",
            "humaneval:HumanEval/11",
            "humaneval:HumanEval/12"
        ]
    );
    let all = TaskSet::load(&["humaneval".to_string()], &GradingSetup::default()).unwrap();
    assert_eq!(all.items.len(), humaneval::HUMANEVAL_PROBLEMS);
    let by_path = format!("humaneval:{}:n=2", data().display());
    let two = TaskSet::load(&[by_path], &GradingSetup::default()).unwrap();
    assert_eq!(two.items[1].id(), "humaneval:HumanEval/1");
    assert_eq!(two.items[1].group(), "humaneval");
    for bad in [
        "humaneval:n=0",
        "humaneval:start=164",
        "humaneval:k=1",
        "humaneval:/nope/x.jsonl",
    ] {
        let e = TaskSet::load(&[bad.to_string()], &GradingSetup::default()).unwrap_err();
        assert!(e.is_usage(), "{bad}: {e}");
    }

    // Canonical programs (the prompt completed by the canonical solution) through the
    // maker harness: every one passes; the user turn is the EvalPlus instruction and the
    // assistant turn is pre-filled.
    let ps = problems();
    let chosen = [
        "HumanEval/0",
        "HumanEval/2",
        "HumanEval/32",
        "HumanEval/129",
    ];
    let specs: Vec<String> = ps
        .iter()
        .enumerate()
        .filter(|(_, p)| chosen.contains(&p.task_id.as_str()))
        .map(|(i, _)| format!("humaneval:n=1:start={i}"))
        .collect();
    let items = TaskSet::load(&specs, &GradingSetup::default())
        .unwrap()
        .items;
    let rs = run_maker(
        &ps,
        &items,
        Box::new(|p: &Problem| format!("{}\n", p.canonical_program().trim_end())),
        FinishReason::Stop,
    );
    assert_eq!(rs.len(), chosen.len());
    for r in &rs {
        assert_eq!(r.score, 1.0, "{}: {:?}", r.item_id, r.detail);
        assert_eq!(r.failure, None);
        let m = &r.calls[0].messages;
        assert_eq!(m[0].role, "system");
        assert!(m[1].content.starts_with(
            "Please provide a self-contained Python script that solves the following problem in a markdown code block:\n```\n"
        ));
        assert_eq!(m[2].role, "assistant");
        assert!(m[2].content.ends_with("```python\n"));
        assert!(
            r.response.starts_with(&m[2].content),
            "the response keeps the prefill"
        );
        assert!(!r.executor_free);
    }
    // Broken programs fail: a wrong value (a failed assertion), a crash, a syntax error.
    let broken: Vec<Answer> = vec![
        Box::new(|p: &Problem| format!("{}    return None\n", p.prompt)),
        Box::new(|p: &Problem| format!("{}    raise ValueError('no')\n", p.prompt)),
        Box::new(|p: &Problem| format!("{}    return (\n", p.prompt)),
    ];
    for answer in broken {
        let rs = run_maker(&ps, &items, answer, FinishReason::Stop);
        for r in &rs {
            assert_eq!(r.score, 0.0, "{}", r.item_id);
            assert_eq!(r.failure, Some(FailureClass::Wrong), "{}", r.item_id);
            assert!(
                r.detail.as_deref().unwrap().contains("code -"),
                "{:?}",
                r.detail
            );
        }
    }
    // A generation cut by max_tokens leaves the block open: it is not taken as the
    // program, even when the text so far would pass.
    let rs = run_maker(
        &ps,
        &items[..1],
        Box::new(|p: &Problem| p.canonical_program()),
        FinishReason::Length,
    );
    assert_eq!(rs[0].score, 0.0);
    assert_eq!(rs[0].program, None);
    assert_eq!(rs[0].failure, Some(FailureClass::Truncated));
}
