//! The llama.cpp executor: a GGUF model run in-process through `llama-cpp-2`.
//!
//! One worker thread owns the model and one llama.cpp context with `n_parallel`
//! sequence slots (one KV stream each by default, see [`LlamaOptions::kv_unified`]). Callers (any number of threads) send batches
//! of requests to it; the worker runs **continuous batching**: every decode step packs
//! one token for each generating sequence plus prompt chunks of newly admitted ones,
//! sequences finish independently (end-of-generation, stop string, max tokens, context),
//! their KV is cleared and the freed slot is given to the next waiting request at once,
//! whichever caller sent it.
//!
//! **Shared-prefix reuse**: when a request is admitted, its prompt tokens are compared
//! with the prompts of the live sequences; if one shares a prefix, the prefix's KV is
//! copied (`llama_memory_seq_cp`: a buffer copy between streams, or in a unified cache
//! only another sequence id on the same cells) and only the suffix is computed. A request that shares a
//! prefix with a sequence whose prompt is still being computed waits for those
//! positions instead of computing them again. Usage reports the reused tokens as
//! `cached_prompt_tokens`.
//!
//! **Prefix cache**: a finished sequence's prompt KV stays in its slot (whole blocks
//! only) until the slot is given to another request, so the prefix that every
//! instance of a harness shares (system prompt, examples) is computed once per run,
//! not once per batch of live sequences. A new request takes the free slot whose kept
//! prefix matches it best (reused in place), or copies the best prefix kept by another
//! free slot or held by a live sequence.
//!
//! **Blocks** ([`LlamaOptions::prefill_block`], default 64): prompts are computed in
//! blocks that start at multiples of the block size, each as one chunk, and prefixes
//! are reused in whole blocks only. llama.cpp's CPU kernels sum a chunk's rows in an
//! order that depends on the chunk, so a suffix computed separately from its prefix
//! (unaligned reuse) can flip a near-tied greedy token; with blocks a reused block's KV
//! is bit-identical to a computed one, and reuse never changes an output.
//!
//! Chat prompts are rendered with the GGUF's chat template (llama.cpp's built-in
//! template matcher), falling back to ChatML when the file has none or it is not
//! recognised; raw prompts are tokenised as they are.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaLoraAdapter, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;

use super::{
    Completion, Executor, ExecutorError, FinishReason, OnDone, Prompt, Request, Timings, Usage,
};
use crate::models;

pub mod bench;

/// Settings of a [`LlamaExecutor`].
#[derive(Debug, Clone, PartialEq)]
pub struct LlamaOptions {
    /// The GGUF file (see [`models::resolve`] for `NAME|PATH`).
    pub model: PathBuf,
    /// Sequences decoded together (slots). Requests beyond this wait for a free slot.
    pub n_parallel: u32,
    /// Context tokens per sequence (prompt + generation). The KV cache holds
    /// `n_parallel * n_ctx_per_seq` cells.
    pub n_ctx_per_seq: u32,
    /// Largest number of tokens per decode call.
    pub n_batch: u32,
    /// CPU threads; 0 = all available cores.
    pub n_threads: u32,
    /// Layers offloaded to the GPU (needs the `cuda` feature); 0 = CPU only.
    pub gpu_layers: u32,
    /// Optional LoRA adapter (GGUF) applied on top of the base model.
    pub lora: Option<PathBuf>,
    pub lora_scale: f32,
    /// Reuse the KV of prompt prefixes shared with live sequences.
    pub prefix_reuse: bool,
    /// One KV buffer shared by all sequences: a shared prefix is then stored once (its
    /// cells carry several sequence ids) instead of copied, but attention runs over the
    /// whole buffer, which changes floating-point sums with the batch's make-up and
    /// flips greedy tokens (measured: docs/PERFORMANCE.md). Default `false`: one stream
    /// of `n_ctx_per_seq` cells per sequence, and batched greedy output equals single
    /// runs.
    pub kv_unified: bool,
    /// Shortest shared prefix (tokens) worth copying.
    pub min_shared_prefix: u32,
    /// Keep the KV of a finished sequence's prompt in its slot until the slot is
    /// needed, so a later request with the same prefix (every instance of a harness
    /// shares its system prompt and examples) reuses it instead of computing it: a
    /// prefix cache of `n_parallel` entries that outlives the sequences.
    pub prefix_cache: bool,
    /// Prompts are computed in blocks of this many positions, each block in its own
    /// decode chunk starting at a multiple of the block size, and prefixes are reused
    /// in whole blocks only. A block's KV then does not depend on whether it was
    /// computed, copied from a live sequence or kept from a finished one, so greedy
    /// outputs with prefix reuse equal single runs. 0 = chunks as large as the batch
    /// allows and reuse at any length (faster prefill, batch-dependent outputs).
    pub prefill_block: u32,
    /// A known sha256 of the model file (skips hashing it at load). Known models
    /// installed by `hrl models fetch` were verified when installed and use their
    /// recorded hash.
    pub model_sha256: Option<String>,
}

