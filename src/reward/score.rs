//! The reward of one proposer completion in one context.
//!
//! 1. The completion is cleaned of a trailing end-of-turn token a trainer may leave
//!    (`<|im_end|>`, `<|endoftext|>`, `<|eot_id|>`, `</s>`, `<|end|>`), then parsed
//!    exactly as an `llm:` proposer's reply ([`crate::proposer::parse::revision`]: a
//!    full TOML/JSON harness, a Python program, a unified diff of the parent's
//!    canonical text, or typed edits applied to the parent, `add_example` edits
//!    drawing on the parent's feedback run). A program must also compile in the
//!    sandbox. What fails is an **invalid** revision with its reason, never an error.
//! 2. A valid revision is run by the frozen executor on the context's dev set through
//!    the evaluator's engine: concurrent calls share executor batches, and the engine's
//!    (task, set, harness hash) memo makes a revised harness scored once per
//!    (context, harness hash), however many completions produce it.
//!
//! Reward parts ([`RewardParts`]): `score` (mean dev score, 0 when invalid), `valid`,
//! `executes` (valid, and no dev rollout ended in `harness_error`: the harness itself
//! ran; a wrong answer still executes), `unchanged` (the revision is the parent),
//! `invalid_reason`, `executor_free_rate` (share of dev items answered without an
//! executor call), `tokens` (executor prompt + completion tokens of the dev run).
//!
//! `reward = score + validity_bonus` when valid and executing, `score` when valid but
//! not executing, `invalid_reward` when invalid ([`RewardConfig`]; both 0 by default).
//! The bonus rule is the trainer's too (`eval::engine::SetResult::validity_bonus`).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::RewardError;
use super::context::Built;
use crate::eval::engine::{ArmLog, Engine};
use crate::eval::sets::SetName;
use crate::harness::{Harness, HarnessKind};
use crate::proposer::{RevisionForm, parse};
use crate::records::run_dir::{Appender, RunDir};

/// How the parts become one reward.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RewardConfig {
    /// Added to the score of a valid revision that executes (default 0).
    pub validity_bonus: f64,
    /// The reward of an invalid revision (default 0).
    pub invalid_reward: f64,
}

impl Default for RewardConfig {
    fn default() -> Self {
        RewardConfig {
            validity_bonus: 0.0,
            invalid_reward: 0.0,
        }
    }
}

/// The reward of one completion and its parts (see the module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewardParts {
    pub context_id: String,
    pub reward: f64,
    pub score: f64,
    pub valid: bool,
    pub executes: bool,
    pub unchanged: bool,
    pub invalid_reason: Option<String>,
    /// How the revision was written (`toml`, `edits`, `diff`, `python`, ...).
    pub form: Option<RevisionForm>,
    pub harness_hash: Option<String>,
    pub harness_kind: Option<HarnessKind>,
    pub executor_free_rate: f64,
    pub tokens: u64,
    /// Per dev item, in the context's dev order (empty when invalid).
    pub item_scores: Vec<f64>,
    /// Whether this (context, harness) had been scored before by this service.
    pub memo: bool,
}

/// End-of-turn markers trainers may leave at the end of a decoded completion.
const END_MARKERS: &[&str] = &[
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "</s>",
    "<|end|>",
];

/// The completion without trailing end-of-turn markers.
pub fn clean_completion(text: &str) -> &str {
    let mut t = text.trim_end();
    loop {
        let before = t.len();
        for m in END_MARKERS {
            if let Some(s) = t.strip_suffix(m) {
                t = s.trim_end();
            }
        }
        if t.len() == before {
            return t;
        }
    }
}

/// Counters of a scorer.
#[derive(Debug, Default, Serialize)]
pub struct ScoreCounters {
    pub completions: AtomicU64,
    pub invalid: AtomicU64,
    /// Completions answered by the (context, harness hash) memo.
    pub memo_hits: AtomicU64,
}

/// Scores completions in the contexts of a [`Built`] with an engine.
pub struct Scorer<'e, 'a> {
    pub engine: &'e Engine<'a>,
    pub built: &'e Built,
    pub config: RewardConfig,
    pub log: Arc<ArmLog>,
    /// Where revised harnesses and `rewards.jsonl` go (`--out`), if anywhere.
    pub dir: Option<(&'e RunDir, Appender)>,
    seen: Mutex<HashSet<(usize, String)>>,
    pub counters: ScoreCounters,
}

/// One line of `rewards.jsonl`.
#[derive(Serialize)]
struct RewardRecord<'a> {
    #[serde(flatten)]
    parts: &'a RewardParts,
    task: &'a str,
    completion: &'a str,
}

