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

use super::EvalError;
use super::engine::{ArmLog, Engine, ScoreStats, SetResult};
use super::prepare::EvalTask;
use super::sets::SetName;
use super::suite::Selection;
use crate::harness::Harness;
use crate::harness::edit::{EditContext, FeedbackExample};
use crate::harness::execution_report::{ExecutionReport, ExecutionReportOptions};
use crate::harness::rollout::Rollout;
use crate::proposer::{
    HistoryCandidate, HistoryEntry, ProposalRequest, Proposer, Revision, TokenUse,
};
use crate::records::run_dir::{Appender, RunDir};
use crate::records::{
    CandidateRecord, CandidateStatus, DevBatch, ProposalRecord, ProposedCandidate, RECORD_SCHEMA,
    RoundRecord, SetScore,
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
    pub tasks: &'a [EvalTask],
    pub rounds: u32,
    pub candidates: usize,
    pub select: Selection,
    pub seed: u64,
    pub report: ExecutionReportOptions,
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

/// Run (or finish) trajectory (`task`, `sample`) of `arm`: replay the rounds the run
/// directory already holds, score the seed harness (round 0) if it is not recorded,
/// then the remaining rounds.
pub fn run_trajectory(
    sh: &Shared<'_>,
    arm: &Arm,
    task: usize,
    sample: u32,
) -> Result<(), EvalError> {
    let mut t = Trajectory {
        sh,
        arm,
        task,
        sample,
        tally: Tally {
            counted: HashSet::new(),
        },
        history: Vec::new(),
        current: sh.tasks[task].seed_harness.clone(),
    };
    let mut next_round = t.replay()?;
    if next_round == 0 {
        t.round_zero()?;
        next_round = 1;
    }
    for round in next_round..=sh.rounds {
        if sh.engine.is_aborted() {
            return Err(EvalError::Aborted("the run stopped".into()));
        }
        t.round(round)?;
    }
    Ok(())
}

/// One trajectory in progress: the harness it stands on and the history its proposer
/// has seen.
struct Trajectory<'s, 'a> {
    sh: &'s Shared<'a>,
    arm: &'s Arm,
    task: usize,
    sample: u32,
    tally: Tally,
    history: Vec<HistoryEntry>,
    current: Arc<Harness>,
}

/// Step 1 of a round: the parent's feedback run.
struct Feedback {
    report: Option<ExecutionReport>,
    score: Option<f64>,
    edit_ctx: EditContext,
}

/// Step 3 of a round: each candidate's status, and the new ones to score.
struct Sorted {
    status: Vec<CandidateStatus>,
    reasons: Vec<Option<String>>,
    to_score: Vec<Arc<Harness>>,
}

/// Step 4 of a round: dev scores by harness hash.
struct DevScores {
    by_hash: HashMap<String, f64>,
    parent: Option<f64>,
    batch: Option<DevBatch>,
}

impl Trajectory<'_, '_> {
    fn tid(&self) -> &str {
        self.sh.tasks[self.task].def.id.as_str()
    }

    /// Score harnesses on sets of this trajectory's task (one engine call).
    fn score(
        &self,
        reqs: &[(SetName, Arc<Harness>)],
    ) -> Result<(Vec<Arc<SetResult>>, ScoreStats), EvalError> {
        let full: Vec<(usize, SetName, Arc<Harness>)> = reqs
            .iter()
            .map(|(s, h)| (self.task, *s, h.clone()))
            .collect();
        self.sh.engine.score(&full, &self.arm.log)
    }

    /// Replay the rounds already recorded (a resumed run); the next round to run.
    fn replay(&mut self) -> Result<u32, EvalError> {
        let (arm, tid) = (self.arm, self.tid().to_string());
        let prior: &[RoundRecord] = arm
            .prior
            .rounds
            .get(&(tid.clone(), self.sample))
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let mut next_round = 0u32;
        for rec in prior {
            if rec.round != next_round {
                break;
            }
            let cands = arm
                .prior
                .candidates
                .get(&(tid.clone(), self.sample, rec.round))
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            for (set, h) in rec_used(rec, cands) {
                self.tally.counted.insert((set, h));
            }
            if rec.round > 0 {
                self.history.push(history_entry(rec, cands));
            }
            if rec.selected != self.current.hash() {
                self.current = Arc::new(arm.dir.load_harness(&rec.selected)?);
            }
            next_round += 1;
            (self.sh.on_round)(arm.index, self.task, rec.round);
        }
        Ok(next_round)
    }

    /// Round 0: the seed harness on the test set (and its first feedback run).
    fn round_zero(&mut self) -> Result<(), EvalError> {
        let t0 = Instant::now();
        let current = self.current.clone();
        let mut reqs = vec![(SetName::Test, current.clone())];
        if self.arm.proposer.wants_report() {
            reqs.push((SetName::Feedback, current.clone()));
        }
        let (res, _) = self.score(&reqs)?;
        let mut tokens = 0;
        self.tally.count(&res[0], &mut tokens);
        let rec = RoundRecord {
            schema: RECORD_SCHEMA,
            task: self.tid().into(),
            sample: self.sample,
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
        self.arm.rounds.append(&rec)?;
        (self.sh.on_round)(self.arm.index, self.task, 0);
        Ok(())
    }

    /// One round r >= 1: feedback, proposal, sorting, dev batch, selection, records,
    /// test.
    fn round(&mut self, round: u32) -> Result<(), EvalError> {
        let t0 = Instant::now();
        let mut tokens = 0u64;
        let parent = self.current.clone();
        let feedback = self.feedback(&parent, &mut tokens)?;
        let (proposal, fresh) = self.proposal(round, &parent, &feedback)?;
        let sorted = self.sort(&proposal, &parent, &fresh)?;
        let dev = self.score_dev(&parent, &sorted.to_score, &mut tokens)?;
        let chosen = select(self.sh.select, &proposal, &sorted, &dev);
        let selected: Arc<Harness> = match chosen {
            Some(i) => {
                let h = proposal.candidates[i].hash.as_ref().expect("scored");
                sorted
                    .to_score
                    .iter()
                    .find(|x| x.hash() == *h)
                    .cloned()
                    .expect("a scored candidate")
            }
            None => parent.clone(),
        };
        let cand_records = self.record_candidates(round, &proposal, &sorted, &dev, chosen)?;
        // Test (never used for selection), the next feedback run, the final dev.
        let selected_hash = selected.hash();
        let mut reqs = vec![(SetName::Test, selected.clone())];
        if round < self.sh.rounds && self.arm.proposer.wants_report() {
            reqs.push((SetName::Feedback, selected.clone()));
        }
        let mut selected_dev = dev.by_hash.get(&selected_hash).copied();
        let need_dev = round == self.sh.rounds && selected_dev.is_none();
        if need_dev {
            reqs.push((SetName::Dev, selected.clone()));
        }
        let (res, _) = self.score(&reqs)?;
        self.tally.count(&res[0], &mut tokens);
        if need_dev {
            let d = res.last().expect("the dev result");
            self.tally.count(d, &mut tokens);
            selected_dev = Some(d.mean);
        }
        let count = |st: CandidateStatus| sorted.status.iter().filter(|s| **s == st).count();
        let mut proposer_tokens = TokenUse::default();
        for c in &proposal.candidates {
            proposer_tokens.add(c.tokens);
        }
        let rec = RoundRecord {
            schema: RECORD_SCHEMA,
            task: self.tid().into(),
            sample: self.sample,
            round,
            parent: parent.hash(),
            parent_feedback: feedback.score,
            parent_dev: dev.parent,
            candidates: sorted.status.len(),
            scored: count(CandidateStatus::Scored),
            duplicate: count(CandidateStatus::Duplicate),
            unchanged: count(CandidateStatus::Unchanged),
            invalid: count(CandidateStatus::Invalid),
            selected: selected_hash,
            selected_kind: selected.kind(),
            accepted: chosen.is_some(),
            selected_dev,
            test: set_score(&res[0]),
            executor_tokens: tokens,
            proposer_tokens,
            dev_batch: dev.batch,
            wall_ms: t0.elapsed().as_millis() as u64,
        };
        self.arm.rounds.append(&rec)?;
        self.history.push(history_entry(&rec, &cand_records));
        self.current = selected;
        (self.sh.on_round)(self.arm.index, self.task, round);
        Ok(())
    }

    /// Step 1: The parent on the feedback set and its report (skipped for proposers that
    /// read no report).
    fn feedback(&mut self, parent: &Arc<Harness>, tokens: &mut u64) -> Result<Feedback, EvalError> {
        let items = &self.sh.engine.sets(self.task).feedback;
        if !self.arm.proposer.wants_report() {
            return Ok(Feedback {
                report: None,
                score: None,
                edit_ctx: edit_context(items, None),
            });
        }
        let (res, _) = self.score(&[(SetName::Feedback, parent.clone())])?;
        let fb = &res[0];
        self.tally.count(fb, tokens);
        Ok(Feedback {
            report: Some(ExecutionReport::from_rollouts(
                &fb.rollouts,
                &self.sh.report,
            )),
            score: Some(fb.mean),
            edit_ctx: edit_context(items, Some(&fb.rollouts)),
        })
    }

    /// Step 2: The proposal: replayed when recorded, else asked for (seeded per task,
    /// sample and round) and recorded, its harnesses saved. Returns the harnesses
    /// parsed in this process by hash.
    fn proposal(
        &self,
        round: u32,
        parent: &Arc<Harness>,
        feedback: &Feedback,
    ) -> Result<(ProposalRecord, HashMap<String, Arc<Harness>>), EvalError> {
        let (sh, arm, tid) = (self.sh, self.arm, self.tid());
        let mut fresh: HashMap<String, Arc<Harness>> = HashMap::new();
        let key = (tid.to_string(), self.sample, round);
        if let Some(p) = arm.prior.proposals.get(&key) {
            return Ok((p.clone(), fresh));
        }
        let seed = round_seed(sh.seed, tid, self.sample, round);
        let tp = Instant::now();
        let p = {
            let _busy = sh.engine.busy.enter();
            arm.proposer.propose(&ProposalRequest {
                task: &sh.tasks[self.task].info,
                harness: parent,
                report: feedback.report.as_ref(),
                feedback: &feedback.edit_ctx,
                history: &self.history,
                candidates: sh.candidates,
                seed,
                sample: self.sample,
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
            sample: self.sample,
            round,
            parent: parent.hash(),
            seed,
            prompt: p.prompt,
            candidates: cands,
            wall_ms: tp.elapsed().as_millis() as u64,
        };
        arm.proposals.append(&rec)?;
        Ok((rec, fresh))
    }

    /// Step 3: Sort the candidates: invalid, unchanged (the parent's hash), duplicate (an
    /// earlier candidate's hash), or new (a program must compile).
    fn sort(
        &self,
        proposal: &ProposalRecord,
        parent: &Arc<Harness>,
        fresh: &HashMap<String, Arc<Harness>>,
    ) -> Result<Sorted, EvalError> {
        let parent_hash = parent.hash();
        let mut out = Sorted {
            status: Vec::new(),
            reasons: Vec::new(),
            to_score: Vec::new(),
        };
        let mut seen: HashSet<String> = HashSet::new();
        for c in &proposal.candidates {
            let (st, reason) = match &c.hash {
                None => (
                    CandidateStatus::Invalid,
                    c.reason.clone().or(Some("invalid".into())),
                ),
                Some(h) if *h == parent_hash => (CandidateStatus::Unchanged, None),
                Some(h) if seen.contains(h) => (CandidateStatus::Duplicate, None),
                Some(h) => {
                    let harness = match fresh.get(h) {
                        Some(x) => x.clone(),
                        None => Arc::new(self.arm.dir.load_harness(h)?),
                    };
                    match self.sh.engine.check(&harness) {
                        Err(e) => (
                            CandidateStatus::Invalid,
                            Some(format!("the program does not compile: {e}")),
                        ),
                        Ok(()) => {
                            seen.insert(h.clone());
                            out.to_score.push(harness);
                            (CandidateStatus::Scored, None)
                        }
                    }
                }
            };
            out.status.push(st);
            out.reasons.push(reason);
        }
        Ok(out)
    }

    /// Step 4: Dev scoring: the parent and every new candidate, one batch.
    fn score_dev(
        &mut self,
        parent: &Arc<Harness>,
        to_score: &[Arc<Harness>],
        tokens: &mut u64,
    ) -> Result<DevScores, EvalError> {
        let mut out = DevScores {
            by_hash: HashMap::new(),
            parent: None,
            batch: None,
        };
        if to_score.is_empty() {
            return Ok(out);
        }
        let mut reqs = vec![(SetName::Dev, parent.clone())];
        reqs.extend(to_score.iter().map(|h| (SetName::Dev, h.clone())));
        let (res, stats) = self.score(&reqs)?;
        for r in &res {
            self.tally.count(r, tokens);
            out.by_hash.insert(r.hash.clone(), r.mean);
        }
        out.parent = Some(res[0].mean);
        out.batch = Some(DevBatch {
            harnesses: reqs.len(),
            rollouts: stats.rollouts,
            run: stats.run,
        });
        Ok(out)
    }

    /// Step 6: The candidate records (those a resumed run already wrote are not written
    /// again).
    fn record_candidates(
        &self,
        round: u32,
        proposal: &ProposalRecord,
        sorted: &Sorted,
        dev: &DevScores,
        chosen: Option<usize>,
    ) -> Result<Vec<CandidateRecord>, EvalError> {
        let key = (self.tid().to_string(), self.sample, round);
        let written: HashSet<usize> = self
            .arm
            .prior
            .candidates
            .get(&key)
            .map(|v| v.iter().map(|c| c.index).collect())
            .unwrap_or_default();
        // The round's parent is still the current harness.
        let parent = self.current.hash();
        let mut out = Vec::new();
        for (i, c) in proposal.candidates.iter().enumerate() {
            let rec = CandidateRecord {
                schema: RECORD_SCHEMA,
                task: self.tid().into(),
                sample: self.sample,
                round,
                index: i,
                parent: parent.clone(),
                status: sorted.status[i],
                hash: c.hash.clone(),
                kind: c.kind,
                form: c.form,
                dev: c.hash.as_ref().and_then(|h| dev.by_hash.get(h).copied()),
                reason: sorted.reasons[i].clone(),
                raw: c.raw.clone(),
                tokens: c.tokens,
                selected: chosen == Some(i),
            };
            if !written.contains(&i) {
                self.arm.candidates.append(&rec)?;
            }
            out.push(rec);
        }
        Ok(out)
    }
}

/// Step 5, selection: `best` keeps the best scored candidate (ties: the earliest) if its
/// dev score beats the parent's (ties keep the parent); `always` keeps the best.
fn select(
    rule: Selection,
    proposal: &ProposalRecord,
    sorted: &Sorted,
    dev: &DevScores,
) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, st) in sorted.status.iter().enumerate() {
        if *st != CandidateStatus::Scored {
            continue;
        }
        let h = proposal.candidates[i].hash.as_ref().expect("scored");
        let d = dev.by_hash[h];
        if best.is_none_or(|(_, b)| d > b) {
            best = Some((i, d));
        }
    }
    match (rule, best, dev.parent) {
        (Selection::Best, Some((i, d)), Some(p)) if d > p => Some(i),
        (Selection::Always, Some((i, _)), _) => Some(i),
        _ => None,
    }
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