impl Default for LlamaOptions {
    fn default() -> Self {
        LlamaOptions {
            model: PathBuf::new(),
            n_parallel: 8,
            n_ctx_per_seq: 2048,
            n_batch: 512,
            n_threads: 0,
            gpu_layers: 0,
            lora: None,
            lora_scale: 1.0,
            prefix_reuse: true,
            kv_unified: false,
            min_shared_prefix: 4,
            prefix_cache: true,
            prefill_block: 64,
            model_sha256: None,
        }
    }
}

impl LlamaOptions {
    /// Options for `--model NAME|PATH`: resolves and validates the file.
    pub fn for_model(spec: &str) -> Result<Self, models::ModelError> {
        let resolved = models::resolve(spec)?;
        Ok(LlamaOptions {
            model: resolved.path,
            model_sha256: resolved.known.map(|k| k.sha256.to_string()),
            ..LlamaOptions::default()
        })
    }
}

/// What was loaded.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LlamaModelInfo {
    pub path: PathBuf,
    pub sha256: String,
    pub architecture: Option<String>,
    pub n_params: u64,
    pub n_ctx_train: u32,
    /// Total KV cells of the context.
    pub n_ctx: u32,
    pub n_parallel: u32,
    pub n_threads: u32,
    /// `gguf` (the file's own template) or `chatml` (fallback).
    pub chat_template: String,
    pub lora: Option<PathBuf>,
}

/// Cumulative counters of an executor (for prefix-reuse and throughput reports).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct LlamaStats {
    pub requests: u64,
    /// Prompt tokens whose KV was computed by a decode.
    pub prompt_tokens_computed: u64,
    /// Prompt tokens whose KV was copied from a shared prefix (a live sequence or the
    /// prefix cache) or kept in place from the slot's previous sequence.
    pub prompt_tokens_reused: u64,
    /// Of those, tokens that came from the prefix cache (finished sequences).
    pub prompt_tokens_from_cache: u64,
    pub tokens_generated: u64,
    pub decode_calls: u64,
    /// Largest number of sequences decoded in one step.
    pub max_concurrent: u64,
}

/// Per-call switches that are not part of a [`Request`] (benchmarks only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchOptions {
    /// Keep generating through end-of-generation tokens until `max_tokens` (as
    /// `llama-batched-bench` does), so throughput is measured at a fixed length.
    pub ignore_eos: bool,
}

type Reply = Sender<(usize, Result<Completion, ExecutorError>)>;

struct Job {
    requests: Vec<Request>,
    options: BatchOptions,
    reply: Reply,
    submitted: Instant,
}

/// llama.cpp in-process executor. Cheap to share between threads (`&self` methods);
/// all calls feed the same continuous batch.
pub struct LlamaExecutor {
    tx: Option<Sender<Job>>,
    model: Arc<LlamaModel>,
    template: LlamaChatTemplate,
    worker: Option<JoinHandle<()>>,
    info: LlamaModelInfo,
    stats: Arc<Mutex<LlamaStats>>,
}

static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();

/// The process-wide llama.cpp backend (initialised once; llama.cpp's logs are silenced
/// unless `HRL_LLAMA_LOG=1`).
fn backend() -> Result<&'static LlamaBackend, ExecutorError> {
    BACKEND
        .get_or_init(|| {
            let mut b = LlamaBackend::init().map_err(|e| e.to_string())?;
            if std::env::var("HRL_LLAMA_LOG").as_deref() != Ok("1") {
                b.void_logs();
            }
            Ok(b)
        })
        .as_ref()
        .map_err(|e| ExecutorError::Model(format!("llama.cpp backend: {e}")))
}

fn model_err(what: &str, path: &Path, e: impl std::fmt::Display) -> ExecutorError {
    ExecutorError::Model(format!("{what} {}: {e}", path.display()))
}

