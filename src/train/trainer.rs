//! The GRPO-style trainer of the compact policy (`hrl train`).
//!
//! Per step:
//! 1. a batch of `batch` training contexts: training tasks taken in seeded epochs (each
//!    epoch a fresh permutation of the training tasks), each with its parent harness
//!    (the task's seed harness) and the parent's execution report on the task's
//!    feedback set;
//! 2. `group` revisions sampled from the policy per context (seed derived from the
//!    run seed, step, context, round and candidate);
//! 3. the reward of a revision: its mean score on the task's dev set plus
//!    `validity_bonus` when it executes there (no rollout ended in `harness_error`:
//!    the reward server's rule, `SetResult::validity_bonus`), or `invalid_reward` for
//!    an invalid revision; every dev
//!    evaluation of the step (parents and revisions of every context) is one batch of
//!    the evaluator's engine, whose memo keyed by (task, set, harness hash) makes a
//!    revisited harness free;
//! 4. group-relative advantages (reward − group mean) / (group std + `adv_eps`);
//! 5. one Adam ascent step on the objective of [`super::policy::objective_gradient`]
//!    (policy gradient with the advantages, entropy bonus, optional KL to the initial
//!    policy).
//!
//! With `rounds = k > 1` (multi-round training) each context runs k rounds: the next
//! round's parent is the best revision of the group when its dev score beats the
//! parent's (the evaluator's `best` selection), with its own feedback report; each
//! round is a group of its own.
//!
//! Every `eval_every` steps (and after the last) the held-out score: on every held-out
//! task, the policy's greedy revision of the seed harness (from its feedback report)
//! is scored on the task's **validation** set (`eval::sets`: its own index base,
//! disjoint from feedback, dev and test by index and by question text); the mean over
//! held-out tasks is reported. The monitor never touches a test set, so choosing a
//! checkpoint by it cannot leak test.
//!
//! Outputs in the output directory: `train.jsonl` (one flushed line per step, fields
//! [`TrainStep`]), `trajectories.jsonl` (every revision: context, edits, reward parts,
//! advantage; [`TrajectoryRecord`]), `heldout.jsonl` (per held-out task and
//! measured step), `ckpt-<step>.json` every `checkpoint_every` steps and `last.json`
//! after every step, `train-config.json` (the settings), `rollouts.jsonl` and
//! `harnesses/` (as in an evaluation run directory). `--resume` continues from
//! `last.json`, cutting the logs back to its step; since all randomness derives from
//! (seed, step, ...) and the rewards of a greedy executor are fixed numbers, a resumed
//! run equals an uninterrupted one.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::TrainError;
use super::checkpoint::{Checkpoint, Metadata};
use super::config::TrainSettings;
use super::features::ContextFeatures;
use super::policy::{
    Adam, Coefficients, Decode, Policy, Revise, Trajectory, Vocabulary, objective_gradient,
};
use crate::eval::engine::{ArmLog, Engine};
use crate::eval::prepare::prepare_tasks;
use crate::eval::sets::SetName;
use crate::eval::{Backend, EvalError};
use crate::harness::Harness;
use crate::harness::edit::EditContext;
use crate::harness::execution_report::{ExecutionReport, ExecutionReportOptions};
use crate::harness::rollout::Rollout;
use crate::records::run_dir::{self, RunDir};
use crate::records::train::{
    HELDOUT, HeldoutRecord, TRAIN_LOG, TRAJECTORIES, TrainStep, TrajectoryRecord,
};
use crate::sandbox::Sandbox;
use crate::task::ItemKind;

/// What a training run ended with.
#[derive(Debug, Clone)]
pub struct TrainOutcome {
    pub steps: u64,
    pub last: Vec<TrainStep>,
    pub checkpoint: std::path::PathBuf,
}

pub const LAST: &str = "last.json";
/// The set the held-out monitor scores (see the module doc).
pub const HELDOUT_SET: SetName = SetName::Validation;
pub const CONFIG: &str = "train-config.json";

fn derive(seed: u64, parts: &[u64], tag: &str) -> u64 {
    let mut h = Sha256::new();
    h.update(b"harness-rl/train\0");
    h.update(tag.as_bytes());
    h.update(seed.to_le_bytes());
    for p in parts {
        h.update(p.to_le_bytes());
    }
    u64::from_le_bytes(h.finalize()[..8].try_into().expect("8 bytes"))
}

