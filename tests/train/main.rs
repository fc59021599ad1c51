//! Trainer tests (`hrl train`, `policy:CKPT`). Most run the real trainer (the
//! evaluator's sets, engine and memo, the sandbox, checkpoints, logs) over the
//! test-only `SimulatedExecutor` of `sim.rs`, whose success depends on harness edits
//! by known rules, so learning itself is checked: convergence to the best edits (with
//! a learning-rate-0 control that must not get there), a conditional rule that
//! transfers to held-out tasks, resume equal to an uninterrupted run, and the trained
//! checkpoint as an `hrl eval` proposer. `real.rs` runs `hrl train` on SmolLM2
//! (mechanics only). Gradient check and checkpoint round trip: unit tests in
//! `src/train/`.
//!
//! Needs bubblewrap and writable cgroups (root), as the evaluator tests do.

#[path = "../common/mod.rs"]
mod common;
mod real;
mod sim;

use std::path::{Path, PathBuf};

use harness_rl::eval::config::{CacheChoice, EngineOverrides, EvalSettings, Overrides};
use harness_rl::eval::suite::Suite;
use harness_rl::records::train::{HELDOUT, HeldoutRecord, TrainStep};
use harness_rl::train::config::{TrainOverrides, TrainSettings};
use harness_rl::train::trainer::{self, TrainOutcome};
use sim::Rule;

pub use common::{heavy, repo, sandbox};

fn suite_text(families: &[&str], train: &str) -> String {
    let list: Vec<String> = families.iter().map(|f| format!("{f:?}")).collect();
    format!(
        "name = \"t\"\nseed_harness = {:?}\nrounds = 1\ncandidates = 2\nsamples = 1\nexecutor = \"llama:sim-model\"\n\n[sets]\nfeedback = 4\ndev = 8\ntest = 8\n\n[[task]]\nfamilies = [{}]\nlevel = 1\n\n[train]\n{train}\n",
        repo()
            .join("suites/harnesses/zero-shot.toml")
            .display()
            .to_string(),
        list.join(", ")
    )
}

