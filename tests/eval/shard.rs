//! Scale-out and transfer: `--shard I/N` runs merged by `hrl merge` equal the unsharded
//! run (evaluator and `hrl transfer` over the simulated model; `hrl run` on the real
//! SmolLM2 through the binary), merge refuses what is not one run's complete set of
//! shards, transfer suites check their held-out side, and the temporal suite's test
//! side is exactly `hrl lcb split --preset v5-to-v6`'s.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use harness_rl::eval::config::{CacheChoice, EngineOverrides, EvalSettings, Overrides};
use harness_rl::eval::merge::{self, Merged};
use harness_rl::eval::suite::{Suite, TaskSource, TransferKind};
use harness_rl::eval::summary::{Summary, comparable_part};
use harness_rl::eval::transfer::{self, TransferOverrides, TransferSettings};
use harness_rl::eval::{ArmOutcome, sets};
use harness_rl::shard::Shard;

use super::util::*;

/// Two tasks x 3 harness samples (6 units), identity and the simulated llm proposer.
const BODY: &str = "rounds = 2\ncandidates = 2\nsamples = 3\n[sets]\nfeedback = 2\ndev = 3\ntest = 4\n[[task]]\nfamilies = [\"gcd\", \"count_primes\"]\nlevel = 1\n";

fn sharded(s: &EvalSettings, out: &Path, shard: Option<Shard>) -> EvalSettings {
    EvalSettings {
        out: out.to_path_buf(),
        shard,
        ..s.clone()
    }
}

fn keys(dir: &Path) -> HashSet<String> {
    rollout_keys(dir).into_iter().collect()
}

#[test]
fn sharded_eval_runs_merge_into_the_unsharded_run() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let base = settings(
        &suite_text(&zero_shot(), &["identity", "llm:llama:sim-model"], BODY),
        dir.path(),
        &dir.path().join("whole"),
    );
    let whole = run_sim(&base, &sim_exec(&base), false).unwrap();
    let mut parts = Vec::new();
    for i in 1..=3 {
        let out = dir.path().join(format!("part{i}"));
        let s = sharded(&base, &out, Some(Shard::new(i, 3).unwrap()));
        let o = run_sim(&s, &sim_exec(&s), false).unwrap();
        // A shard runs its own units only: 2 of the 6 (task, sample) pairs.
        let done: usize = o[1].summary.tasks.iter().map(|t| t.samples_complete).sum();
        assert_eq!(done, 2);
        assert!(o[1].summary.complete, "a finished shard is complete");
        assert_eq!(o[1].summary.shard, Some(Shard::new(i, 3).unwrap()));
        parts.push(out);
    }
    // In any order.
    parts.swap(0, 2);
    let merged_out = dir.path().join("merged");
    let Merged::Eval(merged) = merge::merge(&parts, &merged_out).unwrap() else {
        panic!("an eval merge")
    };
    assert_eq!(merged.len(), 2);
    for (w, m) in whole.iter().zip(&merged) {
        assert_eq!(w.label, m.label);
        assert_eq!(comparable_part(&w.summary), comparable_part(&m.summary));
        assert!(m.summary.complete && m.summary.shard.is_none());
        // The merged directory holds every rollout the run used, once.
        assert_eq!(keys(&w.dir), keys(&m.dir));
        assert_eq!(rollout_keys(&m.dir).len(), keys(&m.dir).len());
        assert_eq!(rounds(&w.dir).len(), rounds(&m.dir).len());
        assert_eq!(candidates(&w.dir).len(), candidates(&m.dir).len());
        // ... and re-renders to the same summary from its records alone.
        let again = harness_rl::eval::rerender(&m.dir).unwrap();
        assert_eq!(comparable_part(&again), comparable_part(&w.summary));
    }
    harness_rl::report::outputs::write_any(&merged_out).unwrap();
    assert!(merged_out.join("comparison.md").exists());
    assert!(merged_out.join("comparison.html").exists());
    // A merged run is a run: resuming it runs nothing and changes nothing.
    let s = harness_rl::eval::resume_settings(&merged_out).unwrap();
    let exec = sim_exec(&s);
    let again = run_sim(&s, &exec, true).unwrap();
    assert_eq!(
        comparable_part(&again[1].summary),
        comparable_part(&whole[1].summary)
    );
    assert_eq!(again[1].summary.run_stats.rollouts_run, 0);

    // Refusals, each naming what is wrong.
    let err = |dirs: &[PathBuf], out: &str| {
        merge::merge(dirs, &dir.path().join(out))
            .err()
            .unwrap_or_else(|| panic!("merging {dirs:?} should fail"))
            .to_string()
    };
    let e = err(&parts[..2], "m1");
    assert!(e.contains("missing shard") && e.contains("/3"), "{e}");
    let e = err(
        &[parts[0].clone(), parts[0].clone(), parts[1].clone()],
        "m2",
    );
    assert!(e.contains("given twice"), "{e}");
    let e = err(&[dir.path().join("whole")], "m3");
    assert!(e.contains("not a shard"), "{e}");
    let e = err(&parts, "merged");
    assert!(e.contains("already holds a run"), "{e}");
    // A shard of another run (another seed).
    let other = dir.path().join("other");
    let mut so = sharded(&base, &other, Some(Shard::new(1, 3).unwrap()));
    so.seed = 7;
    run_sim(&so, &sim_exec(&so), false).unwrap();
    let pick = |i: u32| {
        parts
            .iter()
            .find(|p| p.ends_with(format!("part{i}")))
            .unwrap()
            .clone()
    };
    let e = err(&[other.clone(), pick(2), pick(3)], "m4");
    assert!(e.contains("another run") && e.contains("`seed`"), "{e}");
    // Shards of different counts.
    let two = dir.path().join("two");
    let st = sharded(&base, &two, Some(Shard::new(1, 2).unwrap()));
    run_sim(&st, &sim_exec(&st), false).unwrap();
    let e = err(&[two, pick(2), pick(3)], "m5");
    assert!(e.contains("one count"), "{e}");
    // A shard with an unfinished trajectory (its last round record lost).
    let cut = dir.path().join("cut");
    copy_dir(&pick(3), &cut);
    let rp = cut.join("identity").join("rounds.jsonl");
    let text = std::fs::read_to_string(&rp).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.pop();
    std::fs::write(&rp, lines.join("\n") + "\n").unwrap();
    let e = err(&[pick(1), pick(2), cut], "m6");
    assert!(e.contains("incomplete") && e.contains("--resume"), "{e}");
    // A shard resumed as another shard is refused.
    let e = run_sim(
        &sharded(&base, &pick(1), Some(Shard::new(2, 3).unwrap())),
        &sim_exec(&base),
        true,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("shard 1/3") && e.contains("shard 2/3"), "{e}");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