/// The training task (index into the training list) of context `b` of step `step`
/// (1-based): seeded epochs over the training tasks.
pub fn batch_tasks(seed: u64, step: u64, batch: usize, n_tasks: usize) -> Vec<usize> {
    (0..batch as u64)
        .map(|b| {
            let k = (step - 1) * batch as u64 + b;
            let epoch = k / n_tasks as u64;
            let mut perm: Vec<usize> = (0..n_tasks).collect();
            perm.shuffle(&mut ChaCha8Rng::seed_from_u64(derive(
                seed,
                &[epoch],
                "epoch",
            )));
            perm[(k % n_tasks as u64) as usize]
        })
        .collect()
}

fn read_lines<T: for<'de> Deserialize<'de>>(p: &Path) -> Result<Vec<T>, TrainError> {
    // A torn last line (a killed run) is dropped; any other bad line is an error.
    Ok(crate::records::read(p)?)
}

/// Keep only the lines whose `step` is at most `step` (a resumed run's logs).
fn cut_log(p: &Path, step: u64) -> Result<(), TrainError> {
    let lines: Vec<serde_json::Value> = read_lines(p)?;
    let mut text = String::new();
    for l in lines {
        if l.get("step")
            .and_then(|s| s.as_u64())
            .is_some_and(|s| s <= step)
        {
            text.push_str(&serde_json::to_string(&l).expect("json"));
            text.push('\n');
        }
    }
    std::fs::write(p, text).map_err(|e| TrainError::Io(format!("{}: {e}", p.display())))
}

struct Log {
    file: std::fs::File,
}

impl Log {
    fn open(p: &Path) -> Result<Log, TrainError> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .map_err(|e| TrainError::Io(format!("{}: {e}", p.display())))?;
        Ok(Log { file })
    }

    fn append(&mut self, v: &impl Serialize) -> Result<(), TrainError> {
        let mut line = serde_json::to_vec(v).map_err(|e| TrainError::Io(e.to_string()))?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|()| self.file.flush())
            .map_err(|e| TrainError::Io(e.to_string()))
    }
}

/// The metadata a checkpoint of this run carries.
fn metadata(
    settings: &TrainSettings,
    backend: Option<&Backend>,
    sandbox_python: Option<&str>,
    steps: u64,
) -> Metadata {
    Metadata {
        crate_version: env!("CARGO_PKG_VERSION").into(),
        git_commit: crate::eval::config::GIT_COMMIT.into(),
        suite: Some(settings.suite.path.display().to_string()),
        suite_sha256: Some(settings.suite.sha256.clone()),
        seed: settings.train.seed,
        executor_spec: Some(settings.executor.clone()),
        executor_hash: backend.map(|b| b.identity.hash.clone()),
        executor_model_sha256: backend.map(|b| b.identity.model_id.clone()),
        sandbox_python: sandbox_python.map(str::to_string),
        trained_on: Some(settings.trained_on()),
        steps,
        settings: settings.fingerprint(),
    }
}

/// Write the untrained (uniform) policy of these settings without running anything:
/// what `hrl train --steps 0` does (the baseline of a trained policy).
pub fn write_uniform(settings: &TrainSettings) -> Result<TrainOutcome, TrainError> {
    if settings.out.join(CONFIG).exists() {
        return Err(TrainError::Usage(format!(
            "{} already holds a training run; choose another --out",
            settings.out.display()
        )));
    }
    std::fs::create_dir_all(&settings.out)
        .map_err(|e| TrainError::Io(format!("{}: {e}", settings.out.display())))?;
    let ckpt = Checkpoint::uniform(
        settings.train.max_edits,
        settings.train.mask_invalid,
        metadata(settings, None, None, 0),
    );
    let last = settings.out.join(LAST);
    ckpt.save(&settings.out.join("ckpt-0.json"))?;
    ckpt.save(&last)?;
    run_dir::write_json(&settings.out.join(CONFIG), settings)?;
    Ok(TrainOutcome {
        steps: 0,
        last: vec![],
        checkpoint: last,
    })
}

