//! `hrl eval` as a process: a real `kill -9` in the middle of a run (sandboxed
//! programs in flight) and `--resume` against the simulated model behind HTTP, and
//! the smoke suite end to end on the real SmolLM2.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness_rl::eval::summary::{Summary, comparable_part};

use super::common::{default_model, hrl, private_home, succeed};
use super::sim::{SimModel, SimulatedServer};
use super::util::*;

fn summary(dir: &Path) -> Summary {
    let text = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn lines(p: &Path) -> usize {
    std::fs::read_to_string(p)
        .map(|t| t.lines().filter(|l| l.ends_with('}')).count())
        .unwrap_or(0)
}

/// Processes (other than `pid` itself) in a sandbox cgroup owned by `pid`.
fn sandbox_processes(pid: u32) -> Vec<u32> {
    let tag = format!("hrl-sbx-{pid}-");
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cg) = std::fs::read_to_string(e.path().join("cgroup"))
            && cg.contains(&tag)
        {
            out.push(p);
        }
    }
    out
}

/// Cgroup directories owned by `pid` (searched below /sys/fs/cgroup).
fn sandbox_cgroups(pid: u32) -> Vec<PathBuf> {
    let tag = format!("hrl-sbx-{pid}-");
    let mut found = Vec::new();
    let mut stack = vec![(PathBuf::from("/sys/fs/cgroup"), 0)];
    while let Some((d, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if !p.is_dir() || p.is_symlink() {
                continue;
            }
            if e.file_name().to_string_lossy().starts_with(&tag) {
                found.push(p);
            } else if depth < 6 {
                stack.push((p, depth + 1));
            }
        }
    }
    found
}

fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    f()
}

