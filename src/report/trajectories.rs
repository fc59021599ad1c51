//! The browsable record of every trajectory (task × harness sample): each round's
//! parent and kept harness, its test score, and every candidate the proposer returned
//! with its status, dev score, reason, raw output and the diff from the parent
//! (a line diff of the harness files' canonical text, [`crate::harness::diff::unified`],
//! which is pure text: no harness is loaded or run).

use std::collections::BTreeMap;

use serde::Serialize;

use super::run_data::{EvalData, HarnessText};
use crate::proposer::TokenUse;
use crate::records::{CandidateRecord, CandidateStatus, RoundRecord};

/// Context lines around each change of a diff.
const DIFF_CONTEXT: usize = 3;

/// One candidate of a round.
#[derive(Debug, Clone, Serialize)]
pub struct CandidateView {
    pub index: usize,
    pub status: CandidateStatus,
    /// The form the revision was written in (`toml`, `edits`, `python`, ...).
    pub form: Option<String>,
    pub hash: Option<String>,
    pub dev: Option<f64>,
    pub selected: bool,
    pub reason: Option<String>,
    pub raw: Option<String>,
    pub tokens: TokenUse,
    /// Unified diff from the parent (empty when they are equal; `None` when either
    /// harness file is missing from the run directory).
    pub diff: Option<String>,
}

/// One round of a trajectory (round 0: the seed harness).
#[derive(Debug, Clone, Serialize)]
pub struct RoundView {
    pub round: u32,
    pub parent: String,
    pub kept: String,
    pub accepted: bool,
    pub parent_dev: Option<f64>,
    pub kept_dev: Option<f64>,
    pub test: f64,
    pub executor_tokens: u64,
    pub candidates: Vec<CandidateView>,
}

/// One harness sample of one task.
#[derive(Debug, Clone, Serialize)]
pub struct Trajectory {
    pub task: String,
    pub sample: u32,
    /// Every round 0..=K recorded.
    pub complete: bool,
    pub rounds: Vec<RoundView>,
}

fn form_name(c: &CandidateRecord) -> Option<String> {
    c.form
        .and_then(|f| serde_json::to_value(f).ok())
        .and_then(|v| v.as_str().map(str::to_string))
}

/// The diff from `parent` to `child` (by hash), when both files are present.
pub fn diff(
    harnesses: &BTreeMap<String, HarnessText>,
    parent: &str,
    child: &str,
) -> Option<String> {
    let a = harnesses.get(parent)?;
    let b = harnesses.get(child)?;
    let mut out = String::new();
    if a.extension != b.extension {
        out.push_str(&format!(
            "# kind: {} -> {}\n",
            kind_name(&a.extension),
            kind_name(&b.extension)
        ));
    }
    out.push_str(&crate::harness::diff::unified(
        &a.text,
        &b.text,
        &format!("parent {}", short(parent)),
        &format!("candidate {}", short(child)),
        DIFF_CONTEXT,
    ));
    Some(out)
}

fn kind_name(extension: &str) -> &str {
    match extension {
        "py" => "program",
        "toml" => "declarative",
        other => other,
    }
}

/// The first 12 characters of a hash.
pub fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// Every trajectory of the run, in task order (as in `config.json`), then sample.
pub fn build(e: &EvalData, harnesses: &BTreeMap<String, HarnessText>) -> Vec<Trajectory> {
    let k = e.config.settings.rounds;
    let mut rounds: BTreeMap<(&str, u32), BTreeMap<u32, &RoundRecord>> = BTreeMap::new();
    for r in &e.rounds {
        rounds
            .entry((r.task.as_str(), r.sample))
            .or_default()
            .entry(r.round)
            .or_insert(r);
    }
    let mut cands: BTreeMap<(&str, u32, u32), BTreeMap<usize, &CandidateRecord>> = BTreeMap::new();
    for c in &e.candidates {
        cands
            .entry((c.task.as_str(), c.sample, c.round))
            .or_default()
            .entry(c.index)
            .or_insert(c);
    }
    let mut out = Vec::new();
    for t in &e.config.tasks {
        let id = t.def.id.as_str();
        for m in 0..e.config.settings.samples {
            let Some(rs) = rounds.get(&(id, m)) else {
                continue;
            };
            let views = rs
                .values()
                .map(|r| RoundView {
                    round: r.round,
                    parent: r.parent.clone(),
                    kept: r.selected.clone(),
                    accepted: r.accepted,
                    parent_dev: r.parent_dev,
                    kept_dev: r.selected_dev,
                    test: r.test.mean,
                    executor_tokens: r.executor_tokens,
                    candidates: cands
                        .get(&(id, m, r.round))
                        .map(|cs| {
                            cs.values()
                                .map(|c| CandidateView {
                                    index: c.index,
                                    status: c.status,
                                    form: form_name(c),
                                    hash: c.hash.clone(),
                                    dev: c.dev,
                                    selected: c.selected,
                                    reason: c.reason.clone(),
                                    raw: c.raw.clone(),
                                    tokens: c.tokens,
                                    diff: c
                                        .hash
                                        .as_ref()
                                        .and_then(|h| diff(harnesses, &c.parent, h)),
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                })
                .collect();
            out.push(Trajectory {
                task: id.to_string(),
                sample: m,
                complete: (0..=k).all(|r| rs.contains_key(&r)),
                rounds: views,
            });
        }
    }
    out
}
