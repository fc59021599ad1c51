//! `hrl generate`: complete one prompt or a JSONL file of prompts with the llama.cpp
//! executor, printing texts (or JSONL with token counts and timings under `--json`).
//! Also the hidden `hrl bench-llama` used by `scripts/bench_llama.sh`.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use harness_rl::executor::llama::{self, LlamaExecutor};
use harness_rl::executor::spec::{ExecutorSpec, LlamaSpec, OpenOptions};
use harness_rl::executor::{ExecutorError, Request, Sampling, prompts};
use serde_json::json;

use super::UsageError;

/// Options that load a llama.cpp model (shared by `generate` and the benchmark).
#[derive(Args, Clone)]
pub struct ModelArgs {
    /// A known model name (see `hrl models list`) or a path to a .gguf file.
    #[arg(long, default_value = harness_rl::models::DEFAULT_MODEL)]
    pub model: String,
    /// Sequences decoded together (continuous batching slots).
    #[arg(long, default_value_t = 8)]
    pub n_parallel: u32,
    /// Context tokens per sequence (prompt + completion).
    #[arg(long, default_value_t = 2048)]
    pub ctx_per_seq: u32,
    /// Tokens per decode call.
    #[arg(long, default_value_t = 512)]
    pub n_batch: u32,
    /// CPU threads (0 = all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: u32,
    /// Layers to offload to the GPU (needs a build with `--features cuda`).
    #[arg(long, default_value_t = 0)]
    pub gpu_layers: u32,
    /// A LoRA adapter (GGUF) applied on top of the model.
    #[arg(long)]
    pub lora: Option<PathBuf>,
    #[arg(long, default_value_t = 1.0)]
    pub lora_scale: f32,
    /// Compute every prompt in full instead of reusing shared prefixes.
    #[arg(long)]
    pub no_prefix_reuse: bool,
    /// Do not keep finished prompts' KV for later requests (the prefix cache).
    #[arg(long)]
    pub no_prefix_cache: bool,
    /// Prompt block size: prompts are computed and reused in whole blocks, which keeps
    /// greedy outputs with prefix reuse equal to single runs; 0 = unaligned chunks.
    #[arg(long, default_value_t = 64)]
    pub prefill_block: u32,
    /// One KV buffer for all sequences (stores shared prefixes once; batched greedy
    /// output may then differ from single runs).
    #[arg(long)]
    pub kv_unified: bool,
}

impl ModelArgs {
    /// The flags as an executor spec.
    pub fn spec(&self) -> Result<ExecutorSpec> {
        if self.n_parallel == 0 {
            return Err(UsageError("--n-parallel must be >= 1".into()).into());
        }
        if self.prefill_block > self.n_batch {
            return Err(UsageError("--prefill-block must not exceed --n-batch".into()).into());
        }
        Ok(ExecutorSpec::Llama(LlamaSpec {
            model: self.model.clone(),
            n_parallel: self.n_parallel,
            ctx: self.ctx_per_seq,
            n_batch: self.n_batch,
            threads: self.threads,
            gpu_layers: self.gpu_layers,
            lora: self.lora.clone(),
            lora_scale: self.lora_scale,
            prefix_reuse: !self.no_prefix_reuse,
            prefix_cache: !self.no_prefix_cache,
            prefill_block: self.prefill_block,
            kv_unified: self.kv_unified,
        }))
    }

    /// Load the in-process model (for `serve` and the benchmark).
    pub fn load(&self) -> Result<LlamaExecutor> {
        if let Some(l) = &self.lora
            && !l.is_file()
        {
            return Err(UsageError(format!("LoRA adapter {} does not exist", l.display())).into());
        }
        self.spec()?
            .open_llama()
            .with_context(|| format!("loading model {}", self.model))
    }
}

#[derive(Args)]
pub struct GenerateArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// One prompt (a user message; raw text with --raw).
    #[arg(long, conflicts_with = "prompts", required_unless_present = "prompts")]
    pub prompt: Option<String>,
    /// A JSONL file: one `{"prompt": ...}` or `{"messages": [...]}` per line, optional
    /// `system` and `id`.
    #[arg(long)]
    pub prompts: Option<PathBuf>,
    /// System message for chat prompts.
    #[arg(long)]
    pub system: Option<String>,
    /// Raw completion: no chat template.
    #[arg(long)]
    pub raw: bool,
    /// 0 = greedy; at most 100.
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f32,
    /// Nucleus sampling, in (0, 1]; 1 = off.
    #[arg(long, default_value_t = 1.0)]
    pub top_p: f32,
    /// 0 = off.
    #[arg(long, default_value_t = 0)]
    pub top_k: u32,
    /// In [0, 1]; 0 = off.
    #[arg(long, default_value_t = 0.0)]
    pub min_p: f32,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[arg(long, default_value_t = 256)]
    pub max_tokens: u32,
    /// Stop before this string (repeatable).
    #[arg(long)]
    pub stop: Vec<String>,
    /// A GBNF grammar file (root rule `root`).
    #[arg(long)]
    pub grammar: Option<PathBuf>,
    /// JSONL output with token counts and timings.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub cache: super::cache::CacheArgs,
    #[command(flatten)]
    pub endpoint: super::endpoint::EndpointArgs,
}

