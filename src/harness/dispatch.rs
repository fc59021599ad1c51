//! Gathering the executor calls of all running rollouts into batches.
//!
//! Every rollout thread registers ([`Dispatcher::enter`]) and sends its executor
//! calls through [`Dispatcher::complete`], which blocks until they are done. A
//! dispatcher thread collects pending calls and submits them to the executor as one
//! `complete_batch` as soon as either every registered rollout is waiting on the
//! executor (nothing more can arrive), the batch is full (`max_batch` requests), or
//! `window` has passed since the oldest pending call. Batches run on their own
//! threads (at most `max_inflight` at once), so a late call does not wait for an
//! earlier batch: the llama.cpp executor merges concurrent batches into its
//! continuous batch. A caller is answered as soon as its own requests are done
//! ([`Executor::complete_batch_progress`]), not when the whole batch is, so its rollout
//! goes on (and sends its next call) while the batch's longest requests still run.
//! Every batch's size is logged ([`BatchStats`]).
//!
//! Waves ([`DispatchConfig::waves`]): the batch schedule becomes a function of the
//! request set instead of timing. Rollouts register in a *group*
//! ([`Dispatcher::group`], [`Dispatcher::enter_group`]); a group's next wave leaves
//! only when every registered rollout of the group waits on the executor (or has
//! unregistered) and the group's previous wave has finished, with no window and no size
//! cap; its calls are ordered by the key each caller gives ([`Dispatcher::complete_keyed`]:
//! item, sample, call index), and one wave at a time is in the executor (waves of
//! different groups never share a decode). Callers are still answered as their own
//! requests finish, so sandbox work overlaps the rest of the wave; only the next wave
//! waits (the barrier's cost).

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::executor::{Completion, Executor, ExecutorError, Request};

/// Settings of a [`Dispatcher`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DispatchConfig {
    /// Longest wait for more calls once one is pending.
    pub window: Duration,
    /// Most requests per executor batch.
    pub max_batch: usize,
    /// Most batches in the executor at once.
    pub max_inflight: usize,
    /// Barrier-synchronous waves per group instead of windows (see the module doc).
    #[serde(default)]
    pub waves: bool,
}

impl Default for DispatchConfig {
    fn default() -> Self {
        DispatchConfig {
            window: Duration::from_millis(20),
            max_batch: 256,
            max_inflight: 16,
            waves: false,
        }
    }
}

/// Sizes of the batches submitted so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BatchStats {
    pub batches: u64,
    pub requests: u64,
    /// Requests of the largest batch.
    pub max_size: u64,
    /// `histogram[k]` = batches of size in `[2^k, 2^(k+1))`.
    pub histogram: Vec<u64>,
    /// Every batch size, in submission order (kept for logs and tests).
    pub sizes: Vec<u32>,
}

impl BatchStats {
    fn record(&mut self, n: usize) {
        self.batches += 1;
        self.requests += n as u64;
        self.max_size = self.max_size.max(n as u64);
        let bucket = (usize::BITS - 1 - n.max(1).leading_zeros()) as usize;
        if self.histogram.len() <= bucket {
            self.histogram.resize(bucket + 1, 0);
        }
        self.histogram[bucket] += 1;
        self.sizes.push(n as u32);
    }

    pub fn mean_size(&self) -> f64 {
        if self.batches == 0 {
            0.0
        } else {
            self.requests as f64 / self.batches as f64
        }
    }
}

type Results = Vec<Result<Completion, ExecutorError>>;

struct Pending {
    group: u64,
    key: String,
    requests: Vec<Request>,
    reply: mpsc::Sender<Results>,
    since: Instant,
}

#[derive(Default)]
struct State {
    queue: Vec<Pending>,
    /// Registered rollouts.
    active: usize,
    /// Rollouts inside `complete` (queued or in flight).
    blocked: usize,
    inflight: usize,
    shutdown: bool,
    stats: BatchStats,
    /// Wave mode: per-group registrations and waiting callers.
    groups: std::collections::BTreeMap<u64, Group>,
    next_group: u64,
}

/// A wave group's registered and waiting rollouts.
#[derive(Default)]
struct Group {
    active: usize,
    blocked: usize,
    /// A wave of this group is in the executor.
    inflight: bool,
}

struct Inner {
    exec: Arc<dyn Executor>,
    config: DispatchConfig,
    state: Mutex<State>,
    cv: Condvar,
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A caller of `group` no longer waits.
    fn unblock(&self, group: u64) {
        let mut st = self.lock();
        st.blocked = st.blocked.saturating_sub(1);
        let g = st.groups.entry(group).or_default();
        g.blocked = g.blocked.saturating_sub(1);
        drop(st);
        self.cv.notify_all();
    }

