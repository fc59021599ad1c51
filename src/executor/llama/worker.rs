//! The batching worker of the llama.cpp executor: one thread that owns the llama.cpp
//! context and runs continuous batching over every caller's requests (admission with
//! shared-prefix reuse and the prefix cache, prompt blocks, one decode per step,
//! sampling, stop strings, slot release). [`super::LlamaExecutor`] is the handle that
//! sends it [`Job`]s; the policy is described in the parent module's documentation.

use std::num::NonZeroU32;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaLoraAdapter, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;

use super::{
    BatchOptions, Job, LlamaOptions, LlamaStats, Reply, backend, chatml, model_err, sampler_seed,
    tokenize,
};
use crate::executor::{Completion, ExecutorError, FinishReason, Request, Timings, Usage};

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
pub(super) fn worker_main(
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
        if let Some(g) = &s.effective_grammar()? {
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

/// Length of the common prefix of two token sequences.
fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Byte offset of the earliest stop string that ends in the bytes appended since
/// `before` (a stop string may straddle tokens).
fn find_stop(out: &[u8], before: usize, stops: &[String]) -> Option<usize> {
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
}
