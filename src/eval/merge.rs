//! `hrl merge DIR... --out DIR`: combine the run directories of the shards of one run
//! (`--shard I/N`, see [`crate::shard`]) into the run directory the unsharded run
//! would have written. Three kinds of directory merge:
//!
//! - an `hrl eval` run directory (`config.json`): the records of every shard are
//!   joined (rounds, candidates and proposals of the shard's own units; rollouts
//!   de-duplicated by key, since shards re-run shared work such as the seed harness's
//!   test set), harness files are copied, and `summary.json` is recomputed from the
//!   joined records — so the summary equals the unsharded run's outside `run_stats`;
//! - an `hrl eval` output directory of several proposers (`eval.json`): each
//!   proposer's run directory is merged as above, and `eval.json` written;
//! - an `hrl transfer` output directory (`transfer.json`): its run directories are
//!   merged, then the index is rewritten without its shard;
//! - an `hrl run` directory (`shard.json` beside `summary.json`): the rollouts of every
//!   shard, put back in item order, and the summary recomputed.
//!
//! The Markdown and HTML beside the records (`report.md`, `comparison.md`,
//! `transfer.md`) are rendered afterwards by `report::outputs`, as after any run.
//!
//! Refused, with the directory and the reason named: a directory that is not a shard;
//! shards of different runs (the first differing setting is named); a shard given
//! twice; a missing shard; a shard whose trajectories did not all finish (resume it
//! first); an output directory that already holds a run.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::config::EvalConfig;
use super::summary::{self, RunStats, Summary};
use super::{ArmOutcome, EvalError, INVOCATION, read_json, transfer};
use crate::harness::job::{JOB_SHARD, JobShardRecord, JobSummary};
use crate::harness::rollout::Rollout;
use crate::records::run_dir::{self, RunDir};
use crate::records::{self, CandidateRecord, ProposalRecord, RoundRecord};
use crate::shard::Shard;

/// The record of a merge (`merge.json` in the merged directory).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergeRecord {
    pub kind: String,
    pub shard_count: u32,
    /// The shard directories, in shard order.
    pub sources: Vec<MergeSource>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergeSource {
    pub shard: Shard,
    pub dir: PathBuf,
}

impl MergeRecord {
    /// The record of merging `shards` (ordered by [`order_shards`]).
    fn of<T>(kind: &str, shards: &[(PathBuf, Shard, T)]) -> MergeRecord {
        MergeRecord {
            kind: kind.into(),
            shard_count: shards[0].1.count(),
            sources: shards
                .iter()
                .map(|(d, s, _)| MergeSource {
                    shard: *s,
                    dir: d.clone(),
                })
                .collect(),
        }
    }
}

pub const MERGE_RECORD: &str = "merge.json";

/// What a merge produced.
#[derive(Debug, Clone)]
pub enum Merged {
    /// `hrl eval` / `hrl transfer` run directories (one per proposer or K setting).
    Eval(Vec<ArmOutcome>),
    /// An `hrl run` directory.
    Run(Box<JobSummary>),
}

/// The kind of a directory to merge.
enum Kind {
    Transfer,
    EvalMulti,
    EvalOne,
    Run,
}

fn kind_of(dir: &Path) -> Result<Kind, EvalError> {
    if dir.join(transfer::INDEX).exists() {
        Ok(Kind::Transfer)
    } else if dir.join(INVOCATION).exists() {
        Ok(Kind::EvalMulti)
    } else if dir.join(run_dir::CONFIG).exists() {
        Ok(Kind::EvalOne)
    } else if dir.join(JOB_SHARD).exists() {
        Ok(Kind::Run)
    } else if dir.is_dir() {
        Err(EvalError::Usage(format!(
            "{}: not a run directory of hrl eval, hrl transfer or a sharded hrl run (no {}, {INVOCATION}, {} or {JOB_SHARD})",
            dir.display(),
            transfer::INDEX,
            run_dir::CONFIG
        )))
    } else {
        Err(EvalError::Usage(format!(
            "{}: no such directory",
            dir.display()
        )))
    }
}