impl LlamaExecutor {
    /// Validate the GGUF, load the model and start the worker.
    pub fn load(options: LlamaOptions) -> Result<Self, ExecutorError> {
        if options.prefill_block > options.n_batch.max(options.n_parallel) {
            return Err(ExecutorError::InvalidRequest(format!(
                "prefill_block {} is larger than n_batch {}",
                options.prefill_block, options.n_batch
            )));
        }
        if options.n_parallel == 0 || options.n_ctx_per_seq < 8 || options.n_batch == 0 {
            return Err(ExecutorError::InvalidRequest(format!(
                "n_parallel must be >= 1, n_ctx_per_seq >= 8 and n_batch >= 1 (got {}, {}, {})",
                options.n_parallel, options.n_ctx_per_seq, options.n_batch
            )));
        }
        let gguf =
            models::gguf::check(&options.model).map_err(|e| ExecutorError::Model(e.to_string()))?;
        if let Some(lora) = &options.lora {
            models::gguf::check(lora).map_err(|e| ExecutorError::Model(format!("LoRA: {e}")))?;
        }
        let sha256 = match &options.model_sha256 {
            Some(h) => h.clone(),
            None => models::sha256_file(&options.model)
                .map_err(|e| ExecutorError::Model(e.to_string()))?,
        };
        let backend = backend()?;
        let params = LlamaModelParams::default().with_n_gpu_layers(options.gpu_layers);
        let mut model = LlamaModel::load_from_file(backend, &options.model, &params)
            .map_err(|e| model_err("loading", &options.model, e))?;
        let adapter = match &options.lora {
            Some(p) => Some(
                model
                    .lora_adapter_init(p)
                    .map_err(|e| model_err("loading LoRA adapter", p, e))?,
            ),
            None => None,
        };
        let (template, template_name) = match model.chat_template(None) {
            Ok(t) => (t, "gguf"),
            Err(_) => (chatml(), "chatml"),
        };
        let n_threads = if options.n_threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
        } else {
            options.n_threads
        };
        let info = LlamaModelInfo {
            path: options.model.clone(),
            sha256,
            architecture: gguf.architecture.clone(),
            n_params: model.n_params(),
            n_ctx_train: model.n_ctx_train(),
            n_ctx: options.n_parallel * options.n_ctx_per_seq,
            n_parallel: options.n_parallel,
            n_threads,
            chat_template: template_name.to_string(),
            lora: options.lora.clone(),
        };
        let stats = Arc::new(Mutex::new(LlamaStats::default()));
        let (tx, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) =
            mpsc::channel::<Result<(LlamaChatTemplate, String), ExecutorError>>();
        let worker_stats = Arc::clone(&stats);
        let opts = options.clone();
        let model = Arc::new(model);
        let worker_model = Arc::clone(&model);
        let worker_template = template.clone();
        let worker = std::thread::Builder::new()
            .name("hrl-llama".into())
            .spawn(move || {
                worker_main(
                    worker_model,
                    adapter,
                    worker_template,
                    opts,
                    n_threads,
                    rx,
                    ready_tx,
                    worker_stats,
                )
            })
            .map_err(|e| ExecutorError::Model(format!("spawning the llama.cpp worker: {e}")))?;
        let (template, template_name) = match ready_rx.recv() {
            Ok(Ok(t)) => t,
            Ok(Err(e)) => {
                let _ = worker.join();
                return Err(e);
            }
            Err(_) => {
                let _ = worker.join();
                return Err(ExecutorError::Model(
                    "the llama.cpp worker stopped while starting".into(),
                ));
            }
        };
        Ok(LlamaExecutor {
            tx: Some(tx),
            model,
            template,
            worker: Some(worker),
            info: LlamaModelInfo {
                chat_template: template_name,
                ..info
            },
            stats,
        })
    }

    pub fn info(&self) -> &LlamaModelInfo {
        &self.info
    }

    /// The prompt tokens a request would be given (chat template applied).
    pub fn tokenize(&self, prompt: &Prompt) -> Result<Vec<i32>, ExecutorError> {
        Ok(tokenize(&self.model, &self.template, prompt)?
            .into_iter()
            .map(|t| t.0)
            .collect())
    }

    /// The rendered text of a chat prompt (what is tokenised).
    pub fn render(&self, prompt: &Prompt) -> Result<String, ExecutorError> {
        render(&self.model, &self.template, prompt)
    }

    pub fn stats(&self) -> LlamaStats {
        *self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// [`Executor::complete_batch`] with benchmark switches.
    pub fn complete_batch_with(
        &self,
        requests: &[Request],
        options: BatchOptions,
    ) -> Vec<Result<Completion, ExecutorError>> {
        self.run_batch(requests, options, &|_, _| {})
    }

    /// Submit one job and collect its results, reporting each as its sequence ends.
    fn run_batch(
        &self,
        requests: &[Request],
        options: BatchOptions,
        on_done: &OnDone<'_>,
    ) -> Vec<Result<Completion, ExecutorError>> {
        let n = requests.len();
        if n == 0 {
            return Vec::new();
        }
        let (reply, results) = mpsc::channel();
        let job = Job {
            requests: requests.to_vec(),
            options,
            reply,
            submitted: Instant::now(),
        };
        let dead = || ExecutorError::Model("the llama.cpp worker has stopped".into());
        let sent = self.tx.as_ref().is_some_and(|tx| tx.send(job).is_ok());
        let mut out: Vec<Option<Result<Completion, ExecutorError>>> =
            (0..n).map(|_| None).collect();
        if sent {
            for _ in 0..n {
                match results.recv() {
                    Ok((i, r)) => {
                        on_done(i, &r);
                        out[i] = Some(r);
                    }
                    Err(_) => break,
                }
            }
        }
        out.into_iter()
            .enumerate()
            .map(|(i, r)| {
                r.unwrap_or_else(|| {
                    let r = Err(dead());
                    on_done(i, &r);
                    r
                })
            })
            .collect()
    }
}