fn write_suite(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("suite.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn settings(dir: &Path, text: &str, out: &Path, o: TrainOverrides) -> TrainSettings {
    let suite = Suite::load(&write_suite(dir, text)).unwrap_or_else(|e| panic!("{e}\n{text}"));
    TrainSettings::resolve(
        &suite,
        &TrainOverrides {
            out: Some(out.to_path_buf()),
            engine: EngineOverrides {
                cache: Some(CacheChoice::Off),
                ..EngineOverrides::default()
            },
            ..o
        },
    )
    .unwrap()
}

fn train(s: &TrainSettings, rule: Rule, resume: bool) -> TrainOutcome {
    trainer::run_with(s, &sim::backend(rule, s), sandbox(), resume, &|_| {}).unwrap()
}

fn heldout(dir: &Path) -> Vec<HeldoutRecord> {
    harness_rl::records::read(&dir.join(HELDOUT)).unwrap()
}

fn mean(v: &[TrainStep], f: impl Fn(&TrainStep) -> f64) -> f64 {
    v.iter().map(f).sum::<f64>() / v.len() as f64
}

fn snippet_edit(op: &str, id: &str) -> String {
    format!("\"op\":\"{op}\",\"snippet\":\"{id}\"")
}

fn edits_json(r: &HeldoutRecord) -> String {
    serde_json::to_string(&r.edits).unwrap()
}

const ADDITIVE: &str = "train = [\"gcd\", \"spell_backward\"]\nheldout = [\"count_primes\"]\nsteps = 60\nbatch = 2\ngroup = 8\nlr = 0.1\nentropy = 0.01\nmax_edits = 3\neval_every = 10\ncheckpoint_every = 20\nseed = 1";

#[test]
fn the_trainer_converges_to_the_known_best_edits_and_evaluates_as_a_proposer() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let text = suite_text(&["gcd", "spell_backward", "count_primes"], ADDITIVE);
    let out = dir.path().join("run");
    let s = settings(dir.path(), &text, &out, TrainOverrides::default());
    let o = train(&s, Rule::Additive, false);
    assert_eq!(o.steps, 60);
    let log = trainer::read_train_log(&out).unwrap();
    assert_eq!(log.len(), 60);
    let first = mean(&log[..10], |l| l.reward_mean);
    let last = mean(&log[50..], |l| l.reward_mean);
    assert!(last > first + 0.3, "reward {first:.3} -> {last:.3}");
    assert!(log[59].entropy < log[0].entropy, "the policy sharpened");
    // The greedy revision of the held-out task adds both known-best edits and scores 1.
    assert_eq!(log[59].heldout_score, Some(1.0), "{:?}", log[59]);
    let h = heldout(&out);
    let final_rec = h.iter().rfind(|r| r.step == 60).unwrap();
    let e = edits_json(final_rec);
    assert!(
        e.contains(&snippet_edit("add_instruction", "check-work")),
        "{e}"
    );
    assert!(
        e.contains(&snippet_edit("add_note", "tags-required")),
        "{e}"
    );
    assert_eq!(final_rec.seed_score, 0.0);
    // Files of the run.
    for f in [
        "ckpt-20.json",
        "ckpt-40.json",
        "ckpt-60.json",
        "last.json",
        "trajectories.jsonl",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    let trajs = trainer::read_trajectories(&out).unwrap();
    assert_eq!(trajs.len(), 60 * 2 * 8);
    // Group-relative advantages: zero mean within each group.
    for g in trajs.chunks(8) {
        assert!(g.iter().all(|t| t.context == g[0].context));
        assert!(g.iter().map(|t| t.advantage).sum::<f64>().abs() < 1e-9);
    }
    // The reward memo answers revisited harnesses.
    assert!(log[50..].iter().map(|l| l.memo_hits).sum::<u64>() > 0);

    // Control: the same run with learning rate 0 never finds the edits.
    let out0 = dir.path().join("lr0");
    let s0 = settings(
        dir.path(),
        &text,
        &out0,
        TrainOverrides {
            lr: Some(0.0),
            steps: Some(10),
            ..TrainOverrides::default()
        },
    );
    train(&s0, Rule::Additive, false);
    let log0 = trainer::read_train_log(&out0).unwrap();
    assert!(log0[9].heldout_score.unwrap() < 0.5, "{:?}", log0[9]);

    // The trained checkpoint as an `hrl eval` proposer, against identity.
    // Once per process (another test of this binary may have registered it first).
    let _ = harness_rl::train::register();
    let esuite = Suite::load(&dir.path().join("suite.toml")).unwrap();
    let ckpt = out.join("last.json");
    let es = EvalSettings::resolve(
        &esuite,
        &Overrides {
            proposers: vec![format!("policy:{}", ckpt.display()), "identity".into()],
            tasks: vec!["count_primes".into()],
            out: Some(dir.path().join("eval")),
            engine: EngineOverrides {
                cache: Some(CacheChoice::Off),
                ..EngineOverrides::default()
            },
            ..Overrides::default()
        },
    )
    .unwrap();
    let backend = sim::backend(Rule::Additive, &s);
    let proposers = harness_rl::eval::open_proposers(&es, &backend).unwrap();
    assert_eq!(proposers[0].identity().kind, "policy");
    let arms =
        harness_rl::eval::run_with(&es, &backend, sandbox(), &proposers, false, &|_| {}).unwrap();
    let policy = arms[0].summary.overall.final_test.mean;
    let identity = arms[1].summary.overall.final_test.mean;
    assert!(
        policy > identity + 0.5,
        "policy {policy} identity {identity}"
    );
}

#[test]
fn a_rule_conditioned_on_the_answer_shape_transfers_to_held_out_tasks() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let text = suite_text(
        &[
            "gcd",
            "lcm",
            "chain_sum",
            "spell_backward",
            "letter_jumble",
            "calendar_arithmetic",
            "count_primes",
            "largest_island",
            // Held-out families whose golds are all of one shape (needle_haystack's
            // mix numbers and words, so no single edit scores 1 on its validation set).
            "caesar_cipher",
            "family_relationships",
        ],
        "train = [\"gcd\", \"lcm\", \"chain_sum\", \"spell_backward\", \"letter_jumble\", \"calendar_arithmetic\"]\nheldout = [\"count_primes\", \"largest_island\", \"caesar_cipher\", \"family_relationships\"]\nsteps = 80\nbatch = 4\ngroup = 8\nlr = 0.1\nentropy = 0.01\nmax_edits = 2\neval_every = 20\ncheckpoint_every = 40\nseed = 2",
    );
    let out = dir.path().join("run");
    let s = settings(dir.path(), &text, &out, TrainOverrides::default());
    train(&s, Rule::ByAnswerShape, false);
    let log = trainer::read_train_log(&out).unwrap();
    let last = log.last().unwrap();
    let h = heldout(&out);
    let finals: Vec<&HeldoutRecord> = h.iter().filter(|r| r.step == 80).collect();
    assert_eq!(finals.len(), 4);
    for r in &finals {
        let e = edits_json(r);
        let numeric = r.task.starts_with("count_primes") || r.task.starts_with("largest_island");
        let (want, not) = if numeric {
            ("track-values", "count-explicitly")
        } else {
            ("count-explicitly", "track-values")
        };
        assert!(e.contains(want) && !e.contains(not), "{}: {e}", r.task);
        assert_eq!(r.score, 1.0, "{}: {e}", r.task);
    }
    assert_eq!(last.heldout_score, Some(1.0));
}

