//! Shared helpers: synthetic run directories written with the library's own record
//! types (config from the fixture's `config.json`, rounds and candidates with chosen
//! scores), and the `hrl` binary with an empty private `HRL_HOME`.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use harness_rl::eval::config::EvalConfig;
use harness_rl::eval::sets::SetName;
use harness_rl::eval::suite::TaskSource;
use harness_rl::harness::HarnessKind;
use harness_rl::proposer::{RevisionForm, TokenUse};
use harness_rl::records::{CandidateRecord, CandidateStatus, RoundRecord, SetScore};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/report/fixtures/oracle-run")
}

/// `hrl` with `HRL_HOME` pointing at an empty directory (no model, no cache).
pub fn hrl(home: &Path) -> Command {
    let mut c = Command::cargo_bin("hrl").unwrap();
    c.env("HRL_HOME", home).env_remove("HRL_CACHE");
    c
}

/// Copy a run directory (files and `harnesses/`).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.join("harnesses")).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            copy_dir(&p, &to.join(p.file_name().unwrap()));
        } else {
            std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        }
    }
}

pub fn read_config(dir: &Path) -> EvalConfig {
    serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap()
}

pub fn write_config(dir: &Path, c: &EvalConfig) {
    std::fs::write(
        dir.join("config.json"),
        serde_json::to_string_pretty(c).unwrap(),
    )
    .unwrap();
}

pub fn write_lines<T: serde::Serialize>(path: &Path, rows: &[T]) {
    let mut s = String::new();
    for r in rows {
        s.push_str(&serde_json::to_string(r).unwrap());
        s.push('\n');
    }
    std::fs::write(path, s).unwrap();
}