impl Drop for LlamaExecutor {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

impl Executor for LlamaExecutor {
    fn model_id(&self) -> &str {
        &self.info.sha256
    }
    fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>> {
        self.complete_batch_with(requests, BatchOptions::default())
    }
    /// Each request is reported as soon as its sequence finishes.
    fn complete_batch_progress(
        &self,
        requests: &[Request],
        on_done: &OnDone<'_>,
    ) -> Vec<Result<Completion, ExecutorError>> {
        self.run_batch(requests, BatchOptions::default(), on_done)
    }
}

fn chatml() -> LlamaChatTemplate {
    LlamaChatTemplate::new("chatml").expect("no NUL in a literal")
}

/// llama.cpp's own description of its build (`llama_print_system_info`): the CPU
/// features its kernels were compiled for (`AVX2 = 1 | ...`), OpenMP, repacking.
pub fn system_info() -> String {
    // SAFETY: returns a pointer to a static NUL-terminated string owned by llama.cpp.
    let p = unsafe { llama_cpp_sys_2::llama_print_system_info() };
    if p.is_null() {
        return String::new();
    }
    // SAFETY: non-null, NUL-terminated, static.
    unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned()
}

/// The enabled entries of [`system_info`] (`AVX2`, `FMA`, `OPENMP`, ...), sorted.
pub fn build_features() -> Vec<String> {
    let mut v: Vec<String> = system_info()
        .split('|')
        .filter_map(|part| {
            let (k, val) = part.split_once('=')?;
            let k = k.trim().rsplit(':').next()?.trim();
            (val.trim() == "1" && !k.is_empty()).then(|| k.to_string())
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Fold a 64-bit seed into the 32-bit seed llama.cpp's sampler takes.
pub fn sampler_seed(seed: u64) -> u32 {
    ((seed >> 32) ^ (seed & 0xFFFF_FFFF)) as u32
}

/// Where a slot is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for `donor`'s sequence to have computed `len` prompt positions.
    WaitPrefix { donor: usize, len: usize },
    /// Computing prompt tokens from `next`.
    Prefill { next: usize },
    /// Generating; `token` is the last sampled token, not yet decoded.
    Generate { token: LlamaToken },
}

struct Slot {
    seq: i32,
    reply: Reply,
    index: usize,
    prompt: Vec<LlamaToken>,
    /// Prompt positions whose KV is present in this sequence.
    computed: usize,
    cached: usize,
    phase: Phase,
    sampler: LlamaSampler,
    max_tokens: u32,
    stop: Vec<String>,
    ignore_eos: bool,
    out: Vec<u8>,
    n_generated: u32,
    /// Position in the batch of the token whose logits this slot samples next.
    logits_at: Option<i32>,
    submitted: Instant,
    admitted: Instant,
    first_token: Option<Instant>,
    /// Prompt tokens taken from the prefix cache.
    from_cache: usize,
}

struct Pending {
    request: Request,
    index: usize,
    reply: Reply,
    options: BatchOptions,
    submitted: Instant,
}

struct Worker<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    template: LlamaChatTemplate,
    opts: LlamaOptions,
    slots: Vec<Option<Slot>>,
    /// Per slot, when the slot is free: the prompt tokens of its last sequence whose
    /// KV is still in the slot's stream (the prefix cache; whole blocks only).
    retained: Vec<Vec<LlamaToken>>,
    stats: Arc<Mutex<LlamaStats>>,
}

#[allow(clippy::too_many_arguments)]
fn worker_main(
    model: Arc<LlamaModel>,
    mut adapter: Option<LlamaLoraAdapter>,
    template: LlamaChatTemplate,
    opts: LlamaOptions,
    n_threads: u32,
    rx: Receiver<Job>,
    ready: Sender<Result<(LlamaChatTemplate, String), ExecutorError>>,
    stats: Arc<Mutex<LlamaStats>>,
) {
    let backend = match backend() {
        Ok(b) => b,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let n_seq = opts.n_parallel;
    let n_ctx = n_seq * opts.n_ctx_per_seq;
    let n_batch = opts.n_batch.max(n_seq);
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(n_ctx))
        .with_n_batch(n_batch)
        .with_n_ubatch(n_batch)
        .with_n_seq_max(n_seq)
        .with_n_threads(n_threads as i32)
        .with_n_threads_batch(n_threads as i32)
        .with_kv_unified(opts.kv_unified);
    let mut ctx = match model.new_context(backend, params) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(model_err("creating a context for", &opts.model, e)));
            return;
        }
    };
    if let Some(a) = adapter.as_mut()
        && let Err(e) = ctx.lora_adapter_set(a, opts.lora_scale)
    {
        let _ = ready.send(Err(ExecutorError::Model(format!(
            "applying the LoRA adapter: {e}"
        ))));
        return;
    }
    // Check the template renders; otherwise fall back to ChatML.
    let probe = [LlamaChatMessage::new("user".into(), "hi".into()).expect("no NUL")];
    let (template, name) = if model.apply_chat_template(&template, &probe, true).is_ok() {
        let name = if template.to_str().is_ok_and(|t| t == "chatml") {
            "chatml"
        } else {
            "gguf"
        };
        (template, name)
    } else {
        (chatml(), "chatml")
    };
    let _ = ready.send(Ok((template.clone(), name.to_string())));
    let mut w = Worker {
        model: &model,
        ctx,
        template,
        slots: (0..opts.n_parallel).map(|_| None).collect(),
        retained: (0..opts.n_parallel).map(|_| Vec::new()).collect(),
        opts,
        stats,
    };
    w.run(rx);
    // The context (in `w`) goes before the model; llama.cpp frees LoRA adapters with
    // their model.
    drop(w);
}