#[test]
fn a_resumed_run_equals_an_uninterrupted_one() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let text = suite_text(&["gcd", "spell_backward", "count_primes"], ADDITIVE);
    let o = |steps| TrainOverrides {
        steps: Some(steps),
        checkpoint_every: Some(2),
        eval_every: Some(2),
        ..TrainOverrides::default()
    };
    let a = dir.path().join("a");
    let sa = settings(dir.path(), &text, &a, o(6));
    train(&sa, Rule::Additive, false);
    let b = dir.path().join("b");
    let sb3 = settings(dir.path(), &text, &b, o(3));
    train(&sb3, Rule::Additive, false);
    // A second start without --resume is refused; with it, it continues.
    let e = trainer::run_with(
        &sb3,
        &sim::backend(Rule::Additive, &sb3),
        sandbox(),
        false,
        &|_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("--resume"), "{e}");
    let sb6 = settings(dir.path(), &text, &b, o(6));
    train(&sb6, Rule::Additive, true);
    let read = |p: PathBuf| std::fs::read_to_string(p).unwrap();
    for f in [
        "last.json",
        "ckpt-2.json",
        "ckpt-4.json",
        "ckpt-6.json",
        "trajectories.jsonl",
    ] {
        assert_eq!(read(a.join(f)), read(b.join(f)), "{f}");
    }
    // The first part ended at step 3, so b also holds step 3's held-out measure
    // (taken after the last step of a run); nothing else differs.
    let not3 = |d: &Path| -> String {
        read(d.join("heldout.jsonl"))
            .lines()
            .filter(|l| !l.starts_with("{\"step\":3,"))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    assert_eq!(not3(&a), not3(&b));
    assert_ne!(read(b.join("heldout.jsonl")), not3(&b));
    let strip = |d: &Path| -> Vec<TrainStep> {
        trainer::read_train_log(d)
            .unwrap()
            .into_iter()
            .map(|mut l| {
                l.wall_s = 0.0;
                (l.memo_hits, l.memo_misses) = (0, 0);
                if l.step == 3 {
                    l.heldout_score = None;
                    l.heldout_set = None;
                }
                l
            })
            .collect()
    };
    assert_eq!(strip(&a), strip(&b));
    // The step log has exactly the documented fields.
    let line = read(a.join("train.jsonl"))
        .lines()
        .next()
        .unwrap()
        .to_string();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "cache_hits",
            "cache_misses",
            "entropy",
            "heldout_score",
            "invalid_rate",
            "memo_hits",
            "memo_misses",
            "reward_mean",
            "reward_std",
            "step",
            "valid_rate",
            "wall_s"
        ]
    );
    // A changed setting cannot resume.
    let other = settings(
        dir.path(),
        &text,
        &b,
        TrainOverrides {
            lr: Some(0.5),
            ..o(8)
        },
    );
    let e = trainer::run_with(
        &other,
        &sim::backend(Rule::Additive, &other),
        sandbox(),
        true,
        &|_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("settings differ"), "{e}");
}

