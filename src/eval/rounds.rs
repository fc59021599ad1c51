//! One trajectory: a proposer revising one task's harness for K rounds (one harness
//! sample). Round 0 scores the seed harness on the test set. Each round r = 1..K:
//!
//! 1. run the current harness on the feedback set and build the execution report
//!    (skipped for proposers that read no report);
//! 2. ask the proposer for G candidates (seeded per task, sample and round; a resumed
//!    run replays the recorded proposal instead);
//! 3. sort the candidates: invalid (did not parse, apply or validate — a program must
//!    also compile in the sandbox), unchanged (the parent's hash), duplicate (an
//!    earlier candidate's hash), or new;
//! 4. score the parent and every new candidate on the dev set as **one** batch;
//! 5. select: `best` keeps the best candidate (ties: the earliest) if its dev score
//!    beats the parent's (ties keep the parent); `always` keeps the best candidate;
//! 6. score the kept harness on the test set — reported, never used for selection —
//!    together with the next round's feedback run (and, in the last round, its dev
//!    score for best-of-M).
//!
//! Every step is recorded ([`super::records`]); the history a proposer sees is rebuilt
//! from those records, so a resumed trajectory shows the proposer exactly what an
//! uninterrupted one would.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use sha2::{Digest, Sha256};

use super::engine::{ArmLog, Engine, SetResult};
use super::records::{
    CandidateRecord, CandidateStatus, DevBatch, ProposalRecord, ProposedCandidate, RECORD_SCHEMA,
    RoundRecord, SetScore,
};
use super::run_dir::{Appender, RunDir};
use super::sets::SetName;
use super::suite::Selection;
use super::{EvalError, TaskCtx};
use crate::harness::Harness;
use crate::harness::edit::{EditContext, FeedbackExample};
use crate::harness::report::{ExecutionReport, ReportOptions};
use crate::harness::rollout::Rollout;
use crate::proposer::{
    HistoryCandidate, HistoryEntry, ProposalRequest, Proposer, Revision, TokenUse,
};

/// Records of an earlier run in the same directory (for resuming).
#[derive(Default)]
pub struct Prior {
    pub rounds: HashMap<(String, u32), Vec<RoundRecord>>,
    pub proposals: HashMap<(String, u32, u32), ProposalRecord>,
    pub candidates: HashMap<(String, u32, u32), Vec<CandidateRecord>>,
}

impl Prior {
    pub fn new(
        rounds: Vec<RoundRecord>,
        proposals: Vec<ProposalRecord>,
        candidates: Vec<CandidateRecord>,
    ) -> Prior {
        let mut p = Prior::default();
        for r in rounds {
            let v = p.rounds.entry((r.task.clone(), r.sample)).or_default();
            if !v.iter().any(|x| x.round == r.round) {
                v.push(r);
            }
        }
        for v in p.rounds.values_mut() {
            v.sort_by_key(|r| r.round);
        }
        for r in proposals {
            p.proposals
                .entry((r.task.clone(), r.sample, r.round))
                .or_insert(r);
        }
        for c in candidates {
            let v = p
                .candidates
                .entry((c.task.clone(), c.sample, c.round))
                .or_default();
            if !v.iter().any(|x| x.index == c.index) {
                v.push(c);
            }
        }
        for v in p.candidates.values_mut() {
            v.sort_by_key(|c| c.index);
        }
        p
    }
}

/// One proposer's run: its directory, logs, proposer and earlier records.
pub struct Arm {
    pub index: usize,
    pub label: String,
    pub dir: RunDir,
    pub proposer: Arc<dyn Proposer>,
    pub log: Arc<ArmLog>,
    pub proposals: Appender,
    pub candidates: Appender,
    pub rounds: Appender,
    pub prior: Prior,
}

/// What every trajectory shares.
pub struct Shared<'a> {
    pub engine: &'a Engine<'a>,
    pub tasks: &'a [TaskCtx],
    pub rounds: u32,
    pub candidates: usize,
    pub select: Selection,
    pub seed: u64,
    pub report: ReportOptions,
    /// Called after every finished round with (arm, task, round).
    pub on_round: &'a (dyn Fn(usize, usize, u32) + Sync),
}

/// The seed of (task, sample, round) under the run seed.
pub fn round_seed(run_seed: u64, task: &str, sample: u32, round: u32) -> u64 {
    let mut h = Sha256::new();
    h.update(b"harness-rl/round-seed\0");
    h.update(run_seed.to_le_bytes());
    h.update((task.len() as u64).to_le_bytes());
    h.update(task.as_bytes());
    h.update(sample.to_le_bytes());
    h.update(round.to_le_bytes());
    u64::from_le_bytes(h.finalize()[..8].try_into().expect("8 bytes"))
}

