//! Evaluator and proposer tests. Most run the real evaluator (sets, engine, sandbox,
//! records, summaries) over the test-only simulated model of `sim.rs`, whose answers
//! follow known rules, so selection, invalid revisions, memoisation, batching and
//! resume are checked exactly and fast. `cli.rs` runs `hrl eval` as a process: a
//! `kill -9` and `--resume` against the simulated model behind HTTP, and the smoke
//! suite on the real SmolLM2. `props.rs` holds the property tests of the sets.
//!
//! Needs bubblewrap and writable cgroups (root), as the sandbox tests do.

mod cli;
#[path = "../common/mod.rs"]
mod common;
mod controls;
mod props;
mod shard;
mod sim;
mod util;

use std::collections::HashSet;
use std::sync::Arc;

use harness_rl::eval::rounds::round_seed;
use harness_rl::eval::summary::comparable_part;
use harness_rl::proposer::{Proposer, ProposerSpec, candidate_seed};
use harness_rl::records::CandidateStatus;
use sim::{PROSE, marked};
use util::*;

const TASK: &str = "gcd/L1";

fn one_task(k: u32, g: u32, m: u32, extra: &str) -> String {
    format!(
        "rounds = {k}\ncandidates = {g}\nsamples = {m}\n{extra}\n[sets]\nfeedback = 2\ndev = 4\ntest = 6\n\n[[task]]\nfamily = \"gcd\"\nlevel = 1\n"
    )
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

#[test]
fn best_keeps_a_candidate_only_when_it_beats_the_parent() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let s = settings(
        &suite_text(&zero_shot(), &["cmd:scripted"], &one_task(3, 2, 1, "")),
        dir.path(),
        &out,
    );
    let good = leak(marked("SIM-GOOD"));
    let none = leak(marked("SIM-NONE"));
    let good_note = leak(format!("notes = [\"x\"]\n{}", marked("SIM-GOOD")));
    let p = Arc::new(ScriptedProposer::new(vec![
        vec![none, good],     // round 1: GOOD (dev 1) beats the parent (dev 0)
        vec![none, "PARENT"], // round 2: NONE is worse; the parent is unchanged
        vec![good_note],      // round 3: a tie with the parent keeps the parent
    ]));
    let exec = sim_exec(&s);
    let o = run_with(&s, &exec, vec![p], false).unwrap();
    let rs = rounds(&out);
    let cs = candidates(&out);
    let good_hash = parse_toml(good).hash();
    assert!(round(&rs, TASK, 0, 1).accepted);
    assert_eq!(round(&rs, TASK, 0, 1).selected, good_hash);
    assert_eq!(round(&rs, TASK, 0, 1).parent_dev, Some(0.0));
    assert!(!round(&rs, TASK, 0, 2).accepted);
    assert!(!round(&rs, TASK, 0, 3).accepted, "a tie keeps the parent");
    assert_eq!(round(&rs, TASK, 0, 3).selected, good_hash);
    let curve: Vec<f64> = (0..=3).map(|r| round(&rs, TASK, 0, r).test.mean).collect();
    assert_eq!(curve, vec![0.0, 1.0, 1.0, 1.0]);
    let statuses: Vec<(u32, CandidateStatus, Option<f64>, bool)> = cs
        .iter()
        .map(|c| (c.round, c.status, c.dev, c.selected))
        .collect();
    assert_eq!(
        statuses,
        vec![
            (1, CandidateStatus::Scored, Some(0.0), false),
            (1, CandidateStatus::Scored, Some(1.0), true),
            (2, CandidateStatus::Scored, Some(0.0), false),
            (2, CandidateStatus::Unchanged, Some(1.0), false),
            (3, CandidateStatus::Scored, Some(1.0), false),
        ]
    );
    let m = &o[0].summary.tasks[0].metrics;
    assert_eq!(
        (m.seed_test.mean, m.final_test.mean, m.gain.mean),
        (0.0, 1.0, 1.0)
    );
    // One of three rounds accepted a revision; no candidate was invalid.
    assert!((m.accepted_rate.mean - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(m.invalid_rate.mean, 0.0);
    assert_eq!(m.best_of_m.unwrap().mean, 1.0);
}

#[test]
fn always_keeps_the_best_candidate_even_when_worse() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let s = settings(
        &suite_text(
            &zero_shot(),
            &["cmd:scripted"],
            &one_task(3, 2, 1, "select = \"always\""),
        ),
        dir.path(),
        &out,
    );
    let good = leak(marked("SIM-GOOD"));
    let none = leak(marked("SIM-NONE"));
    let p = Arc::new(ScriptedProposer::new(vec![
        vec![none, good],
        vec![none, "PARENT"],
        vec!["INVALID", good],
    ]));
    run_with(&s, &sim_exec(&s), vec![p], false).unwrap();
    let rs = rounds(&out);
    let curve: Vec<f64> = (0..=3).map(|r| round(&rs, TASK, 0, r).test.mean).collect();
    assert_eq!(curve, vec![0.0, 1.0, 0.0, 1.0]);
    assert!((1..=3).all(|r| round(&rs, TASK, 0, r).accepted));
    assert_eq!(round(&rs, TASK, 0, 3).invalid, 1);
}

#[test]
fn llm_proposer_invalid_revisions_are_counted_and_logged_with_raw_output() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let (k, g, m) = (2u32, 4u32, 3u32);
    let s = settings(
        &suite_text(
            &zero_shot(),
            &["llm:llama:sim-model"],
            &one_task(k, g, m, ""),
        ),
        dir.path(),
        &out,
    );
    let exec = sim_exec(&s);
    let o = run_sim(&s, &exec, false).unwrap();
    // Which candidates the simulated model answers with prose follows from the
    // documented seed derivation alone.
    let mut expected_invalid = 0;
    for sample in 0..m {
        for r in 1..=k {
            let seed = round_seed(s.seed, TASK, sample, r);
            expected_invalid += (0..g as usize)
                .filter(|&i| candidate_seed(seed, i) % 4 == 1)
                .count();
        }
    }
    let cs = candidates(&out);
    assert_eq!(cs.len(), (k * g * m) as usize);
    let invalid: Vec<_> = cs
        .iter()
        .filter(|c| c.status == CandidateStatus::Invalid)
        .collect();
    assert_eq!(invalid.len(), expected_invalid);
    assert!(
        expected_invalid > 0,
        "the seeds give no prose at all; pick another seed"
    );
    for c in &invalid {
        assert_eq!(c.raw.as_deref(), Some(PROSE));
        assert!(
            c.reason.as_deref().unwrap().contains("no ```toml"),
            "{:?}",
            c.reason
        );
        assert_eq!(c.hash, None);
    }
    let sum = &o[0].summary;
    let rate = expected_invalid as f64 / (k * g * m) as f64;
    assert!((sum.overall.invalid_rate.mean - rate).abs() < 1e-12);
    assert_eq!(sum.overall.candidates.invalid, expected_invalid);
    // Within a round: scored hashes are distinct, duplicates repeat an earlier one,
    // unchanged ones equal the parent.
    for sample in 0..m {
        for r in 1..=k {
            let round_cs: Vec<_> = cs
                .iter()
                .filter(|c| c.sample == sample && c.round == r)
                .collect();
            let mut seen = HashSet::new();
            for c in &round_cs {
                match c.status {
                    CandidateStatus::Scored => assert!(seen.insert(c.hash.clone().unwrap())),
                    CandidateStatus::Duplicate => assert!(seen.contains(c.hash.as_ref().unwrap())),
                    CandidateStatus::Unchanged => assert_eq!(c.hash.as_ref(), Some(&c.parent)),
                    CandidateStatus::Invalid => {}
                }
            }
        }
    }
    // The proposer's prompt and every raw output are in proposals.jsonl.
    let ps = proposals(&out);
    assert_eq!(ps.len(), (k * m) as usize);
    assert!(ps.iter().all(|p| {
        p.prompt
            .as_ref()
            .is_some_and(|t| t.contains("# Current harness"))
    }));
    // The run is a function of its seed: once more, the same records.
    let out2 = dir.path().join("run2");
    let s2 = harness_rl::eval::config::EvalSettings {
        out: out2.clone(),
        ..s.clone()
    };
    let o2 = run_sim(&s2, &sim_exec(&s2), false).unwrap();
    assert_eq!(
        comparable_part(&o[0].summary),
        comparable_part(&o2[0].summary)
    );
}