#[test]
fn resume_refuses_a_checkpoint_made_with_another_sandbox_interpreter() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let text = suite_text(&["gcd", "spell_backward", "count_primes"], ADDITIVE);
    let o = |steps| TrainOverrides {
        steps: Some(steps),
        checkpoint_every: Some(1),
        eval_every: Some(100),
        ..TrainOverrides::default()
    };
    let out = dir.path().join("run");
    train(
        &settings(dir.path(), &text, &out, o(1)),
        Rule::Additive,
        false,
    );
    // The checkpoint names the interpreter its rollouts ran with.
    let last = out.join(trainer::LAST);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&last).unwrap()).unwrap();
    let here = sandbox().python().hash();
    assert_eq!(v["metadata"]["sandbox_python"], serde_json::json!(here));
    // The same settings (the same --python, here none) but another environment, as
    // after a package was installed into it: refused, naming both hashes.
    let other = if here == "0123456789abcdef" {
        "fedcba9876543210"
    } else {
        "0123456789abcdef"
    };
    v["metadata"]["sandbox_python"] = serde_json::json!(other);
    std::fs::write(&last, serde_json::to_string(&v).unwrap()).unwrap();
    let s2 = settings(dir.path(), &text, &out, o(2));
    let e = trainer::run_with(
        &s2,
        &sim::backend(Rule::Additive, &s2),
        sandbox(),
        true,
        &|_| {},
    )
    .unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains("another sandbox interpreter") && m.contains(other) && m.contains(&here),
        "{m}"
    );
    // Nothing was cut or written: the run still holds its one step.
    assert_eq!(trainer::read_train_log(&out).unwrap().len(), 1);
    // A checkpoint from before the field existed resumes (nothing to compare).
    v["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("sandbox_python");
    std::fs::write(&last, serde_json::to_string(&v).unwrap()).unwrap();
    let o2 = train(&s2, Rule::Additive, true);
    assert_eq!(o2.steps, 2);
}

#[test]
fn train_tables_are_checked_strictly() {
    let dir = tempfile::tempdir().unwrap();
    let fams = ["gcd", "count_primes"];
    for (train, field, msg) in [
        (
            "train = [\"gcd\"]\nlearning_rate = 1",
            "learning_rate",
            "unknown field",
        ),
        (
            "train = [\"gcd\"]\nheldout = [\"gcd\"]",
            "train.heldout",
            "both",
        ),
        ("train = [\"sudoku\"]", "train.train[0]", "matches no task"),
        ("train = [\"gcd\"]\ngroup = 1", "train.group", "outside"),
        (
            "train = [\"rl@paper-like\"]",
            "train.train[0]",
            "matches no task",
        ),
    ] {
        let p = write_suite(dir.path(), &suite_text(&fams, train));
        let e = Suite::load(&p).unwrap_err().to_string();
        let origin = p.display().to_string();
        assert!(e.starts_with(&origin), "{e}");
        let rest = &e[origin.len()..];
        assert!(
            rest.starts_with(':') && rest[1..].starts_with(|c: char| c.is_ascii_digit()),
            "a line number: {e}"
        );
        assert!(e.contains(field) && e.contains(msg), "{train}: {e}");
    }
    // ROLE@SPLIT selects the suite's tasks of that role.
    let p = write_suite(
        dir.path(),
        &suite_text(
            &["gcd", "count_primes", "basic_arithmetic"],
            "train = [\"rl@paper-like\"]\nheldout = [\"held_out@paper-like\"]",
        ),
    );
    let s = Suite::load(&p).unwrap();
    let t = s.train.unwrap();
    assert_eq!(t.train, vec!["basic_arithmetic/L1"]);
    assert_eq!(t.heldout, vec!["gcd/L1", "count_primes/L1"]);
    // A suite without [train] is refused by `hrl train` with a pointer.
    let p = write_suite(dir.path(), &suite_text(&fams, "").replace("[train]\n", ""));
    let e =
        TrainSettings::resolve(&Suite::load(&p).unwrap(), &TrainOverrides::default()).unwrap_err();
    assert!(e.to_string().contains("no [train] table"), "{e}");
}

