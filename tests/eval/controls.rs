//! The controls of a transfer table over the simulated model: `best-fixed` (chosen
//! from an `hrl eval` run's records on training tasks) and the `rule` proposer
//! (the written positive-control rule) inside the real evaluator.

use harness_rl::eval::best_fixed;
use harness_rl::records::CandidateStatus;

use super::sim::marked;
use super::util::*;

#[test]
fn best_fixed_picks_the_arm_with_the_best_mean_dev_score() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, marker: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, marked(marker)).unwrap();
        format!("file:{}", p.display())
    };
    let none = write("none.toml", "SIM-NONE");
    let good = write("good.toml", "SIM-GOOD");
    let half = write("half.toml", "SIM-HALF");
    let body = "rounds = 1\ncandidates = 1\nsamples = 2\nselect = \"always\"\n\n[sets]\nfeedback = 1\ndev = 6\ntest = 2\n\n[[task]]\nfamilies = [\"gcd\", \"lcm\"]\nlevel = 1\n";
    let out = dir.path().join("run");
    let proposers = ["identity", none.as_str(), half.as_str(), good.as_str()];
    let s = settings(
        &suite_text(&zero_shot(), &proposers, body),
        dir.path(),
        &out,
    );
    run_sim(&s, &sim_exec(&s), false).unwrap();
    let c = best_fixed::choose(&out).unwrap();
    assert_eq!(c.chosen, "file-good");
    assert_eq!(c.tasks.len(), 2);
    let mean = |label: &str| c.arms.iter().find(|a| a.label == label).unwrap().dev_mean;
    assert_eq!(mean("file-good"), 1.0);
    assert_eq!(mean("file-none"), 0.0);
    assert_eq!(mean("identity"), 0.0);
    assert!(mean("file-half") > 0.0 && mean("file-half") < 1.0);
    assert_eq!(
        c.arms.iter().map(|a| a.trajectories).collect::<Vec<_>>(),
        vec![4; 4]
    );
    // The chosen harness is written beside the choice, byte for byte the arm's.
    let written = std::fs::read_to_string(out.join(&c.file)).unwrap();
    assert_eq!(parse_toml(&written).hash(), c.harness);
    assert_eq!(parse_toml(&marked("SIM-GOOD")).hash(), c.harness);
    let json: best_fixed::Choice =
        serde_json::from_str(&std::fs::read_to_string(out.join(best_fixed::CHOICE)).unwrap())
            .unwrap();
    assert_eq!(json, c);

    // A run whose arms could have kept something else than their file is refused.
    let out2 = dir.path().join("best");
    let s2 = settings(
        &suite_text(
            &zero_shot(),
            &proposers,
            &body.replace("select = \"always\"\n", ""),
        ),
        dir.path(),
        &out2,
    );
    run_sim(&s2, &sim_exec(&s2), false).unwrap();
    let e = best_fixed::choose(&out2).unwrap_err().to_string();
    assert!(e.contains("select = \"always\""), "{e}");
}

#[test]
fn the_rule_proposer_revises_from_the_report_alone() {
    let _g = heavy();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    // The simulated model answers wrong under the zero-shot seed; gcd's answers are
    // numbers, so the rule's first step (computable answers) fires: a program harness,
    // which the simulated model answers correctly by a printing program.
    let body = "rounds = 1\ncandidates = 4\nsamples = 1\n\n[sets]\nfeedback = 4\ndev = 4\ntest = 4\n\n[[task]]\nfamily = \"gcd\"\nlevel = 1\n";
    let s = settings(&suite_text(&zero_shot(), &["rule"], body), dir.path(), &out);
    run_sim(&s, &sim_exec(&s), false).unwrap();
    let cs = candidates(&out);
    assert_eq!(cs.len(), 1, "one deterministic candidate whatever G is");
    assert_ne!(cs[0].status, CandidateStatus::Invalid);
    let h = std::fs::read_dir(out.join("harnesses"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .find(|t| t.contains("repl_print = true"));
    assert!(
        h.is_some(),
        "the program strategy with REPL printing was written"
    );
}
