//! The persistent completion cache and `CachedExecutor`.
//!
//! `CountingExecutor` wraps `SimulatedExecutor` (a deterministic test double of a model)
//! and counts the requests that reach it, so "a warm cache calls no model" is checked
//! by a counter, not assumed. The real-model version of that test lives with the HTTP
//! executor's llama tests.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use harness_rl::executor::cache::{CacheKey, CachedExecutor, CompletionCache, WritePolicy};
use harness_rl::executor::{
    Completion, Executor, ExecutorError, FinishReason, Message, OnDone, Prompt, Request, Sampling,
    Timings, Usage,
};
use proptest::prelude::*;
use serde_json::json;

/// Deterministic stand-in for a model; fails requests whose prompt contains `FAIL`.
struct SimulatedExecutor {
    id: String,
}

impl SimulatedExecutor {
    fn answer(r: &Request) -> Result<Completion, ExecutorError> {
        let p = match &r.prompt {
            Prompt::Raw(p) => p.clone(),
            Prompt::Chat(ms) => ms.iter().map(|m| m.content.as_str()).collect(),
        };
        if p.contains("FAIL") {
            return Err(ExecutorError::Model("simulated failure".into()));
        }
        Ok(Completion {
            text: format!("{p}/{}/{}", r.sampling.temperature, r.sampling.seed),
            finish_reason: FinishReason::Length,
            usage: Usage {
                prompt_tokens: p.len() as u32,
                completion_tokens: 5,
                cached_prompt_tokens: 1,
            },
            // Values that a lossy float parser would change by one ulp.
            timings: Timings {
                prompt_ms: 180.87043699999998,
                generation_ms: 233.43477800000002,
                total_ms: 0.1 + 0.2,
            },
            cached: false,
        })
    }
}

impl Executor for SimulatedExecutor {
    fn model_id(&self) -> &str {
        &self.id
    }
    fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>> {
        requests.iter().map(Self::answer).collect()
    }
}

/// Counts the requests (and batches) that reach the wrapped executor.
struct CountingExecutor {
    inner: Arc<dyn Executor>,
    requests: AtomicUsize,
    batches: Mutex<Vec<usize>>,
}

