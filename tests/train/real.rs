//! `hrl train` as a process on the real SmolLM2-135M (mechanics only: a 135M model
//! gives no learning signal worth reading), then the checkpoint through
//! `hrl eval --proposer policy:CKPT`, and `--steps 0` (the untrained policy).

use std::process::Command;

use harness_rl::train::checkpoint::Checkpoint;
use harness_rl::train::trainer;

use super::common::{default_model, heavy, hrl, private_home, repo, succeed};

#[test]
fn hrl_train_runs_on_smollm2_and_its_checkpoint_evaluates() {
    let _g = heavy();
    let m = default_model();
    // A private HRL_HOME: the model linked in, an empty completion cache.
    let home = private_home();
    let out = home.path().join("train");
    succeed(
        Command::new(hrl())
            .env("HRL_HOME", home.path())
            .args(["train", "--suite"])
            .arg(repo().join("suites/train-smoke.toml"))
            .arg("--out")
            .arg(&out),
    );
    let log = trainer::read_train_log(&out).unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(log[1].step, 2);
    assert!(log[1].heldout_score.is_some() && log[0].heldout_score.is_none());
    assert!(
        log.iter().all(|l| l.cache_hits == 0 && l.cache_misses > 0),
        "{log:?}"
    );
    let c = Checkpoint::load(&out.join("last.json")).unwrap();
    assert_eq!(c.metadata.steps, 2);
    assert_eq!(c.metadata.executor_model_sha256.as_deref(), Some(m.sha256));
    assert_ne!(c.theta, c.theta0, "an update happened");
    assert!(out.join("ckpt-1.json").exists() && out.join("ckpt-2.json").exists());
    // The checkpoint as an `hrl eval` proposer (registered by the binary).
    let ev = home.path().join("eval");
    succeed(
        Command::new(hrl())
            .env("HRL_HOME", home.path())
            .args(["eval", "--suite"])
            .arg(repo().join("suites/train-smoke.toml"))
            .arg("--proposer")
            .arg(format!("policy:{}", out.join("last.json").display()))
            .args(["--task", "count_primes", "--no-progress", "--out"])
            .arg(&ev),
    );
    let cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ev.join("config.json")).unwrap()).unwrap();
    assert_eq!(cfg["proposer"]["kind"], "policy");
    assert_eq!(cfg["proposer"]["details"]["steps"], 2);
    // --steps 0: the untrained policy, written without running the model.
    let u = home.path().join("uniform");
    succeed(
        Command::new(hrl())
            .env("HRL_HOME", home.path().join("nothing-here"))
            .args(["train", "--steps", "0", "--suite"])
            .arg(repo().join("suites/train-smoke.toml"))
            .arg("--out")
            .arg(&u),
    );
    let c = Checkpoint::load(&u.join("last.json")).unwrap();
    assert!(c.theta.iter().all(|x| *x == 0.0) && c.metadata.steps == 0);
    // A bad checkpoint is a usage error naming the file.
    std::fs::write(home.path().join("bad.json"), "{\"format\": 1}").unwrap();
    let st = Command::new(hrl())
        .env("HRL_HOME", home.path())
        .args(["eval", "--suite"])
        .arg(repo().join("suites/train-smoke.toml"))
        .arg("--proposer")
        .arg(format!("policy:{}", home.path().join("bad.json").display()))
        .args(["--no-progress", "--out"])
        .arg(home.path().join("bad-eval"))
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&st.stderr).contains("bad.json"));
}
