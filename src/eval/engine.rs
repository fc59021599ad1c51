//! The scoring engine: runs harnesses on task sets for every trajectory of a run, with
//! one executor batch for everything in flight.
//!
//! - One FIFO of rollout units (harness × item) served by `concurrency` worker threads.
//!   Every unit is registered with one shared [`Dispatcher`] from the moment it is
//!   queued until its rollout ends, so the executor calls of all trajectories, tasks,
//!   candidates and proposers (arms) of a run form common batches: a batch leaves
//!   when every registered rollout waits on the executor, or after the dispatch
//!   window. One shared [`ToolPool`] lends warm sandboxes.
//! - A memo keyed by (task, set, harness hash): a set evaluation is computed once per
//!   run, however many trajectories (or arms) ask for it, even at the same moment
//!   (the later callers wait for the first). Unchanged harnesses are never re-run and
//!   byte-identical candidates are never re-scored. Unbounded by default (a run's
//!   harnesses are few); a long-lived service bounds it ([`Engine::with_memo_capacity`]):
//!   past the capacity the oldest entries are dropped (first in, first out) and are
//!   computed again if asked for (the completion cache still answers their model calls).
//! - Resuming: rollouts already in a run directory's `rollouts.jsonl` (same item,
//!   harness, executor identity and result-relevant settings) are taken from there
//!   instead of being run again.
//! - Every rollout a trajectory uses is in its arm's `rollouts.jsonl` ([`ArmLog`]):
//!   written as it finishes, or copied when another arm computed it.
//! - [`Busy`] measures the wall time during which neither a rollout nor a proposer
//!   call is in flight: the evaluator's own overhead.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::EvalError;
use super::sets::{SetName, TaskSets};
use crate::executor::{Executor, ExecutorRef};
use crate::harness::Harness;
use crate::harness::dispatch::{BatchStats, DispatchConfig, Dispatcher, Registration};
use crate::harness::rollout::Rollout;
use crate::harness::runtime::{self, RunConfig, Runtime};
use crate::harness::tools::ToolPool;
use crate::records::run_dir::Appender;
use crate::sandbox::Sandbox;

/// Wall time with nothing in flight.
pub struct Busy {
    state: Mutex<(usize, Instant, Duration)>,
    start: Instant,
}

impl Default for Busy {
    fn default() -> Self {
        let now = Instant::now();
        Busy {
            state: Mutex::new((0, now, Duration::ZERO)),
            start: now,
        }
    }
}

impl Busy {
    /// Mark one operation in flight until the guard drops.
    pub fn enter(&self) -> BusyGuard<'_> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.0 == 0 {
            let since = s.1;
            s.2 += since.elapsed();
        }
        s.0 += 1;
        BusyGuard(self)
    }

    /// Idle time so far and the wall time since the start.
    pub fn idle(&self) -> (Duration, Duration) {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let idle = if s.0 == 0 { s.2 + s.1.elapsed() } else { s.2 };
        (idle, self.start.elapsed())
    }
}

/// See [`Busy::enter`].
pub struct BusyGuard<'a>(&'a Busy);

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        let mut s = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        s.0 -= 1;
        if s.0 == 0 {
            s.1 = Instant::now();
        }
    }
}

/// One arm's `rollouts.jsonl`: every rollout its trajectories used, once.
pub struct ArmLog {
    appender: Appender,
    keys: Mutex<HashSet<String>>,
}

impl ArmLog {
    /// `existing`: the keys already in the file.
    pub fn new(appender: Appender, existing: HashSet<String>) -> ArmLog {
        ArmLog {
            appender,
            keys: Mutex::new(existing),
        }
    }

    /// Append `r` unless the log has it.
    pub fn ensure(&self, r: &Rollout) -> Result<(), EvalError> {
        let key = r.key();
        let mut k = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        if k.contains(&key) {
            return Ok(());
        }
        self.appender.append(r)?;
        k.insert(key);
        Ok(())
    }
}

