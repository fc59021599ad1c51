//! The lifetime of one reward service: the sandbox, the executor, the evaluator's
//! engine with its worker threads, the contexts and the scorer, alive for the
//! duration of a closure ([`run`]). `hrl contexts export` and `hrl reward-server`
//! both go through it, so they build the same contexts the same way.
//!
//! With an output directory (a locked run directory), every rollout goes to
//! `rollouts.jsonl`, every revised harness to `harnesses/`, and (for a server) every
//! scored completion to `rewards.jsonl`. Rollouts already in that `rollouts.jsonl`
//! (same items, harness, executor identity and settings) are reused instead of being
//! run again, so a restarted server starts warm. Without one, nothing is written.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use super::RewardError;
use super::context::{self, Built};
use super::score::{RewardConfig, Scorer};
use crate::eval::Backend;
use crate::eval::config::EvalSettings;
use crate::eval::engine::{ArmLog, Engine};
use crate::eval::prepare::PreparedTasks;
use crate::harness::rollout::Rollout;
use crate::proposer::template::Template;
use crate::records;
use crate::records::run_dir::{self, Appender, RunDir};
use crate::sandbox::Sandbox;

/// The file of scored completions in a server's output directory.
pub const REWARDS_FILE: &str = "rewards.jsonl";

/// What a closure given to [`run`] can use.
pub struct Service<'s, 'e, 'a> {
    pub settings: &'s EvalSettings,
    pub backend: &'s Backend,
    pub template: &'s Template,
    pub prepared: &'s PreparedTasks,
    pub built: &'e Built,
    pub scorer: &'e Scorer<'e, 'a>,
}

/// Open everything, build the contexts, call `f`, then stop the workers.
/// `rewards_log`: write `rewards.jsonl` into `out`. `memo_capacity`: the most set
/// evaluations the engine's memo keeps (`usize::MAX`: unbounded).
pub fn run<R>(
    settings: &EvalSettings,
    reward: RewardConfig,
    out: Option<&Path>,
    rewards_log: bool,
    memo_capacity: usize,
    f: impl FnOnce(&Service<'_, '_, '_>) -> Result<R, RewardError>,
) -> Result<R, RewardError> {
    let sandbox = Sandbox::new(settings.sandbox_config()).map_err(crate::eval::EvalError::from)?;
    let backend = Backend::open(settings)?;
    let template = context::template(settings)?;
    let prepared = context::prepare(settings, &sandbox)?;
    let dir = match out {
        Some(p) => Some(RunDir::open(p)?),
        None => None,
    };
    let (log, done) = match &dir {
        Some(d) => {
            let path = d.file(run_dir::ROLLOUTS);
            let prior: Vec<Rollout> = records::read(&path)?;
            let keys: HashSet<String> = prior.iter().map(Rollout::key).collect();
            let done: HashMap<String, Rollout> = prior.into_iter().map(|r| (r.key(), r)).collect();
            (ArmLog::new(d.appender(run_dir::ROLLOUTS)?, keys), done)
        }
        None => (
            ArmLog::new(Appender::open(Path::new("/dev/null"))?, HashSet::new()),
            HashMap::new(),
        ),
    };
    let log = Arc::new(log);
    let rewards = match (&dir, rewards_log) {
        (Some(d), true) => Some(d.appender(REWARDS_FILE)?),
        _ => None,
    };
    let run_config = settings.run_config(backend.parallelism);
    let engine = Engine::new(
        backend.executor.clone(),
        backend.identity.reference(),
        &sandbox,
        run_config.clone(),
        run_config.dispatch.clone(),
        prepared.sets.clone(),
        done,
    )
    .with_memo_capacity(memo_capacity);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..run_config.concurrency)
            .map(|_| s.spawn(|| engine.work()))
            .collect();
        let result = (|| {
            let built = context::build(&engine, &prepared, &template, settings, &log)?;
            for p in &built.parents {
                if let Some(d) = &dir {
                    d.save_harness(p)?;
                }
            }
            let scorer = Scorer::new(
                &engine,
                &built,
                reward,
                log.clone(),
                dir.as_ref().zip(rewards),
            );
            f(&Service {
                settings,
                backend: &backend,
                template: &template,
                prepared: &prepared,
                built: &built,
                scorer: &scorer,
            })
        })();
        if result.is_err() {
            engine.abort("the reward service stopped");
        } else {
            engine.shutdown();
        }
        for w in workers {
            let _ = w.join();
        }
        result
    })
}