pub fn run(a: GenerateArgs) -> Result<()> {
    let rows = match (&a.prompt, &a.prompts) {
        (Some(p), _) => vec![prompts::PromptRow {
            line: 0,
            id: None,
            prompt: prompts::make_prompt(p, a.system.as_deref(), a.raw),
        }],
        (None, Some(path)) => prompts::read(path, a.system.as_deref(), a.raw)
            .map_err(|e| UsageError(e.to_string()))?,
        (None, None) => return Err(UsageError("give --prompt or --prompts".into()).into()),
    };
    let grammar = match &a.grammar {
        Some(p) => Some(
            std::fs::read_to_string(p)
                .map_err(|e| UsageError(format!("grammar {}: {e}", p.display())))?,
        ),
        None => None,
    };
    let sampling = Sampling {
        temperature: a.temperature,
        top_p: a.top_p,
        top_k: a.top_k,
        min_p: a.min_p,
        seed: a.seed,
        max_tokens: a.max_tokens,
        stop: a.stop.clone(),
        grammar,
        json_schema: None,
    };
    // The same ranges `hrl serve` and the HTTP client apply.
    sampling.validate().map_err(|e| match e {
        ExecutorError::InvalidRequest(m) => UsageError(format!("invalid sampling setting: {m}")),
        other => UsageError(other.to_string()),
    })?;
    let spec = match a.endpoint.spec(&a.model.model)? {
        Some(remote) => remote,
        None => a.model.spec()?,
    };
    if let Some(l) = &a.model.lora
        && !l.is_file()
    {
        return Err(UsageError(format!("LoRA adapter {} does not exist", l.display())).into());
    }
    let opened = spec
        .open(&OpenOptions {
            cache: a.cache.setting(),
        })
        .with_context(|| format!("opening {}", spec.normalized()))?;
    let exec = opened.executor.clone();
    let cached = opened.cache.clone();
    let requests: Vec<Request> = rows
        .iter()
        .map(|r| Request {
            prompt: r.prompt.clone(),
            sampling: sampling.clone(),
        })
        .collect();
    let results = exec.complete_batch(&requests);
    super::cache::report(cached.as_deref());
    let mut out = BufWriter::new(io::stdout().lock());
    let mut failed = 0usize;
    for (i, (row, res)) in rows.iter().zip(results).enumerate() {
        match res {
            Ok(c) if a.json => {
                let mut v = json!({
                    "index": i,
                    "text": c.text,
                    "finish_reason": c.finish_reason,
                    "usage": c.usage,
                    "timings": c.timings,
                    "cached": c.cached,
                });
                if let Some(id) = &row.id {
                    v["id"] = id.clone();
                }
                writeln!(out, "{v}")?;
            }
            Ok(c) => {
                if rows.len() > 1 {
                    writeln!(
                        out,
                        "### {}",
                        row.id.as_ref().map_or(i.to_string(), |v| v.to_string())
                    )?;
                }
                writeln!(out, "{}", c.text)?;
            }
            Err(e) => {
                failed += 1;
                if a.json {
                    let mut v = json!({"index": i, "error": e.to_string()});
                    if let Some(id) = &row.id {
                        v["id"] = id.clone();
                    }
                    writeln!(out, "{v}")?;
                } else {
                    eprintln!(
                        "hrl: prompt {}: {e}",
                        if row.line > 0 {
                            format!("at line {}", row.line)
                        } else {
                            i.to_string()
                        }
                    );
                }
            }
        }
    }
    out.flush()?;
    if failed > 0 {
        anyhow::bail!("{failed} of {} prompts failed", rows.len());
    }
    Ok(())
}

#[derive(Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Prompt tokens per sequence.
    #[arg(long, default_value_t = 128)]
    pub npp: u32,
    /// Generated tokens per sequence.
    #[arg(long, default_value_t = 128)]
    pub ntg: u32,
    /// Comma-separated sequence counts.
    #[arg(long, default_value = "1,4,8,16", value_delimiter = ',')]
    pub npl: Vec<u32>,
    /// Repetitions per sequence count (the best is reported).
    #[arg(long, default_value_t = 1)]
    pub reps: u32,
}

/// Throughput at fixed prompt and generation lengths, one JSON line per batch size.
pub fn bench(mut a: BenchArgs) -> Result<()> {
    let max = a.npl.iter().copied().max().unwrap_or(1);
    a.model.n_parallel = a.model.n_parallel.max(max);
    a.model.ctx_per_seq = a.model.ctx_per_seq.max(a.npp + a.ntg + 8);
    let exec = a.model.load()?;
    let mut out = io::stdout().lock();
    for &npl in &a.npl {
        let row = llama::bench::throughput(&exec, a.npp, a.ntg, npl, a.reps)?;
        writeln!(out, "{}", serde_json::to_string(&row)?)?;
    }
    Ok(())
}