    /// Answer a caller of `group` (counted as no longer waiting first).
    fn answer(&self, group: u64, reply: &mpsc::Sender<Results>, results: Results) {
        self.unblock(group);
        let _ = reply.send(results);
    }
}

/// The batching front of an executor (see the module doc).
pub struct Dispatcher {
    inner: Arc<Inner>,
    thread: Option<JoinHandle<()>>,
}

/// A registered rollout; dropping it unregisters.
pub struct Registration {
    inner: Arc<Inner>,
    group: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut st = self.inner.lock();
        st.active = st.active.saturating_sub(1);
        let g = st.groups.entry(self.group).or_default();
        g.active = g.active.saturating_sub(1);
        if g.active == 0 && g.blocked == 0 && !g.inflight {
            st.groups.remove(&self.group);
        }
        drop(st);
        self.inner.cv.notify_all();
    }
}

impl Dispatcher {
    pub fn new(exec: Arc<dyn Executor>, config: DispatchConfig) -> Dispatcher {
        let inner = Arc::new(Inner {
            exec,
            config,
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
        });
        let worker = Arc::clone(&inner);
        let thread = std::thread::Builder::new()
            .name("hrl-dispatch".into())
            .spawn(move || dispatch_loop(worker))
            .expect("spawning the dispatcher thread");
        Dispatcher {
            inner,
            thread: Some(thread),
        }
    }

    /// Register a rollout (in group 0) for the duration of the returned guard.
    pub fn enter(&self) -> Registration {
        self.enter_group(0)
    }

    /// A new wave group (ids never repeat; group 0 is the default one).
    pub fn group(&self) -> u64 {
        let mut st = self.inner.lock();
        st.next_group += 1;
        st.next_group
    }

    /// Register a rollout in wave group `group` for the duration of the returned guard.
    pub fn enter_group(&self, group: u64) -> Registration {
        let mut st = self.inner.lock();
        st.active += 1;
        st.groups.entry(group).or_default().active += 1;
        Registration {
            inner: Arc::clone(&self.inner),
            group,
        }
    }

    /// Whether this dispatcher forms waves.
    pub fn waves(&self) -> bool {
        self.inner.config.waves
    }

    /// Complete `requests` in the next batch; blocks until they are done. Results
    /// come back in order, one per request.
    pub fn complete(&self, requests: Vec<Request>) -> Results {
        self.complete_keyed(0, String::new(), requests)
    }

    /// [`Dispatcher::complete`] for a rollout of wave group `group`; `key` orders the
    /// calls of a wave (a canonical name of the rollout and the call).
    pub fn complete_keyed(&self, group: u64, key: String, requests: Vec<Request>) -> Results {
        if requests.is_empty() {
            return Vec::new();
        }
        let n = requests.len();
        let (tx, rx) = mpsc::channel();
        {
            let mut st = self.inner.lock();
            st.blocked += 1;
            st.groups.entry(group).or_default().blocked += 1;
            st.queue.push(Pending {
                group,
                key,
                requests,
                reply: tx,
                since: Instant::now(),
            });
        }
        self.inner.cv.notify_all();
        // The dispatcher counts a caller as no longer waiting when it sends the answer
        // (`Inner::answer`), so a wave can never leave while an answered caller has
        // not yet woken up; without an answer (the dispatcher stopped) count it here.
        rx.recv().unwrap_or_else(|_| {
            self.inner.unblock(group);
            (0..n)
                .map(|_| Err(ExecutorError::Model("the dispatcher stopped".into())))
                .collect()
        })
    }

    pub fn stats(&self) -> BatchStats {
        self.inner.lock().stats.clone()
    }
}