/// Merge the shard directories `sources` into `out`.
pub fn merge(sources: &[PathBuf], out: &Path) -> Result<Merged, EvalError> {
    if sources.is_empty() {
        return Err(EvalError::Usage(
            "hrl merge: give the shard directories".into(),
        ));
    }
    let kinds: Vec<Kind> = sources
        .iter()
        .map(|d| kind_of(d))
        .collect::<Result<_, _>>()?;
    let name = |k: &Kind| match k {
        Kind::Transfer => "an hrl transfer directory",
        Kind::EvalMulti => "an hrl eval directory of several proposers",
        Kind::EvalOne => "an hrl eval run directory",
        Kind::Run => "an hrl run directory",
    };
    for (d, k) in sources.iter().zip(&kinds).skip(1) {
        if std::mem::discriminant(k) != std::mem::discriminant(&kinds[0]) {
            return Err(EvalError::Usage(format!(
                "{} is {} but {} is {}: shards of one run are directories of one kind",
                d.display(),
                name(k),
                sources[0].display(),
                name(&kinds[0])
            )));
        }
    }
    if out.join(run_dir::CONFIG).exists()
        || out.join(INVOCATION).exists()
        || out.join(transfer::INDEX).exists()
        || out.join("summary.json").exists()
    {
        return Err(EvalError::Usage(format!(
            "{} already holds a run; merge into a new directory",
            out.display()
        )));
    }
    if sources.iter().any(|s| same_path(s, out)) {
        return Err(EvalError::Usage(format!(
            "{}: the output directory is one of the shards",
            out.display()
        )));
    }
    match kinds[0] {
        Kind::Transfer => merge_transfer(sources, out).map(Merged::Eval),
        Kind::EvalMulti => merge_multi(sources, out).map(Merged::Eval),
        Kind::EvalOne => merge_eval(sources, out).map(|o| Merged::Eval(vec![o])),
        Kind::Run => merge_run(sources, out).map(|s| Merged::Run(Box::new(s))),
    }
}

fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// Order shard directories by shard index, refusing duplicates, missing shards and
/// differing counts. `shard_of` reads a directory's shard (`None`: not a shard).
fn order_shards<T>(
    items: Vec<(PathBuf, Option<Shard>, T)>,
) -> Result<Vec<(PathBuf, Shard, T)>, EvalError> {
    let mut out: Vec<(PathBuf, Shard, T)> = Vec::new();
    for (dir, shard, x) in items {
        let Some(shard) = shard else {
            return Err(EvalError::Usage(format!(
                "{}: not a shard (the run was not started with --shard I/N); there is nothing to merge",
                dir.display()
            )));
        };
        out.push((dir, shard, x));
    }
    let n = out[0].1.count();
    for (d, s, _) in &out {
        if s.count() != n {
            return Err(EvalError::Usage(format!(
                "{} is shard {s} but {} is shard {}: shards of one run have one count",
                d.display(),
                out[0].0.display(),
                out[0].1
            )));
        }
    }
    out.sort_by_key(|(_, s, _)| s.index());
    for w in out.windows(2) {
        if w[0].1 == w[1].1 {
            return Err(EvalError::Usage(format!(
                "shard {} is given twice: {} and {}",
                w[0].1,
                w[0].0.display(),
                w[1].0.display()
            )));
        }
    }
    let have: HashSet<u32> = out.iter().map(|(_, s, _)| s.index()).collect();
    let missing: Vec<String> = (1..=n)
        .filter(|i| !have.contains(i))
        .map(|i| format!("{i}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(EvalError::Usage(format!(
            "missing shard{} {} (given: {})",
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", "),
            out.iter()
                .map(|(d, s, _)| format!("{s} = {}", d.display()))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(out)
}

/// The first setting in which two shards' configs differ (they must be parts of one
/// run), or `None`.
fn run_difference(a: &EvalConfig, b: &EvalConfig) -> Option<String> {
    if let Some(f) = a.incompatibility(b) {
        return Some(f);
    }
    let pairs: [(&str, serde_json::Value, serde_json::Value); 7] = [
        (
            "proposer",
            a.proposer.spec.clone().into(),
            b.proposer.spec.clone().into(),
        ),
        (
            "suite",
            a.settings.suite.sha256.clone().into(),
            b.settings.suite.sha256.clone().into(),
        ),
        (
            "proposers",
            serde_json::json!(a.settings.proposers),
            serde_json::json!(b.settings.proposers),
        ),
        (
            "limit",
            serde_json::json!(a.settings.limit),
            serde_json::json!(b.settings.limit),
        ),
        (
            "crate_version",
            a.crate_version.clone().into(),
            b.crate_version.clone().into(),
        ),
        (
            "proposer_settings",
            serde_json::json!(a.settings.proposer_settings),
            serde_json::json!(b.settings.proposer_settings),
        ),
        (
            "build",
            serde_json::json!(a.build),
            serde_json::json!(b.build),
        ),
    ];
    pairs
        .into_iter()
        .find(|(_, x, y)| x != y)
        .map(|(f, _, _)| f.to_string())
}

/// Merge the shards of one `hrl eval` run directory into `out`.
pub fn merge_eval(sources: &[PathBuf], out: &Path) -> Result<ArmOutcome, EvalError> {
    let mut items = Vec::new();
    for d in sources {
        let c: EvalConfig = read_json(&d.join(run_dir::CONFIG))?;
        items.push((d.clone(), c.settings.shard, c));
    }
    let shards = order_shards(items)?;
    let (first_dir, _, first) = &shards[0];
    for (d, _, c) in &shards[1..] {
        if let Some(f) = run_difference(first, c) {
            return Err(EvalError::Usage(format!(
                "{} is a shard of another run than {}: `{f}` differs",
                d.display(),
                first_dir.display()
            )));
        }
    }
    let settings = &first.settings;
    let k = settings.rounds;
    let task_index: HashMap<&str, usize> = first
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.def.id.as_str(), i))
        .collect();
    let unit_of = |task: &str, sample: u32, dir: &Path| -> Result<usize, EvalError> {
        let t = task_index.get(task).ok_or_else(|| {
            EvalError::Records(format!(
                "{}: a record of unknown task `{task}`",
                dir.display()
            ))
        })?;
        if sample >= settings.samples {
            return Err(EvalError::Records(format!(
                "{}: a record of harness sample {sample} (the run has {})",
                dir.display(),
                settings.samples
            )));
        }
        Ok(settings.unit(*t, sample))
    };
    let mut rounds: Vec<RoundRecord> = Vec::new();
    let mut candidates: Vec<CandidateRecord> = Vec::new();
    let mut proposals: Vec<ProposalRecord> = Vec::new();
    let mut rollouts: Vec<Rollout> = Vec::new();
    let mut rollout_keys = HashSet::new();
    let mut stats = Vec::new();
    for (dir, shard, _) in &shards {
        let rs: Vec<RoundRecord> = records::read(&dir.join(run_dir::ROUNDS))?;
        let cs: Vec<CandidateRecord> = records::read(&dir.join(run_dir::CANDIDATES))?;
        let ps: Vec<ProposalRecord> = records::read(&dir.join(run_dir::PROPOSALS))?;
        // Every unit of the shard must be finished.
        let mut have: BTreeMap<(String, u32), HashSet<u32>> = BTreeMap::new();
        for r in &rs {
            let u = unit_of(&r.task, r.sample, dir)?;
            if !shard.contains(u) {
                return Err(EvalError::Records(format!(
                    "{}: holds task {} harness sample {}, which is not a unit of shard {shard}",
                    dir.display(),
                    r.task,
                    r.sample
                )));
            }
            have.entry((r.task.clone(), r.sample))
                .or_default()
                .insert(r.round);
        }
        for (ti, t) in first.tasks.iter().enumerate() {
            for m in 0..settings.samples {
                if !shard.contains(settings.unit(ti, m)) {
                    continue;
                }
                let n = have
                    .get(&(t.def.id.clone(), m))
                    .map_or(0, |h| (0..=k).filter(|r| h.contains(r)).count());
                if n < k as usize + 1 {
                    return Err(EvalError::Usage(format!(
                        "{}: shard {shard} is incomplete (task {} harness sample {m} has {n} of {} rounds); finish it with `hrl eval --resume` first",
                        dir.display(),
                        t.def.id,
                        k + 1
                    )));
                }
            }
        }
        for c in &cs {
            if !shard.contains(unit_of(&c.task, c.sample, dir)?) {
                return Err(EvalError::Records(format!(
                    "{}: a candidate of task {} harness sample {} is not a unit of shard {shard}",
                    dir.display(),
                    c.task,
                    c.sample
                )));
            }
        }
        for p in &ps {
            unit_of(&p.task, p.sample, dir)?;
        }
        rounds.extend(rs);
        candidates.extend(cs);
        proposals.extend(ps);
        let ro: Vec<Rollout> = records::read(&dir.join(run_dir::ROLLOUTS))?;
        for r in ro {
            if rollout_keys.insert(r.key()) {
                rollouts.push(r);
            }
        }
        if let Ok(s) = read_json::<Summary>(&dir.join(run_dir::SUMMARY)) {
            stats.push(s.run_stats);
        }
    }
    // A canonical order (the unsharded run's order is its completion order).
    let ti = |t: &str| task_index.get(t).copied().unwrap_or(usize::MAX);
    rounds.sort_by_key(|r| (ti(&r.task), r.sample, r.round));
    rounds.dedup_by_key(|r| (r.task.clone(), r.sample, r.round));
    candidates.sort_by_key(|c| (ti(&c.task), c.sample, c.round, c.index));
    candidates.dedup_by_key(|c| (c.task.clone(), c.sample, c.round, c.index));
    proposals.sort_by_key(|p| (ti(&p.task), p.sample, p.round));
    proposals.dedup_by_key(|p| (p.task.clone(), p.sample, p.round));
    // Write the merged directory.
    let rd = RunDir::open(out)?;
    let mut config = first.clone();
    config.settings.shard = None;
    config.settings.out = if settings.proposers.len() == 1 {
        out.to_path_buf()
    } else {
        out.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    run_dir::write_json(&rd.file(run_dir::CONFIG), &config)?;
    write_lines(&rd.file(run_dir::ROUNDS), &rounds)?;
    write_lines(&rd.file(run_dir::CANDIDATES), &candidates)?;
    write_lines(&rd.file(run_dir::PROPOSALS), &proposals)?;
    write_lines(&rd.file(run_dir::ROLLOUTS), &rollouts)?;
    for (dir, _, _) in &shards {
        copy_harnesses(&dir.join(run_dir::HARNESSES), &rd.file(run_dir::HARNESSES))?;
    }
    let mut s = summary::compute(&config, &rounds, &candidates);
    s.run_stats = combined_stats(&stats, &rounds);
    run_dir::write_json(&rd.file(run_dir::SUMMARY), &s)?;
    run_dir::write_json(&rd.file(MERGE_RECORD), &MergeRecord::of("eval", &shards))?;
    Ok(ArmOutcome {
        label: config.proposer.label.clone(),
        dir: out.to_path_buf(),
        summary: s,
    })
}