/// Open the sandbox and the executor, then [`run_with`]. `steps = 0` (and no resume)
/// writes the uniform policy without opening the executor.
pub fn run(
    settings: &TrainSettings,
    resume: bool,
    progress: &(dyn Fn(&TrainStep) + Sync),
) -> Result<TrainOutcome, TrainError> {
    if settings.train.steps == 0 && !resume {
        return write_uniform(settings);
    }
    let es = settings.eval_settings();
    let sandbox = Sandbox::new(es.sandbox_config()).map_err(EvalError::from)?;
    let backend = Backend::open(&es)?;
    run_with(settings, &backend, &sandbox, resume, progress)
}

/// A proposal context: a task, its parent, the parent's feedback report.
struct Ctx {
    task: usize,
    parent: Arc<Harness>,
    features: ContextFeatures,
    edit_ctx: EditContext,
}

fn context(
    task: usize,
    kind: ItemKind,
    parent: Arc<Harness>,
    fb: &crate::eval::engine::SetResult,
    items: &[crate::task::Item],
    opts: &ExecutionReportOptions,
) -> Ctx {
    let report = ExecutionReport::from_rollouts(&fb.rollouts, opts);
    let edit_ctx = crate::eval::rounds::edit_context(items, Some(&fb.rollouts));
    Ctx {
        task,
        features: ContextFeatures::new(Some(&report), &edit_ctx, kind),
        parent,
        edit_ctx,
    }
}