fn transfer_suite(dir: &Path, tasks: &str) -> PathBuf {
    let text = format!(
        "{}\n[transfer]\nkind = \"task\"\nk = [1, 2]\nsplit = \"paper-like\"\ntrain_roles = [\"warm_start\", \"rl\"]\nheld_out_role = \"held_out\"\n",
        suite_text(
            &zero_shot(),
            &["identity", "llm:llama:sim-model"],
            &BODY.replace("families = [\"gcd\", \"count_primes\"]", tasks)
        )
    );
    let p = dir.join("transfer.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn transfer_settings(suite: &Path, out: &Path, shard: Option<Shard>) -> TransferSettings {
    let suite = Suite::load(suite).unwrap();
    TransferSettings::resolve(
        TransferKind::Task,
        &suite,
        &TransferOverrides {
            eval: Overrides {
                out: Some(out.to_path_buf()),
                engine: EngineOverrides {
                    cache: Some(CacheChoice::Off),
                    ..EngineOverrides::default()
                },
                shard,
                ..Overrides::default()
            },
            ..TransferOverrides::default()
        },
    )
    .unwrap()
}

fn run_transfer(ts: &TransferSettings) -> Vec<ArmOutcome> {
    let s = &ts.index.settings;
    let exec = sim_exec(s);
    let b = backend(&exec);
    let proposers = harness_rl::eval::open_proposers(s, &b).unwrap();
    transfer::run_with(ts, &b, sandbox(), &proposers, false, &|_| {})
        .unwrap()
        .arms
}

#[test]
fn transfer_task_runs_the_held_out_side_and_its_shards_merge() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let suite = transfer_suite(dir.path(), "families = [\"gcd\", \"count_primes\"]");
    let whole_out = dir.path().join("whole");
    let ts = transfer_settings(&suite, &whole_out, None);
    assert_eq!(ts.index.held_out, vec!["gcd/L1", "count_primes/L1"]);
    assert!(ts.index.train.families.contains(&"chain_sum".to_string()));
    let whole = run_transfer(&ts);
    // The documents are rendered from the records afterwards, as `hrl transfer` does.
    let md = harness_rl::report::outputs::write_transfer(&whole_out).unwrap();
    // One run directory per proposer, listed in the index; the text has a table per K
    // and the curve, whose K = 1 column is the curve at round 1 of the K = 2 run.
    let dirs = transfer::run_dirs(&whole_out).unwrap();
    assert_eq!(
        dirs,
        vec![whole_out.join("identity"), whole_out.join("llm-sim-model")]
    );
    assert_eq!(
        md,
        std::fs::read_to_string(whole_out.join(transfer::SUMMARY_MD)).unwrap()
    );
    assert!(md.contains("## K = 1:") && md.contains("## K = 2:"), "{md}");
    assert!(md.contains("round 2"), "{md}");
    // The mean row of each K table: seed harness, identity, llm; K = 2 is the run's
    // final test score, K = 1 its curve at round 1.
    let fmt = harness_rl::report::export::est;
    let mean_row = |k: u32| -> String {
        let sec = md.split(&format!("## K = {k}:")).nth(1).unwrap();
        sec.lines()
            .find(|l| l.starts_with("| **mean over held-out tasks** |"))
            .unwrap()
            .to_string()
    };
    let o = &whole[1].summary.overall;
    assert_eq!(
        mean_row(1),
        format!(
            "| **mean over held-out tasks** | {} | {} | {} |",
            fmt(&o.curve[0]),
            fmt(&whole[0].summary.overall.curve[1]),
            fmt(&o.curve[1])
        )
    );
    assert!(mean_row(2).ends_with(&format!(" {} |", fmt(&o.final_test))));
    // Shards, merged.
    let mut parts = Vec::new();
    for i in 1..=2 {
        let out = dir.path().join(format!("part{i}"));
        run_transfer(&transfer_settings(
            &suite,
            &out,
            Some(Shard::new(i, 2).unwrap()),
        ));
        parts.push(out);
    }
    let merged_out = dir.path().join("merged");
    let Merged::Eval(merged) = merge::merge(&parts, &merged_out).unwrap() else {
        panic!("an eval merge")
    };
    for (w, m) in whole.iter().zip(&merged) {
        assert_eq!(comparable_part(&w.summary), comparable_part(&m.summary));
    }
    harness_rl::report::outputs::write_any(&merged_out).unwrap();
    let whole_md = md
        .lines()
        .filter(|l| l.starts_with('|'))
        .collect::<Vec<_>>();
    let merged_md = std::fs::read_to_string(merged_out.join(transfer::SUMMARY_MD)).unwrap();
    let merged_md = merged_md
        .lines()
        .filter(|l| l.starts_with('|'))
        .collect::<Vec<_>>();
    assert_eq!(whole_md, merged_md);
    // Re-rendering from the directory alone gives the same tables.
    let re = harness_rl::report::outputs::write_transfer(&merged_out).unwrap();
    assert_eq!(
        re.lines()
            .filter(|l| l.starts_with('|'))
            .collect::<Vec<_>>(),
        whole_md
    );
}