#[test]
fn multi_round_training_revises_the_best_revision_of_the_previous_round() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let text = suite_text(&["gcd", "spell_backward", "count_primes"], ADDITIVE);
    let out = dir.path().join("run");
    let s = settings(
        dir.path(),
        &text,
        &out,
        TrainOverrides {
            steps: Some(3),
            rounds: Some(2),
            ..TrainOverrides::default()
        },
    );
    train(&s, Rule::Additive, false);
    let trajs = trainer::read_trajectories(&out).unwrap();
    assert_eq!(trajs.len(), 3 * 2 * 2 * 8);
    for r1 in trajs.iter().filter(|t| t.round == 1 && t.candidate == 0) {
        let group: Vec<_> = trajs.iter().filter(|t| t.context == r1.context).collect();
        let best = group
            .iter()
            .filter_map(|t| t.dev_score.map(|d| (d, t.harness.clone().unwrap())))
            .fold(None::<(f64, String)>, |b, (d, h)| match b {
                Some((bd, _)) if bd >= d => b,
                _ => Some((d, h)),
            });
        let next = r1.context.replace("/r1", "/r2");
        let r2 = trajs.iter().find(|t| t.context == next).unwrap();
        match best {
            Some((d, h)) if d > r1.parent_dev_score => assert_eq!(r2.parent, h),
            _ => assert_eq!(r2.parent, r1.parent),
        }
    }
    assert!(
        trajs
            .iter()
            .any(|t| t.round == 2 && t.parent != trajs[0].parent),
        "some round-2 context revises a revision"
    );
}