/// A harness's evaluation on one set of one task.
#[derive(Debug)]
pub struct SetResult {
    pub task: usize,
    pub set: SetName,
    pub hash: String,
    /// In the set's item order.
    pub rollouts: Vec<Rollout>,
    pub mean: f64,
    /// Prompt plus completion tokens.
    pub tokens: u64,
    pub executor_free: usize,
}

impl SetResult {
    pub fn scores(&self) -> Vec<f64> {
        self.rollouts.iter().map(|r| r.score).collect()
    }

    /// The harness ran: no rollout ended in `harness_error` (a wrong answer still
    /// executes).
    pub fn executes(&self) -> bool {
        !self
            .rollouts
            .iter()
            .any(|x| x.failure == Some(crate::harness::rollout::FailureClass::HarnessError))
    }

    /// The one validity-bonus rule of the trainer and the reward server: a valid
    /// revision earns `bonus` when it also executes on the scoring set (it parses and
    /// runs, the auxiliary reward of the published protocol); a valid revision that
    /// does not execute earns none, an invalid one is never scored.
    pub fn validity_bonus(&self, bonus: f64) -> f64 {
        if self.executes() { bonus } else { 0.0 }
    }
}

type Key = (usize, SetName, String);
type Outcome = Result<Arc<SetResult>, String>;

struct Slot {
    result: Mutex<Option<Outcome>>,
    cv: Condvar,
}

impl Slot {
    fn wait(&self) -> Outcome {
        let mut r = self.result.lock().unwrap_or_else(|e| e.into_inner());
        while r.is_none() {
            r = self.cv.wait(r).unwrap_or_else(|e| e.into_inner());
        }
        r.clone().expect("set")
    }

    fn set(&self, o: Outcome) {
        *self.result.lock().unwrap_or_else(|e| e.into_inner()) = Some(o);
        self.cv.notify_all();
    }
}

struct Job {
    key: Key,
    harness: Arc<Harness>,
    items: Arc<Vec<crate::task::Item>>,
    rollouts: Mutex<Vec<Option<Rollout>>>,
    left: AtomicUsize,
    slot: Arc<Slot>,
    log: Arc<ArmLog>,
    failed: Mutex<Option<String>>,
}

struct Unit {
    job: Arc<Job>,
    index: usize,
    /// Registered with the dispatcher from the moment the unit is queued, so a batch
    /// waits for every queued rollout (up to the dispatch window), not only for the
    /// ones a worker happened to start first.
    _reg: Registration,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Unit>,
    /// Slot and insertion number.
    memo: HashMap<Key, (Arc<Slot>, u64)>,
    /// Memo keys with their insertion numbers, oldest first (for eviction; an entry
    /// whose key was evicted and inserted again is stale and skipped).
    order: VecDeque<(Key, u64)>,
    inserted: u64,
    shutdown: bool,
}

/// Counters of a run.
#[derive(Debug, Default)]
pub struct Counters {
    /// Rollouts run.
    pub run: AtomicU64,
    /// Rollouts taken from the run directory of an earlier (interrupted) run.
    pub reused: AtomicU64,
    /// Set evaluations computed / answered by the memo.
    pub evaluations: AtomicU64,
    pub memo_hits: AtomicU64,
    /// Memo entries dropped to stay within the capacity.
    pub memo_evictions: AtomicU64,
}

/// What [`Engine::score`] ran for one call.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScoreStats {
    /// Rollouts the requests need.
    pub rollouts: usize,
    /// Rollouts run for them by this call (not taken from the memo or the log).
    pub run: usize,
}

/// See the module doc.
pub struct Engine<'a> {
    executor_ref: ExecutorRef,
    dispatcher: Dispatcher,
    tools: ToolPool,
    sandbox: &'a Sandbox,
    config: RunConfig,
    sets: Vec<TaskSets>,
    done: HashMap<String, Rollout>,
    state: Mutex<State>,
    cv: Condvar,
    checked: Mutex<HashMap<String, Result<(), String>>>,
    aborted: AtomicBool,
    memo_capacity: usize,
    pub busy: Busy,
    pub counters: Counters,
}