/// The history entry of a finished round, from its records.
pub fn history_entry(round: &RoundRecord, candidates: &[CandidateRecord]) -> HistoryEntry {
    HistoryEntry {
        round: round.round,
        parent: round.parent.clone(),
        parent_feedback_score: round.parent_feedback,
        parent_dev_score: round.parent_dev,
        candidates: candidates
            .iter()
            .map(|c| HistoryCandidate {
                index: c.index,
                status: c.status.as_str().into(),
                hash: c.hash.clone(),
                dev_score: c.dev,
                reason: c.reason.clone(),
            })
            .collect(),
        selected: round.selected.clone(),
        accepted: round.accepted,
    }
}

fn set_score(r: &SetResult) -> SetScore {
    SetScore {
        set: r.set,
        harness: r.hash.clone(),
        mean: r.mean,
        scores: r.scores(),
        executor_free: r.executor_free,
        tokens: r.tokens,
    }
}

/// The feedback items `add_example` edits may draw on: each feedback item with the
/// parent's response where it scored 1 (`rollouts` in the items' order; `None` when
/// the parent was not run on the feedback set).
pub fn edit_context(items: &[crate::task::Item], rollouts: Option<&[Rollout]>) -> EditContext {
    EditContext {
        feedback: items
            .iter()
            .enumerate()
            .map(|(i, item)| FeedbackExample {
                item: item.clone(),
                successful_response: rollouts
                    .and_then(|rs| rs.get(i))
                    .filter(|r| r.score >= 1.0 && !r.response.trim().is_empty())
                    .map(|r| r.response.clone()),
            })
            .collect(),
    }
}

/// Token accounting of one trajectory: each (set, harness) evaluation counted once.
struct Tally {
    counted: HashSet<(SetName, String)>,
}

impl Tally {
    fn count(&mut self, r: &SetResult, tokens: &mut u64) {
        if self.counted.insert((r.set, r.hash.clone())) {
            *tokens += r.tokens;
        }
    }
}

