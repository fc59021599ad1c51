//! `hrl compare`: identical runs pass, a planted regression is caught (exit 3), an
//! oracle against an empty-answer run is a regression, a tiny pair that must decide
//! is inconclusive (exit 4), the difference agrees with an independent computation,
//! runs cut with `--limit` and runs that cannot be paired are refused (exit 2) naming
//! why.

use std::path::Path;

use super::util::*;

fn compare(home: &Path, a: &Path, b: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    hrl(home).arg("compare").arg(a).arg(b).args(extra).assert()
}

/// A copy of `scores` whose final round loses `drop` of the solved instances of every
/// trajectory (every `step`-th solved instance flipped to 0).
fn regress(scores: &Scores, step: usize) -> Scores {
    let mut s = scores.clone();
    for task in &mut s {
        for traj in task.iter_mut() {
            let last = traj.len() - 1;
            let mut seen = 0;
            for x in traj[last].iter_mut() {
                if *x == 1.0 {
                    if seen % step == 0 {
                        *x = 0.0;
                    }
                    seen += 1;
                }
            }
        }
    }
    s
}

#[test]
fn identical_runs_pass() {
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let shape = Shape::default();
    let scores = random_scores(&shape, 11, 0.3, 0.2);
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    synth_run(&a, &shape, &scores);
    synth_run(&b, &shape, &scores);
    let out = compare(home.path(), &a, &b, &["--fail-if-worse", "0", "--json"]).success();
    let c = json_of(&out.get_output().stdout);
    assert_eq!(c["diff"]["mean"], 0.0);
    assert_eq!(c["diff"]["ci"]["lo"], 0.0);
    assert_eq!(c["diff"]["ci"]["hi"], 0.0);
    assert_eq!(c["gate"]["verdict"], "pass");
    // No difference anywhere: every task's differences are constant, planned with
    // the plus-four variance p(1 - p), p = 2 / (24 + 4), as the instance component.
    let p = 2.0 / 28.0;
    let inst = c["power"]["components"]["instance"].as_f64().unwrap();
    assert!((inst - p * (1.0 - p)).abs() < 1e-12, "{c}");
    assert!(c["power"]["mdd"].as_f64().unwrap() > 0.0, "{c}");
    // Identical runs are shown not worse by any positive margin, and a required
    // decision is a pass; at margin 0 the interval [0, 0] touches -0, which decides
    // neither way.
    compare(home.path(), &a, &b, &["--non-inferior", "0.01"]).success();
    compare(
        home.path(),
        &a,
        &b,
        &["--fail-if-worse", "0.01", "--require-decision"],
    )
    .success();
    compare(
        home.path(),
        &a,
        &b,
        &["--fail-if-worse", "0", "--require-decision"],
    )
    .code(4);
    assert_eq!(c["p_samples"]["p_value"], 1.0);
    assert_eq!(c["seed_round_mismatches"], 0);
    let other = c["other"].as_array().unwrap();
    assert_eq!(other.len(), 7);
    assert!(other.iter().all(|o| o["a"] == o["b"]), "{c}");
    // A run against itself, as text.
    let out = compare(home.path(), &a, &a, &[]).success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("| **overall** |"), "{text}");
}