impl<'a> Engine<'a> {
    /// `done`: rollouts of earlier runs, by [`Rollout::key`].
    pub fn new(
        executor: Arc<dyn Executor>,
        executor_ref: ExecutorRef,
        sandbox: &'a Sandbox,
        config: RunConfig,
        dispatch: DispatchConfig,
        sets: Vec<TaskSets>,
        done: HashMap<String, Rollout>,
    ) -> Engine<'a> {
        Engine {
            executor_ref,
            dispatcher: Dispatcher::new(executor, dispatch),
            tools: ToolPool::new(sandbox.clone(), config.tool.clone()),
            sandbox,
            config,
            sets,
            done,
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
            checked: Mutex::new(HashMap::new()),
            aborted: AtomicBool::new(false),
            memo_capacity: usize::MAX,
            busy: Busy::default(),
            counters: Counters::default(),
        }
    }

    /// Keep at most `n` (≥ 1) set evaluations in the memo (see the module doc).
    pub fn with_memo_capacity(mut self, n: usize) -> Self {
        self.memo_capacity = n.max(1);
        self
    }

    /// Set evaluations held in the memo now.
    pub fn memo_len(&self) -> usize {
        self.lock().memo.len()
    }

    pub fn sets(&self, task: usize) -> &TaskSets {
        &self.sets[task]
    }

    /// Executor batches formed so far.
    pub fn batches(&self) -> BatchStats {
        self.dispatcher.stats()
    }

    /// The worker loop (run it on `concurrency` threads; returns after [`Engine::shutdown`]).
    pub fn work(&self) {
        loop {
            let unit = {
                let mut st = self.lock();
                loop {
                    if let Some(u) = st.queue.pop_front() {
                        break u;
                    }
                    if st.shutdown {
                        return;
                    }
                    st = self.cv.wait(st).unwrap_or_else(|e| e.into_inner());
                }
            };
            self.run_unit(unit);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn run_unit(&self, unit: Unit) {
        let job = &unit.job;
        let item = &job.items[unit.index];
        let rollout = {
            let _busy = self.busy.enter();
            let rt = Runtime::new(
                &job.harness,
                &self.dispatcher,
                &self.tools,
                self.sandbox,
                self.executor_ref.clone(),
                &self.config,
            );
            match self.done.get(&rt.resume_key(item, 0)) {
                Some(r) => {
                    self.counters.reused.fetch_add(1, Ordering::Relaxed);
                    r.clone()
                }
                None => {
                    let r = rt.rollout(item, 0);
                    self.counters.run.fetch_add(1, Ordering::Relaxed);
                    r
                }
            }
        };
        if let Err(e) = job.log.ensure(&rollout) {
            job.failed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert(e.to_string());
        }
        job.rollouts.lock().unwrap_or_else(|e| e.into_inner())[unit.index] = Some(rollout);
        let last = job.left.fetch_sub(1, Ordering::AcqRel) == 1;
        let job = unit.job.clone();
        drop(unit);
        if last {
            self.finish(&job);
        }
    }

    fn finish(&self, job: &Job) {
        if let Some(e) = job.failed.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            job.slot.set(Err(e));
            return;
        }
        let rollouts: Vec<Rollout> =
            std::mem::take(&mut *job.rollouts.lock().unwrap_or_else(|e| e.into_inner()))
                .into_iter()
                .map(|r| r.expect("every unit finished"))
                .collect();
        let n = rollouts.len().max(1) as f64;
        let result = SetResult {
            task: job.key.0,
            set: job.key.1,
            hash: job.key.2.clone(),
            mean: rollouts.iter().map(|r| r.score).sum::<f64>() / n,
            tokens: rollouts
                .iter()
                .map(|r| r.tokens.prompt + r.tokens.completion)
                .sum(),
            executor_free: rollouts.iter().filter(|r| r.executor_free).count(),
            rollouts,
        };
        job.slot.set(Ok(Arc::new(result)));
    }

    /// Stop the workers once the queue is empty.
    pub fn shutdown(&self) {
        self.lock().shutdown = true;
        self.cv.notify_all();
    }

    /// Stop everything: queued units are dropped and every pending evaluation fails.
    pub fn abort(&self, why: &str) {
        self.aborted.store(true, Ordering::SeqCst);
        let mut st = self.lock();
        let units: Vec<Unit> = st.queue.drain(..).collect();
        st.shutdown = true;
        drop(st);
        self.cv.notify_all();
        for u in units {
            u.job.slot.set(Err(format!("the run stopped: {why}")));
        }
    }

    pub fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::SeqCst)
    }

    /// Check that a program harness compiles (memoised by hash); declarative
    /// harnesses were validated when parsed.
    pub fn check(&self, h: &Harness) -> Result<(), String> {
        let Harness::Program(p) = h else {
            return Ok(());
        };
        let hash = h.hash();
        if let Some(r) = self
            .checked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&hash)
        {
            return r.clone();
        }
        let r = {
            let _busy = self.busy.enter();
            runtime::check_program(p, self.sandbox, crate::proposer::parse::ORIGIN)
                .map_err(|e| e.to_string())
        };
        self.checked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(hash, r.clone());
        r
    }

    /// Evaluate each (task, set, harness) — all submitted before any is awaited, so
    /// they share executor batches — and return the results in order. Rollouts go to
    /// `log` (copied there when another arm computed them).
    pub fn score(
        &self,
        requests: &[(usize, SetName, Arc<Harness>)],
        log: &Arc<ArmLog>,
    ) -> Result<(Vec<Arc<SetResult>>, ScoreStats), EvalError> {
        let mut slots = Vec::with_capacity(requests.len());
        let mut stats = ScoreStats::default();
        {
            let mut st = self.lock();
            if st.shutdown {
                return Err(EvalError::Aborted("the run stopped".into()));
            }
            for (task, set, h) in requests {
                let key = (*task, *set, h.hash());
                let items = self.sets[*task].get(*set).clone();
                stats.rollouts += items.len();
                if let Some((s, _)) = st.memo.get(&key) {
                    self.counters.memo_hits.fetch_add(1, Ordering::Relaxed);
                    slots.push(s.clone());
                    continue;
                }
                let slot = Arc::new(Slot {
                    result: Mutex::new(None),
                    cv: Condvar::new(),
                });
                st.inserted += 1;
                let n_ins = st.inserted;
                st.memo.insert(key.clone(), (slot.clone(), n_ins));
                if self.memo_capacity != usize::MAX {
                    // Eviction order is only kept when there is a bound.
                    st.order.push_back((key.clone(), n_ins));
                }
                while st.memo.len() > self.memo_capacity {
                    // A dropped entry still in flight finishes for its waiters (they
                    // hold its slot); only later askers compute it again.
                    let Some((old, n)) = st.order.pop_front() else {
                        break;
                    };
                    if st.memo.get(&old).is_some_and(|(_, m)| *m == n) {
                        st.memo.remove(&old);
                        self.counters.memo_evictions.fetch_add(1, Ordering::Relaxed);
                    }
                }
                self.counters.evaluations.fetch_add(1, Ordering::Relaxed);
                let n = items.len();
                let job = Arc::new(Job {
                    key,
                    harness: h.clone(),
                    items,
                    rollouts: Mutex::new(vec![None; n]),
                    left: AtomicUsize::new(n),
                    slot: slot.clone(),
                    log: log.clone(),
                    failed: Mutex::new(None),
                });
                for index in 0..n {
                    st.queue.push_back(Unit {
                        job: job.clone(),
                        index,
                        _reg: self.dispatcher.enter(),
                    });
                }
                stats.run += n;
                if n == 0 {
                    self.finish(&job);
                }
                slots.push(slot);
            }
        }
        self.cv.notify_all();
        let mut out = Vec::with_capacity(slots.len());
        for s in slots {
            let r = s.wait().map_err(EvalError::Aborted)?;
            for ro in &r.rollouts {
                log.ensure(ro)?;
            }
            out.push(r);
        }
        Ok((out, stats))
    }
}
