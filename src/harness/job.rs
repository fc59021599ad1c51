//! `hrl run` as a library call: [`JobSettings`] (what the command line resolves to)
//! → load the harness and the tasks, open the executor and the sandbox, run, and keep
//! a run directory:
//!
//! - `rollouts.jsonl`: one rollout per line, appended as each finishes, never
//!   rewritten. Running again into the same directory reuses every rollout whose
//!   key (item, sample, harness hash, executor identity, result-relevant settings)
//!   matches, so an interrupted run resumes where it stopped; a torn last line (the
//!   process was killed while writing) is ignored.
//! - `summary.json`: [`JobSummary`] of the requested items, rewritten atomically at
//!   the end.
//! - `harnesses/<hash>.{toml,py}`: the harness's canonical form.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::dispatch::BatchStats;
use super::execution_report::Aggregates;
use super::rollout::Rollout;
use super::runtime::{self, RunConfig, RunContext, RunError, RunOutput, RunProgress};
use super::{Harness, HarnessKind};
use crate::executor::spec::{CacheSetting, ExecutorIdentity, ExecutorSpec, OpenOptions};
use crate::lcb::GradeConfig;
use crate::sandbox::{PythonIdentity, Sandbox, SandboxConfig};
use crate::shard::Shard;
use crate::task::TaskSet;
use crate::task::spec::GradingSetup;

/// Version of `summary.json`'s layout.
pub const SUMMARY_SCHEMA: u32 = 1;

/// Everything `hrl run` needs, resolved from its flags.
#[derive(Debug, Clone)]
pub struct JobSettings {
    pub harness: PathBuf,
    pub tasks: Vec<String>,
    pub executor: ExecutorSpec,
    pub cache: CacheSetting,
    pub out: PathBuf,
    pub config: RunConfig,
    pub sandbox: SandboxConfig,
    pub grade: GradeConfig,
    /// `--shard I/N`: run only this shard's items (see [`crate::shard`]); the run
    /// directory then holds [`JOB_SHARD`] and `hrl merge` combines the shards.
    pub shard: Option<Shard>,
}

/// `shard.json` of a sharded run directory.
pub const JOB_SHARD: &str = "shard.json";

/// Which items a sharded run ran: its shard, the number of items of the whole run,
/// and its own items as (index in the whole run, item id).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobShardRecord {
    pub shard: Shard,
    pub total_items: usize,
    pub items: Vec<(usize, String)>,
}

/// The harness as recorded in a summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HarnessRecord {
    pub hash: String,
    pub kind: HarnessKind,
    pub name: String,
    pub path: String,
}

/// Completion-cache counters of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheRecord {
    pub path: String,
    pub hits: u64,
    pub misses: u64,
    pub errors: u64,
}

/// `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSummary {
    pub schema: u32,
    pub crate_version: String,
    pub harness: HarnessRecord,
    pub tasks: Vec<String>,
    pub items: usize,
    pub samples: u32,
    pub executor: ExecutorIdentity,
    pub config: RunConfig,
    /// [`RunConfig::result_hash`] under [`JobSummary::sandbox_python`].
    pub config_hash: String,
    /// The sandbox's interpreter (version and installed packages): part of the
    /// result's identity for harnesses that run code. Absent in summaries written
    /// before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_python: Option<PythonIdentity>,
    pub aggregates: Aggregates,
    /// Sizes of the executor batches the dispatcher formed.
    pub batching: BatchStats,
    /// The in-process executor's counters (decodes, largest concurrent batch,
    /// prompt tokens computed and reused), when there is one.
    pub llama: Option<serde_json::Value>,
    pub cache: Option<CacheRecord>,
    /// Rollouts reused from an earlier run in the same directory.
    pub reused: usize,
    /// Wall time of this invocation.
    pub wall_s: f64,
    /// Rollouts computed by this invocation per second of its wall time.
    pub items_per_s: f64,
    /// Wall time of every invocation that wrote this run directory, summed (a resumed
    /// run adds its own to the earlier summary's total; an invocation killed before it
    /// wrote its summary is not counted).
    #[serde(default)]
    pub wall_s_total: f64,
    /// How many invocations wrote this run directory.
    #[serde(default)]
    pub invocations: u32,
    /// `--shard I/N`: the summary of one part of a run (absent for whole runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
}