impl<'e, 'a> Scorer<'e, 'a> {
    pub fn new(
        engine: &'e Engine<'a>,
        built: &'e Built,
        config: RewardConfig,
        log: Arc<ArmLog>,
        dir: Option<(&'e RunDir, Appender)>,
    ) -> Scorer<'e, 'a> {
        Scorer {
            engine,
            built,
            config,
            log,
            dir,
            seen: Mutex::new(HashSet::new()),
            counters: ScoreCounters::default(),
        }
    }

    /// Score `(context index, completion)` pairs. Every valid revision is submitted to
    /// the engine before any is awaited (one executor batch). `Err` only when the
    /// engine stopped or a log could not be written.
    pub fn score(&self, items: &[(usize, &str)]) -> Result<Vec<RewardParts>, RewardError> {
        let mut parts = Vec::with_capacity(items.len());
        let mut pending: Vec<(usize, Arc<Harness>)> = Vec::new();
        for (k, &(ctx, text)) in items.iter().enumerate() {
            let c = &self.built.contexts[ctx];
            let parent = &self.built.parents[ctx];
            let mut p = RewardParts {
                context_id: c.id.clone(),
                reward: self.config.invalid_reward,
                score: 0.0,
                valid: false,
                executes: false,
                unchanged: false,
                invalid_reason: None,
                form: None,
                harness_hash: None,
                harness_kind: None,
                executor_free_rate: 0.0,
                tokens: 0,
                item_scores: Vec::new(),
                memo: false,
            };
            match parse::revision(clean_completion(text), parent, &self.built.feedback[ctx]) {
                Err(reason) => p.invalid_reason = Some(reason),
                Ok((h, form)) => match self.engine.check(&h) {
                    Err(e) => p.invalid_reason = Some(format!("the program does not compile: {e}")),
                    Ok(()) => {
                        p.valid = true;
                        p.form = Some(form);
                        p.harness_hash = Some(h.hash());
                        p.harness_kind = Some(h.kind());
                        p.unchanged = h.hash() == parent.hash();
                        if let Some((d, _)) = &self.dir {
                            d.save_harness(&h)?;
                        }
                        pending.push((k, Arc::new(h)));
                    }
                },
            }
            parts.push(p);
        }
        let reqs: Vec<(usize, SetName, Arc<Harness>)> = pending
            .iter()
            .map(|(k, h)| (items[*k].0, SetName::Dev, h.clone()))
            .collect();
        let memo: Vec<bool> = {
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            reqs.iter()
                .map(|(t, _, h)| !seen.insert((*t, h.hash())))
                .collect()
        };
        let (results, _) = self.engine.score(&reqs, &self.log)?;
        for (((k, _), r), m) in pending.iter().zip(&results).zip(memo) {
            let p = &mut parts[*k];
            let n = r.rollouts.len().max(1) as f64;
            p.score = r.mean;
            p.executes = r.executes();
            p.reward = r.mean + r.validity_bonus(self.config.validity_bonus);
            p.executor_free_rate = r.executor_free as f64 / n;
            p.tokens = r.tokens;
            p.item_scores = r.scores();
            p.memo = m;
        }
        self.counters
            .completions
            .fetch_add(parts.len() as u64, Ordering::Relaxed);
        self.counters.invalid.fetch_add(
            parts.iter().filter(|p| !p.valid).count() as u64,
            Ordering::Relaxed,
        );
        self.counters.memo_hits.fetch_add(
            parts.iter().filter(|p| p.memo).count() as u64,
            Ordering::Relaxed,
        );
        if let Some((_, rewards)) = &self.dir {
            for (p, &(ctx, text)) in parts.iter().zip(items) {
                rewards.append(&RewardRecord {
                    parts: p,
                    task: &self.built.contexts[ctx].task,
                    completion: text,
                })?;
            }
        }
        Ok(parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_markers_are_cut_from_the_end_only() {
        assert_eq!(clean_completion("x <|im_end|>\n"), "x");
        assert_eq!(clean_completion("a</s><|endoftext|>"), "a");
        assert_eq!(clean_completion("<|im_end|> a"), "<|im_end|> a");
        assert_eq!(clean_completion(""), "");
    }
}