pub fn read_lines<T: for<'de> serde::Deserialize<'de>>(path: &Path) -> Vec<T> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The shape of a synthetic run.
#[derive(Clone)]
pub struct Shape {
    /// (family, level) per task.
    pub tasks: Vec<(&'static str, u8)>,
    pub rounds: u32,
    pub samples: u32,
    pub test: usize,
}

impl Default for Shape {
    fn default() -> Self {
        Shape {
            tasks: vec![("gcd", 1), ("gcd", 2), ("spell_backward", 1)],
            rounds: 2,
            samples: 4,
            test: 24,
        }
    }
}

/// Test scores of a synthetic run: `scores[task][sample][round][instance]`.
pub type Scores = Vec<Vec<Vec<Vec<f64>>>>;

/// Seeded 0/1 scores: each round of a trajectory keeps the instances solved before
/// and solves each other one with probability `p_improve`; round 0 solves with
/// probability `p_seed`. Scores of one sample and instance are shared by any run
/// built from the same seed (the seed harness is the same).
pub fn random_scores(shape: &Shape, seed: u64, p_seed: f64, p_improve: f64) -> Scores {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    shape
        .tasks
        .iter()
        .map(|_| {
            (0..shape.samples)
                .map(|_| {
                    let mut cur: Vec<f64> = (0..shape.test)
                        .map(|_| f64::from(rng.random_bool(p_seed)))
                        .collect();
                    let mut rounds = vec![cur.clone()];
                    for _ in 0..shape.rounds {
                        cur = cur
                            .iter()
                            .map(|&x| {
                                if x == 1.0 || rng.random_bool(p_improve) {
                                    1.0
                                } else {
                                    0.0
                                }
                            })
                            .collect();
                        rounds.push(cur.clone());
                    }
                    rounds
                })
                .collect()
        })
        .collect()
}

fn fake_hash(task: usize, sample: u32, round: u32) -> String {
    format!(
        "{:064x}",
        (task as u128 + 1) * 1_000_000 + u128::from(sample) * 1000 + u128::from(round)
    )
}

/// Write a synthetic run directory at `dir` with the given scores: config from the
/// fixture's (tasks, sets and sizes replaced), one round record per (task, sample,
/// round), one scored candidate per round >= 1 (kept when the score rose), and a
/// harness file for every revision.
pub fn synth_run(dir: &Path, shape: &Shape, scores: &Scores) {
    std::fs::create_dir_all(dir.join("harnesses")).unwrap();
    let mut config = read_config(&fixture());
    let template = config.tasks[0].clone();
    let seed_hash = template.seed_harness_ref.hash.clone();
    let seed_text =
        std::fs::read_to_string(fixture().join(format!("harnesses/{seed_hash}.toml"))).unwrap();
    std::fs::write(dir.join(format!("harnesses/{seed_hash}.toml")), &seed_text).unwrap();
    config.settings.rounds = shape.rounds;
    config.settings.samples = shape.samples;
    config.tasks = shape
        .tasks
        .iter()
        .map(|&(family, level)| {
            let mut t = template.clone();
            let id = format!("{family}/L{level}");
            t.def.id = id.clone();
            t.def.source = TaskSource::Family {
                family: family.to_string(),
                level,
                seed: 0,
            };
            t.def.sets.test = shape.test;
            t.set_ids.test = (0..shape.test)
                .map(|i| format!("{id}/s0/i{}", 2_000_000 + i))
                .collect();
            t
        })
        .collect();
    config.settings.tasks = config.tasks.iter().map(|t| t.def.clone()).collect();
    write_config(dir, &config);
    let mut rounds = Vec::new();
    let mut cands = Vec::new();
    for (ti, (family, level)) in shape.tasks.iter().enumerate() {
        let task = format!("{family}/L{level}");
        for m in 0..shape.samples {
            let mut kept = seed_hash.clone();
            for r in 0..=shape.rounds {
                let s = &scores[ti][m as usize][r as usize];
                let mean = s.iter().sum::<f64>() / s.len() as f64;
                let parent = kept.clone();
                let (accepted, candidates) = if r == 0 {
                    (false, 0)
                } else {
                    let prev = &scores[ti][m as usize][r as usize - 1];
                    let hash = fake_hash(ti, m, r);
                    let accepted = s != prev;
                    std::fs::write(
                        dir.join(format!("harnesses/{hash}.toml")),
                        format!("{seed_text}# revision {ti} {m} {r}\n"),
                    )
                    .unwrap();
                    cands.push(CandidateRecord {
                        schema: 1,
                        task: task.clone(),
                        sample: m,
                        round: r,
                        index: 0,
                        parent: parent.clone(),
                        status: CandidateStatus::Scored,
                        hash: Some(hash.clone()),
                        kind: Some(HarnessKind::Declarative),
                        form: Some(RevisionForm::Toml),
                        dev: Some(mean),
                        reason: None,
                        raw: Some(format!("```toml\n# revision {r}\n```")),
                        tokens: TokenUse {
                            prompt: 100,
                            completion: 20,
                        },
                        selected: accepted,
                    });
                    cands.push(CandidateRecord {
                        schema: 1,
                        task: task.clone(),
                        sample: m,
                        round: r,
                        index: 1,
                        parent: parent.clone(),
                        status: CandidateStatus::Invalid,
                        hash: None,
                        kind: None,
                        form: None,
                        dev: None,
                        reason: Some("no ```toml block".into()),
                        raw: Some("<garbage & more>".into()),
                        tokens: TokenUse {
                            prompt: 100,
                            completion: 20,
                        },
                        selected: false,
                    });
                    if accepted {
                        kept = hash;
                    }
                    (accepted, 2)
                };
                rounds.push(RoundRecord {
                    schema: 1,
                    task: task.clone(),
                    sample: m,
                    round: r,
                    parent: parent.clone(),
                    parent_feedback: None,
                    parent_dev: if r == 0 { None } else { Some(0.0) },
                    candidates,
                    scored: candidates / 2,
                    duplicate: 0,
                    unchanged: 0,
                    invalid: candidates / 2,
                    selected: kept.clone(),
                    selected_kind: HarnessKind::Declarative,
                    accepted,
                    selected_dev: Some(mean),
                    test: SetScore {
                        set: SetName::Test,
                        harness: kept.clone(),
                        mean,
                        scores: s.clone(),
                        executor_free: 0,
                        tokens: 50 * s.len() as u64 + 10 * u64::from(r),
                    },
                    executor_tokens: 1000,
                    proposer_tokens: TokenUse {
                        prompt: 200,
                        completion: 40,
                    },
                    dev_batch: None,
                    wall_ms: 10,
                });
            }
        }
    }
    write_lines(&dir.join("rounds.jsonl"), &rounds);
    write_lines(&dir.join("candidates.jsonl"), &cands);
}

/// The overall statistic computed the long way: the mean over tasks of the mean over
/// samples of the mean over instances, after round `round`.
pub fn overall_mean(scores: &Scores, round: usize) -> f64 {
    let per_task: Vec<f64> = scores
        .iter()
        .map(|samples| {
            samples
                .iter()
                .map(|rounds| rounds[round].iter().sum::<f64>() / rounds[round].len() as f64)
                .sum::<f64>()
                / samples.len() as f64
        })
        .collect();
    per_task.iter().sum::<f64>() / per_task.len() as f64
}

pub fn json_of(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(out)))
}