#[test]
fn a_planted_regression_is_caught() {
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let shape = Shape::default();
    let scores = random_scores(&shape, 12, 0.35, 0.3);
    let worse = regress(&scores, 2); // about half of the final solved instances lost
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    synth_run(&a, &shape, &scores);
    synth_run(&b, &shape, &worse);
    let k = shape.rounds as usize;
    let expected = overall_mean(&worse, k) - overall_mean(&scores, k);
    assert!(expected < -0.15, "the planted drop is large: {expected}");
    let out = compare(home.path(), &a, &b, &["--fail-if-worse", "0.05", "--json"]).code(3);
    let c = json_of(&out.get_output().stdout);
    assert!(
        (c["diff"]["mean"].as_f64().unwrap() - expected).abs() < 1e-12,
        "{c}"
    );
    assert!(c["diff"]["ci"]["hi"].as_f64().unwrap() < -0.05, "{c}");
    assert_eq!(c["gate"]["verdict"], "regression");
    assert!(c["p_samples"]["p_value"].as_f64().unwrap() < 0.01, "{c}");
    assert!(
        String::from_utf8_lossy(&out.get_output().stderr)
            .contains("worse than A by more than 0.05")
    );
    // Per task, the difference is the task's own mean difference.
    for (i, t) in c["tasks"].as_array().unwrap().iter().enumerate() {
        let one = |s: &Scores| overall_mean(&vec![s[i].clone()], k);
        let want = one(&worse) - one(&scores);
        assert!((t["diff"]["mean"].as_f64().unwrap() - want).abs() < 1e-12);
    }
    // The rule is the upper bound: a threshold between the bounds passes, one just
    // inside the upper bound fails.
    let (lo, hi) = (
        c["diff"]["ci"]["lo"].as_f64().unwrap(),
        c["diff"]["ci"]["hi"].as_f64().unwrap(),
    );
    assert!(lo < hi, "{c}");
    let mid = format!("{}", -(lo + hi) / 2.0);
    compare(home.path(), &a, &b, &["--fail-if-worse", &mid]).success();
    let inside = format!("{}", -hi - 1e-6);
    compare(home.path(), &a, &b, &["--fail-if-worse", &inside]).code(3);
    let outside = format!("{}", -hi + 1e-6);
    compare(home.path(), &a, &b, &["--fail-if-worse", &outside]).success();
    // A threshold beyond the drop passes; so does B better than A (swap the sides).
    compare(home.path(), &a, &b, &["--fail-if-worse", "0.9"]).success();
    compare(home.path(), &b, &a, &["--fail-if-worse", "0"]).success();
    // Without the flag a worse B is reported, not failed.
    compare(home.path(), &a, &b, &[]).success();
    // A threshold between the bounds must decide: inconclusive.
    compare(
        home.path(),
        &a,
        &b,
        &["--fail-if-worse", &mid, "--require-decision"],
    )
    .code(4);
    // Non-inferiority: shown worse by more than 0.05 is a regression; a margin
    // beyond the lower bound passes; one between the bounds is not shown.
    compare(home.path(), &a, &b, &["--non-inferior", "0.05"]).code(3);
    let wide = format!("{}", -lo + 1e-6);
    compare(home.path(), &a, &b, &["--non-inferior", &wide]).success();
    compare(home.path(), &a, &b, &["--non-inferior", &mid]).code(4);
}

/// Every final test score of every trajectory set to `value` (the seed round kept).
fn final_scores(scores: &Scores, value: f64) -> Scores {
    let mut s = scores.clone();
    for task in &mut s {
        for traj in task.iter_mut() {
            let last = traj.len() - 1;
            for x in traj[last].iter_mut() {
                *x = value;
            }
        }
    }
    s
}

#[test]
fn an_oracle_against_an_empty_answer_run_is_a_regression() {
    // A: every final harness answers every test instance right (the oracle); B:
    // every final harness gives an empty answer (scored 0). Same seed rounds.
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let shape = Shape::default();
    let scores = random_scores(&shape, 21, 0.3, 0.2);
    let (a, b) = (d.path().join("oracle"), d.path().join("empty"));
    synth_run(&a, &shape, &final_scores(&scores, 1.0));
    synth_run(&b, &shape, &final_scores(&scores, 0.0));
    let out = compare(home.path(), &a, &b, &["--fail-if-worse", "0"]).code(3);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    // The rule, the level, the test and its p-value, and the power are printed.
    assert!(text.contains("REGRESSION"), "{text}");
    assert!(
        text.contains("Rule: regression when the upper bound of the two-sided 95 % paired crossed-design interval of B - A"),
        "{text}"
    );
    assert!(
        text.contains("paired sign-flip test of no difference (harness samples flipped): p = "),
        "{text}"
    );
    assert!(
        text.contains(
            "Power: the smallest difference this design (3 tasks x 24 instances x 4 samples)"
        ),
        "{text}"
    );
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("regression: B is worse than A by more than 0"),
        "{err}"
    );
    // Every difference is -1 on 3 x 24 instances: the interval is [-1, -1 + w] with w
    // the Wilson bound for 0 of 72, z² / (72 + z²).
    let out = compare(home.path(), &a, &b, &["--fail-if-worse", "0", "--json"]).code(3);
    let c = json_of(&out.get_output().stdout);
    assert_eq!(c["diff"]["mean"], -1.0);
    assert_eq!(c["diff"]["ci"]["lo"], -1.0);
    let z2 = 1.959_963_984_540_054f64.powi(2);
    let hi = c["diff"]["ci"]["hi"].as_f64().unwrap();
    assert!((hi - (-1.0 + z2 / (72.0 + z2))).abs() < 1e-9, "{c}");
    // The other way round, B is far better: passes every gate.
    compare(
        home.path(),
        &b,
        &a,
        &["--fail-if-worse", "0", "--require-decision"],
    )
    .success();
    compare(home.path(), &b, &a, &["--non-inferior", "0"]).success();
}