/// Train with a given executor and sandbox (see the module doc).
pub fn run_with(
    settings: &TrainSettings,
    backend: &Backend,
    sandbox: &Sandbox,
    resume: bool,
    progress: &(dyn Fn(&TrainStep) + Sync),
) -> Result<TrainOutcome, TrainError> {
    let t = &settings.train;
    let es = settings.eval_settings();
    let dir = RunDir::open(&settings.out)?;
    let cfg_path = dir.file(CONFIG);
    let last_path = dir.file(LAST);
    // The checkpoint to continue, or a fresh one.
    let mut ckpt = if resume {
        if !cfg_path.exists() || !last_path.exists() {
            return Err(TrainError::Usage(format!(
                "{}: nothing to resume (no {CONFIG} or {LAST})",
                settings.out.display()
            )));
        }
        let old: TrainSettings = crate::eval::read_json(&cfg_path)?;
        if old.fingerprint() != settings.fingerprint() {
            return Err(TrainError::Usage(format!(
                "{}: cannot resume: the run's settings differ from these (only --steps, --out, the cache, concurrency and isolation may change)",
                settings.out.display()
            )));
        }
        let c = Checkpoint::load(&last_path)?;
        if c.metadata.executor_hash.as_deref() != Some(backend.identity.hash.as_str())
            && c.metadata.steps > 0
        {
            return Err(TrainError::Usage(format!(
                "{}: cannot resume: the checkpoint was trained with another executor ({:?})",
                last_path.display(),
                c.metadata.executor_hash
            )));
        }
        // The interpreter is part of every rollout's identity (what programs can
        // import): a run must not continue under another one, even at the same path.
        let python = sandbox.python().hash();
        if let Some(old) = c.metadata.sandbox_python.as_deref()
            && old != python
            && c.metadata.steps > 0
        {
            return Err(TrainError::Usage(format!(
                "{}: cannot resume: the checkpoint's rollouts ran with another sandbox interpreter (hash {old}; this one is {python}, {})",
                last_path.display(),
                sandbox.python().executable.display()
            )));
        }
        for f in [TRAIN_LOG, TRAJECTORIES, HELDOUT] {
            cut_log(&dir.file(f), c.metadata.steps)?;
        }
        c
    } else {
        if cfg_path.exists() {
            return Err(TrainError::Usage(format!(
                "{} already holds a training run; continue it with --resume or choose another --out",
                settings.out.display()
            )));
        }
        Checkpoint::uniform(
            t.max_edits,
            t.mask_invalid,
            metadata(settings, Some(backend), Some(&sandbox.python().hash()), 0),
        )
    };
    // Tasks and sets, as the evaluator builds them (before the run's config is written,
    // so that a suite whose sets cannot be built leaves no run to block a restart).
    let prepared = prepare_tasks(&es, sandbox)?;
    let mut kinds = Vec::new();
    let mut seeds = Vec::new();
    for (t, s) in prepared.tasks.iter().zip(&prepared.sets) {
        dir.save_harness(&t.seed_harness)?;
        kinds.push(
            s.feedback
                .first()
                .map(|i| i.kind())
                .unwrap_or(ItemKind::Answer),
        );
        seeds.push(t.seed_harness.clone());
    }
    let all_sets = prepared.sets;
    run_dir::write_json(&cfg_path, settings)?;
    let n_train = t.train.len();
    let heldout: Vec<usize> = (n_train..settings.tasks.len()).collect();
    let done: HashMap<String, Rollout> =
        crate::records::read::<Rollout>(&dir.file(run_dir::ROLLOUTS))?
            .into_iter()
            .map(|r| (r.key(), r))
            .collect();
    let keys = done.keys().cloned().collect();
    let log = Arc::new(ArmLog::new(dir.appender(run_dir::ROLLOUTS)?, keys));
    let run_config = es.run_config(backend.parallelism);
    let engine = Engine::new(
        backend.executor.clone(),
        backend.identity.reference(),
        sandbox,
        run_config.clone(),
        run_config.dispatch.clone(),
        all_sets,
        done,
    );
    let report_opts = ExecutionReportOptions {
        show_gold: settings.proposer_settings.show_gold,
        budget_tokens: settings.proposer_settings.report_tokens,
    };
    let vocab = Vocabulary::builtin();
    let mut train_log = Log::open(&dir.file(TRAIN_LOG))?;
    let mut traj_log = Log::open(&dir.file(TRAJECTORIES))?;
    let mut heldout_log = Log::open(&dir.file(HELDOUT))?;
    let coef = Coefficients {
        entropy: t.entropy,
        kl: t.kl,
    };
    let initial = ckpt.initial_policy();
    let mut outcome_logs = Vec::new();
    let result: Result<(), TrainError> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..run_config.concurrency)
            .map(|_| s.spawn(|| engine.work()))
            .collect();
        let mut body = || -> Result<(), TrainError> {
            let score = |reqs: &[(usize, SetName, Arc<Harness>)]| engine.score(reqs, &log);
            let make_ctxs = |parents: &[(usize, Arc<Harness>)]| -> Result<Vec<Ctx>, TrainError> {
                let reqs: Vec<_> = parents
                    .iter()
                    .map(|(task, h)| (*task, SetName::Feedback, h.clone()))
                    .collect();
                let (res, _) = score(&reqs)?;
                Ok(parents
                    .iter()
                    .zip(&res)
                    .map(|((task, h), fb)| {
                        context(
                            *task,
                            kinds[*task],
                            h.clone(),
                            fb,
                            engine.sets(*task).feedback.as_slice(),
                            &report_opts,
                        )
                    })
                    .collect())
            };
            while ckpt.metadata.steps < t.steps {
                let step = ckpt.metadata.steps + 1;
                let t0 = Instant::now();
                let memo0 = (
                    engine.counters.memo_hits.load(Ordering::Relaxed),
                    engine.counters.evaluations.load(Ordering::Relaxed),
                );
                let cache0 = backend
                    .cache
                    .as_ref()
                    .map(|c| (c.counters().hits(), c.counters().misses()))
                    .unwrap_or((0, 0));
                let policy = ckpt.policy();
                let tasks = batch_tasks(t.seed, step, t.batch, n_train);
                let mut parents: Vec<(usize, Arc<Harness>)> =
                    tasks.iter().map(|&i| (i, seeds[i].clone())).collect();
                let mut batch: Vec<Trajectory> = Vec::new();
                let mut rewards_all = Vec::new();
                let (mut n_invalid, mut n_total) = (0usize, 0usize);
                for round in 1..=t.rounds {
                    let ctxs = make_ctxs(&parents)?;
                    // Sample G revisions per context.
                    let mut sampled = Vec::new();
                    for (b, c) in ctxs.iter().enumerate() {
                        let group: Vec<_> = (0..t.group)
                            .map(|g| {
                                let seed = derive(
                                    t.seed,
                                    &[step, b as u64, u64::from(round), g as u64],
                                    "revision",
                                );
                                policy.revise(
                                    &vocab,
                                    &c.features,
                                    &c.parent,
                                    &c.edit_ctx,
                                    Revise {
                                        max_edits: t.max_edits,
                                        mask_invalid: t.mask_invalid,
                                        decode: Decode::Sample(seed),
                                    },
                                )
                            })
                            .collect();
                        sampled.push(group);
                    }
                    // One dev batch: every parent and every valid revision.
                    let mut reqs = Vec::new();
                    for (c, group) in ctxs.iter().zip(&sampled) {
                        reqs.push((c.task, SetName::Dev, c.parent.clone()));
                        for r in group {
                            if let Ok(h) = &r.result {
                                reqs.push((c.task, SetName::Dev, Arc::new(h.clone())));
                            }
                        }
                    }
                    let (res, _) = score(&reqs)?;
                    let mut it = res.iter();
                    let mut next_parents = Vec::new();
                    for (b, (c, group)) in ctxs.iter().zip(&sampled).enumerate() {
                        let parent_dev = it.next().expect("parent result").mean;
                        let mut parts = Vec::new();
                        for r in group {
                            n_total += 1;
                            match &r.result {
                                Ok(h) => {
                                    let r = it.next().expect("revision result");
                                    let bonus = r.validity_bonus(t.validity_bonus);
                                    dir.save_harness(h)?;
                                    parts.push((Some(r.mean), bonus, r.mean + bonus));
                                }
                                Err(_) => {
                                    n_invalid += 1;
                                    parts.push((None, 0.0, t.invalid_reward));
                                }
                            }
                        }
                        let rs: Vec<f64> = parts.iter().map(|p| p.2).collect();
                        let mean = rs.iter().sum::<f64>() / rs.len() as f64;
                        let std = (rs.iter().map(|r| (r - mean).powi(2)).sum::<f64>()
                            / rs.len() as f64)
                            .sqrt();
                        let mut best: Option<(f64, &Harness)> = None;
                        for (g, (r, (dev, bonus, reward))) in group.iter().zip(&parts).enumerate() {
                            let adv = (reward - mean) / (std + t.adv_eps);
                            rewards_all.push(*reward);
                            batch.push(Trajectory {
                                steps: r.steps.clone(),
                                advantage: adv,
                            });
                            if let (Some(d), Ok(h)) = (dev, &r.result)
                                && best.is_none_or(|(bd, _)| *d > bd)
                            {
                                best = Some((*d, h));
                            }
                            traj_log.append(&TrajectoryRecord {
                                step,
                                context: format!("s{step}/c{b}/r{round}"),
                                task: settings.tasks[c.task].id.clone(),
                                round,
                                candidate: g,
                                parent: c.parent.hash(),
                                edits: r.edits.clone(),
                                actions: r
                                    .steps
                                    .iter()
                                    .map(|s| vocab.actions[s.action].name.clone())
                                    .collect(),
                                harness: r.result.as_ref().ok().map(Harness::hash),
                                valid: r.result.is_ok(),
                                invalid_reason: r.result.as_ref().err().cloned(),
                                dev_score: *dev,
                                parent_dev_score: parent_dev,
                                validity_bonus: *bonus,
                                reward: *reward,
                                advantage: adv,
                            })?;
                        }
                        next_parents.push(match best {
                            Some((d, h)) if d > parent_dev => (c.task, Arc::new(h.clone())),
                            _ => (c.task, c.parent.clone()),
                        });
                    }
                    parents = next_parents;
                }
                // The update.
                let (stats, g) = objective_gradient(&policy, &initial, &batch, coef);
                let mut theta = ckpt.theta.clone();
                let mut adam: Adam = ckpt.adam.clone();
                adam.step(&mut theta, &g, t.lr);
                ckpt.theta = theta;
                ckpt.adam = adam;
                ckpt.metadata.steps = step;
                ckpt.rng.step = step;
                // Held-out score.
                let measure = !heldout.is_empty()
                    && ((t.eval_every > 0 && step % t.eval_every == 0) || step == t.steps);
                let heldout_score = if measure {
                    Some(heldout_eval(
                        &engine,
                        &log,
                        &ckpt.policy(),
                        &vocab,
                        settings,
                        &heldout,
                        &seeds,
                        &kinds,
                        &report_opts,
                        step,
                        &mut heldout_log,
                    )?)
                } else {
                    None
                };
                let n = rewards_all.len().max(1) as f64;
                let rm = rewards_all.iter().sum::<f64>() / n;
                let rsd = (rewards_all.iter().map(|r| (r - rm).powi(2)).sum::<f64>() / n).sqrt();
                let cache1 = backend
                    .cache
                    .as_ref()
                    .map(|c| (c.counters().hits(), c.counters().misses()))
                    .unwrap_or((0, 0));
                let line = TrainStep {
                    step,
                    reward_mean: rm,
                    reward_std: rsd,
                    heldout_set: heldout_score.map(|_| HELDOUT_SET),
                    heldout_score,
                    entropy: stats.entropy,
                    invalid_rate: n_invalid as f64 / n_total.max(1) as f64,
                    valid_rate: 1.0 - n_invalid as f64 / n_total.max(1) as f64,
                    memo_hits: engine.counters.memo_hits.load(Ordering::Relaxed) - memo0.0,
                    memo_misses: engine.counters.evaluations.load(Ordering::Relaxed) - memo0.1,
                    cache_hits: cache1.0 - cache0.0,
                    cache_misses: cache1.1 - cache0.1,
                    wall_s: t0.elapsed().as_secs_f64(),
                };
                train_log.append(&line)?;
                if step % t.checkpoint_every == 0 || step == t.steps {
                    ckpt.save(&dir.file(&format!("ckpt-{step}.json")))?;
                }
                ckpt.save(&last_path)?;
                progress(&line);
                outcome_logs.push(line);
            }
            Ok(())
        };
        let r = body();
        if let Err(e) = &r {
            engine.abort(&e.to_string());
        }
        engine.shutdown();
        for w in workers {
            let _ = w.join();
        }
        r
    });
    result?;
    if ckpt.metadata.steps == 0 {
        ckpt.save(&dir.file("ckpt-0.json"))?;
        ckpt.save(&last_path)?;
    }
    Ok(TrainOutcome {
        steps: ckpt.metadata.steps,
        last: outcome_logs,
        checkpoint: last_path,
    })
}