#[test]
fn identical_harnesses_are_scored_once_across_samples_and_rounds() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let s = settings(
        &suite_text(&zero_shot(), &["cmd:scripted"], &one_task(2, 3, 3, "")),
        dir.path(),
        &out,
    );
    let good = leak(marked("SIM-GOOD"));
    let p = Arc::new(ScriptedProposer::new(vec![
        vec![good, good, "PARENT"], // a duplicate and an unchanged candidate
        vec![good],                 // the parent again: unchanged
    ]));
    let exec = sim_exec(&s);
    run_with(&s, &exec, vec![p], false).unwrap();
    let dev: Vec<String> = harness_rl::eval::sets::build(
        &s.tasks[0],
        s.tasks[0].sets,
        &harness_rl::task::spec::GradingSetup::default(),
    )
    .unwrap()
    .dev
    .iter()
    .map(|i| i.body().to_string())
    .collect();
    // Three samples proposed GOOD (twice each in round 1, again in round 2): its dev
    // set was run once — one executor call per dev item.
    for body in &dev {
        assert_eq!(exec.count("SIM-GOOD", body), 1, "{body}");
    }
    // The seed harness (no system message) ran its dev items once too.
    let keys = rollout_keys(&out);
    let unique: HashSet<&String> = keys.iter().collect();
    assert_eq!(unique.len(), keys.len(), "a rollout is logged once");
    // seed: test 6 + feedback 2 + dev 4; GOOD: dev 4 + test 6 + feedback 2.
    assert_eq!(keys.len(), 24);
    let cs = candidates(&out);
    let st = |r: u32| -> Vec<CandidateStatus> {
        cs.iter()
            .filter(|c| c.sample == 0 && c.round == r)
            .map(|c| c.status)
            .collect()
    };
    assert_eq!(
        st(1),
        vec![
            CandidateStatus::Scored,
            CandidateStatus::Duplicate,
            CandidateStatus::Unchanged
        ]
    );
    assert_eq!(st(2), vec![CandidateStatus::Unchanged]);
}