impl CountingExecutor {
    fn new(inner: Arc<dyn Executor>) -> Arc<Self> {
        Arc::new(CountingExecutor {
            inner,
            requests: AtomicUsize::new(0),
            batches: Mutex::new(Vec::new()),
        })
    }
    fn calls(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

impl Executor for CountingExecutor {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
    fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>> {
        self.requests.fetch_add(requests.len(), Ordering::SeqCst);
        self.batches.lock().unwrap().push(requests.len());
        self.inner.complete_batch(requests)
    }
}

fn sim(id: &str) -> Arc<dyn Executor> {
    Arc::new(SimulatedExecutor { id: id.into() })
}

fn open(path: &Path) -> Arc<CompletionCache> {
    Arc::new(CompletionCache::open(path).unwrap())
}

fn chat(text: &str) -> Request {
    Request {
        prompt: Prompt::Chat(vec![Message::system("sys"), Message::user(text)]),
        sampling: Sampling::default(),
    }
}

fn sampled(text: &str, seed: u64) -> Request {
    let mut r = chat(text);
    r.sampling.temperature = 0.7;
    r.sampling.seed = seed;
    r
}

#[test]
fn a_warm_cache_calls_no_model_and_returns_the_same_completion() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    let reqs: Vec<Request> = (0..20)
        .map(|i| {
            if i % 2 == 0 {
                chat(&format!("q{i}"))
            } else {
                sampled(&format!("q{i}"), i)
            }
        })
        .collect();

    let counting = CountingExecutor::new(sim("m1"));
    let cached = CachedExecutor::new(counting.clone(), open(&path));
    let cold: Vec<Completion> = cached
        .complete_batch(&reqs)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(counting.calls(), 20);
    assert!(cold.iter().all(|c| !c.cached));
    assert_eq!(cached.counters().misses(), 20);

    // A new process would open the file afresh: do the same.
    let counting2 = CountingExecutor::new(sim("m1"));
    let cached2 = CachedExecutor::new(counting2.clone(), open(&path));
    let warm: Vec<Completion> = cached2
        .complete_batch(&reqs)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(counting2.calls(), 0, "warm cache called the model");
    assert_eq!(cached2.counters().hits(), 20);
    for (c, w) in cold.iter().zip(&warm) {
        assert!(w.cached);
        assert_eq!(
            Completion {
                cached: false,
                ..w.clone()
            },
            *c,
            "cached completion differs from the original"
        );
    }
    // Single-request path too.
    assert_eq!(cached2.complete(&reqs[3]).unwrap().text, cold[3].text);
    assert_eq!(counting2.calls(), 0);
}

#[test]
fn a_partly_warm_batch_sends_only_the_misses_in_one_call() {
    let dir = tempfile::tempdir().unwrap();
    let counting = CountingExecutor::new(sim("m"));
    let cached = CachedExecutor::new(counting.clone(), open(&dir.path().join("c.sqlite")));
    cached.complete_batch(&[chat("a"), chat("c")]);
    let out = cached.complete_batch(&[chat("a"), chat("b"), chat("c"), chat("d")]);
    assert_eq!(*counting.batches.lock().unwrap(), vec![2, 2]);
    let cached_flags: Vec<bool> = out.iter().map(|r| r.as_ref().unwrap().cached).collect();
    assert_eq!(cached_flags, vec![true, false, true, false]);
    let texts: Vec<String> = out.into_iter().map(|r| r.unwrap().text).collect();
    let want: Vec<String> = ["a", "b", "c", "d"]
        .iter()
        .map(|t| SimulatedExecutor::answer(&chat(t)).unwrap().text)
        .collect();
    assert_eq!(texts, want);
}

#[test]
fn identical_requests_in_one_batch_are_computed_once() {
    let dir = tempfile::tempdir().unwrap();
    let counting = CountingExecutor::new(sim("m"));
    let cached = CachedExecutor::new(counting.clone(), open(&dir.path().join("c.sqlite")));
    let out = cached.complete_batch(&[chat("x"), chat("y"), chat("x"), chat("x")]);
    assert_eq!(counting.calls(), 2);
    assert_eq!(out[0].as_ref().unwrap().text, out[3].as_ref().unwrap().text);
    let out = cached.complete_batch(&[chat("FAIL"), chat("FAIL")]);
    assert!(out.iter().all(|r| {
        r.as_ref()
            .unwrap_err()
            .to_string()
            .contains("simulated failure")
    }));
}

#[test]
fn errors_are_not_cached() {
    let dir = tempfile::tempdir().unwrap();
    let counting = CountingExecutor::new(sim("m"));
    let cached = CachedExecutor::new(counting.clone(), open(&dir.path().join("c.sqlite")));
    let out = cached.complete_batch(&[chat("FAIL"), chat("ok")]);
    assert!(out[0].is_err() && out[1].is_ok());
    let out = cached.complete_batch(&[chat("FAIL"), chat("ok")]);
    assert!(out[0].is_err());
    assert!(out[1].as_ref().unwrap().cached);
    assert_eq!(counting.calls(), 3);
    assert_eq!(cached.cache().stats().unwrap().entries, 1);
}

#[test]
fn models_do_not_share_entries_and_clear_is_per_model() {
    let dir = tempfile::tempdir().unwrap();
    let cache = open(&dir.path().join("c.sqlite"));
    let a = CountingExecutor::new(sim("sha-a"));
    let b = CountingExecutor::new(sim("sha-b"));
    CachedExecutor::new(a.clone(), cache.clone())
        .complete(&chat("x"))
        .unwrap();
    let other = CachedExecutor::new(b.clone(), cache.clone())
        .complete(&chat("x"))
        .unwrap();
    assert!(!other.cached);
    assert_eq!(b.calls(), 1);
    let stats = cache.stats().unwrap();
    assert_eq!(stats.entries, 2);
    assert_eq!(
        stats
            .models
            .iter()
            .map(|m| m.model_id.as_str())
            .collect::<Vec<_>>(),
        vec!["sha-a", "sha-b"]
    );
    assert_eq!(stats.models[0].completion_tokens, 5);
    assert!(stats.bytes > 0);
    assert_eq!(cache.clear(Some("sha-a")).unwrap(), 1);
    assert_eq!(cache.stats().unwrap().entries, 1);
    assert_eq!(cache.clear(None).unwrap(), 1);
    assert_eq!(cache.stats().unwrap().entries, 0);
}

/// What the key must depend on, written independently of `CacheKey`: the model, the
/// prompt kind and exact content, `max_tokens`, `stop`, `grammar`, and — only for
/// sampled decoding — temperature, top-p, top-k, min-p and seed.
fn decisive(model: &str, r: &Request) -> serde_json::Value {
    let s = &r.sampling;
    let sampler = if s.temperature <= 0.0 {
        json!("greedy")
    } else {
        json!([
            s.temperature.to_bits(),
            s.top_p.to_bits(),
            s.top_k,
            s.min_p.to_bits(),
            s.seed
        ])
    };
    json!([model, r.prompt, s.max_tokens, s.stop, s.grammar, sampler])
}

fn arb_request() -> impl Strategy<Value = Request> {
    let text = prop::sample::select(vec!["", "a", "ab", "b", "a\u{0}b", "é"]);
    let prompt = prop_oneof![
        text.clone().prop_map(|t| Prompt::Raw(t.to_string())),
        prop::collection::vec(
            (
                prop::sample::select(vec!["system", "user", "assistant"]),
                text
            ),
            0..3
        )
        .prop_map(|ms| Prompt::Chat(ms.into_iter().map(|(r, t)| Message::new(r, t)).collect())),
    ];
    let sampling = (
        prop::sample::select(vec![0.0f32, -0.0, 0.5, 1.0]),
        prop::sample::select(vec![1.0f32, 0.9]),
        0u32..2,
        prop::sample::select(vec![0.0f32, 0.05]),
        0u64..2,
        1u32..3,
        prop::collection::vec(prop::sample::select(vec!["\n", "x", ""]), 0..2),
        prop::option::of(prop::sample::select(vec!["root ::= \"a\""])),
    )
        .prop_map(
            |(temperature, top_p, top_k, min_p, seed, max_tokens, stop, grammar)| Sampling {
                temperature,
                top_p,
                top_k,
                min_p,
                seed,
                max_tokens,
                stop: stop.into_iter().map(str::to_string).collect(),
                grammar: grammar.map(str::to_string),
                json_schema: None,
            },
        );
    (prompt, sampling).prop_map(|(prompt, sampling)| Request { prompt, sampling })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn keys_collide_exactly_when_the_decisive_fields_agree(
        a in arb_request(),
        b in arb_request(),
        ma in prop::sample::select(vec!["m1", "m2"]),
        mb in prop::sample::select(vec!["m1", "m2"]),
    ) {
        let same_key = CacheKey::new(ma, &a) == CacheKey::new(mb, &b);
        let same_fields = decisive(ma, &a) == decisive(mb, &b);
        prop_assert_eq!(same_key, same_fields);
    }
}

#[test]
fn key_fields_are_length_prefixed() {
    let two = |a: &str, b: &str| Request {
        prompt: Prompt::Chat(vec![Message::user(a), Message::user(b)]),
        sampling: Sampling::default(),
    };
    assert_ne!(
        CacheKey::new("m", &two("ab", "c")),
        CacheKey::new("m", &two("a", "bc"))
    );
    let raw = Request {
        prompt: Prompt::Raw("userx".into()),
        sampling: Sampling::default(),
    };
    let chat = Request {
        prompt: Prompt::Chat(vec![Message::user("x")]),
        sampling: Sampling::default(),
    };
    assert_ne!(CacheKey::new("m", &raw), CacheKey::new("m", &chat));
}

/// Changing the key derivation silently orphans every cache on disk; this pins it. If
/// it changes on purpose, bump `CACHE_FORMAT` and update the value. The value comes
/// from an independent implementation of the documented byte layout,
/// `scripts/cache_key.py` (Python `hashlib`; run `python3 scripts/cache_key.py`), which
/// `key_derivation_matches_the_independent_script` runs.
#[test]
fn key_derivation_is_pinned() {
    let r = Request {
        prompt: Prompt::Chat(vec![Message::system("s"), Message::user("u")]),
        sampling: Sampling {
            temperature: 0.5,
            seed: 3,
            stop: vec!["\n".into()],
            ..Sampling::default()
        },
    };
    assert_eq!(CacheKey::new("sha256:abc", &r).hex(), PINNED_KEY);
}
const PINNED_KEY: &str = "c99c7ec0ffcec733237f552a940a7e5e7235cba584a2e146cf666920cb308b7e";

#[test]
fn key_derivation_matches_the_independent_script() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/cache_key.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .output()
        .expect("python3 runs (the sandbox needs it too)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), PINNED_KEY);
}

// ---------------------------------------------------------------------------------
// Completions are written as they finish.

/// Completes requests one at a time, reporting each through `on_done`; before it
/// computes request `i > 0` it waits (up to `limit`) until `ready(i)` holds, and
/// records whether it did. A stand-in for a long batch whose requests finish at
/// different times.
struct SteppingExecutor {
    ready: Box<dyn Fn(usize) -> bool + Send + Sync>,
    limit: Duration,
    waited: Mutex<Vec<bool>>,
}

impl Executor for SteppingExecutor {
    fn model_id(&self) -> &str {
        "m"
    }
    fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>> {
        self.complete_batch_progress(requests, &|_, _| {})
    }
    fn complete_batch_progress(
        &self,
        requests: &[Request],
        on_done: &OnDone<'_>,
    ) -> Vec<Result<Completion, ExecutorError>> {
        let mut out = Vec::new();
        for (i, r) in requests.iter().enumerate() {
            if i > 0 {
                let start = Instant::now();
                let mut ok = (self.ready)(i);
                while !ok && start.elapsed() < self.limit {
                    std::thread::sleep(Duration::from_millis(2));
                    ok = (self.ready)(i);
                }
                self.waited.lock().unwrap().push(ok);
            }
            let c = SimulatedExecutor::answer(r);
            on_done(i, &c);
            out.push(c);
        }
        out
    }
}

fn entries(path: &Path) -> u64 {
    CompletionCache::open(path)
        .unwrap()
        .stats()
        .unwrap()
        .entries
}

#[test]
fn completions_are_stored_as_they_finish() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    let p = path.clone();
    // Each completion must be on disk before the next one is computed. The policy
    // allows 20 ms of delay; the executor waits up to 30 s for it.
    let stepping = Arc::new(SteppingExecutor {
        ready: Box::new(move |i| entries(&p) >= i as u64),
        limit: Duration::from_secs(30),
        waited: Mutex::new(Vec::new()),
    });
    let cached =
        CachedExecutor::new(stepping.clone(), open(&path)).with_write_policy(WritePolicy {
            max_pending: 1000,
            max_delay: Duration::from_millis(20),
        });
    let reqs: Vec<Request> = (0..6).map(|i| chat(&format!("q{i}"))).collect();
    let reported = Mutex::new(Vec::new());
    let out = cached.complete_batch_progress(&reqs, &|i, r| {
        reported
            .lock()
            .unwrap()
            .push((i, r.as_ref().unwrap().text.clone()));
    });
    assert_eq!(*stepping.waited.lock().unwrap(), vec![true; 5]);
    assert_eq!(entries(&path), 6);
    // The caller's callback sees every completion once, as it finishes.
    let want: Vec<(usize, String)> = out
        .iter()
        .enumerate()
        .map(|(i, r)| (i, r.as_ref().unwrap().text.clone()))
        .collect();
    assert_eq!(*reported.lock().unwrap(), want);
}