/// The shards' measurements together: counters summed, wall time the longest shard's
/// (shards run side by side), batch means recomputed from the merged rounds.
fn combined_stats(stats: &[RunStats], rounds: &[RoundRecord]) -> RunStats {
    let dev: Vec<&records::DevBatch> = rounds.iter().filter_map(|r| r.dev_batch.as_ref()).collect();
    let mut task_wall = BTreeMap::new();
    for r in rounds {
        *task_wall.entry(r.task.clone()).or_insert(0.0) += r.wall_ms as f64 / 1e3;
    }
    let sum = |f: &dyn Fn(&RunStats) -> u64| stats.iter().map(f).sum::<u64>();
    let opt_sum = |f: &dyn Fn(&RunStats) -> Option<u64>| {
        stats.iter().map(f).try_fold(0u64, |a, x| x.map(|x| a + x))
    };
    let batches = sum(&|s| s.executor_batches);
    RunStats {
        wall_s: stats.iter().map(|s| s.wall_s).fold(0.0, f64::max),
        idle_s: stats.iter().map(|s| s.idle_s).sum(),
        overhead_fraction: {
            let wall: f64 = stats.iter().map(|s| s.wall_s).sum();
            if wall > 0.0 {
                stats.iter().map(|s| s.idle_s).sum::<f64>() / wall
            } else {
                0.0
            }
        },
        rollouts_run: sum(&|s| s.rollouts_run),
        rollouts_reused: sum(&|s| s.rollouts_reused),
        evaluations: sum(&|s| s.evaluations),
        memo_hits: sum(&|s| s.memo_hits),
        executor_batches: batches,
        executor_batch_mean: if batches > 0 {
            stats
                .iter()
                .map(|s| s.executor_batch_mean * s.executor_batches as f64)
                .sum::<f64>()
                / batches as f64
        } else {
            0.0
        },
        executor_batch_max: stats
            .iter()
            .map(|s| s.executor_batch_max)
            .max()
            .unwrap_or(0),
        dev_batches: dev.len(),
        dev_batch_harnesses_mean: super::mean(dev.iter().map(|d| d.harnesses as f64)),
        dev_batch_rollouts_mean: super::mean(dev.iter().map(|d| d.rollouts as f64)),
        dev_batch_rollouts_max: dev.iter().map(|d| d.rollouts).max().unwrap_or(0),
        cache_hits: opt_sum(&|s| s.cache_hits),
        cache_misses: opt_sum(&|s| s.cache_misses),
        task_round_wall_s: task_wall,
        resumed: stats.iter().any(|s| s.resumed),
    }
}