#[test]
fn transfer_suites_refuse_training_families_and_the_wrong_command() {
    let dir = tempfile::tempdir().unwrap();
    // chain_sum is a warm_start family of paper-like.
    let p = transfer_suite(dir.path(), "families = [\"gcd\", \"chain_sum\"]");
    let e = Suite::load(&p).unwrap_err().to_string();
    assert!(
        e.contains("chain_sum/L1") && e.contains("training family"),
        "{e}"
    );
    let p = transfer_suite(dir.path(), "families = [\"gcd\"]");
    let suite = Suite::load(&p).unwrap();
    let e = TransferSettings::resolve(TransferKind::Horizon, &suite, &TransferOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("hrl transfer task"), "{e}");
    // rounds must be the largest K.
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("k = [1, 2]", "k = [1, 3]");
    let e = Suite::parse(&text, Path::new("s.toml"))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("s.toml:") && e.contains("transfer.k"), "{e}");
}

#[test]
fn shipped_temporal_suite_tests_exactly_the_problems_new_in_v6() {
    let suite = Suite::load(&repo().join("suites/temporal-transfer.toml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ts = TransferSettings::resolve(
        TransferKind::Temporal,
        &suite,
        &TransferOverrides {
            eval: Overrides {
                out: Some(dir.path().join("t")),
                ..Overrides::default()
            },
            ..TransferOverrides::default()
        },
    )
    .unwrap();
    // The independent rule: test6.jsonl rows dated after every row of test..test5.
    let fixtures = repo().join("fixtures/lcb");
    let date = |line: &str| -> String {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        v["contest_date"].as_str().unwrap().to_string()
    };
    let mut last_v5 = String::new();
    for f in [
        "test.jsonl",
        "test2.jsonl",
        "test3.jsonl",
        "test4.jsonl",
        "test5.jsonl",
    ] {
        for l in std::fs::read_to_string(fixtures.join(f)).unwrap().lines() {
            last_v5 = last_v5.max(date(l));
        }
    }
    let new_in_v6: HashSet<String> = std::fs::read_to_string(fixtures.join("test6.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| date(l) > last_v5)
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["question_id"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(new_in_v6.len(), 8);
    assert_eq!(ts.index.train.problems, Some(23));
    let t = &ts.index.settings.tasks[0];
    assert!(matches!(&t.source, TaskSource::Lcb { selection, .. } if selection.release == "v6"));
    let built = sets::build(t, t.sets, &Default::default()).unwrap();
    let ids: HashSet<String> = [&built.feedback, &built.dev, &built.test]
        .iter()
        .flat_map(|s| s.iter().map(|i| i.id()))
        .collect();
    assert_eq!(ids.len(), 8);
    for id in &ids {
        assert!(
            new_in_v6.iter().any(|q| id.ends_with(q.as_str())),
            "{id} is not new in v6 ({new_in_v6:?})"
        );
    }
    // The oracle is the reference line.
    assert!(
        ts.index
            .runs
            .iter()
            .any(|r| r.reference && r.spec.contains("oracle-lcb"))
    );
}

/// `hrl run --shard` on the real SmolLM2 (prefix reuse off: a completion does not
/// depend on its batch), merged, equals the unsharded run.
#[test]
fn sharded_hrl_run_on_smollm2_merges_into_the_unsharded_run() {
    let _g = heavy();
    let m = harness_rl::models::known(harness_rl::models::DEFAULT_MODEL).unwrap();
    assert!(m.is_installed(), "run `hrl models fetch {}`", m.name);
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("models")).unwrap();
    std::os::unix::fs::symlink(
        m.path(),
        home.path()
            .join("models")
            .join(m.path().file_name().unwrap()),
    )
    .unwrap();
    let harness = home.path().join("h.toml");
    std::fs::write(
        &harness,
        "name = \"short\"\n[format]\nrule = \"Give your final answer {format} inside <answer></answer> tags.\"\n[sampling]\nmax_tokens = 24\n",
    )
    .unwrap();
    let run = |out: &Path, shard: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hrl"));
        c.env("HRL_HOME", home.path())
            .args(["run", "--harness"])
            .arg(&harness)
            .args([
                "--tasks",
                "families:gcd,count_primes:n=3",
                "--executor",
                "llama:smollm2-135m,threads=1,n_parallel=4,ctx=1024,prefix_reuse=off",
                "--no-cache",
                "--no-progress",
                "--json",
                "--out",
            ])
            .arg(out);
        if let Some(s) = shard {
            c.args(["--shard", s]);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let whole = run(&home.path().join("whole"), None);
    assert_eq!(whole["items"], 6);
    let a = home.path().join("a");
    let b = home.path().join("b");
    let sa = run(&a, Some("1/2"));
    run(&b, Some("2/2"));
    assert_eq!(sa["items"], 3);
    assert_eq!(sa["shard"], "1/2");
    let merged = home.path().join("merged");
    let o = Command::new(env!("CARGO_BIN_EXE_hrl"))
        .args(["merge", "--json", "--out"])
        .arg(&merged)
        .arg(&b)
        .arg(&a)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for k in [
        "items",
        "samples",
        "aggregates",
        "harness",
        "executor",
        "config_hash",
        "tasks",
    ] {
        assert_eq!(m[k], whole[k], "{k}");
    }
    assert!(m.get("shard").is_none());
    // A missing shard is refused with exit code 2.
    let o = Command::new(env!("CARGO_BIN_EXE_hrl"))
        .args(["merge", "--out"])
        .arg(home.path().join("m2"))
        .arg(&a)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing shard 2/2"));
    // Resumed into another shard's directory: refused.
    let o = Command::new(env!("CARGO_BIN_EXE_hrl"))
        .env("HRL_HOME", home.path())
        .args(["run", "--harness"])
        .arg(&harness)
        .args([
            "--tasks",
            "families:gcd,count_primes:n=3",
            "--executor",
            "llama:smollm2-135m",
            "--no-cache",
            "--no-progress",
            "--shard",
            "2/2",
            "--out",
        ])
        .arg(&a)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let _: Option<Summary> = None;
}