#[test]
fn kill_9_then_resume_equals_an_uninterrupted_run() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    // A program-strategy seed harness: every rollout runs a sandboxed program that
    // sleeps 0.3 s (the simulated model's SIM-SLEEP), so a kill lands while
    // sandboxes are alive.
    let seed = dir.path().join("seed.toml");
    std::fs::write(
        &seed,
        "system = \"SIM-SLEEP=300\"\n[strategy]\nkind = \"program\"\n[format]\nrule = \"Write a Python program that computes the answer and prints only the answer, {format}.\"\n",
    )
    .unwrap();
    let body = "rounds = 2\ncandidates = 2\nsamples = 2\n[sets]\nfeedback = 2\ndev = 3\ntest = 4\n[[task]]\nfamilies = [\"gcd\", \"count_primes\"]\nlevel = 1\n";
    // The simulated model needs the gold answers of exactly these sets.
    let probe = settings(
        &suite_text(&seed, &["identity"], body),
        dir.path(),
        &dir.path().join("x"),
    );
    let server = SimulatedServer::start(SimModel::for_settings(&probe), Duration::from_millis(30));
    let exec = format!("openai:{}#sim,max_connections=16", server.url());
    let suite = dir.path().join("kill.toml");
    let text = suite_text(&seed, &[&format!("llm:{exec}")], body).replace("llama:sim-model", &exec);
    std::fs::write(&suite, text).unwrap();
    let run = |out: &Path| {
        let st = Command::new(hrl())
            .args(["eval", "--suite"])
            .arg(&suite)
            .arg("--out")
            .arg(out)
            .args(["--no-cache", "--no-progress"])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
    };
    let a = dir.path().join("a");
    run(&a);
    assert!(server.requests.load(std::sync::atomic::Ordering::SeqCst) > 0);
    let sa = summary(&a);
    assert!(sa.complete);
    // The same run, killed with SIGKILL while sandboxed programs run.
    let b = dir.path().join("b");
    let mut child = Command::new(hrl())
        .args(["eval", "--suite"])
        .arg(&suite)
        .arg("--out")
        .arg(&b)
        .args(["--no-cache", "--no-progress"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let busy = wait_until(Duration::from_secs(120), || {
        lines(&b.join("rounds.jsonl")) >= 3 && !sandbox_processes(pid).is_empty()
    });
    assert!(
        busy,
        "the run never had sandboxes alive after round records"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // Nothing of the killed run keeps running (bubblewrap dies with its parent).
    assert!(
        wait_until(Duration::from_secs(15), || sandbox_processes(pid)
            .is_empty()),
        "sandbox processes of the killed run survive: {:?}",
        sandbox_processes(pid)
    );
    let logged = lines(&b.join("rollouts.jsonl"));
    assert!(!b.join("summary.json").exists());
    let out = succeed(
        Command::new(hrl())
            .args(["eval", "--resume"])
            .arg(&b)
            .args(["--no-cache", "--no-progress", "--json"]),
    );
    let sb: Summary = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(comparable_part(&sa), comparable_part(&sb));
    assert_eq!(sb, summary(&b));
    // No completed rollout ran again: the resumed process ran exactly the ones that
    // were not logged before the kill.
    assert_eq!(
        sb.run_stats.rollouts_run + logged as u64,
        sa.run_stats.rollouts_run
    );
    // The killed run's cgroups were swept when the resumed run opened the sandbox.
    assert!(
        sandbox_cgroups(pid).is_empty(),
        "{:?}",
        sandbox_cgroups(pid)
    );
    // A resumed run refuses other settings.
    let bad = Command::new(hrl())
        .args(["eval", "--resume"])
        .arg(&b)
        .args(["--rounds", "3"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn smoke_suite_runs_end_to_end_on_smollm2() {
    let _g = heavy();
    let m = default_model();
    // A private HRL_HOME: the model linked in, an empty completion cache.
    let home = private_home();
    let out = home.path().join("run");
    let st = succeed(
        Command::new(hrl())
            .env("HRL_HOME", home.path())
            .args(["eval", "--suite"])
            .arg(repo().join("suites/smoke.toml"))
            .arg("--out")
            .arg(&out)
            .arg("--no-progress"),
    );
    let text = String::from_utf8_lossy(&st.stdout);
    assert!(text.contains("| **overall** |"), "{text}");
    let s = summary(&out);
    assert!(s.complete && s.comparable);
    assert_eq!(s.executor_model_id, m.sha256);
    let cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("config.json")).unwrap()).unwrap();
    assert_eq!(cfg["executor"]["model_id"], m.sha256);
    assert!(cfg["git_commit"].as_str().unwrap().len() >= 7);
    assert_eq!(
        cfg["proposer"]["details"]["template"]["version"],
        "proposer-v1"
    );
    // Every rollout came from the model (the cache was empty), every candidate is
    // recorded with its raw output, and the report exists.
    let rollouts: Vec<harness_rl::harness::rollout::Rollout> =
        harness_rl::records::read(&out.join("rollouts.jsonl")).unwrap();
    assert!(!rollouts.is_empty());
    assert!(rollouts.iter().all(|r| r.calls.iter().all(|c| !c.cached)));
    let cs = candidates(&out);
    assert_eq!(
        cs.len() as u32,
        s.rounds * s.candidates * s.samples * s.tasks.len() as u32
    );
    assert!(cs.iter().all(|c| c.raw.is_some()));
    assert!(
        std::fs::read_to_string(out.join("report.md"))
            .unwrap()
            .contains("# Evaluation: smoke")
    );
}

/// An `openai:` executor whose completions the local cache already holds: the second
/// run sends the server nothing and says so; Ctrl-C (SIGINT) in the middle of a run
/// exits 130 and prints the command that resumes it.
#[test]
fn http_runs_report_cache_answers_and_ctrl_c_prints_the_resume_command() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let body = "rounds = 1\ncandidates = 2\nsamples = 1\n[sets]\nfeedback = 2\ndev = 2\ntest = 3\n[[task]]\nfamily = \"gcd\"\nlevel = 1\n";
    let seed = zero_shot();
    let probe = settings(
        &suite_text(&seed, &["identity"], body),
        dir.path(),
        &dir.path().join("x"),
    );
    let server = SimulatedServer::start(SimModel::for_settings(&probe), Duration::from_millis(5));
    let exec = format!("openai:{}#sim", server.url());
    let suite = dir.path().join("http.toml");
    std::fs::write(
        &suite,
        suite_text(&seed, &["identity"], body).replace("llama:sim-model", &exec),
    )
    .unwrap();
    let cache = dir.path().join("cache.sqlite");
    let run = |out: &Path| {
        let o = Command::new(hrl())
            .args(["eval", "--suite"])
            .arg(&suite)
            .arg("--out")
            .arg(out)
            .arg("--cache")
            .arg(&cache)
            .arg("--no-progress")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    let first = run(&dir.path().join("a"));
    assert!(!first.contains("from the local cache"), "{first}");
    let requests = server.requests.load(std::sync::atomic::Ordering::SeqCst);
    assert!(requests > 0);
    let second = run(&dir.path().join("b"));
    assert!(
        second.contains("completions from the local cache, server not called for them"),
        "{second}"
    );
    assert_eq!(
        server.requests.load(std::sync::atomic::Ordering::SeqCst),
        requests,
        "the second run called the server"
    );
    // A slow server keeps the run busy; Ctrl-C stops it with the resume command.
    let slow = SimulatedServer::start(SimModel::for_settings(&probe), Duration::from_secs(3));
    let slow_suite = dir.path().join("slow.toml");
    std::fs::write(
        &slow_suite,
        suite_text(&seed, &["identity"], body)
            .replace("llama:sim-model", &format!("openai:{}#sim", slow.url())),
    )
    .unwrap();
    let out = dir.path().join("c");
    let child = Command::new(hrl())
        .args(["eval", "--suite"])
        .arg(&slow_suite)
        .arg("--out")
        .arg(&out)
        .args(["--no-cache", "--no-progress"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(60), || out.join("config.json").exists()),
        "the run never started"
    );
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(
        err.contains(&format!(
            "resume with `hrl eval --resume {}`",
            out.display()
        )),
        "{err}"
    );
}

/// An unknown model of an `llm:` proposer is named once, not twice.
#[test]
fn an_unknown_proposer_model_is_named_once() {
    let o = Command::new(hrl())
        .args(["eval", "--suite"])
        .arg(repo().join("suites/smoke.toml"))
        .args(["--proposer", "llm:no-such-model", "--limit", "1", "--out"])
        .arg(tempfile::tempdir().unwrap().path().join("o"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.matches("unknown model").count(), 1, "{err}");
}