#[test]
fn the_candidates_of_a_round_are_scored_as_one_executor_batch() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    // A long dispatch window: a batch leaves only when every queued rollout waits.
    let s = settings(
        &suite_text(
            &zero_shot(),
            &["cmd:scripted"],
            &format!(
                "{}\n[limits]\nconcurrency = 64\nbatch_window_ms = 60000\n",
                one_task(1, 3, 1, "")
            ),
        ),
        dir.path(),
        &out,
    );
    let p = Arc::new(ScriptedProposer::new(vec![vec![
        leak(marked("SIM-GOOD")),
        leak(marked("SIM-NONE")),
        leak(marked("SIM-HALF")),
    ]]));
    let exec = sim_exec(&s);
    run_with(&s, &exec, vec![p], false).unwrap();
    let batches = exec.batches.lock().unwrap().clone();
    // The dev batch: 4 harnesses (parent + 3 candidates) x 4 dev items.
    let dev_batch = batches
        .iter()
        .find(|b| b.iter().any(|(s, _)| s.contains("SIM-HALF")))
        .expect("a batch with the candidates");
    assert_eq!(dev_batch.len(), 16, "{dev_batch:?}");
    let harnesses: HashSet<&str> = dev_batch
        .iter()
        .map(|(s, _)| {
            ["SIM-GOOD", "SIM-NONE", "SIM-HALF"]
                .into_iter()
                .find(|m| s.contains(m))
                .unwrap_or("parent")
        })
        .collect();
    assert_eq!(harnesses.len(), 4);
    let r = round(&rounds(&out), TASK, 0, 1).clone();
    let d = r.dev_batch.unwrap();
    assert_eq!((d.harnesses, d.rollouts), (4, 16));
}

