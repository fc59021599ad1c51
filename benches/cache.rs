//! Completion-cache costs: key derivation, lookups (hit and miss) and inserts on a
//! populated SQLite file, and a fully warm `CachedExecutor` batch. Run with
//! `cargo bench --no-default-features --bench cache`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use harness_rl::executor::cache::{CacheKey, CachedExecutor, CompletionCache};
use harness_rl::executor::{
    Completion, Executor, ExecutorError, FinishReason, Message, Prompt, Request, Sampling, Timings,
    Usage,
};

const MODEL: &str = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

/// A harness-sized request: ~1.5 KB of system prompt plus a question.
fn request(i: usize) -> Request {
    let system = "You solve puzzles step by step. Verify before answering. ".repeat(26);
    Request {
        prompt: Prompt::Chat(vec![
            Message::system(system),
            Message::user(format!(
                "Question {i}: how many primes are below {}?",
                1000 + i
            )),
        ]),
        sampling: Sampling::default(),
    }
}

fn completion(i: usize) -> Completion {
    Completion {
        text: format!("Let me count. ... <answer>{}</answer>", i % 97).repeat(8),
        finish_reason: FinishReason::Stop,
        usage: Usage {
            prompt_tokens: 420,
            completion_tokens: 180,
            cached_prompt_tokens: 380,
        },
        timings: Timings {
            prompt_ms: 30.0,
            generation_ms: 900.0,
            total_ms: 930.0,
        },
        cached: false,
    }
}

/// Never called in the warm benchmark; answers if it is.
struct SimulatedExecutor;

impl Executor for SimulatedExecutor {
    fn model_id(&self) -> &str {
        MODEL
    }
    fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>> {
        (0..requests.len()).map(|i| Ok(completion(i))).collect()
    }
}

fn populated(dir: &std::path::Path, n: usize) -> Arc<CompletionCache> {
    let cache = Arc::new(CompletionCache::open(dir.join("bench.sqlite")).unwrap());
    let reqs: Vec<Request> = (0..n).map(request).collect();
    let comps: Vec<Completion> = (0..n).map(completion).collect();
    for chunk in (0..n).collect::<Vec<_>>().chunks(1000) {
        let entries: Vec<_> = chunk
            .iter()
            .map(|&i| (CacheKey::new(MODEL, &reqs[i]), &reqs[i], &comps[i]))
            .collect();
        cache.put_many(MODEL, &entries).unwrap();
    }
    cache
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    const N: usize = 20_000;
    const BATCH: usize = 64;
    let cache = populated(dir.path(), N);
    let reqs: Vec<Request> = (0..N).map(request).collect();

    c.bench_function("cache/key_derivation", |b| {
        b.iter(|| CacheKey::new(black_box(MODEL), black_box(&reqs[7])))
    });

    let mut g = c.benchmark_group("cache");
    g.throughput(Throughput::Elements(BATCH as u64));
    let hit_keys: Vec<CacheKey> = (0..BATCH)
        .map(|i| CacheKey::new(MODEL, &reqs[i * 301 % N]))
        .collect();
    g.bench_function("get_many_hit_64_of_20k", |b| {
        b.iter(|| cache.get_many(black_box(&hit_keys)).unwrap())
    });
    let miss_keys: Vec<CacheKey> = (0..BATCH)
        .map(|i| CacheKey::new("other-model", &reqs[i]))
        .collect();
    g.bench_function("get_many_miss_64_of_20k", |b| {
        b.iter(|| cache.get_many(black_box(&miss_keys)).unwrap())
    });
    let mut next = N;
    g.bench_function("put_many_64", |b| {
        b.iter_batched(
            || {
                let reqs: Vec<Request> = (next..next + BATCH).map(request).collect();
                next += BATCH;
                let comps: Vec<Completion> = (0..BATCH).map(completion).collect();
                (reqs, comps)
            },
            |(reqs, comps)| {
                let entries: Vec<_> = reqs
                    .iter()
                    .zip(&comps)
                    .map(|(r, c)| (CacheKey::new(MODEL, r), r, c))
                    .collect();
                cache.put_many(MODEL, &entries).unwrap()
            },
            BatchSize::SmallInput,
        )
    });
    let warm = CachedExecutor::new(Arc::new(SimulatedExecutor), cache.clone());
    let batch: Vec<Request> = (0..BATCH).map(|i| reqs[i * 7].clone()).collect();
    g.bench_function("cached_executor_warm_batch_64", |b| {
        b.iter(|| {
            let out = warm.complete_batch(black_box(&batch));
            assert!(out.iter().all(|r| r.as_ref().is_ok_and(|c| c.cached)));
            out
        })
    });
    // A cold batch: 64 new requests, an executor that answers instantly, so the
    // figure is the cache's whole cost for a batch of misses (lookups, and storing
    // the completions).
    let cold = CachedExecutor::new(Arc::new(SimulatedExecutor), cache.clone());
    let mut fresh = 2 * N;
    g.bench_function("cached_executor_cold_batch_64", |b| {
        b.iter_batched(
            || {
                let reqs: Vec<Request> = (fresh..fresh + BATCH).map(request).collect();
                fresh += BATCH;
                reqs
            },
            |reqs| {
                let out = cold.complete_batch(black_box(&reqs));
                assert!(out.iter().all(|r| r.as_ref().is_ok_and(|c| !c.cached)));
                out
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
