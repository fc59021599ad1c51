//! [`run`]: the rollout threads of one harness over a list of items (a pool of
//! `concurrency` threads registered with one [`Dispatcher`], reuse of logged
//! rollouts, a sink in completion order, output in item order).

use std::collections::HashMap;
use std::sync::Arc;

use std::time::{Duration, Instant};

use crate::executor::{Executor, ExecutorRef};
use crate::harness::Harness;
use crate::harness::dispatch::{BatchStats, Dispatcher};
use crate::harness::rollout::Rollout;
use crate::harness::tools::ToolPool;
use crate::sandbox::Sandbox;
use crate::task::Item;

use super::{RunConfig, RunError, Runtime, check_program};

/// RunProgress of a run, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub struct RunProgress {
    pub done: usize,
    pub total: usize,
    /// Mean score of the finished rollouts.
    pub mean_score: f64,
}

/// Everything [`run`] produced.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// In (item, sample) order.
    pub rollouts: Vec<Rollout>,
    /// Rollouts taken from `done` instead of being run.
    pub reused: usize,
    pub batches: BatchStats,
    pub wall: Duration,
}

/// Everything a run needs besides the items.
pub struct RunContext<'a> {
    pub harness: &'a Harness,
    /// Where the harness came from (for error messages).
    pub origin: &'a str,
    pub executor: Arc<dyn Executor>,
    pub executor_ref: ExecutorRef,
    pub sandbox: &'a Sandbox,
    pub config: &'a RunConfig,
}

/// Run the harness on every (item, sample); rollouts whose key is in `done` are
/// reused instead of run. `sink` sees each new rollout as it finishes (completion
/// order); the output is in (item, sample) order.
pub fn run(
    ctx: &RunContext<'_>,
    items: &[Item],
    done: &HashMap<String, Rollout>,
    sink: &mut dyn FnMut(&Rollout) -> Result<(), std::io::Error>,
    progress: &(dyn Fn(RunProgress) + Sync),
) -> Result<RunOutput, RunError> {
    let start = Instant::now();
    let config = ctx.config;
    if config.samples == 0 || config.concurrency == 0 {
        return Err(RunError::Usage(
            "samples and concurrency must be >= 1".into(),
        ));
    }
    if let Harness::Program(p) = ctx.harness {
        check_program(p, ctx.sandbox, ctx.origin)?;
    }
    let dispatcher = Dispatcher::new(Arc::clone(&ctx.executor), config.dispatch.clone());
    let tools = ToolPool::new(ctx.sandbox.clone(), config.tool.clone());
    let rt = Runtime {
        harness: ctx.harness,
        harness_hash: ctx.harness.hash(),
        dispatcher: &dispatcher,
        tools: &tools,
        sandbox: ctx.sandbox,
        executor: ctx.executor_ref.clone(),
        config,
        config_hash: config.result_hash(&ctx.sandbox.python().hash()),
    };
    let slots: Vec<(usize, u32)> = (0..items.len())
        .flat_map(|i| (0..config.samples).map(move |s| (i, s)))
        .collect();
    let total = slots.len();
    let mut out: Vec<Option<Rollout>> = vec![None; total];
    let mut todo = Vec::new();
    let mut reused = 0;
    let mut score_sum = 0.0;
    for (k, &(i, s)) in slots.iter().enumerate() {
        let probe = Rollout {
            item_id: items[i].id(),
            sample: s,
            ..rt.base_rollout(&items[i], s, 0)
        };
        match done.get(&probe.key()) {
            Some(r) => {
                score_sum += r.score;
                out[k] = Some(r.clone());
                reused += 1;
            }
            None => todo.push(k),
        }
    }
    progress(RunProgress {
        done: reused,
        total,
        mean_score: if reused > 0 {
            score_sum / reused as f64
        } else {
            0.0
        },
    });
    let mut sink_error = None;
    let mut finished = reused;
    crate::parallel::for_each(
        todo.len(),
        config.concurrency,
        || rt.dispatcher.enter(),
        |j| {
            let (i, sample) = slots[todo[j]];
            rt.rollout(&items[i], sample)
        },
        |j, r| {
            if sink_error.is_none()
                && let Err(e) = sink(&r)
            {
                sink_error = Some(e);
            }
            finished += 1;
            score_sum += r.score;
            out[todo[j]] = Some(r);
            progress(RunProgress {
                done: finished,
                total,
                mean_score: score_sum / finished as f64,
            });
        },
    );
    if let Some(e) = sink_error {
        return Err(RunError::Io(e));
    }
    let batches = dispatcher.stats();
    Ok(RunOutput {
        rollouts: out
            .into_iter()
            .map(|r| r.expect("every slot ran"))
            .collect(),
        reused,
        batches,
        wall: start.elapsed(),
    })
}
