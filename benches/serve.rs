//! HTTP overhead of `hrl serve` + `OpenAiExecutor` against calling the executor
//! in-process, in the same run: first with an executor that costs nothing
//! (`SimulatedExecutor`, so the figure is the pure transport + JSON + batching cost per
//! request), then, with the `llama` feature, with SmolLM2-135M (greedy, 16 tokens);
//! and the throughput of 64 concurrent clients (512 requests, instant executor).
//! Run with `cargo bench --bench serve` (or `--no-default-features` for the first part).

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use harness_rl::executor::openai::{OpenAiConfig, OpenAiExecutor};
use harness_rl::executor::{
    Completion, Executor, ExecutorError, FinishReason, Message, Prompt, Request, Sampling, Timings,
    Usage,
};
use harness_rl::serve::{ServeConfig, Server};

/// Answers instantly: isolates the cost of the HTTP path.
struct SimulatedExecutor;

impl Executor for SimulatedExecutor {
    fn model_id(&self) -> &str {
        "simulated"
    }
    fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>> {
        requests
            .iter()
            .map(|_| {
                Ok(Completion {
                    text: "The answer is <answer>42</answer>.".into(),
                    finish_reason: FinishReason::Stop,
                    usage: Usage {
                        prompt_tokens: 40,
                        completion_tokens: 12,
                        cached_prompt_tokens: 0,
                    },
                    timings: Timings::default(),
                    cached: false,
                })
            })
            .collect()
    }
}

fn requests(n: usize, max_tokens: u32) -> Vec<Request> {
    (0..n)
        .map(|i| Request {
            prompt: Prompt::Chat(vec![
                Message::system("Answer briefly."),
                Message::user(format!("What is {i} plus {}?", 2 * i + 1)),
            ]),
            sampling: Sampling {
                max_tokens,
                ..Sampling::default()
            },
        })
        .collect()
}

/// A server and a client with `clients` connections.
fn serve(exec: Arc<dyn Executor>, name: &str, clients: usize) -> (Server, OpenAiExecutor) {
    let mut cfg = ServeConfig::new(name);
    cfg.port = 0;
    cfg.batch_window = Duration::from_millis(1);
    let server = Server::start(exec, cfg).unwrap();
    let mut c = OpenAiConfig::new(server.base_url(), name);
    c.api_key = None;
    c.max_connections = clients;
    let client = OpenAiExecutor::new(c).unwrap();
    (server, client)
}

/// 64 concurrent clients (the client's 64 keep-alive connections, a request after
/// another on each): the figure hyper + tokio was measured against (issue 35; see
/// docs/PERFORMANCE.md).
fn clients_64(c: &mut Criterion, group: &str, exec: Arc<dyn Executor>, reqs: &[Request]) {
    let (_server, client) = serve(exec, "m", 64);
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(reqs.len() as u64));
    g.bench_function("over_http", |b| {
        b.iter(|| {
            let out = client.complete_batch(black_box(reqs));
            assert!(out.iter().all(Result::is_ok));
            out
        })
    });
    g.finish();
}

fn side_by_side(c: &mut Criterion, group: &str, exec: Arc<dyn Executor>, reqs: &[Request]) {
    let (_server, client) = serve(exec.clone(), "m", 8);
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(reqs.len() as u64));
    g.bench_function("in_process", |b| {
        b.iter(|| exec.complete_batch(black_box(reqs)))
    });
    g.bench_function("over_http", |b| {
        b.iter(|| {
            let out = client.complete_batch(black_box(reqs));
            assert!(out.iter().all(Result::is_ok));
            out
        })
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    clients_64(
        c,
        "serve_simulated_64clients",
        Arc::new(SimulatedExecutor),
        &requests(512, 16),
    );
    side_by_side(
        c,
        "serve_simulated_1",
        Arc::new(SimulatedExecutor),
        &requests(1, 16),
    );
    side_by_side(
        c,
        "serve_simulated_8",
        Arc::new(SimulatedExecutor),
        &requests(8, 16),
    );
    #[cfg(feature = "llama")]
    {
        use harness_rl::executor::llama::{LlamaExecutor, LlamaOptions};
        match LlamaOptions::for_model(harness_rl::models::DEFAULT_MODEL) {
            Ok(mut o) => {
                o.n_threads = 1;
                o.n_ctx_per_seq = 512;
                o.n_parallel = 8;
                let exec: Arc<dyn Executor> = Arc::new(LlamaExecutor::load(o).unwrap());
                side_by_side(c, "serve_smollm2_8x16tok", exec, &requests(8, 16));
            }
            Err(e) => eprintln!(
                "skipping the SmolLM2 comparison ({e}); install it with `hrl models fetch smollm2-135m`"
            ),
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
