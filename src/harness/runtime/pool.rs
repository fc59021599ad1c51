//! [`run`]: the rollout threads of one harness over a list of items (a pool of
//! `concurrency` threads registered with one [`Dispatcher`], or wave groups of
//! [`RunConfig::waves`] rollouts; reuse of logged rollouts; a sink in (item, sample)
//! order; output in the same order).
//!
//! Waves: the (item, sample) pairs are cut into consecutive groups; a group's rollouts
//! each get their own thread, all registered in the group's dispatcher group before
//! any starts, so every wave of the group is made of the next call of each of its
//! live rollouts; groups run one after another (two at once would interleave their
//! waves, and the executor's kept prefixes, by timing). On resume a group whose rollouts are all logged is skipped; a group
//! with only some logged runs again whole (its logged rollouts are kept, not written
//! twice), so its waves are those of an uninterrupted run.

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
    if config.waves == Some(0) {
        return Err(RunError::Usage("the wave group size must be >= 1".into()));
    }
    let dispatcher = Dispatcher::new(Arc::clone(&ctx.executor), config.dispatch_config());
    let tools = ToolPool::new(ctx.sandbox.clone(), config.tool.clone());
    let rt = Runtime {
        harness: ctx.harness,
        harness_hash: ctx.harness.hash(),
        dispatcher: &dispatcher,
        group: 0,
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
    let logged = |k: usize| {
        let (i, s) = slots[k];
        let probe = Rollout {
            item_id: items[i].id(),
            sample: s,
            ..rt.base_rollout(&items[i], s, 0)
        };
        done.get(&probe.key()).cloned()
    };
    // Units of work: single slots, or wave groups of consecutive slots.
    let units: Vec<Vec<usize>> = match config.waves {
        None => (0..total).map(|k| vec![k]).collect(),
        Some(g) => (0..total)
            .collect::<Vec<_>>()
            .chunks(g)
            .map(<[usize]>::to_vec)
            .collect(),
    };
    let mut todo = Vec::new();
    let mut reused = 0;
    let mut score_sum = 0.0;
    for unit in units {
        let found: Vec<Option<Rollout>> = unit.iter().map(|&k| logged(k)).collect();
        if found.iter().all(Option::is_some) {
            for (&k, r) in unit.iter().zip(found) {
                let r = r.expect("checked");
                score_sum += r.score;
                out[k] = Some(r);
                reused += 1;
            }
        } else {
            todo.push(unit);
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
    // Finished units wait here until every earlier unit is written: the log's order is
    // the (item, sample) order whatever the timing, and an interrupted log is a prefix.
    let mut ready: std::collections::BTreeMap<usize, Vec<(usize, Rollout)>> = Default::default();
    let mut next_write = 0;
    let workers = match config.waves {
        None => config.concurrency,
        // One group at a time: groups in flight together would interleave their waves
        // (and the executor's prefix cache) by timing.
        Some(_) => 1,
    };
    crate::parallel::for_each(
        todo.len(),
        workers,
        || config.waves.is_none().then(|| rt.dispatcher.enter()),
        |j| match config.waves {
            None => {
                let (i, sample) = slots[todo[j][0]];
                vec![(todo[j][0], rt.rollout(&items[i], sample))]
            }
            Some(_) => run_group(&rt, items, &slots, &todo[j]),
        },
        |j, rs| {
            ready.insert(j, rs);
            while let Some(rs) = ready.remove(&next_write) {
                next_write += 1;
                for (k, r) in rs {
                    // A logged rollout of a group run again stays the logged one.
                    let r = match logged(k) {
                        Some(old) => {
                            reused += 1;
                            old
                        }
                        None => {
                            if sink_error.is_none()
                                && let Err(e) = sink(&r)
                            {
                                sink_error = Some(e);
                            }
                            r
                        }
                    };
                    finished += 1;
                    score_sum += r.score;
                    out[k] = Some(r);
                }
                progress(RunProgress {
                    done: finished,
                    total,
                    mean_score: score_sum / finished as f64,
                });
            }
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

/// One wave group: every slot of `group` on its own thread, all registered in a new
/// dispatcher group before any starts (so no wave leaves without one of them).
fn run_group(
    rt: &Runtime<'_>,
    items: &[Item],
    slots: &[(usize, u32)],
    group: &[usize],
) -> Vec<(usize, Rollout)> {
    let id = rt.dispatcher.group();
    let grt = Runtime {
        harness: rt.harness,
        harness_hash: rt.harness_hash.clone(),
        dispatcher: rt.dispatcher,
        group: id,
        tools: rt.tools,
        sandbox: rt.sandbox,
        executor: rt.executor.clone(),
        config: rt.config,
        config_hash: rt.config_hash.clone(),
    };
    let regs: Vec<_> = group
        .iter()
        .map(|_| rt.dispatcher.enter_group(id))
        .collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = group
            .iter()
            .zip(regs)
            .map(|(&k, reg)| {
                let grt = &grt;
                s.spawn(move || {
                    let (i, sample) = slots[k];
                    let r = grt.rollout(&items[i], sample);
                    drop(reg);
                    (k, r)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a rollout thread panicked"))
            .collect()
    })
}