/// Section "held out, never trained on": the trainer refuses a held-out family it
/// trains on (unless allowed, recorded), a checkpoint records what it was trained on,
/// the monitor scores a validation set (never test), a transfer suite naming a trained
/// family is refused, an ordinary evaluation marks it, and a checkpoint without the
/// record is accepted with a warning in the run's config.
#[test]
fn held_out_claims_are_enforced() {
    use harness_rl::error::{Classify, ErrorKind};
    use harness_rl::eval::config::EvalConfig;
    use harness_rl::eval::transfer::{self, TransferOverrides, TransferSettings};
    use harness_rl::records::SetName;
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    // gcd at two levels: held out at level 2 while trained at level 1 is refused.
    let two_levels = suite_text(
        &["gcd", "count_primes"],
        "train = [\"gcd/L1\"]\nheldout = [\"gcd/L2\"]\nsteps = 2\nbatch = 1\ngroup = 2",
    )
    .replace(
        "\n[train]",
        "\n[[task]]\nfamily = \"gcd\"\nlevel = 2\n\n[train]",
    );
    let suite = Suite::load(&write_suite(dir.path(), &two_levels))
        .unwrap_or_else(|e| panic!("{e}\n{two_levels}"));
    let e = TrainSettings::resolve(&suite, &TrainOverrides::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Usage);
    let m = e.to_string();
    assert!(
        m.contains("gcd/L2") && m.contains("gcd/L1") && m.contains("--allow-family-overlap"),
        "{m}"
    );
    let allowed = TrainSettings::resolve(
        &suite,
        &TrainOverrides {
            allow_family_overlap: true,
            ..TrainOverrides::default()
        },
    )
    .unwrap();
    assert!(allowed.allow_family_overlap && allowed.trained_on().family_overlap_allowed);

    // A short real training run: gcd trained, count_primes held out.
    let text = suite_text(
        &["gcd", "count_primes"],
        "train = [\"gcd\"]\nheldout = [\"count_primes\"]\nsteps = 2\nbatch = 1\ngroup = 2\neval_every = 1\nvalidation = 5\nseed = 3",
    );
    let out = dir.path().join("run");
    let s = settings(dir.path(), &text, &out, TrainOverrides::default());
    // The held-out task's validation set: its own instances, the test set unchanged.
    let held = &s.tasks[1];
    assert_eq!(held.sets.validation, 5);
    let setup = harness_rl::task::spec::GradingSetup::default();
    let with = harness_rl::eval::sets::build(held, held.sets, &setup)
        .unwrap()
        .ids();
    let mut no_validation = held.sets;
    no_validation.validation = 0;
    let without = harness_rl::eval::sets::build(held, no_validation, &setup)
        .unwrap()
        .ids();
    assert_eq!(with.test, without.test);
    assert_eq!(with.feedback, without.feedback);
    assert!(without.validation.is_empty());
    assert_eq!(with.validation.len(), 5);
    assert!(
        with.validation
            .iter()
            .all(|v| !with.test.contains(v) && !with.dev.contains(v) && !with.feedback.contains(v))
    );
    train(&s, Rule::Additive, false);
    let ckpt = out.join("last.json");
    let c = harness_rl::train::checkpoint::Checkpoint::load(&ckpt).unwrap();
    let t = c.metadata.trained_on.clone().expect("a trained_on record");
    assert_eq!(t.families, ["gcd"]);
    assert_eq!((t.tasks[0].family.as_str(), t.tasks[0].level), ("gcd", 1));
    assert_eq!(t.suite_sha256.as_deref(), Some(s.suite.sha256.as_str()));
    assert!(!t.family_overlap_allowed);
    // The monitor scored the validation set, and says so.
    let h = heldout(&out);
    assert!(!h.is_empty() && h.iter().all(|r| r.set == SetName::Validation));
    let log = trainer::read_train_log(&out).unwrap();
    assert!(
        log.iter()
            .all(|l| l.heldout_set == Some(SetName::Validation))
    );

    // A task transfer suite whose held-out tasks include gcd: refused, naming the
    // family and the checkpoint.
    let _ = harness_rl::train::register();
    let spec = format!("policy:{}", ckpt.display());
    let tsuite_text = text.replace(
        "\n[sets]",
        &format!(
            "proposers = [{spec:?}]\n\n[transfer]\nkind = \"task\"\nk = [1]\nsplit = \"paper-like\"\ntrain_roles = [\"warm_start\", \"rl\"]\nheld_out_role = \"held_out\"\n\n[sets]"
        ),
    );
    let tsuite = Suite::load(&write_suite(dir.path(), &tsuite_text))
        .unwrap_or_else(|e| panic!("{e}\n{tsuite_text}"));
    let ts = TransferSettings::resolve(
        harness_rl::eval::suite::TransferKind::Task,
        &tsuite,
        &TransferOverrides {
            eval: Overrides {
                out: Some(dir.path().join("transfer")),
                engine: EngineOverrides {
                    cache: Some(CacheChoice::Off),
                    ..EngineOverrides::default()
                },
                ..Overrides::default()
            },
            ..TransferOverrides::default()
        },
    )
    .unwrap();
    let backend = sim::backend(Rule::Additive, &s);
    let tprops = harness_rl::eval::open_proposers(&ts.index.settings, &backend).unwrap();
    let e = match transfer::run_with(&ts, &backend, sandbox(), &tprops, false, &|_| {}) {
        Err(e) => e,
        Ok(_) => panic!("a transfer suite with a trained family ran"),
    };
    assert_eq!(e.kind(), ErrorKind::Usage);
    let m = e.to_string();
    assert!(
        m.contains("`gcd`") && m.contains(&ckpt.display().to_string()),
        "{m}"
    );
    assert!(!dir.path().join("transfer").join(transfer::INDEX).exists());

    // An ordinary evaluation on both tasks: gcd is marked seen_in_training.
    let esuite = Suite::load(&write_suite(dir.path(), &text)).unwrap();
    let mut old =
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&ckpt).unwrap())
            .unwrap();
    old["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("trained_on");
    let old_ckpt = dir.path().join("old.json");
    std::fs::write(&old_ckpt, serde_json::to_string_pretty(&old).unwrap()).unwrap();
    let es = EvalSettings::resolve(
        &esuite,
        &Overrides {
            proposers: vec![spec.clone(), format!("policy:{}", old_ckpt.display())],
            out: Some(dir.path().join("eval")),
            engine: EngineOverrides {
                cache: Some(CacheChoice::Off),
                ..EngineOverrides::default()
            },
            ..Overrides::default()
        },
    )
    .unwrap();
    let proposers = harness_rl::eval::open_proposers(&es, &backend).unwrap();
    let arms =
        harness_rl::eval::run_with(&es, &backend, sandbox(), &proposers, false, &|_| {}).unwrap();
    let cfg = |i: usize| -> EvalConfig {
        serde_json::from_str(
            &std::fs::read_to_string(es.arm_dir(i).unwrap().join("config.json")).unwrap(),
        )
        .unwrap()
    };
    assert_eq!(cfg(0).seen_in_training, ["gcd/L1"]);
    assert!(cfg(0).warnings.is_empty());
    let tasks = &arms[0].summary.tasks;
    assert!(
        tasks
            .iter()
            .any(|t| t.task == "gcd/L1" && t.seen_in_training)
    );
    assert!(
        tasks
            .iter()
            .any(|t| t.task == "count_primes/L1" && !t.seen_in_training)
    );
    // A checkpoint without the record: accepted, with a warning in its config.
    assert!(cfg(1).seen_in_training.is_empty());
    assert_eq!(cfg(1).warnings.len(), 1);
    assert!(
        cfg(1).warnings[0].contains("does not record"),
        "{:?}",
        cfg(1).warnings
    );
}