#[test]
fn the_write_policy_bounds_how_many_completions_wait() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    let p = path.clone();
    // With an hour of allowed delay only the count triggers a commit: the first
    // completion goes at once (nothing committed yet), then every third.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let stepping = Arc::new(SteppingExecutor {
        ready: Box::new(move |i| {
            let want = match i {
                1..=3 => 1,
                4..=6 => 4,
                _ => 7,
            };
            let n = entries(&p);
            if n >= want {
                s2.lock().unwrap().push((i, n));
            }
            n >= want
        }),
        limit: Duration::from_secs(30),
        waited: Mutex::new(Vec::new()),
    });
    let cached =
        CachedExecutor::new(stepping.clone(), open(&path)).with_write_policy(WritePolicy {
            max_pending: 3,
            max_delay: Duration::from_secs(3600),
        });
    let reqs: Vec<Request> = (0..8).map(|i| chat(&format!("q{i}"))).collect();
    assert!(cached.complete_batch(&reqs).iter().all(Result::is_ok));
    assert_eq!(*stepping.waited.lock().unwrap(), vec![true; 7]);
    // What was on disk before each request was computed: nothing else can have been
    // committed in between (the delay is an hour), so the counts are exact.
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(1, 1), (2, 1), (3, 1), (4, 4), (5, 4), (6, 4), (7, 7)]
    );
    // The rest is committed when the batch ends.
    assert_eq!(entries(&path), 8);
}