#[test]
fn resume_after_an_interruption_equals_an_uninterrupted_run() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let body = "rounds = 2\ncandidates = 2\nsamples = 2\n[sets]\nfeedback = 2\ndev = 3\ntest = 4\n[[task]]\nfamilies = [\"gcd\", \"count_primes\"]\nlevel = 1\n".to_string();
    let script = || {
        vec![
            vec![leak(marked("SIM-HALF")), "INVALID"],
            vec![leak(marked("SIM-GOOD")), leak(marked("SIM-NONE"))],
        ]
    };
    // Uninterrupted.
    let a_out = dir.path().join("a");
    let sa = settings(
        &suite_text(&zero_shot(), &["cmd:scripted"], &body),
        dir.path(),
        &a_out,
    );
    let ea = sim_exec(&sa);
    let a = run_with(
        &sa,
        &ea,
        vec![Arc::new(ScriptedProposer::new(script()))],
        false,
    )
    .unwrap();
    // Interrupted at the proposer's fourth call (of eight), then resumed.
    let b_out = dir.path().join("b");
    let sb = settings(
        &suite_text(&zero_shot(), &["cmd:scripted"], &body),
        dir.path(),
        &b_out,
    );
    let eb = sim_exec(&sb);
    let mut failing = ScriptedProposer::new(script());
    failing.fail_at = Some(3);
    let e = run_with(&sb, &eb, vec![Arc::new(failing)], false).unwrap_err();
    assert!(e.to_string().contains("scripted failure"), "{e}");
    let before = eb.calls.load(std::sync::atomic::Ordering::SeqCst);
    let logged = rollout_keys(&b_out).len();
    assert!(logged > 0 && before > 0);
    // A fresh run into the same directory is refused; --resume continues it.
    let again = run_with(
        &sb,
        &eb,
        vec![Arc::new(ScriptedProposer::new(script()))],
        false,
    );
    assert!(again.unwrap_err().to_string().contains("--resume"));
    let b = run_with(
        &sb,
        &eb,
        vec![Arc::new(ScriptedProposer::new(script()))],
        true,
    )
    .unwrap();
    assert_eq!(
        comparable_part(&a[0].summary),
        comparable_part(&b[0].summary)
    );
    // No completed rollout ran twice: the two parts made as many executor calls as
    // the uninterrupted run, and the resumed part reused what was logged.
    let total = eb.calls.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(total, ea.calls.load(std::sync::atomic::Ordering::SeqCst));
    assert!(b[0].summary.run_stats.resumed);
    let keys = rollout_keys(&b_out);
    assert_eq!(keys.len(), keys.iter().collect::<HashSet<_>>().len());
    assert_eq!(keys.len(), rollout_keys(&a_out).len());
    // Resuming a finished run recomputes the same summary and runs nothing.
    let c = run_with(
        &sb,
        &eb,
        vec![Arc::new(ScriptedProposer::new(script()))],
        true,
    )
    .unwrap();
    assert_eq!(
        comparable_part(&a[0].summary),
        comparable_part(&c[0].summary)
    );
    assert_eq!(eb.calls.load(std::sync::atomic::Ordering::SeqCst), total);
    assert_eq!(c[0].summary.run_stats.rollouts_run, 0);
}