#[test]
fn a_tiny_pair_that_must_decide_is_inconclusive() {
    // One task, two harness samples, six test instances; B loses two solved
    // instances of one sample: the interval of B - A is wide and contains 0.
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let shape = Shape {
        tasks: vec![("gcd", 1)],
        rounds: 1,
        samples: 2,
        test: 6,
    };
    let scores: Scores = vec![vec![
        vec![
            vec![0.0, 1.0, 0.0, 1.0, 0.0, 0.0],
            vec![1.0, 1.0, 0.0, 1.0, 1.0, 0.0],
        ],
        vec![
            vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0],
            vec![1.0, 1.0, 0.0, 0.0, 1.0, 0.0],
        ],
    ]];
    let mut worse = scores.clone();
    worse[0][0][1] = vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0];
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    synth_run(&a, &shape, &scores);
    synth_run(&b, &shape, &worse);
    let out = compare(
        home.path(),
        &a,
        &b,
        &["--fail-if-worse", "0", "--require-decision", "--json"],
    )
    .code(4);
    let c = json_of(&out.get_output().stdout);
    assert_eq!(c["gate"]["verdict"], "inconclusive");
    let (lo, hi) = (
        c["diff"]["ci"]["lo"].as_f64().unwrap(),
        c["diff"]["ci"]["hi"].as_f64().unwrap(),
    );
    assert!(lo < 0.0 && hi > 0.0, "{c}");
    // The detectable difference of so small a design exceeds what was seen.
    assert!(c["power"]["mdd"].as_f64().unwrap() > c["diff"]["mean"].as_f64().unwrap().abs());
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("inconclusive"), "{err}");
    // Without --require-decision the same comparison passes (too little data is not
    // a regression); --non-inferior cannot pass it.
    compare(home.path(), &a, &b, &["--fail-if-worse", "0"]).success();
    compare(home.path(), &a, &b, &["--non-inferior", "0.1"]).code(4);
}

#[test]
fn limited_runs_are_refused_unless_allowed() {
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let shape = Shape::default();
    let scores = random_scores(&shape, 16, 0.3, 0.2);
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    synth_run(&a, &shape, &scores);
    synth_run(&b, &shape, &scores);
    for dir in [&a, &b] {
        let mut c = read_config(dir);
        c.comparable = false;
        c.settings.limit = Some(24);
        write_config(dir, &c);
    }
    let out = compare(home.path(), &a, &b, &["--fail-if-worse", "0"]).code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("was cut with --limit 24") && err.contains("--allow-limited"),
        "{err}"
    );
    let out = compare(
        home.path(),
        &a,
        &b,
        &["--fail-if-worse", "0", "--allow-limited"],
    )
    .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("compared only because --allow-limited was given"),
        "{text}"
    );
}

#[test]
fn a_small_difference_within_the_threshold_passes() {
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let shape = Shape::default();
    let scores = random_scores(&shape, 13, 0.35, 0.3);
    // One solved instance lost in one trajectory.
    let mut worse = scores.clone();
    let last = worse[0][0].len() - 1;
    let i = worse[0][0][last].iter().position(|&x| x == 1.0).unwrap();
    worse[0][0][last][i] = 0.0;
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    synth_run(&a, &shape, &scores);
    synth_run(&b, &shape, &worse);
    let out = compare(home.path(), &a, &b, &["--fail-if-worse", "0.02", "--json"]).success();
    let c = json_of(&out.get_output().stdout);
    assert!(c["diff"]["mean"].as_f64().unwrap() < 0.0);
    assert_eq!(c["gate"]["verdict"], "pass");
}