fn write_lines<T: Serialize>(path: &Path, recs: &[T]) -> Result<(), EvalError> {
    let mut text = String::new();
    for r in recs {
        text.push_str(
            &serde_json::to_string(r)
                .map_err(|e| EvalError::Io(format!("{}: {e}", path.display())))?,
        );
        text.push('\n');
    }
    Ok(run_dir::write_text(path, &text)?)
}

fn copy_harnesses(from: &Path, to: &Path) -> Result<(), EvalError> {
    let io = |p: &Path, e: std::io::Error| EvalError::Io(format!("{}: {e}", p.display()));
    std::fs::create_dir_all(to).map_err(|e| io(to, e))?;
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(());
    };
    for e in entries {
        let e = e.map_err(|e| io(from, e))?;
        let name = e.file_name();
        let dst = to.join(&name);
        if !dst.exists() && e.path().is_file() {
            std::fs::copy(e.path(), &dst).map_err(|x| io(&dst, x))?;
        }
    }
    Ok(())
}

/// Merge the shards of an `hrl eval` run of several proposers.
fn merge_multi(sources: &[PathBuf], out: &Path) -> Result<Vec<ArmOutcome>, EvalError> {
    let mut items = Vec::new();
    for d in sources {
        let s: super::config::EvalSettings = read_json(&d.join(INVOCATION))?;
        items.push((d.clone(), s.shard, s));
    }
    let shards = order_shards(items)?;
    let first = &shards[0].2;
    for (d, _, s) in &shards[1..] {
        if s.proposers != first.proposers {
            return Err(EvalError::Usage(format!(
                "{} is a shard of another run than {}: `proposers` differs",
                d.display(),
                shards[0].0.display()
            )));
        }
    }
    std::fs::create_dir_all(out).map_err(|e| EvalError::Io(format!("{}: {e}", out.display())))?;
    let mut settings = first.clone();
    settings.shard = None;
    settings.out = out.to_path_buf();
    let mut outcomes = Vec::new();
    for i in 0..first.proposers.len() {
        let label = first.arm_dir(i)?;
        let label = label.file_name().map(PathBuf::from).unwrap_or_default();
        let parts: Vec<PathBuf> = shards.iter().map(|(d, _, _)| d.join(&label)).collect();
        outcomes.push(merge_eval(&parts, &out.join(&label))?);
    }
    run_dir::write_json(&out.join(INVOCATION), &settings)?;
    Ok(outcomes)
}

/// Merge the shards of an `hrl transfer` run: each proposer's run directory as
/// [`merge_eval`] does, then the index (`transfer.json`) without its shard.
fn merge_transfer(sources: &[PathBuf], out: &Path) -> Result<Vec<ArmOutcome>, EvalError> {
    let mut indices = Vec::new();
    for d in sources {
        let i: transfer::TransferIndex = read_json(&d.join(transfer::INDEX))?;
        indices.push(i);
    }
    for (d, i) in sources.iter().zip(&indices) {
        if i.shard.is_none() {
            return Err(EvalError::Usage(format!(
                "{}: not a shard (the run was not started with --shard I/N); there is nothing to merge",
                d.display()
            )));
        }
        if i.runs != indices[0].runs || i.kind != indices[0].kind || i.suite != indices[0].suite {
            return Err(EvalError::Usage(format!(
                "{} is a shard of another transfer run than {} (suite, kind or proposers differ)",
                d.display(),
                sources[0].display()
            )));
        }
    }
    std::fs::create_dir_all(out).map_err(|e| EvalError::Io(format!("{}: {e}", out.display())))?;
    let mut arms = Vec::new();
    for r in &indices[0].runs {
        let parts: Vec<PathBuf> = sources.iter().map(|d| d.join(&r.dir)).collect();
        arms.push(merge_eval(&parts, &out.join(&r.dir))?);
    }
    let mut index = indices[0].clone();
    index.shard = None;
    index.settings.shard = None;
    index.settings.out = if index.runs.len() == 1 {
        out.join(&index.runs[0].dir)
    } else {
        out.to_path_buf()
    };
    if index.runs.len() > 1 {
        run_dir::write_json(&out.join(INVOCATION), &index.settings)?;
    }
    run_dir::write_json(&out.join(transfer::INDEX), &index)?;
    Ok(arms)
}