#[test]
fn several_proposers_share_one_run_and_are_compared() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cmp");
    let good = dir.path().join("good.toml");
    std::fs::write(&good, marked("SIM-GOOD")).unwrap();
    let file_spec = format!("file:{}", good.display());
    let s = settings(
        &suite_text(
            &zero_shot(),
            &["identity", &file_spec],
            &one_task(2, 2, 2, ""),
        ),
        dir.path(),
        &out,
    );
    let exec = sim_exec(&s);
    let o = run_sim(&s, &exec, false).unwrap();
    assert_eq!(o.len(), 2);
    assert_eq!(o[0].dir, out.join("identity"));
    assert_eq!(o[1].dir, out.join("file-good"));
    let id = &o[0].summary.tasks[0].metrics;
    let fi = &o[1].summary.tasks[0].metrics;
    assert_eq!((id.final_test.mean, fi.final_test.mean), (0.0, 1.0));
    // Identity never proposes; the file proposer is accepted once per sample, then
    // proposes its harness again (unchanged).
    assert_eq!(id.candidates.total, 0);
    assert_eq!(fi.candidates.accepted, 2);
    assert_eq!(fi.candidates.unchanged, 2);
    let dirs: Vec<_> = o.iter().map(|a| a.dir.clone()).collect();
    harness_rl::report::outputs::write_eval(&out, &dirs).unwrap();
    let cmp = std::fs::read_to_string(out.join("comparison.md")).unwrap();
    // Every paired difference is +1 on 6 test instances: the interval is [1 - w, 1]
    // with w = z² / (6 + z²) the Wilson bound for 0 of 6 (docs/EVAL.md, "Intervals").
    assert!(cmp.contains("| gcd/L1 | 1.000 [0.610, 1.000] |"), "{cmp}");
    // The seed harness's test set ran once for both proposers (memo across arms),
    // and each run directory holds every rollout it used.
    assert!(rollout_keys(&out.join("identity")).len() >= 6);
    // `--resume` of one proposer's directory continues the whole run (its parent).
    let r = harness_rl::eval::resume_settings(&out.join("identity")).unwrap();
    assert_eq!((r.out, r.proposers), (out.clone(), s.proposers.clone()));
    assert_eq!(
        harness_rl::eval::resume_command(&out.join("file-good")),
        format!("hrl eval --resume {}", out.display())
    );
    let seed_test_calls = exec
        .batches
        .lock()
        .unwrap()
        .iter()
        .flatten()
        .filter(|(sys, _)| sys.is_empty())
        .count();
    // seed: test 6 + dev 4 (identity's best-of-M and file's parent dev); no feedback.
    assert_eq!(seed_test_calls, 10);
}

#[test]
fn cmd_proposer_speaks_the_protocol() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let example = repo().join("examples/proposer.py");
    let spec = format!("cmd:python3 {}", example.display());
    let s = settings(
        &suite_text(&zero_shot(), &[&spec], &one_task(2, 3, 1, "")),
        dir.path(),
        &out,
    );
    let o = run_sim(&s, &sim_exec(&s), false).unwrap();
    let cs = candidates(&out);
    assert_eq!(cs.len(), 6);
    assert!(
        cs.iter().all(|c| c.status != CandidateStatus::Invalid),
        "{cs:?}"
    );
    assert!(
        cs.iter()
            .all(|c| c.form == Some(harness_rl::proposer::RevisionForm::Edits))
    );
    let id = &o[0].summary.proposer_spec;
    assert!(id.starts_with("cmd:python3"), "{id}");
    // A program that answers garbage: every candidate of the round is invalid, with
    // the line logged; a program that exits stops the run with an error.
    let garbage = dir.path().join("garbage.py");
    std::fs::write(
        &garbage,
        "import sys, json\nfor line in sys.stdin:\n    r = json.loads(line)\n    print('not json', flush=True)\n",
    )
    .unwrap();
    let out2 = dir.path().join("run2");
    let s2 = settings(
        &suite_text(
            &zero_shot(),
            &[&format!("cmd:python3 {}", garbage.display())],
            &one_task(1, 2, 1, ""),
        ),
        dir.path(),
        &out2,
    );
    run_sim(&s2, &sim_exec(&s2), false).unwrap();
    let cs = candidates(&out2);
    assert_eq!(cs.len(), 2);
    for c in &cs {
        assert_eq!(c.status, CandidateStatus::Invalid);
        assert!(
            c.reason.as_deref().unwrap().contains("not JSON"),
            "{:?}",
            c.reason
        );
        assert_eq!(c.raw.as_deref(), Some("not json"));
    }
    let dead = dir.path().join("dead.py");
    std::fs::write(&dead, "import sys\nsys.stdin.readline()\nsys.exit(3)\n").unwrap();
    let out3 = dir.path().join("run3");
    let s3 = settings(
        &suite_text(
            &zero_shot(),
            &[&format!("cmd:python3 {}", dead.display())],
            &one_task(1, 2, 1, ""),
        ),
        dir.path(),
        &out3,
    );
    let e = run_sim(&s3, &sim_exec(&s3), false).unwrap_err();
    assert!(e.to_string().contains("proposer program"), "{e}");
}