#[test]
fn a_file_that_is_not_a_database_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("garbage.sqlite");
    std::fs::write(
        &path,
        b"this is certainly not an SQLite database, just text. ".repeat(100),
    )
    .unwrap();
    let err = CompletionCache::open(&path).unwrap_err().to_string();
    assert!(err.contains(path.to_str().unwrap()), "{err}");
    assert!(err.contains("not a usable SQLite database"), "{err}");
    // The file is left as it was.
    assert!(
        std::fs::read(&path)
            .unwrap()
            .starts_with(b"this is certainly")
    );
}

#[test]
fn a_corrupt_row_is_a_miss_and_is_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    let counting = CountingExecutor::new(sim("m"));
    let cached = CachedExecutor::new(counting.clone(), open(&path));
    let first = cached.complete(&chat("x")).unwrap();
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute("UPDATE completions SET completion = '{\"text\": 5'", [])
            .unwrap();
    }
    let again = cached.complete(&chat("x")).unwrap();
    assert!(!again.cached);
    assert_eq!(again.text, first.text);
    assert_eq!(counting.calls(), 2);
    assert!(cached.complete(&chat("x")).unwrap().cached);
}

#[test]
fn a_failing_cache_never_loses_a_completion() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    let counting = CountingExecutor::new(sim("m"));
    let cached = CachedExecutor::new(counting.clone(), open(&path));
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute("DROP TABLE completions", []).unwrap();
    }
    let out = cached.complete_batch(&[chat("a"), chat("b")]);
    assert_eq!(
        out[0].as_ref().unwrap().text,
        SimulatedExecutor::answer(&chat("a")).unwrap().text
    );
    assert!(out[1].is_ok());
    assert_eq!(counting.calls(), 2);
    // One failed read, then at least one failed write (completions are written as
    // they are reported, in one or more transactions).
    assert!(
        cached.counters().errors() >= 2,
        "{} failures counted",
        cached.counters().errors()
    );
    let last = cached.counters().last_error().unwrap();
    assert!(
        last.contains("no such table") && last.contains("c.sqlite"),
        "{last}"
    );
}