/// Read the rollouts of a run directory's log, keyed by [`Rollout::key`]. A torn
/// last line is skipped; any other bad line is an error naming it.
pub fn read_log(path: &Path) -> Result<HashMap<String, Rollout>, RunError> {
    let mut out = HashMap::new();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(RunError::Io(e)),
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let last = lines.len().saturating_sub(1);
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Rollout>(line) {
            Ok(r) => {
                out.insert(r.key(), r);
            }
            // The last line without its newline was being written when the run died.
            Err(_) if i == last => {}
            Err(e) => {
                return Err(RunError::Usage(format!(
                    "{}:{}: not a rollout record: {e}",
                    path.display(),
                    i + 1
                )));
            }
        }
    }
    Ok(out)
}

/// Build the summary of a finished run.
#[allow(clippy::too_many_arguments)] // the summary's parts, each from its own source
pub fn summarize(
    harness: &Harness,
    harness_path: &str,
    tasks: &[String],
    items: usize,
    executor: &ExecutorIdentity,
    config: &RunConfig,
    python: &PythonIdentity,
    output: &RunOutput,
    llama: Option<serde_json::Value>,
    cache: Option<CacheRecord>,
) -> JobSummary {
    let wall_s = output.wall.as_secs_f64();
    JobSummary {
        schema: SUMMARY_SCHEMA,
        crate_version: env!("CARGO_PKG_VERSION").to_string(),
        harness: HarnessRecord {
            hash: harness.hash(),
            kind: harness.kind(),
            name: harness.name().to_string(),
            path: harness_path.to_string(),
        },
        tasks: tasks.to_vec(),
        items,
        samples: config.samples,
        executor: executor.clone(),
        config: config.clone(),
        config_hash: config.result_hash(&python.hash),
        sandbox_python: Some(python.clone()),
        aggregates: Aggregates::from_rollouts(&output.rollouts),
        batching: output.batches.clone(),
        llama,
        cache,
        reused: output.reused,
        wall_s,
        items_per_s: if wall_s > 0.0 {
            (output.rollouts.len() - output.reused) as f64 / wall_s
        } else {
            0.0
        },
        shard: None,
        wall_s_total: wall_s,
        invocations: 1,
    }
}

/// Add the wall time and invocation count of the summary an earlier invocation left
/// in the same run directory (if any) to `summary`'s totals. A summary from before
/// the totals existed counts as one invocation of its `wall_s`.
pub fn accumulate(summary: &mut JobSummary, earlier: Option<&JobSummary>) {
    if let Some(e) = earlier {
        let (total, n) = if e.invocations == 0 {
            (e.wall_s, 1)
        } else {
            (e.wall_s_total, e.invocations)
        };
        summary.wall_s_total += total;
        summary.invocations += n;
    }
}