impl Drop for Dispatcher {
    fn drop(&mut self) {
        self.inner.lock().shutdown = true;
        self.inner.cv.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn dispatch_loop(inner: Arc<Inner>) {
    if inner.config.waves {
        return wave_loop(inner);
    }
    let cfg = inner.config.clone();
    let mut st = inner.lock();
    loop {
        while st.queue.is_empty() && !st.shutdown {
            st = inner.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        if st.queue.is_empty() {
            // Shut down: wait for batches in flight to deliver.
            while st.inflight > 0 {
                st = inner.cv.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            return;
        }
        // Gather until nothing more can come, the batch is full, or the window ends.
        loop {
            let queued: usize = st.queue.iter().map(|p| p.requests.len()).sum();
            let deadline = st.queue[0].since + cfg.window;
            let now = Instant::now();
            if st.shutdown || st.blocked >= st.active || queued >= cfg.max_batch || now >= deadline
            {
                break;
            }
            st = inner
                .cv
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        while st.inflight >= cfg.max_inflight.max(1) {
            st = inner.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        // Take whole pendings up to max_batch requests (at least one pending).
        let mut taken = Vec::new();
        let mut count = 0;
        while !st.queue.is_empty() {
            let n = st.queue[0].requests.len();
            if !taken.is_empty() && count + n > cfg.max_batch {
                break;
            }
            count += n;
            taken.push(st.queue.remove(0));
        }
        st.inflight += 1;
        st.stats.record(count);
        drop(st);
        let worker = Arc::clone(&inner);
        let spawned = std::thread::Builder::new()
            .name("hrl-batch".into())
            .spawn(move || run_batch(worker, taken, None));
        if let Err(e) = spawned {
            // No thread: fail nothing silently — the batch's senders were moved into
            // the closure and are dropped, so the callers see "dispatcher stopped".
            eprintln!("hrl: cannot start an executor batch thread: {e}");
            inner.lock().inflight -= 1;
        }
        st = inner.lock();
    }
}

/// The next group whose wave may leave: all its rollouts wait, none of its waves is
/// in flight (the lowest id first; the order of groups does not change a wave).
fn ready_group(st: &State) -> Option<u64> {
    st.groups
        .iter()
        .find(|(id, g)| {
            !g.inflight
                && (st.shutdown || g.blocked >= g.active)
                && st.queue.iter().any(|p| p.group == **id)
        })
        .map(|(id, _)| *id)
}

/// Wave mode: one wave at a time in the executor, each the whole set of waiting calls
/// of one group in key order.
fn wave_loop(inner: Arc<Inner>) {
    let mut st = inner.lock();
    loop {
        let group = loop {
            if st.inflight == 0 {
                if let Some(g) = ready_group(&st) {
                    break Some(g);
                }
                if st.shutdown && st.queue.is_empty() {
                    break None;
                }
            }
            st = inner.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        };
        let Some(group) = group else { return };
        let (mut taken, rest): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut st.queue)
            .into_iter()
            .partition(|p| p.group == group);
        st.queue = rest;
        taken.sort_by(|a, b| a.key.cmp(&b.key));
        let count = taken.iter().map(|p| p.requests.len()).sum();
        st.inflight += 1;
        st.groups.entry(group).or_default().inflight = true;
        st.stats.record(count);
        drop(st);
        let worker = Arc::clone(&inner);
        let spawned = std::thread::Builder::new()
            .name("hrl-wave".into())
            .spawn(move || run_batch(worker, taken, Some(group)));
        if let Err(e) = spawned {
            eprintln!("hrl: cannot start an executor batch thread: {e}");
            let mut st = inner.lock();
            st.inflight -= 1;
            st.groups.entry(group).or_default().inflight = false;
        }
        st = inner.lock();
    }
}

fn run_batch(inner: Arc<Inner>, taken: Vec<Pending>, group: Option<u64>) {
    let requests: Vec<Request> = taken.iter().flat_map(|p| p.requests.clone()).collect();
    // Which caller and position each request of the batch belongs to.
    let owner: Vec<(usize, usize)> = taken
        .iter()
        .enumerate()
        .flat_map(|(k, p)| (0..p.requests.len()).map(move |j| (k, j)))
        .collect();
    // A caller whose requests have all finished gets its results at once, not when the
    // whole batch has (the executor's continuous batch finishes requests at different
    // times; holding every caller until the longest request ends would leave the
    // executor's slots idle while finished rollouts wait to go on). Failures are not
    // `Clone`: a caller with a failed request is answered from the batch's return value.
    struct Early {
        group: u64,
        reply: Option<mpsc::Sender<Results>>,
        done: Vec<Option<Completion>>,
        failed: bool,
    }
    let early: Mutex<Vec<Early>> = Mutex::new(
        taken
            .into_iter()
            .map(|p| Early {
                group: p.group,
                done: vec![None; p.requests.len()],
                reply: Some(p.reply),
                failed: false,
            })
            .collect(),
    );
    let on_done = |i: usize, r: &Result<Completion, ExecutorError>| {
        let Some(&(k, j)) = owner.get(i) else { return };
        let mut e = early.lock().unwrap_or_else(|e| e.into_inner());
        let slot = &mut e[k];
        match r {
            Ok(c) => slot.done[j] = Some(c.clone()),
            Err(_) => slot.failed = true,
        }
        if !slot.failed
            && slot.done.iter().all(Option::is_some)
            && let Some(tx) = slot.reply.take()
        {
            let results = slot
                .done
                .iter_mut()
                .map(|c| Ok(c.take().unwrap()))
                .collect();
            inner.answer(slot.group, &tx, results);
        }
    };
    let out = inner.exec.complete_batch_progress(&requests, &on_done);
    let mut results = out.into_iter();
    for slot in early.into_inner().unwrap_or_else(|e| e.into_inner()) {
        let mine: Results = (0..slot.done.len())
            .map(|_| {
                results.next().unwrap_or_else(|| {
                    Err(ExecutorError::Model(
                        "the executor returned too few results".into(),
                    ))
                })
            })
            .collect();
        if let Some(tx) = slot.reply {
            inner.answer(slot.group, &tx, mine);
        }
    }
    let mut st = inner.lock();
    st.inflight -= 1;
    if let Some(id) = group {
        let g = st.groups.entry(id).or_default();
        g.inflight = false;
        if g.active == 0 && g.blocked == 0 {
            st.groups.remove(&id);
        }
    }
    drop(st);
    inner.cv.notify_all();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executor::{FinishReason, Prompt, Sampling, Timings, Usage};

    /// A test-only executor that echoes prompts and records batch sizes.
    struct EchoExecutor(Mutex<Vec<usize>>);

    impl Executor for EchoExecutor {
        fn model_id(&self) -> &str {
            "echo"
        }
        fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>> {
            self.0.lock().unwrap().push(requests.len());
            requests
                .iter()
                .map(|r| {
                    Ok(Completion {
                        text: match &r.prompt {
                            Prompt::Raw(t) => t.clone(),
                            Prompt::Chat(m) => m[0].content.clone(),
                        },
                        finish_reason: FinishReason::Stop,
                        usage: Usage::default(),
                        timings: Timings::default(),
                        cached: false,
                    })
                })
                .collect()
        }
    }

    fn req(s: &str) -> Request {
        Request {
            prompt: Prompt::Raw(s.into()),
            sampling: Sampling::default(),
        }
    }

    #[test]
    fn calls_of_all_waiting_rollouts_form_one_batch() {
        let exec = Arc::new(EchoExecutor(Mutex::new(Vec::new())));
        let d = Dispatcher::new(
            exec.clone(),
            DispatchConfig {
                window: Duration::from_secs(60),
                ..DispatchConfig::default()
            },
        );
        let barrier = std::sync::Barrier::new(6);
        std::thread::scope(|s| {
            for i in 0..6 {
                let (d, barrier) = (&d, &barrier);
                s.spawn(move || {
                    let _g = d.enter();
                    barrier.wait();
                    let out = d.complete(vec![req(&format!("p{i}")), req(&format!("q{i}"))]);
                    let texts: Vec<String> = out.into_iter().map(|r| r.unwrap().text).collect();
                    assert_eq!(texts, vec![format!("p{i}"), format!("q{i}")]);
                });
            }
        });
        // With a 60 s window the batch can only have been sent when all six rollouts
        // were waiting: one batch of 12 requests.
        assert_eq!(*exec.0.lock().unwrap(), vec![12]);
        let st = d.stats();
        assert_eq!((st.batches, st.requests, st.max_size), (1, 12, 12));
        assert_eq!(st.sizes, vec![12]);
    }

    /// A test-only executor that finishes request 0 of a batch, then holds the rest
    /// until `release` receives a signal.
    struct StaggeredExecutor {
        release: Mutex<mpsc::Receiver<()>>,
    }

    impl Executor for StaggeredExecutor {
        fn model_id(&self) -> &str {
            "staggered"
        }
        fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>> {
            self.complete_batch_progress(requests, &|_, _| {})
        }
        fn complete_batch_progress(
            &self,
            requests: &[Request],
            on_done: &crate::executor::OnDone<'_>,
        ) -> Vec<Result<Completion, ExecutorError>> {
            let out: Vec<_> = requests
                .iter()
                .map(|r| EchoExecutor(Mutex::new(Vec::new())).complete(r))
                .collect();
            on_done(0, &out[0]);
            if requests.len() > 1 {
                let rx = self.release.lock().unwrap();
                rx.recv_timeout(Duration::from_secs(60))
                    .expect("the test never released the batch");
            }
            for (i, r) in out.iter().enumerate().skip(1) {
                on_done(i, r);
            }
            out
        }
    }

    #[test]
    fn a_caller_is_answered_when_its_requests_finish_not_the_whole_batch() {
        let (release, rx) = mpsc::channel();
        let exec = Arc::new(StaggeredExecutor {
            release: Mutex::new(rx),
        });
        let d = Dispatcher::new(
            exec,
            DispatchConfig {
                window: Duration::from_secs(60),
                ..DispatchConfig::default()
            },
        );
        let barrier = std::sync::Barrier::new(2);
        let (answered_tx, answered_rx) = mpsc::channel();
        std::thread::scope(|s| {
            let mut callers = Vec::new();
            for name in ["a", "b"] {
                let (d, barrier, answered_tx) = (&d, &barrier, answered_tx.clone());
                callers.push(s.spawn(move || {
                    let _g = d.enter();
                    barrier.wait();
                    let out = d.complete(vec![req(name)]);
                    answered_tx.send(name).unwrap();
                    out
                }));
            }
            // Both calls form one batch (60 s window, both callers waiting). Its first
            // request is finished early and the rest held: one caller must be answered
            // while the batch is still running.
            let early = answered_rx.recv_timeout(Duration::from_secs(30));
            release.send(()).unwrap();
            let early = early.expect("no caller was answered before the batch finished");
            let late = answered_rx.recv_timeout(Duration::from_secs(30)).unwrap();
            assert_ne!(early, late);
            for (c, name) in callers.into_iter().zip(["a", "b"]) {
                let out = c.join().unwrap();
                assert_eq!(
                    out.into_iter().map(|r| r.unwrap().text).collect::<Vec<_>>(),
                    [name]
                );
            }
        });
        assert_eq!(d.stats().sizes, vec![2]);
    }

    /// A test-only executor that records the prompts of every batch, in order.
    struct OrderExecutor(Mutex<Vec<Vec<String>>>);

    impl Executor for OrderExecutor {
        fn model_id(&self) -> &str {
            "order"
        }
        fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>> {
            let echo = EchoExecutor(Mutex::new(Vec::new()));
            let out = echo.complete_batch(requests);
            self.0.lock().unwrap().push(
                out.iter()
                    .map(|r| r.as_ref().unwrap().text.clone())
                    .collect(),
            );
            out
        }
    }

    #[test]
    fn a_wave_waits_for_every_rollout_of_its_group_and_is_in_key_order() {
        let exec = Arc::new(OrderExecutor(Mutex::new(Vec::new())));
        let d = Dispatcher::new(
            exec.clone(),
            DispatchConfig {
                window: Duration::from_millis(1),
                waves: true,
                ..DispatchConfig::default()
            },
        );
        let g = d.group();
        let regs: Vec<_> = (0..3).map(|_| d.enter_group(g)).collect();
        std::thread::scope(|s| {
            // Callers arrive late and in reverse key order; the second call of "a" waits
            // for the next wave, which also waits for "c", the slowest.
            for ((name, delay, calls), reg) in [("c", 120, 2), ("b", 60, 1), ("a", 0, 2)]
                .into_iter()
                .zip(regs)
            {
                let d = &d;
                s.spawn(move || {
                    let _reg = reg;
                    for k in 0..calls {
                        std::thread::sleep(Duration::from_millis(delay * (k + 1)));
                        let out = d.complete_keyed(g, format!("{name}{k}"), vec![req(name)]);
                        assert_eq!(out[0].as_ref().unwrap().text, name);
                    }
                });
            }
        });
        assert_eq!(
            *exec.0.lock().unwrap(),
            vec![vec!["a", "b", "c"], vec!["a", "c"]]
        );
        assert_eq!(d.stats().sizes, vec![3, 2]);
    }

    #[test]
    fn max_batch_splits_and_window_releases_a_lone_caller() {
        let exec = Arc::new(EchoExecutor(Mutex::new(Vec::new())));
        let d = Dispatcher::new(
            exec.clone(),
            DispatchConfig {
                window: Duration::from_millis(1),
                max_batch: 2,
                max_inflight: 1,
                waves: false,
            },
        );
        // Two registered rollouts, one never calls: the window releases the other.
        let _idle = d.enter();
        let _me = d.enter();
        let out = d.complete(vec![req("a"), req("b"), req("c")]);
        assert_eq!(out.len(), 3);
        assert!(exec.0.lock().unwrap().iter().all(|&n| n <= 3));
    }
}