#[test]
fn concurrent_threads_with_their_own_connections() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    std::thread::scope(|s| {
        for t in 0..4 {
            let path = path.clone();
            s.spawn(move || {
                let cached = CachedExecutor::new(sim("m"), open(&path));
                for i in 0..50 {
                    // Every thread writes its own keys and reads everyone's.
                    for q in [format!("t{t}-{i}"), format!("shared-{i}")] {
                        let got = cached.complete(&chat(&q)).unwrap();
                        let want = SimulatedExecutor::answer(&chat(&q)).unwrap();
                        assert_eq!(got.text, want.text);
                    }
                }
                assert_eq!(
                    cached.counters().errors(),
                    0,
                    "{:?}",
                    cached.counters().last_error()
                );
            });
        }
    });
    assert_eq!(open(&path).stats().unwrap().entries, 4 * 50 + 50);
}

/// Runs in child processes (see `several_processes_share_one_cache`).
#[test]
fn child_cache_writer() {
    let (Ok(path), Ok(tag)) = (
        std::env::var("HRL_TEST_CACHE"),
        std::env::var("HRL_TEST_TAG"),
    ) else {
        return;
    };
    let cached = CachedExecutor::new(sim("m"), open(Path::new(&path)));
    for i in 0..40 {
        let batch: Vec<Request> = (0..5)
            .flat_map(|j| {
                [
                    chat(&format!("{tag}-{i}-{j}")),
                    chat(&format!("common-{j}")),
                ]
            })
            .collect();
        assert!(cached.complete_batch(&batch).iter().all(Result::is_ok));
    }
    assert_eq!(
        cached.counters().errors(),
        0,
        "{:?}",
        cached.counters().last_error()
    );
}