/// Merge the shards of an `hrl run`.
fn merge_run(sources: &[PathBuf], out: &Path) -> Result<JobSummary, EvalError> {
    let mut items = Vec::new();
    for d in sources {
        let rec: JobShardRecord = read_json(&d.join(JOB_SHARD))?;
        let sum: JobSummary = read_json(&d.join("summary.json")).map_err(|e| {
            EvalError::Usage(format!("{e} (a shard must finish before it is merged)"))
        })?;
        items.push((d.clone(), Some(rec.shard), (rec, sum)));
    }
    let shards = order_shards(items)?;
    let (d0, _, (r0, s0)) = &shards[0];
    for (d, _, (r, s)) in &shards[1..] {
        let diff = [
            ("harness", s.harness.hash != s0.harness.hash),
            ("tasks", s.tasks != s0.tasks),
            ("executor", s.executor.hash != s0.executor.hash),
            ("config_hash", s.config_hash != s0.config_hash),
            ("samples", s.samples != s0.samples),
            ("items", r.total_items != r0.total_items),
        ]
        .into_iter()
        .find(|x| x.1);
        if let Some((f, _)) = diff {
            return Err(EvalError::Usage(format!(
                "{} is a shard of another run than {}: `{f}` differs",
                d.display(),
                d0.display()
            )));
        }
    }
    let mut slots: BTreeMap<(usize, u32), Rollout> = BTreeMap::new();
    for (dir, shard, (rec, sum)) in &shards {
        for (i, _) in &rec.items {
            if !shard.contains(*i) {
                return Err(EvalError::Records(format!(
                    "{}: item {i} is not a unit of shard {shard}",
                    dir.display()
                )));
            }
        }
        let by_id: HashMap<&str, usize> =
            rec.items.iter().map(|(i, id)| (id.as_str(), *i)).collect();
        let log = crate::harness::job::read_log(&dir.join("rollouts.jsonl"))
            .map_err(|e| EvalError::Records(e.to_string()))?;
        let mut n = 0;
        for r in log.into_values() {
            if r.harness_hash != sum.harness.hash
                || r.executor.hash != sum.executor.hash
                || r.config_hash != sum.config_hash
                || r.sample >= sum.samples
            {
                continue;
            }
            if let Some(&i) = by_id.get(r.item_id.as_str()) {
                slots.insert((i, r.sample), r);
                n += 1;
            }
        }
        if n != rec.items.len() * sum.samples as usize {
            return Err(EvalError::Usage(format!(
                "{}: shard {shard} is incomplete ({n} of {} rollouts); run it again to finish it",
                dir.display(),
                rec.items.len() * sum.samples as usize
            )));
        }
    }
    let rollouts: Vec<Rollout> = slots.into_values().collect();
    std::fs::create_dir_all(out.join("harnesses"))
        .map_err(|e| EvalError::Io(format!("{}: {e}", out.display())))?;
    for (dir, _, _) in &shards {
        copy_harnesses(&dir.join("harnesses"), &out.join("harnesses"))?;
    }
    write_lines(&out.join("rollouts.jsonl"), &rollouts)?;
    let mut s = s0.clone();
    s.items = r0.total_items;
    s.shard = None;
    s.aggregates = crate::harness::execution_report::Aggregates::from_rollouts(&rollouts);
    let mut b = crate::harness::dispatch::BatchStats::default();
    for (_, _, (_, x)) in &shards {
        b.batches += x.batching.batches;
        b.requests += x.batching.requests;
        b.max_size = b.max_size.max(x.batching.max_size);
        if b.histogram.len() < x.batching.histogram.len() {
            b.histogram.resize(x.batching.histogram.len(), 0);
        }
        for (i, h) in x.batching.histogram.iter().enumerate() {
            b.histogram[i] += h;
        }
        b.sizes.extend(&x.batching.sizes);
    }
    s.batching = b;
    s.llama = None;
    s.cache = None;
    s.reused = shards.iter().map(|(_, _, (_, x))| x.reused).sum();
    s.wall_s = shards
        .iter()
        .map(|(_, _, (_, x))| x.wall_s)
        .fold(0.0, f64::max);
    s.items_per_s = if s.wall_s > 0.0 {
        (rollouts.len() - s.reused) as f64 / s.wall_s
    } else {
        0.0
    };
    run_dir::write_json(&out.join("summary.json"), &s)?;
    run_dir::write_json(&out.join(MERGE_RECORD), &MergeRecord::of("run", &shards))?;
    Ok(s)
}