/// What a newcomer meets when a `cmd:` script fails: the error names the stderr log
/// and quotes its end; a rerun of the same command is refused with both ways on
/// (`--resume`, or remove the directory); a resume after the script was edited is
/// refused naming both sha256 unless accepted, and then recorded; a script whose
/// candidates are mostly invalid gets a warning with the most common reason.
#[test]
fn cmd_proposer_failures_say_what_to_do() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("crash.py");
    std::fs::write(
        &script,
        "import sys\nsys.stdin.readline()\nprint('Traceback: boom in my proposer', file=sys.stderr)\nsys.exit(1)\n",
    )
    .unwrap();
    let out = dir.path().join("run");
    let s = settings(
        &suite_text(
            &zero_shot(),
            &[&format!("cmd:python3 {}", script.display())],
            &one_task(1, 2, 1, ""),
        ),
        dir.path(),
        &out,
    );
    let e = run_sim(&s, &sim_exec(&s), false).unwrap_err().to_string();
    let log = out.join("proposer.stderr.log");
    assert!(
        e.contains(&log.display().to_string()) && e.contains("Traceback: boom in my proposer"),
        "{e}"
    );
    // The same command again: refused, saying how to go on.
    let e = run_sim(&s, &sim_exec(&s), false).unwrap_err().to_string();
    assert!(
        e.contains(&format!("hrl eval --resume {}", out.display())) && e.contains("remove"),
        "{e}"
    );
    // The script fixed in place (it answers with no candidates): a resume is refused,
    // naming the old and the new sha256.
    let old_sha = sha256_of(&script);
    std::fs::write(
        &script,
        "import sys, json\nfor line in sys.stdin:\n    r = json.loads(line)\n    print(json.dumps({'id': r['id'], 'candidates': []}), flush=True)\n",
    )
    .unwrap();
    let new_sha = sha256_of(&script);
    let mut r = harness_rl::eval::resume_settings(&out).unwrap();
    let e = run_sim(&r, &sim_exec(&r), true).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains(&old_sha)
            && text.contains(&new_sha)
            && text.contains("--accept-proposer-change"),
        "{text}"
    );
    assert_eq!(
        harness_rl::error::Classify::kind(&e),
        harness_rl::error::ErrorKind::Usage
    );
    // Accepted: the run finishes and config.json records the old proposer.
    r.accept_proposer_change = true;
    run_sim(&r, &sim_exec(&r), true).unwrap();
    let cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("config.json")).unwrap()).unwrap();
    assert_eq!(
        cfg["proposer"]["details"]["files"][0]["sha256"],
        new_sha.as_str()
    );
    assert_eq!(
        cfg["proposer_history"][0]["details"]["files"][0]["sha256"],
        old_sha.as_str()
    );
    // A script printing garbage: every candidate invalid, and a warning that says why.
    let garbage = dir.path().join("garbage.py");
    std::fs::write(
        &garbage,
        "import sys\nfor line in sys.stdin:\n    print('hello', flush=True)\n",
    )
    .unwrap();
    let out2 = dir.path().join("run2");
    let s2 = settings(
        &suite_text(
            &zero_shot(),
            &[&format!("cmd:python3 {}", garbage.display())],
            &one_task(1, 2, 1, ""),
        ),
        dir.path(),
        &out2,
    );
    let o = run_sim(&s2, &sim_exec(&s2), false).unwrap();
    let w = harness_rl::report::warnings::of_run_dir(&o[0].label, &out2).unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("2 of 2 candidates were invalid") && w[0].contains("not JSON"),
        "{w:?}"
    );
    harness_rl::report::outputs::write_run(&out2).unwrap();
    let md = std::fs::read_to_string(out2.join("report.md")).unwrap();
    assert!(md.contains("**Warning**: proposer"), "{md}");
    // The fixed run above (no candidates) warns about nothing.
    assert!(
        harness_rl::report::warnings::of_run_dir("x", &out)
            .unwrap()
            .is_empty()
    );
}