/// Run the test `child` of this binary in `n` processes at once, the cache path in
/// `path_var` and tag `{tag_prefix}{k}` in `HRL_TEST_TAG`; panics naming `what` with a
/// failed child's output.
fn run_children(child: &str, path_var: &str, path: &Path, tag_prefix: &str, n: usize, what: &str) {
    let children: Vec<_> = (0..n)
        .map(|k| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", child, "--test-threads", "1"])
                .env(path_var, path)
                .env("HRL_TEST_TAG", format!("{tag_prefix}{k}"))
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(
            o.status.success(),
            "{what}:\n{}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
}

/// Runs in child processes (see `processes_opening_a_new_cache_together_all_succeed`).
#[test]
fn child_cache_opener() {
    let (Ok(path), Ok(tag)) = (
        std::env::var("HRL_TEST_NEW_CACHE"),
        std::env::var("HRL_TEST_TAG"),
    ) else {
        return;
    };
    let cached = CachedExecutor::new(sim("m"), open(Path::new(&path)));
    assert!(
        cached
            .complete_batch(&[chat(&tag)])
            .iter()
            .all(Result::is_ok)
    );
    assert_eq!(cached.counters().errors(), 0);
}

/// Processes that open a cache file that does not exist yet, all at once (two `hrl
/// run`s started together on a fresh cache): each one opens it and writes. SQLite
/// answers "database is locked" at once to the losers of the race to switch a new
/// database to WAL ("not a usable SQLite database: database is locked"; before the open
/// retried it, this test failed in its first round, and `several_processes_share_one_cache`
/// failed once in CI).
#[test]
fn processes_opening_a_new_cache_together_all_succeed() {
    for round in 0..25 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.sqlite");
        run_children(
            "child_cache_opener",
            "HRL_TEST_NEW_CACHE",
            &path,
            &format!("r{round}-p"),
            6,
            &format!("round {round}: a process failed to open or write the new cache"),
        );
        assert_eq!(open(&path).stats().unwrap().entries, 6, "round {round}");
    }
}

#[test]
fn several_processes_share_one_cache() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.sqlite");
    run_children(
        "child_cache_writer",
        "HRL_TEST_CACHE",
        &path,
        "p",
        3,
        "a writer process failed",
    );
    let cache = open(&path);
    assert_eq!(cache.stats().unwrap().entries, 3 * 40 * 5 + 5);
    let counting = CountingExecutor::new(sim("m"));
    let cached = CachedExecutor::new(counting.clone(), cache);
    let out = cached.complete_batch(&[chat("p2-39-4"), chat("common-0")]);
    assert!(out.iter().all(|r| r.as_ref().unwrap().cached));
    assert_eq!(counting.calls(), 0);
}

