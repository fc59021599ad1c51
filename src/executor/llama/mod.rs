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
//! This file is the handle ([`LlamaExecutor`]: load, submit, wait) and the prompt
//! rendering both sides share; `worker.rs` is the batching worker.
//!
//! Chat prompts are rendered with the GGUF's chat template (llama.cpp's built-in
//! template matcher), falling back to ChatML when the file has none or it is not
//! recognised; raw prompts are tokenised as they are.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::Instant;

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::token::LlamaToken;

use super::{Completion, Executor, ExecutorError, OnDone, Prompt, Request};
use crate::models;

pub mod bench;
pub mod device;
mod worker;

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
    /// Layers offloaded to the GPU (needs the `cuda` feature and a device; refused
    /// without one, so a CPU run is never labelled as a GPU one); 0 = CPU only.
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
    /// Layers of the model as llama.cpp counts them for offloading (the repeating
    /// layers plus the output layer).
    pub layers_total: u32,
    /// Of those, how many `gpu_layers` put on the GPU (0 on the CPU).
    pub layers_offloaded: u32,
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
        if options.gpu_layers > 0
            && let Some(why) = device::no_gpu_reason()
        {
            return Err(ExecutorError::InvalidRequest(format!(
                "gpu_layers={} asks for a GPU, but {why}; gpu_layers=0 runs on the CPU",
                options.gpu_layers
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
            layers_total: model.n_layer() + 1,
            layers_offloaded: options.gpu_layers.min(model.n_layer() + 1),
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
                worker::worker_main(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_folding_keeps_high_bits() {
        assert_ne!(sampler_seed(1), sampler_seed(1 << 32 | 1));
        assert_eq!(sampler_seed(7), 7);
    }
}