impl Worker<'_> {
    fn run(&mut self, rx: Receiver<Job>) {
        let mut pending: std::collections::VecDeque<Pending> = Default::default();
        let mut batch = LlamaBatch::new(self.opts.n_batch.max(self.opts.n_parallel) as usize, 1);
        loop {
            // Take new work: block only when nothing is running.
            let idle = pending.is_empty() && self.slots.iter().all(Option::is_none);
            let mut next = if idle {
                match rx.recv() {
                    Ok(job) => Some(job),
                    Err(_) => return,
                }
            } else {
                rx.try_recv().ok()
            };
            while let Some(job) = next {
                for (index, request) in job.requests.into_iter().enumerate() {
                    pending.push_back(Pending {
                        request,
                        index,
                        reply: job.reply.clone(),
                        options: job.options,
                        submitted: job.submitted,
                    });
                }
                next = rx.try_recv().ok();
            }
            // Admit into free slots.
            while self.slots.iter().any(Option::is_none) {
                let Some(p) = pending.pop_front() else { break };
                match self.admit(p) {
                    Ok(()) => {}
                    Err((reply, index, e)) => {
                        let _ = reply.send((index, Err(e)));
                    }
                }
            }
            self.step(&mut batch);
        }
    }

    fn sampler(&self, r: &Request) -> Result<LlamaSampler, ExecutorError> {
        let s = &r.sampling;
        let mut chain = Vec::new();
        if let Some(g) = &s.grammar {
            chain.push(LlamaSampler::grammar(self.model, g, "root").map_err(|e| {
                ExecutorError::InvalidRequest(format!("GBNF grammar does not parse: {e}"))
            })?);
        }
        if s.is_greedy() {
            chain.push(LlamaSampler::greedy());
        } else {
            if s.top_k > 0 {
                chain.push(LlamaSampler::top_k(s.top_k.min(i32::MAX as u32) as i32));
            }
            if s.top_p < 1.0 {
                chain.push(LlamaSampler::top_p(s.top_p, 1));
            }
            if s.min_p > 0.0 {
                chain.push(LlamaSampler::min_p(s.min_p, 1));
            }
            chain.push(LlamaSampler::temp(s.temperature));
            chain.push(LlamaSampler::dist(sampler_seed(s.seed)));
        }
        Ok(LlamaSampler::chain_simple(chain))
    }

    #[allow(clippy::result_large_err)]
    fn admit(&mut self, p: Pending) -> Result<(), (Reply, usize, ExecutorError)> {
        let fail = |e| Err((p.reply.clone(), p.index, e));
        let s = &p.request.sampling;
        if s.max_tokens == 0 {
            return fail(ExecutorError::InvalidRequest(
                "max_tokens must be >= 1".into(),
            ));
        }
        if !(s.temperature.is_finite()
            && (0.0..=1.0).contains(&s.top_p)
            && (0.0..=1.0).contains(&s.min_p))
        {
            return fail(ExecutorError::InvalidRequest(format!(
                "sampling out of range: temperature {}, top_p {}, min_p {}",
                s.temperature, s.top_p, s.min_p
            )));
        }
        let prompt = match tokenize(self.model, &self.template, &p.request.prompt) {
            Ok(t) => t,
            Err(e) => return fail(e),
        };
        if prompt.is_empty() {
            return fail(ExecutorError::InvalidRequest("the prompt is empty".into()));
        }
        let limit = self.opts.n_ctx_per_seq as usize;
        if prompt.len() >= limit {
            return fail(ExecutorError::PromptTooLong {
                tokens: prompt.len(),
                n_ctx: limit,
            });
        }
        let sampler = match self.sampler(&p.request) {
            Ok(s) => s,
            Err(e) => return fail(e),
        };
        let min_len = self.opts.min_shared_prefix.max(1) as usize;
        // Reusable length of a shared prefix: keep at least one token to compute (the
        // new sequence needs its own logits), whole blocks only.
        let usable = |common: usize| self.align(common.min(prompt.len() - 1));
        // The free slot whose own kept KV shares the longest prefix; when none does,
        // the free slot keeping the least (the others' caches stay).
        let free = (0..self.slots.len())
            .filter(|&i| self.slots[i].is_none())
            .map(|i| {
                let own = if self.opts.prefix_cache {
                    usable(common_prefix(&self.retained[i], &prompt))
                } else {
                    0
                };
                (i, own)
            })
            .max_by_key(|&(i, own)| {
                (
                    own,
                    std::cmp::Reverse(if own > 0 { 0 } else { self.retained[i].len() }),
                    std::cmp::Reverse(i),
                )
            })
            .map(|(i, _)| i)
            .expect("the caller checked for a free slot");
        let own = if self.opts.prefix_cache {
            usable(common_prefix(&self.retained[free], &prompt))
        } else {
            0
        };
        // The best donor: a live sequence (prefix reuse) or another free slot's kept
        // KV (prefix cache). Kept KV is complete; prefer it on ties.
        let mut donor: Option<(usize, usize, bool)> = None; // (slot, len, live)
        let mut consider = |i: usize, len: usize, live: bool| {
            let better = match donor {
                None => true,
                Some((_, l, was_live)) => len > l || (len == l && was_live && !live),
            };
            if len >= min_len && better {
                donor = Some((i, len, live));
            }
        };
        if self.opts.prefix_reuse {
            for (i, sl) in self.slots.iter().enumerate() {
                if let Some(sl) = sl
                    && !matches!(sl.phase, Phase::WaitPrefix { .. })
                {
                    consider(i, usable(common_prefix(&sl.prompt, &prompt)), true);
                }
            }
        }
        if self.opts.prefix_cache {
            for i in 0..self.slots.len() {
                if i != free && self.slots[i].is_none() {
                    consider(i, usable(common_prefix(&self.retained[i], &prompt)), false);
                }
            }
        }
        let seq = free as i32;
        let mut phase = Phase::Prefill { next: 0 };
        let mut computed = 0;
        let mut cached = 0;
        let mut from_cache = 0;
        match donor {
            Some((_, len, _)) if own >= min_len && own >= len => {
                // Keep this slot's own prefix in place; drop the rest of its stream.
                let _ = self.ctx.kv_cache_seq_rm(seq, Some(own as u32), None);
                (computed, cached, from_cache) = (own, own, own);
                phase = Phase::Prefill { next: own };
            }
            None if own >= min_len => {
                let _ = self.ctx.kv_cache_seq_rm(seq, Some(own as u32), None);
                (computed, cached, from_cache) = (own, own, own);
                phase = Phase::Prefill { next: own };
            }
            Some((d, len, live)) => {
                // A stale sequence must not leak into this one.
                let _ = self.ctx.clear_kv_cache_seq(Some(seq as u32), None, None);
                let donor_done = if live {
                    self.slots[d].as_ref().map_or(0, |x| x.computed)
                } else {
                    len
                };
                if donor_done >= len {
                    self.copy_prefix(d, seq, len);
                    (computed, cached) = (len, len);
                    if !live {
                        from_cache = len;
                    }
                    phase = Phase::Prefill { next: len };
                } else {
                    phase = Phase::WaitPrefix { donor: d, len };
                }
            }
            None => {
                let _ = self.ctx.clear_kv_cache_seq(Some(seq as u32), None, None);
            }
        }
        self.retained[free].clear();
        let now = Instant::now();
        self.slots[free] = Some(Slot {
            seq,
            reply: p.reply,
            index: p.index,
            prompt,
            computed,
            cached,
            phase,
            sampler,
            max_tokens: p.request.sampling.max_tokens,
            stop: p.request.sampling.stop.clone(),
            ignore_eos: p.options.ignore_eos,
            out: Vec::new(),
            n_generated: 0,
            logits_at: None,
            submitted: p.submitted,
            admitted: now,
            first_token: None,
            from_cache,
        });
        Ok(())
    }

    /// `len` rounded down to whole prefill blocks (unchanged without blocks).
    fn align(&self, len: usize) -> usize {
        match self.opts.prefill_block as usize {
            0 => len,
            b => len / b * b,
        }
    }

    /// Give sequence `seq` the KV of the first `len` positions of `donor`'s sequence.
    fn copy_prefix(&mut self, donor: usize, seq: i32, len: usize) {
        // Sequence ids are slot indices, live or kept.
        let src = donor as i32;
        // Positions fit in u32: len < n_ctx_per_seq.
        if self.opts.kv_unified {
            // One buffer: tag the donor's cells with this sequence id too (no copy).
            let _ = self
                .ctx
                .kv_cache_seq_cp(src, seq, Some(0), Some(len as u32));
        } else {
            // Separate streams: llama.cpp copies whole streams only (a partial range
            // aborts), so copy everything and drop this sequence's positions >= len.
            let _ = self.ctx.kv_cache_seq_cp(src, seq, None, None);
            let _ = self.ctx.kv_cache_seq_rm(seq, Some(len as u32), None);
        }
    }

    /// One step of the continuous batch.
    fn step(&mut self, batch: &mut LlamaBatch) {
        // Sequences waiting for a donor's prefix: copy when it is there.
        for i in 0..self.slots.len() {
            let Some(Phase::WaitPrefix { donor, len }) = self.slots[i].as_ref().map(|s| s.phase)
            else {
                continue;
            };
            let donor_state = self.slots[donor]
                .as_ref()
                .map(|d| (d.computed, matches!(d.phase, Phase::WaitPrefix { .. })));
            match donor_state {
                Some((done, false)) if done >= len => {
                    let seq = self.slots[i].as_ref().map_or(0, |s| s.seq);
                    self.copy_prefix(donor, seq, len);
                    let s = self.slots[i].as_mut().expect("slot is live");
                    s.computed = len;
                    s.cached = len;
                    s.phase = Phase::Prefill { next: len };
                }
                Some((_, false)) => {}
                // The donor went away before computing the prefix: compute it here.
                _ => {
                    let s = self.slots[i].as_mut().expect("slot is live");
                    s.phase = Phase::Prefill { next: 0 };
                }
            }
        }
        self.step_mixed(batch);
    }

    /// One decode with a token of every generating sequence and prompt chunks of the
    /// others: as large as fit without blocks; in block mode one whole block per
    /// sequence, never split.
    fn step_mixed(&mut self, batch: &mut LlamaBatch) {
        batch.clear();
        let capacity = self.opts.n_batch.max(self.opts.n_parallel) as usize;
        let mut n = 0usize;
        let mut live = 0u64;
        // Generating sequences first: one token each.
        for s in self.slots.iter_mut().flatten() {
            s.logits_at = None;
            if let Phase::Generate { token } = s.phase {
                let pos = (s.prompt.len() + s.n_generated as usize - 1) as i32;
                batch
                    .add(token, pos, &[s.seq], true)
                    .expect("batch sized for every slot");
                s.logits_at = Some(n as i32);
                n += 1;
                live += 1;
            }
        }
        // Then prompt chunks, in slot order, while there is room.
        let mut prefill_ends = Vec::new();
        for (i, s) in self.slots.iter_mut().enumerate() {
            let Some(s) = s else { continue };
            let Phase::Prefill { next } = s.phase else {
                continue;
            };
            if n >= capacity {
                break;
            }
            let mut take = (s.prompt.len() - next).min(capacity - n);
            let block = self.opts.prefill_block as usize;
            if block > 0 {
                // A block always starts at a multiple of the block size and is
                // computed as one chunk, so its KV is the same wherever it is reused.
                let want = (s.prompt.len() - next).min(block - next % block);
                if want > capacity - n {
                    continue;
                }
                take = want;
            }
            for (k, &tok) in s.prompt[next..next + take].iter().enumerate() {
                let pos = next + k;
                let last = pos + 1 == s.prompt.len();
                batch
                    .add(tok, pos as i32, &[s.seq], last)
                    .expect("batch sized to capacity");
                if last {
                    s.logits_at = Some(n as i32);
                }
                n += 1;
            }
            live += 1;
            prefill_ends.push((i, next + take));
        }
        if n == 0 {
            return;
        }
        let members: Vec<usize> = (0..self.slots.len())
            .filter(|&i| {
                self.slots[i].as_ref().is_some_and(|s| {
                    matches!(s.phase, Phase::Generate { .. })
                        || prefill_ends.iter().any(|(j, _)| *j == i)
                })
            })
            .collect();
        self.decode_and_sample(batch, members, prefill_ends, live);
    }

    /// Decode `batch` (holding the slots `members`), record prompt progress, and
    /// sample every slot that asked for logits.
    fn decode_and_sample(
        &mut self,
        batch: &mut LlamaBatch,
        members: Vec<usize>,
        prefill_ends: Vec<(usize, usize)>,
        live: u64,
    ) {
        if let Err(e) = self.ctx.decode(batch) {
            // Fail every sequence that was in this batch; others are untouched.
            let msg = format!("llama_decode failed: {e}");
            for i in members {
                self.finish(i, Err(ExecutorError::Model(msg.clone())));
            }
            return;
        }
        {
            let mut st = self.stats.lock().unwrap_or_else(|e| e.into_inner());
            st.decode_calls += 1;
            st.max_concurrent = st.max_concurrent.max(live);
        }
        let mut computed_prompt = 0u64;
        for (i, end) in prefill_ends {
            let s = self.slots[i].as_mut().expect("slot is live");
            let Phase::Prefill { next } = s.phase else {
                continue;
            };
            computed_prompt += (end - next) as u64;
            s.computed = end;
            s.phase = Phase::Prefill { next: end };
        }
        self.stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .prompt_tokens_computed += computed_prompt;
        // Sample for every sequence that got logits.
        let mut generated = 0u64;
        for i in 0..self.slots.len() {
            let Some(s) = self.slots[i].as_mut() else {
                continue;
            };
            let Some(at) = s.logits_at.take() else {
                continue;
            };
            let token = s.sampler.sample(&self.ctx, at);
            let now = Instant::now();
            if s.first_token.is_none() {
                s.first_token = Some(now);
            }
            let vocab = self.model.vocab();
            let is_eog = vocab.is_eog(token);
            if is_eog && !s.ignore_eos {
                self.finish(i, Ok(FinishReason::Stop));
                continue;
            }
            s.n_generated += 1;
            generated += 1;
            if !is_eog {
                let before = s.out.len();
                s.out
                    .extend_from_slice(&vocab.token_to_piece(token, false, None));
                if let Some(cut) = find_stop(&s.out, before, &s.stop) {
                    s.out.truncate(cut);
                    self.finish(i, Ok(FinishReason::Stop));
                    continue;
                }
            }
            let full = s.prompt.len() + s.n_generated as usize >= self.opts.n_ctx_per_seq as usize;
            if s.n_generated >= s.max_tokens || full {
                self.finish(i, Ok(FinishReason::Length));
                continue;
            }
            s.phase = Phase::Generate { token };
        }
        self.stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .tokens_generated += generated;
    }

    /// Deliver slot `i`'s result, clear its KV and free the slot.
    fn finish(&mut self, i: usize, outcome: Result<FinishReason, ExecutorError>) {
        // Followers waiting on this sequence's prefix copy it now or compute it.
        let done = self.slots[i].as_ref().map_or(0, |s| s.computed);
        for j in 0..self.slots.len() {
            let Some(Phase::WaitPrefix { donor, len }) = self.slots[j].as_ref().map(|s| s.phase)
            else {
                continue;
            };
            if donor != i {
                continue;
            }
            if done >= len && outcome.is_ok() {
                let seq = self.slots[j].as_ref().map_or(0, |s| s.seq);
                self.copy_prefix(i, seq, len);
                let s = self.slots[j].as_mut().expect("slot is live");
                s.computed = len;
                s.cached = len;
                s.phase = Phase::Prefill { next: len };
            } else {
                let s = self.slots[j].as_mut().expect("slot is live");
                s.phase = Phase::Prefill { next: 0 };
            }
        }
        let Some(s) = self.slots[i].take() else {
            return;
        };
        if self.opts.prefix_cache && outcome.is_ok() {
            // Keep the prompt's whole blocks (their KV is what a single run computes);
            // drop the partial last block and the generated tokens.
            let keep = self.align(s.computed.min(s.prompt.len()));
            let _ = self.ctx.kv_cache_seq_rm(s.seq, Some(keep as u32), None);
            self.retained[i] = s.prompt[..keep].to_vec();
        } else {
            let _ = self.ctx.clear_kv_cache_seq(Some(s.seq as u32), None, None);
            self.retained[i].clear();
        }
        let end = Instant::now();
        let ms = |a: Instant, b: Instant| b.saturating_duration_since(a).as_secs_f64() * 1e3;
        let first = s.first_token.unwrap_or(end);
        let result = outcome.map(|finish_reason| Completion {
            text: String::from_utf8_lossy(&s.out).into_owned(),
            finish_reason,
            usage: Usage {
                prompt_tokens: s.prompt.len() as u32,
                completion_tokens: s.n_generated,
                cached_prompt_tokens: s.cached as u32,
            },
            timings: Timings {
                prompt_ms: ms(s.admitted, first),
                generation_ms: ms(first, end),
                total_ms: ms(s.submitted, end),
            },
            cached: false,
        });
        {
            let mut st = self.stats.lock().unwrap_or_else(|e| e.into_inner());
            st.requests += 1;
            st.prompt_tokens_reused += s.cached as u64;
            st.prompt_tokens_from_cache += s.from_cache as u64;
        }
        let _ = s.reply.send((s.index, result));
    }
}