/// Write `value` as pretty JSON to `path` atomically (temporary file + rename).
pub fn write_json_atomic(path: &Path, value: &impl Serialize) -> Result<(), RunError> {
    let tmp = path.with_extension("json.tmp");
    {
        let mut f = std::fs::File::create(&tmp)?;
        serde_json::to_writer_pretty(&mut f, value).map_err(std::io::Error::other)?;
        f.write_all(b"\n")?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// Run `hrl run`: returns the summary and the rollouts.
pub fn execute(
    settings: &JobSettings,
    progress: &(dyn Fn(RunProgress) + Sync),
) -> Result<(JobSummary, RunOutput), RunError> {
    let harness = Harness::load(&settings.harness)?;
    let origin = settings.harness.display().to_string();
    let task_ctx = GradingSetup {
        sandbox: settings.sandbox.clone(),
        grade: settings.grade.clone(),
        ..GradingSetup::default()
    };
    let mut tasks =
        TaskSet::load(&settings.tasks, &task_ctx).map_err(|e| RunError::Usage(e.to_string()))?;
    let shard_record = settings.shard.map(|shard| {
        let total_items = tasks.items.len();
        let mut mine = Vec::new();
        let items = std::mem::take(&mut tasks.items);
        for (i, item) in items.into_iter().enumerate() {
            if shard.contains(i) {
                mine.push((i, item));
            }
        }
        let record = JobShardRecord {
            shard,
            total_items,
            items: mine.iter().map(|(i, it)| (*i, it.id())).collect(),
        };
        tasks.items = mine.into_iter().map(|(_, it)| it).collect();
        record
    });
    let sandbox = Sandbox::new(settings.sandbox.clone())?;
    std::fs::create_dir_all(&settings.out)?;
    let shard_path = settings.out.join(JOB_SHARD);
    match &shard_record {
        Some(rec) => {
            if let Ok(text) = std::fs::read_to_string(&shard_path) {
                let old: JobShardRecord = serde_json::from_str(&text)
                    .map_err(|e| RunError::Usage(format!("{}: {e}", shard_path.display())))?;
                if old.shard != rec.shard || old.total_items != rec.total_items {
                    return Err(RunError::Usage(format!(
                        "{}: the directory holds shard {} of {} items; this is shard {} of {} items (choose another --out)",
                        settings.out.display(),
                        old.shard,
                        old.total_items,
                        rec.shard,
                        rec.total_items
                    )));
                }
            }
            write_json_atomic(&shard_path, rec)?;
        }
        None if shard_path.exists() => {
            return Err(RunError::Usage(format!(
                "{}: the directory holds a shard of a run; give its --shard, or choose another --out",
                settings.out.display()
            )));
        }
        None => {}
    }
    harness.save_canonical(&settings.out.join("harnesses"))?;
    let log_path = settings.out.join("rollouts.jsonl");
    let done = read_log(&log_path)?;
    let opened = settings
        .executor
        .open(&OpenOptions {
            cache: settings.cache.clone(),
        })
        .map_err(|e| RunError::Usage(format!("opening the executor: {e}")))?;
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)?;
    let ctx = RunContext {
        harness: &harness,
        origin: &origin,
        executor: opened.executor.clone(),
        executor_ref: opened.identity.reference(),
        sandbox: &sandbox,
        config: &settings.config,
    };
    let mut sink = |r: &Rollout| -> std::io::Result<()> {
        let mut line = serde_json::to_vec(r).map_err(std::io::Error::other)?;
        line.push(b'\n');
        log.write_all(&line)?;
        log.flush()
    };
    let output = runtime::run(&ctx, &tasks.items, &done, &mut sink, progress)?;
    #[cfg(feature = "llama")]
    let llama = opened
        .llama
        .as_ref()
        .map(|l| serde_json::to_value(l.stats()).unwrap_or_default());
    #[cfg(not(feature = "llama"))]
    let llama = None;
    let cache = opened.cache.as_ref().map(|c| {
        let n = c.counters();
        CacheRecord {
            path: c.cache().path().display().to_string(),
            hits: n.hits(),
            misses: n.misses(),
            errors: n.errors(),
        }
    });
    let mut summary = summarize(
        &harness,
        &origin,
        &settings.tasks,
        tasks.items.len(),
        &opened.identity,
        &settings.config,
        &sandbox.python().identity(),
        &output,
        llama,
        cache,
    );
    summary.shard = settings.shard;
    let summary_path = settings.out.join("summary.json");
    // An unreadable earlier summary only loses the earlier total; the rollouts are safe.
    let earlier = std::fs::read_to_string(&summary_path)
        .ok()
        .and_then(|t| serde_json::from_str::<JobSummary>(&t).ok());
    accumulate(&mut summary, earlier.as_ref());
    write_json_atomic(&summary_path, &summary)?;
    Ok((summary, output))
}