fn sha256_of(p: &std::path::Path) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(std::fs::read(p).unwrap());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn file_proposer_finds_harnesses_by_task_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("oracle-gcd.toml"), marked("A")).unwrap();
    std::fs::write(d.join("oracle-maze.toml"), marked("B")).unwrap();
    std::fs::write(d.join("notes.txt"), "x").unwrap();
    let open = |p: String| {
        harness_rl::proposer::open(
            &ProposerSpec::parse(&format!("file:{p}")).unwrap(),
            &harness_rl::proposer::OpenContext::default(),
        )
    };
    let p = open(format!("{}/oracle-{{key}}.toml", d.display())).unwrap();
    let files = &p.identity().details["files"];
    assert!(
        files.get("gcd").is_some() && files.get("maze").is_some(),
        "{files}"
    );
    assert_eq!(p.identity().label, "file-oracle");
    // A directory: files named by key.
    let sub = d.join("dir");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("default.toml"), marked("C")).unwrap();
    let p = open(sub.display().to_string()).unwrap();
    assert!(p.identity().details["files"].get("default").is_some());
    // A broken harness file is an error naming it; no match is an error too.
    std::fs::write(
        d.join("oracle-bad.toml"),
        "[strategy]\nkind = \"telepathy\"\n",
    )
    .unwrap();
    let e = open(format!("{}/oracle-{{key}}.toml", d.display()))
        .err()
        .unwrap();
    assert!(e.to_string().contains("oracle-bad.toml"), "{e}");
    let e = open(format!("{}/none-{{key}}.toml", d.display()))
        .err()
        .unwrap();
    assert!(e.to_string().contains("no file matches"), "{e}");
    assert!(open(d.join("missing.toml").display().to_string()).is_err());
}

#[test]
fn shipped_suites_parse() {
    // suites/*.toml and the published-protocol configs in suites/paper/ (whose
    // split-*.toml files are family splits, not suites).
    let mut paths: Vec<std::path::PathBuf> = Vec::new();
    for d in ["suites", "suites/paper"] {
        for entry in std::fs::read_dir(repo().join(d)).unwrap() {
            let p = entry.unwrap().path();
            if !p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("split-"))
            {
                paths.push(p);
            }
        }
    }
    let mut transfer_kinds = Vec::new();
    for p in paths {
        if p.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        // `suites/reproduce-*.toml` are reproduction files (scripts/reproduce.py), not
        // evaluation suites.
        if p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("reproduce-"))
        {
            continue;
        }
        let s = harness_rl::eval::suite::Suite::load(&p).unwrap_or_else(|e| panic!("{e}"));
        assert!(!s.tasks.is_empty());
        if let Some(t) = &s.transfer {
            transfer_kinds.push(t.kind);
            for spec in &t.reference {
                ProposerSpec::parse(spec).unwrap();
            }
        }
        assert!(
            s.tasks.iter().all(|t| t.seed_harness.exists()),
            "{}",
            p.display()
        );
        for spec in &s.proposers {
            ProposerSpec::parse(spec).unwrap();
            // A fixed harness per task must exist for every task of the suite.
            if let Some(path) = spec.strip_prefix("file:")
                && path.contains("{key}")
            {
                for t in &s.tasks {
                    let f = path.replace("{key}", &t.key());
                    assert!(
                        std::path::Path::new(&f).exists(),
                        "{}: {spec}: no {f} for task {}",
                        p.display(),
                        t.id
                    );
                }
            }
        }
    }
    // Three transfer suites for this machine and three for a GPU (suites/paper/).
    use harness_rl::eval::suite::TransferKind as K;
    for kind in [K::Task, K::Temporal, K::Horizon] {
        assert_eq!(
            transfer_kinds.iter().filter(|k| **k == kind).count(),
            2,
            "{kind:?}"
        );
    }
}