/// Two copies of one synthetic run, `change` applied to B's config; the refusal must
/// name `field`.
fn refused(change: impl FnOnce(&mut harness_rl::eval::config::EvalConfig), field: &str) -> String {
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let shape = Shape::default();
    let scores = random_scores(&shape, 14, 0.3, 0.2);
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    synth_run(&a, &shape, &scores);
    synth_run(&b, &shape, &scores);
    let mut c = read_config(&b);
    change(&mut c);
    write_config(&b, &c);
    let out = compare(home.path(), &a, &b, &["--fail-if-worse", "0.01"]).code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains(&format!("not comparable: {field} differs")),
        "{field}: {err}"
    );
    err
}

/// A run on a GPU and one on the CPU have different executor identities, and the
/// refusal says that the device is what differs.
#[test]
fn a_gpu_run_is_not_paired_with_a_cpu_run() {
    let err = refused(
        |c| {
            c.executor.device = Some(harness_rl::executor::spec::DeviceIdentity {
                backend: "CUDA".into(),
                runtime: "13.0".into(),
                driver: Some("13.0".into()),
                devices: vec!["NVIDIA H100 80GB HBM3 (compute capability 9.0)".into()],
                layers_offloaded: 25,
                layers_total: 25,
            });
            c.executor.hash = "d".repeat(64);
        },
        "executor",
    );
    assert!(err.contains("device") && err.contains("H100"), "{err}");
}

#[test]
fn runs_that_cannot_be_paired_are_refused() {
    refused(|c| c.settings.seed += 1, "seed");
    refused(|c| c.settings.candidates += 1, "candidates");
    refused(
        |c| {
            c.executor.hash = "0".repeat(64);
            c.executor.model_id = "1".repeat(64);
        },
        "executor",
    );
    refused(|c| c.run_config_hash = "f".repeat(64), "rollout settings");
    refused(
        |c| c.tasks[1].set_ids.test[3] = "gcd/L2/s0/i9999999".into(),
        "tasks[gcd/L2].sets.test instance ids",
    );
    refused(
        |c| c.tasks[0].seed_harness_ref.hash = "e".repeat(64),
        "tasks[gcd/L1].seed_harness",
    );
    refused(
        |c| {
            c.tasks.pop();
        },
        "tasks",
    );
}

#[test]
fn incomplete_and_missing_runs_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let shape = Shape::default();
    let scores = random_scores(&shape, 15, 0.3, 0.2);
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    synth_run(&a, &shape, &scores);
    synth_run(&b, &shape, &scores);
    // Drop B's last round record of the last trajectory.
    let p = b.join("rounds.jsonl");
    let mut rows: Vec<harness_rl::records::RoundRecord> = read_lines(&p);
    let gone = rows.pop().unwrap();
    write_lines(&p, &rows);
    let out = compare(home.path(), &a, &b, &[]).code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("incomplete")
            && err.contains(&format!("task {} sample {}", gone.task, gone.sample)),
        "{err}"
    );
    // One proposer's directory of a multi-proposer run: the hint names the run (the
    // parent, which holds eval.json), as `hrl eval --resume` needs it.
    let multi = d.path().join("multi");
    let arm = multi.join("b");
    std::fs::create_dir_all(&multi).unwrap();
    std::fs::write(multi.join("eval.json"), "{}").unwrap();
    synth_run(&arm, &shape, &scores);
    write_lines(&arm.join("rounds.jsonl"), &rows);
    let out = compare(home.path(), &a, &arm, &[]).code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains(&format!("`hrl eval --resume {}`", multi.display())),
        "{err}"
    );
    // Not a run directory; bad options.
    compare(home.path(), &a, &d.path().join("nope"), &[]).code(2);
    compare(home.path(), &a, &a, &["--confidence", "1.5"]).code(2);
    compare(home.path(), &a, &a, &["--fail-if-worse", "-0.1"]).code(2);
    compare(home.path(), &a, &a, &["--non-inferior", "-0.1"]).code(2);
    // One gate at a time; --require-decision needs one.
    compare(
        home.path(),
        &a,
        &a,
        &["--fail-if-worse", "0", "--non-inferior", "0"],
    )
    .code(2);
    let out = compare(home.path(), &a, &a, &["--require-decision"]).code(2);
    assert!(
        String::from_utf8_lossy(&out.get_output().stderr)
            .contains("--require-decision needs a gate")
    );
}