/// The held-out score (see the module doc); writes one `heldout.jsonl` line per task.
#[allow(clippy::too_many_arguments)]
fn heldout_eval(
    engine: &Engine<'_>,
    log: &Arc<ArmLog>,
    policy: &Policy,
    vocab: &Vocabulary,
    settings: &TrainSettings,
    heldout: &[usize],
    seeds: &[Arc<Harness>],
    kinds: &[ItemKind],
    opts: &ExecutionReportOptions,
    step: u64,
    out: &mut Log,
) -> Result<f64, TrainError> {
    let t = &settings.train;
    let reqs: Vec<_> = heldout
        .iter()
        .map(|&i| (i, SetName::Feedback, seeds[i].clone()))
        .collect();
    let (fbs, _) = engine.score(&reqs, log)?;
    let mut revs = Vec::new();
    let mut test_reqs = Vec::new();
    for (&i, fb) in heldout.iter().zip(&fbs) {
        let c = context(
            i,
            kinds[i],
            seeds[i].clone(),
            fb,
            engine.sets(i).feedback.as_slice(),
            opts,
        );
        let r = policy.revise(
            vocab,
            &c.features,
            &c.parent,
            &c.edit_ctx,
            Revise {
                max_edits: t.max_edits,
                mask_invalid: t.mask_invalid,
                decode: Decode::Greedy,
            },
        );
        let h = match &r.result {
            Ok(h) => Arc::new(h.clone()),
            Err(_) => seeds[i].clone(),
        };
        test_reqs.push((i, HELDOUT_SET, seeds[i].clone()));
        test_reqs.push((i, HELDOUT_SET, h));
        revs.push(r);
    }
    let (res, _) = engine.score(&test_reqs, log)?;
    let mut total = 0.0;
    for (k, (&i, r)) in heldout.iter().zip(&revs).enumerate() {
        let seed_score = res[2 * k].mean;
        let score = res[2 * k + 1].mean;
        total += score;
        out.append(&HeldoutRecord {
            step,
            task: settings.tasks[i].id.clone(),
            edits: r.edits.clone(),
            harness: r.result.as_ref().ok().map(Harness::hash),
            set: HELDOUT_SET,
            score,
            seed_score,
        })?;
    }
    Ok(total / heldout.len() as f64)
}

/// Read a run's `train.jsonl`.
pub fn read_train_log(dir: &Path) -> Result<Vec<TrainStep>, TrainError> {
    read_lines(&dir.join(TRAIN_LOG))
}

/// Read a run's `trajectories.jsonl`.
pub fn read_trajectories(dir: &Path) -> Result<Vec<TrajectoryRecord>, TrainError> {
    read_lines(&dir.join(TRAJECTORIES))
}