#[test]
fn policy_checkpoints_need_the_trainer() {
    let e = harness_rl::proposer::open(
        &ProposerSpec::parse("policy:ck.json").unwrap(),
        &harness_rl::proposer::OpenContext::default(),
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("trainer"), "{e}");
    let _: Option<Arc<dyn Proposer>> = None;
}

/// The engine's memo, bounded (as `hrl reward-server --memo-capacity` bounds it): past
/// the capacity the oldest set evaluation is dropped and computed again when asked
/// for, with the same scores; unbounded, each evaluation is computed once.
#[test]
fn a_bounded_memo_drops_the_oldest_evaluation_and_computes_it_again() {
    use harness_rl::eval::engine::{ArmLog, Engine};
    use harness_rl::eval::sets::{self, SetName};
    use harness_rl::records::run_dir::Appender;
    use harness_rl::task::spec::GradingSetup;
    use std::collections::HashMap;
    use std::sync::atomic::Ordering;

    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let s = settings(
        &suite_text(&zero_shot(), &["identity"], &one_task(1, 1, 1, "")),
        dir.path(),
        &dir.path().join("run"),
    );
    let exec = sim_exec(&s);
    let def = &s.tasks[0];
    let task_sets = sets::build(def, def.sets, &GradingSetup::default()).unwrap();
    let good = Arc::new(parse_toml(&marked("SIM-GOOD")));
    let none = Arc::new(parse_toml(&marked("SIM-NONE")));
    for (capacity, evaluations) in [(usize::MAX, 2), (1, 3)] {
        let b = backend(&exec);
        let rc = s.run_config(8);
        let log = Arc::new(ArmLog::new(
            Appender::open(&dir.path().join(format!("rollouts-{capacity}.jsonl"))).unwrap(),
            HashSet::new(),
        ));
        let engine = Engine::new(
            b.executor.clone(),
            b.identity.reference(),
            sandbox(),
            rc.clone(),
            rc.dispatch.clone(),
            vec![task_sets.clone()],
            HashMap::new(),
        )
        .with_memo_capacity(capacity);
        let means: Vec<f64> = std::thread::scope(|sc| {
            let workers: Vec<_> = (0..4).map(|_| sc.spawn(|| engine.work())).collect();
            let means = [&good, &none, &good]
                .iter()
                .map(|h| {
                    let (r, _) = engine
                        .score(&[(0, SetName::Dev, (*h).clone())], &log)
                        .unwrap();
                    r[0].mean
                })
                .collect();
            engine.shutdown();
            for w in workers {
                w.join().unwrap();
            }
            means
        });
        assert_eq!(means, vec![1.0, 0.0, 1.0], "capacity {capacity}");
        let c = &engine.counters;
        assert_eq!(
            c.evaluations.load(Ordering::Relaxed),
            evaluations,
            "capacity {capacity}"
        );
        assert_eq!(
            c.memo_evictions.load(Ordering::Relaxed),
            if capacity == 1 { 2 } else { 0 }
        );
        assert!(engine.memo_len() <= capacity.min(2));
    }
}