/// Render a prompt to the text that is tokenised.
fn render(
    model: &LlamaModel,
    template: &LlamaChatTemplate,
    prompt: &Prompt,
) -> Result<String, ExecutorError> {
    match prompt {
        Prompt::Raw(t) => Ok(t.clone()),
        Prompt::Chat(messages) => {
            // A final assistant message is a prefill: the template renders the turns
            // before it with the assistant's opening, and the model continues the
            // prefill's text.
            let (turns, prefill) = match messages.split_last() {
                Some((last, rest)) if last.role == "assistant" && !rest.is_empty() => {
                    (rest, Some(last.content.as_str()))
                }
                _ => (messages.as_slice(), None),
            };
            let msgs = turns
                .iter()
                .map(|m| LlamaChatMessage::new(m.role.clone(), m.content.clone()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| {
                    ExecutorError::InvalidRequest(format!("chat message contains NUL: {e}"))
                })?;
            let mut text = model
                .apply_chat_template(template, &msgs, true)
                .map_err(|e| ExecutorError::Model(format!("applying the chat template: {e}")))?;
            if let Some(p) = prefill {
                if p.contains('\0') {
                    return Err(ExecutorError::InvalidRequest(
                        "chat message contains NUL".into(),
                    ));
                }
                text.push_str(p);
            }
            Ok(text)
        }
    }
}

/// Render and tokenise; BOS is added when the vocabulary asks for it and the rendered
/// text does not already start with it.
fn tokenize(
    model: &LlamaModel,
    template: &LlamaChatTemplate,
    prompt: &Prompt,
) -> Result<Vec<LlamaToken>, ExecutorError> {
    let text = render(model, template, prompt)?;
    let vocab = model.vocab();
    let bos = vocab.token_to_piece(vocab.bos(), true, None);
    let add_bos = vocab.should_add_bos() && !(bos.len() > 1 && text.as_bytes().starts_with(&bos));
    Ok(vocab.tokenize(text.as_bytes(), add_bos, true))
}

/// Length of the common prefix of two token sequences.
fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Byte offset of the earliest stop string that ends in the bytes appended since
/// `before` (a stop string may straddle tokens).
pub fn find_stop(out: &[u8], before: usize, stops: &[String]) -> Option<usize> {
    stops
        .iter()
        .filter(|s| !s.is_empty())
        .filter_map(|stop| {
            let stop = stop.as_bytes();
            let from = before.saturating_sub(stop.len() - 1);
            out[from..]
                .windows(stop.len())
                .position(|w| w == stop)
                .map(|p| from + p)
        })
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_strings_straddling_tokens_are_found() {
        let out = b"abc</ans".to_vec();
        assert_eq!(find_stop(&out, 5, &["</answer>".into()]), None);
        let out = b"abc</answer> tail".to_vec();
        assert_eq!(find_stop(&out, 8, &["</answer>".into()]), Some(3));
        // Earliest of several, and an empty stop string is ignored.
        assert_eq!(
            find_stop(
                b"xx STOP yy END",
                0,
                &["END".into(), "STOP".into(), String::new()]
            ),
            Some(3)
        );
        // A stop string wholly before `before` was already checked: not re-reported.
        assert_eq!(find_stop(b"END and more", 11, &["END".into()]), None);
    }

    #[test]
    fn seed_folding_keeps_high_bits() {
        assert_ne!(sampler_seed(1), sampler_seed(1 << 32 | 1));
        assert_eq!(sampler_seed(7), 7);
    }
}
