//! Throughput measurement of the llama.cpp executor at fixed prompt and generation
//! lengths, the counterpart of llama.cpp's `llama-batched-bench` (see
//! `scripts/bench_llama.sh`): `npl` distinct raw prompts of about `npp` tokens, each
//! generating exactly `ntg` tokens (end-of-generation ignored), all submitted at once.

use std::time::Instant;

use serde::Serialize;

use super::{BatchOptions, LlamaExecutor};
use crate::executor::{ExecutorError, Prompt, Request, Sampling};

/// One measured batch size.
#[derive(Debug, Clone, Serialize)]
pub struct ThroughputRow {
    pub npl: u32,
    /// Mean prompt length actually used (tokens).
    pub npp: f64,
    pub ntg: u32,
    /// Seconds until every sequence had its first token (prompt processing).
    pub t_pp: f64,
    /// Seconds of the generation phase that follows.
    pub t_tg: f64,
    pub pp_tok_s: f64,
    /// Decoded generation tokens per second: `npl * (ntg - 1) / t_tg` (the first token
    /// of each sequence comes from the prompt's logits).
    pub tg_tok_s: f64,
    pub wall_s: f64,
    /// Peak resident memory of this process so far (VmHWM), MB.
    pub peak_rss_mb: Option<f64>,
}

const WORDS: &[&str] = &[
    "river", "stone", "harness", "signal", "garden", "vector", "lantern", "orbit", "meadow",
    "copper", "thunder", "pixel", "harbor", "quartz", "willow", "ember", "falcon", "cipher",
];

/// A raw prompt of about `npp` tokens, distinct for each `j`.
pub fn prompt_of_len(exec: &LlamaExecutor, npp: u32, j: u32) -> Result<String, ExecutorError> {
    let mut text = format!("Sequence {j}:");
    let mut k = j as usize;
    loop {
        let n = exec.tokenize(&Prompt::Raw(text.clone()))?.len() as u32;
        if n >= npp {
            return Ok(text);
        }
        // Add words in bulk while far from the target.
        let add = ((npp - n) / 2).max(1);
        for _ in 0..add {
            text.push(' ');
            text.push_str(WORDS[k % WORDS.len()]);
            k = k.wrapping_mul(31).wrapping_add(7);
        }
    }
}

/// Peak resident set size of this process (Linux), MB.
pub fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Measure `npl` parallel sequences; the best of `reps` runs (by generation speed).
pub fn throughput(
    exec: &LlamaExecutor,
    npp: u32,
    ntg: u32,
    npl: u32,
    reps: u32,
) -> Result<ThroughputRow, ExecutorError> {
    if ntg < 2 || npl == 0 {
        return Err(ExecutorError::InvalidRequest(
            "need ntg >= 2 and npl >= 1".into(),
        ));
    }
    let requests = (0..npl)
        .map(|j| {
            Ok(Request {
                prompt: Prompt::Raw(prompt_of_len(exec, npp, j)?),
                sampling: Sampling {
                    max_tokens: ntg,
                    ..Sampling::default()
                },
            })
        })
        .collect::<Result<Vec<_>, ExecutorError>>()?;
    let opts = BatchOptions { ignore_eos: true };
    // Warm-up (page in the weights, size the compute buffers).
    exec.complete_batch_with(&requests[..1], BatchOptions { ignore_eos: true })
        .pop()
        .expect("one result")?;
    let mut best: Option<ThroughputRow> = None;
    for _ in 0..reps.max(1) {
        let t0 = Instant::now();
        let results = exec.complete_batch_with(&requests, opts);
        let wall = t0.elapsed().as_secs_f64();
        let mut t_pp: f64 = 0.0;
        let mut prompt_tokens = 0u64;
        for r in results {
            let c = r?;
            if c.usage.completion_tokens != ntg {
                return Err(ExecutorError::Model(format!(
                    "benchmark sequence generated {} tokens, expected {ntg}",
                    c.usage.completion_tokens
                )));
            }
            // prompt_ms runs from admission; all sequences are admitted at the start.
            t_pp = t_pp.max(c.timings.prompt_ms / 1e3);
            prompt_tokens += c.usage.prompt_tokens as u64;
        }
        let t_tg = (wall - t_pp).max(1e-9);
        let row = ThroughputRow {
            npl,
            npp: prompt_tokens as f64 / npl as f64,
            ntg,
            t_pp,
            t_tg,
            pp_tok_s: prompt_tokens as f64 / t_pp.max(1e-9),
            tg_tok_s: (npl as u64 * (ntg as u64 - 1)) as f64 / t_tg,
            wall_s: wall,
            peak_rss_mb: peak_rss_mb(),
        };
        if best.as_ref().is_none_or(|b| row.tg_tok_s > b.tg_tok_s) {
            best = Some(row);
        }
    }
    Ok(best.expect("at least one repetition"))
}