/// Run (or finish) trajectory (`task`, `sample`) of `arm`.
pub fn run_trajectory(
    sh: &Shared<'_>,
    arm: &Arm,
    task: usize,
    sample: u32,
) -> Result<(), EvalError> {
    let tc = &sh.tasks[task];
    let tid = tc.def.id.as_str();
    let engine = sh.engine;
    let wants_report = arm.proposer.wants_report();
    let prior: &[RoundRecord] = arm
        .prior
        .rounds
        .get(&(tid.to_string(), sample))
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut tally = Tally {
        counted: HashSet::new(),
    };
    let mut history: Vec<HistoryEntry> = Vec::new();
    let mut current: Arc<Harness> = tc.seed_harness.clone();
    let mut next_round = 0u32;
    // Replay finished rounds.
    for rec in prior {
        if rec.round != next_round {
            break;
        }
        let cands = arm
            .prior
            .candidates
            .get(&(tid.to_string(), sample, rec.round))
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        for (set, h) in rec_used(rec, cands) {
            tally.counted.insert((set, h));
        }
        if rec.round > 0 {
            history.push(history_entry(rec, cands));
        }
        current = if rec.selected == current.hash() {
            current
        } else {
            Arc::new(arm.dir.load_harness(&rec.selected)?)
        };
        next_round += 1;
        (sh.on_round)(arm.index, task, rec.round);
    }
    let score = |reqs: &[(SetName, Arc<Harness>)]| {
        let full: Vec<(usize, SetName, Arc<Harness>)> =
            reqs.iter().map(|(s, h)| (task, *s, h.clone())).collect();
        engine.score(&full, &arm.log)
    };
    if next_round == 0 {
        let t0 = Instant::now();
        let mut reqs = vec![(SetName::Test, current.clone())];
        if wants_report {
            reqs.push((SetName::Feedback, current.clone()));
        }
        let (res, _) = score(&reqs)?;
        let mut tokens = 0;
        tally.count(&res[0], &mut tokens);
        let rec = RoundRecord {
            schema: RECORD_SCHEMA,
            task: tid.into(),
            sample,
            round: 0,
            parent: current.hash(),
            parent_feedback: None,
            parent_dev: None,
            candidates: 0,
            scored: 0,
            duplicate: 0,
            unchanged: 0,
            invalid: 0,
            selected: current.hash(),
            selected_kind: current.kind(),
            accepted: false,
            selected_dev: None,
            test: set_score(&res[0]),
            executor_tokens: tokens,
            proposer_tokens: TokenUse::default(),
            dev_batch: None,
            wall_ms: t0.elapsed().as_millis() as u64,
        };
        arm.rounds.append(&rec)?;
        (sh.on_round)(arm.index, task, 0);
        next_round = 1;
    }
    for round in next_round..=sh.rounds {
        if engine.is_aborted() {
            return Err(EvalError::Aborted("the run stopped".into()));
        }
        let t0 = Instant::now();
        let mut tokens = 0u64;
        let parent = current.clone();
        let parent_hash = parent.hash();
        // 1. Feedback and report.
        let (report, feedback_score, edit_ctx) = if wants_report {
            let (res, _) = score(&[(SetName::Feedback, parent.clone())])?;
            let fb = &res[0];
            tally.count(fb, &mut tokens);
            let report = ExecutionReport::from_rollouts(&fb.rollouts, &sh.report);
            let ctx = edit_context(&engine.sets(task).feedback, Some(&fb.rollouts));
            (Some(report), Some(fb.mean), ctx)
        } else {
            let ctx = edit_context(&engine.sets(task).feedback, None);
            (None, None, ctx)
        };
        // 2. Proposal (replayed when recorded).
        let key = (tid.to_string(), sample, round);
        let mut fresh: HashMap<String, Arc<Harness>> = HashMap::new();
        let proposal = match arm.prior.proposals.get(&key) {
            Some(p) => p.clone(),
            None => {
                let seed = round_seed(sh.seed, tid, sample, round);
                let tp = Instant::now();
                let p = {
                    let _busy = engine.busy.enter();
                    arm.proposer.propose(&ProposalRequest {
                        task: &tc.info,
                        harness: &parent,
                        report: report.as_ref(),
                        feedback: &edit_ctx,
                        history: &history,
                        candidates: sh.candidates,
                        seed,
                        sample,
                        round,
                    })?
                };
                let mut cands = Vec::new();
                for c in p.candidates.into_iter().take(sh.candidates) {
                    let (hash, kind, form, reason) = match c.revision {
                        Revision::Harness { harness, form } => {
                            arm.dir.save_harness(&harness)?;
                            let h = harness.hash();
                            let kind = harness.kind();
                            fresh.insert(h.clone(), Arc::new(harness));
                            (Some(h), Some(kind), Some(form), None)
                        }
                        Revision::Invalid { reason } => (None, None, None, Some(reason)),
                    };
                    cands.push(ProposedCandidate {
                        hash,
                        kind,
                        form,
                        reason,
                        raw: c.raw,
                        tokens: c.tokens,
                        cached: c.cached,
                    });
                }
                let rec = ProposalRecord {
                    schema: RECORD_SCHEMA,
                    task: tid.into(),
                    sample,
                    round,
                    parent: parent_hash.clone(),
                    seed,
                    prompt: p.prompt,
                    candidates: cands,
                    wall_ms: tp.elapsed().as_millis() as u64,
                };
                arm.proposals.append(&rec)?;
                rec
            }
        };
        let mut proposer_tokens = TokenUse::default();
        for c in &proposal.candidates {
            proposer_tokens.add(c.tokens);
        }
        // 3. Sort the candidates.
        let mut status: Vec<CandidateStatus> = Vec::new();
        let mut reasons: Vec<Option<String>> = Vec::new();
        let mut first_of: HashMap<String, usize> = HashMap::new();
        let mut to_score: Vec<Arc<Harness>> = Vec::new();
        for c in &proposal.candidates {
            let (st, reason) = match &c.hash {
                None => (
                    CandidateStatus::Invalid,
                    c.reason.clone().or(Some("invalid".into())),
                ),
                Some(h) if *h == parent_hash => (CandidateStatus::Unchanged, None),
                Some(h) if first_of.contains_key(h) => (CandidateStatus::Duplicate, None),
                Some(h) => {
                    let harness = match fresh.get(h) {
                        Some(x) => x.clone(),
                        None => Arc::new(arm.dir.load_harness(h)?),
                    };
                    match engine.check(&harness) {
                        Err(e) => (
                            CandidateStatus::Invalid,
                            Some(format!("the program does not compile: {e}")),
                        ),
                        Ok(()) => {
                            first_of.insert(h.clone(), status.len());
                            to_score.push(harness);
                            (CandidateStatus::Scored, None)
                        }
                    }
                }
            };
            status.push(st);
            reasons.push(reason);
        }
        // 4. Dev scoring: the parent and every new candidate, one batch.
        let mut dev: HashMap<String, f64> = HashMap::new();
        let mut parent_dev = None;
        let mut dev_batch = None;
        if !to_score.is_empty() {
            let mut reqs = vec![(SetName::Dev, parent.clone())];
            reqs.extend(to_score.iter().map(|h| (SetName::Dev, h.clone())));
            let (res, stats) = score(&reqs)?;
            for r in &res {
                tally.count(r, &mut tokens);
                dev.insert(r.hash.clone(), r.mean);
            }
            parent_dev = Some(res[0].mean);
            dev_batch = Some(DevBatch {
                harnesses: reqs.len(),
                rollouts: stats.rollouts,
                run: stats.run,
            });
        }
        // 5. Select.
        let mut best: Option<(usize, f64)> = None;
        for (i, st) in status.iter().enumerate() {
            if *st != CandidateStatus::Scored {
                continue;
            }
            let h = proposal.candidates[i].hash.as_ref().expect("scored");
            let d = dev[h];
            if best.is_none_or(|(_, b)| d > b) {
                best = Some((i, d));
            }
        }
        let chosen = match (sh.select, best, parent_dev) {
            (Selection::Best, Some((i, d)), Some(p)) if d > p => Some(i),
            (Selection::Always, Some((i, _)), _) => Some(i),
            _ => None,
        };
        let selected: Arc<Harness> = match chosen {
            Some(i) => {
                let h = proposal.candidates[i].hash.as_ref().expect("scored");
                to_score
                    .iter()
                    .find(|x| x.hash() == *h)
                    .cloned()
                    .expect("a scored candidate")
            }
            None => parent.clone(),
        };
        let selected_hash = selected.hash();
        // 6. Candidate records.
        let written: HashSet<usize> = arm
            .prior
            .candidates
            .get(&key)
            .map(|v| v.iter().map(|c| c.index).collect())
            .unwrap_or_default();
        let mut cand_records = Vec::new();
        for (i, c) in proposal.candidates.iter().enumerate() {
            let rec = CandidateRecord {
                schema: RECORD_SCHEMA,
                task: tid.into(),
                sample,
                round,
                index: i,
                parent: parent_hash.clone(),
                status: status[i],
                hash: c.hash.clone(),
                kind: c.kind,
                form: c.form,
                dev: c.hash.as_ref().and_then(|h| dev.get(h).copied()),
                reason: reasons[i].clone(),
                raw: c.raw.clone(),
                tokens: c.tokens,
                selected: chosen == Some(i),
            };
            if !written.contains(&i) {
                arm.candidates.append(&rec)?;
            }
            cand_records.push(rec);
        }
        // 7. Test (never used for selection), the next feedback run, the final dev.
        let mut reqs = vec![(SetName::Test, selected.clone())];
        if round < sh.rounds && wants_report {
            reqs.push((SetName::Feedback, selected.clone()));
        }
        let mut selected_dev = dev.get(&selected_hash).copied();
        let need_dev = round == sh.rounds && selected_dev.is_none();
        if need_dev {
            reqs.push((SetName::Dev, selected.clone()));
        }
        let (res, _) = score(&reqs)?;
        tally.count(&res[0], &mut tokens);
        if need_dev {
            let d = res.last().expect("the dev result");
            tally.count(d, &mut tokens);
            selected_dev = Some(d.mean);
        }
        let rec = RoundRecord {
            schema: RECORD_SCHEMA,
            task: tid.into(),
            sample,
            round,
            parent: parent_hash.clone(),
            parent_feedback: feedback_score,
            parent_dev,
            candidates: status.len(),
            scored: status
                .iter()
                .filter(|s| **s == CandidateStatus::Scored)
                .count(),
            duplicate: status
                .iter()
                .filter(|s| **s == CandidateStatus::Duplicate)
                .count(),
            unchanged: status
                .iter()
                .filter(|s| **s == CandidateStatus::Unchanged)
                .count(),
            invalid: status
                .iter()
                .filter(|s| **s == CandidateStatus::Invalid)
                .count(),
            selected: selected_hash,
            selected_kind: selected.kind(),
            accepted: chosen.is_some(),
            selected_dev,
            test: set_score(&res[0]),
            executor_tokens: tokens,
            proposer_tokens,
            dev_batch,
            wall_ms: t0.elapsed().as_millis() as u64,
        };
        arm.rounds.append(&rec)?;
        history.push(history_entry(&rec, &cand_records));
        current = selected;
        (sh.on_round)(arm.index, task, round);
    }
    Ok(())
}

/// The set evaluations a finished round counted, reconstructed for resuming: the
/// kept harness's test set, the parent's feedback set (when recorded), and the dev
/// sets of the parent and of every scored candidate (and the kept harness's in the
/// last round).
fn rec_used(rec: &RoundRecord, candidates: &[CandidateRecord]) -> Vec<(SetName, String)> {
    let mut v = vec![(SetName::Test, rec.test.harness.clone())];
    if rec.parent_feedback.is_some() {
        v.push((SetName::Feedback, rec.parent.clone()));
    }
    if rec.parent_dev.is_some() {
        v.push((SetName::Dev, rec.parent.clone()));
    }
    if rec.selected_dev.is_some() {
        v.push((SetName::Dev, rec.selected.clone()));
    }
    for c in candidates {
        if c.status == CandidateStatus::Scored
            && let Some(h) = &c.hash
        {
            v.push((SetName::Dev, h.clone()));
        }
    }
    v
}