/// The real model behind the cache: a warm cache makes zero llama.cpp calls.
#[cfg(feature = "llama")]
#[test]
fn a_warm_cache_makes_zero_real_model_calls() {
    use harness_rl::executor::llama::{LlamaExecutor, LlamaOptions};
    use harness_rl::models;

    let model = models::known(models::DEFAULT_MODEL).expect("default model is known");
    assert!(
        model.is_installed(),
        "{} is not installed: run `hrl models fetch {}` (make test does)",
        model.name,
        model.name
    );
    let mut opts = LlamaOptions::for_model(model.name).unwrap();
    opts.n_threads = 1;
    opts.n_ctx_per_seq = 512;
    opts.n_parallel = 4;
    let real = CountingExecutor::new(Arc::new(LlamaExecutor::load(opts).unwrap()));
    let dir = tempfile::tempdir().unwrap();
    let cached = CachedExecutor::new(real.clone(), open(&dir.path().join("c.sqlite")));
    let reqs: Vec<Request> = ["Name a fruit.", "What is 4 plus 4?", "Say hi."]
        .iter()
        .map(|q| {
            let mut r = chat(q);
            r.sampling.max_tokens = 16;
            r
        })
        .chain([sampled("Tell me a number.", 11)].map(|mut r| {
            r.sampling.max_tokens = 16;
            r
        }))
        .collect();
    let cold: Vec<Completion> = cached
        .complete_batch(&reqs)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(real.calls(), 4);
    let warm: Vec<Completion> = cached
        .complete_batch(&reqs)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(real.calls(), 4, "the warm run called the model");
    for (c, w) in cold.iter().zip(&warm) {
        assert!(w.cached && !c.cached);
        assert_eq!(w.text, c.text);
        assert_eq!(w.usage, c.usage);
    }
}

fn hrl(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hrl"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn cli_cache_stats_and_clear() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    let p = path.to_str().unwrap();
    let (code, out, _) = hrl(&["cache", "stats", "--cache", p, "--json"]);
    assert_eq!(code, 0);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&out).unwrap()["entries"],
        0
    );
    assert!(!path.exists(), "stats must not create a cache");

    let cache = open(&path);
    CachedExecutor::new(sim("model-a"), cache.clone()).complete_batch(&[chat("1"), chat("2")]);
    CachedExecutor::new(sim("model-b"), cache.clone())
        .complete(&chat("1"))
        .unwrap();
    let (code, out, _) = hrl(&["cache", "stats", "--cache", p, "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["entries"], 3);
    assert_eq!(v["models"][0]["model_id"], "model-a");
    assert_eq!(v["models"][0]["entries"], 2);

    let (code, _, err) = hrl(&["cache", "clear", "--cache", p]);
    assert_eq!(code, 2, "clear needs --model or --all: {err}");
    let (code, out, _) = hrl(&["cache", "clear", "--cache", p, "--model", "model-a"]);
    assert_eq!(code, 0);
    assert!(out.contains("deleted 2 entries"), "{out}");
    let (code, out, _) = hrl(&["cache", "clear", "--cache", p, "--all"]);
    assert_eq!(code, 0);
    assert!(out.contains("deleted 1 entries"), "{out}");
    assert_eq!(cache.stats().unwrap().entries, 0);

    let garbage = dir.path().join("garbage");
    std::fs::write(&garbage, b"not sqlite at all, ".repeat(50)).unwrap();
    let (code, _, err) = hrl(&["cache", "stats", "--cache", garbage.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("garbage") && err.contains("not a usable SQLite database"),
        "{err}"
    );
}

/// Opening a cache that exists writes nothing, so it succeeds while another process
/// holds the write lock (a run writing completions) instead of waiting for it. Before,
/// every open inserted the format row: a poller reopening the cache competed with the
/// writer for the lock (a flaky kill-and-resume test showed it).
#[test]
fn opening_an_existing_cache_does_not_wait_for_a_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    drop(open(&path));
    let writer = rusqlite::Connection::open(&path).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE").unwrap();
    let start = Instant::now();
    let reader = CompletionCache::open(&path).expect("open while a writer holds the lock");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "open waited {:?} for the writer",
        start.elapsed()
    );
    assert_eq!(reader.stats().unwrap().entries, 0);
    writer.execute_batch("COMMIT").unwrap();
}
