//! The harness-resampling evaluator (`hrl eval`): for every task of a suite and every
//! proposer, M independent harness samples, each K rounds of feedback run → report →
//! G proposals → one batched dev scoring → selection → test score, recorded in a run
//! directory, summarised with crossed-design confidence intervals.
//!
//! - [`suite`]: suite files. [`config`]: the library config (a suite + overrides,
//!   resolved in one place) and `config.json`.
//! - [`sets`]: disjoint feedback / dev / test sets. [`prepare`]: a run's tasks
//!   prepared once (seed harnesses, sets, descriptions; also for `hrl train` and the
//!   reward service).
//! - [`engine`]: one rollout queue and executor batch for everything in flight, the
//!   (task, set, harness) memo, resume from logged rollouts.
//! - [`rounds`]: one trajectory (task × harness sample): the K-round loop.
//! - [`summary`]: metrics from the records alone, and the Markdown report.
//! - [`seen`]: held-out claims checked against what a trained proposer was trained on.
//!
//! Entry points: [`run`] (open the executor from the settings) and [`run_with`] (an
//! executor given, e.g. a simulated one in tests). Several proposers in one
//! invocation share the executor, the memo and the batches; each gets its own run
//! directory, and `comparison.md` pairs them on identical instances and samples.

pub mod best_fixed;
pub mod config;
pub mod engine;
pub mod merge;
pub mod prepare;
pub mod rounds;
pub mod seen;
pub mod sets;
pub mod suite;
pub mod summary;
pub mod transfer;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use self::config::{EvalConfig, EvalSettings};
use self::engine::{ArmLog, Engine};
use self::rounds::{Arm, Prior, Shared};
use self::summary::{RunStats, Summary};
use crate::executor::cache::CachedExecutor;
use crate::executor::spec::OpenOptions;
use crate::executor::{Executor, ExecutorError, ExecutorIdentity};
use crate::harness::execution_report::ExecutionReportOptions;
use crate::harness::rollout::Rollout;
use crate::harness::{HarnessError, runtime};
use crate::proposer::{self, OpenContext, ProposerError, ProposerSpec, SharedExecutor};
use crate::records::run_dir::RunDir;
use crate::records::{self, CandidateRecord, ProposalRecord, RoundRecord, run_dir};
use crate::sandbox::{Sandbox, SandboxError};
use crate::task::TaskError;

/// Errors of an evaluation.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A bad request: flags, a run directory that does not fit, missing files.
    #[error("{0}")]
    Usage(String),
    /// A suite file that does not parse or check.
    #[error("{origin}{}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default(), field.as_ref().map(|f| format!(": {f}")).unwrap_or_default())]
    Suite {
        origin: String,
        line: Option<usize>,
        field: Option<String>,
        message: String,
    },
    /// Reading or writing the run directory failed.
    #[error("{0}")]
    Io(String),
    /// A record or harness file of a run directory is damaged.
    #[error("{0}")]
    Records(String),
    /// The run stopped (another trajectory failed, or it was asked to).
    #[error("{0}")]
    Aborted(String),
    #[error(transparent)]
    Proposer(#[from] ProposerError),
    #[error(transparent)]
    Executor(#[from] ExecutorError),
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error(transparent)]
    Harness(#[from] HarnessError),
    #[error(transparent)]
    Task(#[from] TaskError),
}

impl crate::error::Classify for EvalError {
    fn kind(&self) -> crate::error::ErrorKind {
        use crate::error::ErrorKind::{Runtime, Usage};
        match self {
            EvalError::Usage(_) | EvalError::Suite { .. } | EvalError::Records(_) => Usage,
            EvalError::Io(_) | EvalError::Aborted(_) => Runtime,
            EvalError::Proposer(e) => e.kind(),
            EvalError::Executor(e) => e.kind(),
            EvalError::Sandbox(e) => e.kind(),
            EvalError::Harness(e) => e.kind(),
            EvalError::Task(e) => e.kind(),
        }
    }
}

impl From<records::RecordsError> for EvalError {
    fn from(e: records::RecordsError) -> Self {
        match e {
            records::RecordsError::Usage(m) => EvalError::Usage(m),
            records::RecordsError::Io(m) => EvalError::Io(m),
            records::RecordsError::Damaged(m) => EvalError::Records(m),
        }
    }
}

impl From<runtime::RunError> for EvalError {
    fn from(e: runtime::RunError) -> Self {
        match e {
            runtime::RunError::Harness(h) => EvalError::Harness(h),
            runtime::RunError::Sandbox(s) => EvalError::Sandbox(s),
            runtime::RunError::Usage(m) => EvalError::Usage(m),
            runtime::RunError::Io(e) => EvalError::Io(e.to_string()),
        }
    }
}

/// The executor of a run (opened from a spec, or given by a caller).
#[derive(Clone)]
pub struct Backend {
    pub executor: Arc<dyn Executor>,
    pub identity: ExecutorIdentity,
    /// The completion cache wrapper, for its counters.
    pub cache: Option<Arc<CachedExecutor>>,
    /// Sequences the executor decodes together.
    pub parallelism: usize,
}

impl Backend {
    /// Open the executor the settings name.
    pub fn open(settings: &EvalSettings) -> Result<Backend, EvalError> {
        let spec = settings.executor_spec()?;
        let opened = spec.open(&OpenOptions {
            cache: settings.cache.setting(),
        })?;
        Ok(Backend {
            executor: opened.executor,
            identity: opened.identity,
            cache: opened.cache,
            parallelism: spec.parallelism(),
        })
    }
}

/// Progress of a run, for progress bars.
#[derive(Debug, Clone)]
pub struct EvalProgress {
    pub tasks: Vec<String>,
    /// Finished rounds (round 0 included) per task, over all proposers and samples.
    pub done: Vec<usize>,
    pub total: Vec<usize>,
    pub rollouts_run: u64,
    pub rollouts_reused: u64,
}

/// One proposer's result.
#[derive(Debug, Clone)]
pub struct ArmOutcome {
    pub label: String,
    pub dir: PathBuf,
    pub summary: Summary,
}

/// Read an arm's earlier records (a resumed run).
fn read_prior(dir: &RunDir) -> Result<(Prior, HashMap<String, Rollout>), EvalError> {
    let rollouts: Vec<Rollout> = records::read(&dir.file(run_dir::ROLLOUTS))?;
    let rounds: Vec<RoundRecord> = records::read(&dir.file(run_dir::ROUNDS))?;
    let proposals: Vec<ProposalRecord> = records::read(&dir.file(run_dir::PROPOSALS))?;
    let candidates: Vec<CandidateRecord> = records::read(&dir.file(run_dir::CANDIDATES))?;
    let done = rollouts.into_iter().map(|r| (r.key(), r)).collect();
    Ok((Prior::new(rounds, proposals, candidates), done))
}

/// Recompute a run directory's summary from its records (keeping its `run_stats`)
/// and rewrite `summary.json` (`report::outputs` renders the Markdown beside it).
pub fn rerender(dir: &Path) -> Result<Summary, EvalError> {
    let config: EvalConfig = read_json(&dir.join(run_dir::CONFIG))?;
    let rounds: Vec<RoundRecord> = records::read(&dir.join(run_dir::ROUNDS))?;
    let candidates: Vec<CandidateRecord> = records::read(&dir.join(run_dir::CANDIDATES))?;
    let mut s = summary::compute(&config, &rounds, &candidates);
    if let Ok(old) = read_json::<Summary>(&dir.join(run_dir::SUMMARY)) {
        s.run_stats = old.run_stats;
    }
    run_dir::write_json(&dir.join(run_dir::SUMMARY), &s)?;
    Ok(s)
}

/// Read a JSON file of a run directory.
pub fn read_json<T: for<'de> serde::Deserialize<'de>>(p: &Path) -> Result<T, EvalError> {
    let text = std::fs::read_to_string(p)
        .map_err(|e| EvalError::Usage(format!("{}: {e}", p.display())))?;
    serde_json::from_str(&text).map_err(|e| EvalError::Records(format!("{}: {e}", p.display())))
}

/// The file holding a multi-proposer invocation's settings (in the output directory).
pub const INVOCATION: &str = "eval.json";

/// The directory `hrl eval --resume` continues for run directory `dir`: the parent
/// when `dir` is one proposer's directory of a multi-proposer run (the parent holds
/// `eval.json`), else `dir` itself.
pub fn resume_dir(dir: &Path) -> PathBuf {
    match dir.parent() {
        Some(parent) if !dir.join(INVOCATION).exists() && parent.join(INVOCATION).exists() => {
            parent.to_path_buf()
        }
        _ => dir.to_path_buf(),
    }
}

/// The command that continues the interrupted run whose records lie in run directory
/// `dir`: `hrl eval --resume` of [`resume_dir`], or `hrl transfer KIND --resume` of
/// the transfer output directory that holds `dir`.
pub fn resume_command(dir: &Path) -> String {
    if let Some(parent) = dir.parent()
        && let Ok(index) = read_json::<transfer::TransferIndex>(&parent.join(transfer::INDEX))
    {
        return format!(
            "hrl transfer {} --resume {}",
            index.kind.as_str(),
            parent.display()
        );
    }
    format!("hrl eval --resume {}", resume_dir(dir).display())
}

/// The settings a `--resume DIR` continues: `DIR/eval.json` (several proposers) or
/// `DIR/config.json` (one). `DIR` is resolved by [`resume_dir`] first (the returned
/// settings' `out` says which directory is continued).
pub fn resume_settings(dir: &Path) -> Result<EvalSettings, EvalError> {
    let dir = &resume_dir(dir);
    let inv = dir.join(INVOCATION);
    let mut s: EvalSettings = if inv.exists() {
        read_json(&inv)?
    } else if dir.join(run_dir::CONFIG).exists() {
        read_json::<EvalConfig>(&dir.join(run_dir::CONFIG))?.settings
    } else {
        return Err(EvalError::Usage(format!(
            "{}: not a run directory (no {INVOCATION} or {})",
            dir.display(),
            run_dir::CONFIG
        )));
    };
    s.out = dir.to_path_buf();
    Ok(s)
}

/// Run an evaluation: open the sandbox (sweeping cgroups left by killed runs), the
/// executor and the proposers, then [`run_with`].
pub fn run(
    settings: &EvalSettings,
    resume: bool,
    progress: &(dyn Fn(&EvalProgress) + Sync),
) -> Result<Vec<ArmOutcome>, EvalError> {
    let sandbox = Sandbox::new(settings.sandbox_config())?;
    let backend = Backend::open(settings)?;
    let proposers = open_proposers(settings, &backend)?;
    run_with(settings, &backend, &sandbox, &proposers, resume, progress)
}

/// Open the proposers a run's settings name (an `llm` proposer naming the run's
/// executor shares it).
pub fn open_proposers(
    settings: &EvalSettings,
    backend: &Backend,
) -> Result<Vec<Arc<dyn proposer::Proposer>>, EvalError> {
    let shared = SharedExecutor {
        spec: settings.executor_spec()?,
        executor: backend.executor.clone(),
        identity: backend.identity.clone(),
    };
    let mut out = Vec::new();
    for (i, spec_text) in settings.proposers.iter().enumerate() {
        let dir = settings.arm_dir(i)?;
        std::fs::create_dir_all(&dir)
            .map_err(|e| EvalError::Io(format!("{}: {e}", dir.display())))?;
        let spec = ProposerSpec::parse(spec_text)?;
        out.push(proposer::open(
            &spec,
            &OpenContext {
                settings: settings.proposer_settings.clone(),
                shared: Some(shared.clone()),
                cache: settings.cache.setting(),
                stderr_log: Some(dir.join(run_dir::PROPOSER_STDERR)),
            },
        )?);
    }
    Ok(out)
}

/// Run an evaluation with a given executor and proposers, one per entry of
/// `settings.proposers` (whose spec names the run directory). With `resume`, the run
/// directories must hold a run with the same settings, which is continued; without,
/// they must not hold a run yet.
pub fn run_with(
    settings: &EvalSettings,
    backend: &Backend,
    sandbox: &Sandbox,
    proposers: &[Arc<dyn proposer::Proposer>],
    resume: bool,
    progress: &(dyn Fn(&EvalProgress) + Sync),
) -> Result<Vec<ArmOutcome>, EvalError> {
    if proposers.len() != settings.proposers.len() {
        return Err(EvalError::Usage(format!(
            "{} proposers for {} proposer specs",
            proposers.len(),
            settings.proposers.len()
        )));
    }
    let started = std::time::Instant::now();
    let prepared = prepare::prepare_tasks(settings, sandbox)?;
    let run_config = settings.run_config(backend.parallelism);
    if settings.proposers.len() > 1 {
        write_invocation(settings, resume)?;
    }
    let opened = open_arms(
        settings,
        backend,
        sandbox,
        proposers,
        &prepared.records,
        &run_config,
        resume,
    )?;
    for t in &prepared.tasks {
        for a in &opened.arms {
            a.dir.save_harness(&t.seed_harness)?;
        }
    }
    let engine = Engine::new(
        backend.executor.clone(),
        backend.identity.reference(),
        sandbox,
        run_config.clone(),
        run_config.dispatch.clone(),
        prepared.sets,
        opened.done,
    );
    let first_error = run_trajectories(
        settings,
        &engine,
        &opened.arms,
        &prepared.tasks,
        run_config.concurrency,
        progress,
    );
    let outcomes = write_summaries(
        &opened.arms,
        &opened.configs,
        &engine,
        backend,
        started,
        resume,
    )?;
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(outcomes)
}

/// A multi-proposer invocation records its settings in `OUT/eval.json`; a resumed
/// one must name the same proposers, a fresh one an empty directory.
fn write_invocation(settings: &EvalSettings, resume: bool) -> Result<(), EvalError> {
    std::fs::create_dir_all(&settings.out)
        .map_err(|e| EvalError::Io(format!("{}: {e}", settings.out.display())))?;
    let inv = settings.out.join(INVOCATION);
    if resume {
        let old: EvalSettings = read_json(&inv)?;
        if old.proposers != settings.proposers {
            return Err(EvalError::Usage(format!(
                "{}: the run has other proposers",
                inv.display()
            )));
        }
    } else if inv.exists() {
        return Err(EvalError::Usage(already_holds_a_run(
            &settings.out,
            &settings.out,
        )));
    }
    Ok(run_dir::write_json(&inv, settings)?)
}

/// Every proposer's run directory opened: its config written (or checked against the
/// one a resumed run holds), its earlier records read.
struct OpenedArms {
    arms: Vec<Arm>,
    configs: Vec<EvalConfig>,
    /// Every arm's logged rollouts by key (reused instead of run).
    done: HashMap<String, Rollout>,
}

fn open_arms(
    settings: &EvalSettings,
    backend: &Backend,
    sandbox: &Sandbox,
    proposers: &[Arc<dyn proposer::Proposer>],
    records: &[config::TaskRecord],
    run_config: &runtime::RunConfig,
    resume: bool,
) -> Result<OpenedArms, EvalError> {
    let python = sandbox.python().identity();
    let mut out = OpenedArms {
        arms: Vec::new(),
        configs: Vec::new(),
        done: HashMap::new(),
    };
    for (i, spec_text) in settings.proposers.iter().enumerate() {
        let dir_path = settings.arm_dir(i)?;
        let dir = RunDir::open(&dir_path)?;
        let spec = ProposerSpec::parse(spec_text)?;
        let proposer = proposers[i].clone();
        let seen = seen::seen_in_training(&settings.tasks, proposer.as_ref());
        let mut config = EvalConfig {
            schema: config::CONFIG_SCHEMA,
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: config::GIT_COMMIT.to_string(),
            build: backend.identity.build.clone(),
            settings: settings.clone(),
            proposer: proposer.identity(),
            executor: backend.identity.clone(),
            run: run_config.clone(),
            run_config_hash: run_config.result_hash(&python.hash),
            sandbox_python: Some(python.clone()),
            tasks: records.to_vec(),
            comparable: settings.limit.is_none(),
            proposer_history: Vec::new(),
            seen_in_training: seen.tasks,
            warnings: seen.warning.into_iter().collect(),
        };
        let cfg_path = dir.file(run_dir::CONFIG);
        if cfg_path.exists() {
            if !resume {
                return Err(EvalError::Usage(already_holds_a_run(
                    &dir_path,
                    &settings.out,
                )));
            }
            let old: EvalConfig = read_json(&cfg_path)?;
            check_resumable(&dir_path, &old, &config)?;
            config.proposer_history = old.proposer_history.clone();
            if let Some(change) = proposer_files_change(&old, &config) {
                if !settings.accept_proposer_change {
                    return Err(EvalError::Usage(format!(
                        "{}: cannot resume: the proposer changed since the run started ({change}); \
                         pass --accept-proposer-change to continue with the new one (config.json records the change), \
                         or start a new run in another --out",
                        dir_path.display()
                    )));
                }
                eprintln!(
                    "hrl: {}: continuing with a changed proposer ({change}); recorded in {}",
                    dir_path.display(),
                    run_dir::CONFIG
                );
                config.proposer_history.push(old.proposer.clone());
                run_dir::write_json(&cfg_path, &config)?;
            }
        } else if resume && settings.proposers.len() == 1 {
            return Err(EvalError::Usage(format!(
                "{}: nothing to resume (no {})",
                dir_path.display(),
                run_dir::CONFIG
            )));
        } else {
            run_dir::write_json(&cfg_path, &config)?;
        }
        let (prior, done) = read_prior(&dir)?;
        let keys: HashSet<String> = done.keys().cloned().collect();
        out.done.extend(done);
        let log = Arc::new(ArmLog::new(dir.appender(run_dir::ROLLOUTS)?, keys));
        out.arms.push(Arm {
            index: i,
            label: spec.label(),
            proposals: dir.appender(run_dir::PROPOSALS)?,
            candidates: dir.appender(run_dir::CANDIDATES)?,
            rounds: dir.appender(run_dir::ROUNDS)?,
            dir,
            proposer,
            log,
            prior,
        });
        out.configs.push(config);
    }
    Ok(out)
}

/// The refusal of a fresh run over run directory `dir` of output `out`. A run that
/// stopped early (even before any trajectory finished) keeps what it computed, so hrl
/// never starts over it: the user resumes it, or removes it.
fn already_holds_a_run(dir: &Path, out: &Path) -> String {
    format!(
        "{} already holds a run; continue it with `hrl eval --resume {}` (it keeps what the run computed; \
         add --accept-proposer-change if you fixed the proposer's script), \
         or remove {} to start afresh, or choose another --out",
        dir.display(),
        out.display(),
        out.display()
    )
}

/// How the files a proposer reads (a `cmd:` script: `details.files`, each with its
/// sha256) differ between a run's `old` config and a resume's `new` one, as
/// `path: sha256 OLD -> NEW` items; `None` when they are the same.
fn proposer_files_change(old: &EvalConfig, new: &EvalConfig) -> Option<String> {
    let files = |c: &EvalConfig| -> Vec<(String, String)> {
        c.proposer
            .details
            .get("files")
            .and_then(|f| f.as_array())
            .map(|a| {
                a.iter()
                    .map(|f| {
                        let s =
                            |k: &str| f.get(k).and_then(|x| x.as_str()).unwrap_or("-").to_string();
                        (s("path"), s("sha256"))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let (a, b) = (files(old), files(new));
    if a == b {
        return None;
    }
    let mut items = Vec::new();
    for (path, sha) in &a {
        match b.iter().find(|(p, _)| p == path) {
            Some((_, new_sha)) if new_sha != sha => {
                items.push(format!("{path}: sha256 {sha} -> {new_sha}"))
            }
            Some(_) => {}
            None => items.push(format!("{path}: sha256 {sha} -> (gone)")),
        }
    }
    for (path, sha) in &b {
        if !a.iter().any(|(p, _)| p == path) {
            items.push(format!("{path}: (new) -> sha256 {sha}"));
        }
    }
    Some(items.join("; "))
}

/// A run directory's `config.json` (`old`) must describe the same run as `new` for
/// `--resume` to continue it.
fn check_resumable(dir: &Path, old: &EvalConfig, new: &EvalConfig) -> Result<(), EvalError> {
    if let Some(field) = old.incompatibility(new) {
        return Err(EvalError::Usage(format!(
            "{}: cannot resume: `{field}` differs from this run's (a different executor, build, crate version or task set)",
            dir.display()
        )));
    }
    if old.settings.shard != new.settings.shard {
        return Err(EvalError::Usage(format!(
            "{}: cannot resume: the run is shard {} and this is shard {}",
            dir.display(),
            shard_name(old.settings.shard),
            shard_name(new.settings.shard)
        )));
    }
    if old.proposer.spec != new.proposer.spec {
        return Err(EvalError::Usage(format!(
            "{}: cannot resume: the run's proposer is `{}`",
            dir.display(),
            old.proposer.spec
        )));
    }
    Ok(())
}

/// Run every (arm, task, harness sample) trajectory of this shard on its own scoped
/// thread, with `concurrency` engine workers; the first error stops the others and
/// is returned.
fn run_trajectories(
    settings: &EvalSettings,
    engine: &Engine<'_>,
    arms: &[Arm],
    tasks: &[prepare::EvalTask],
    concurrency: usize,
    progress: &(dyn Fn(&EvalProgress) + Sync),
) -> Option<EvalError> {
    // Progress (a shard counts its own units only).
    let per_task_total: Vec<usize> = (0..tasks.len())
        .map(|t| {
            let mine = (0..settings.samples)
                .filter(|&m| settings.runs_unit(t, m))
                .count();
            arms.len() * mine * (settings.rounds as usize + 1)
        })
        .collect();
    let done_counts: Vec<AtomicUsize> = tasks.iter().map(|_| AtomicUsize::new(0)).collect();
    let task_names: Vec<String> = tasks.iter().map(|t| t.def.id.clone()).collect();
    let report_progress = || {
        progress(&EvalProgress {
            tasks: task_names.clone(),
            done: done_counts
                .iter()
                .map(|c| c.load(Ordering::Relaxed))
                .collect(),
            total: per_task_total.clone(),
            rollouts_run: engine.counters.run.load(Ordering::Relaxed),
            rollouts_reused: engine.counters.reused.load(Ordering::Relaxed),
        })
    };
    let on_round = |_arm: usize, task: usize, _round: u32| {
        done_counts[task].fetch_add(1, Ordering::Relaxed);
        report_progress();
    };
    report_progress();
    let shared = Shared {
        engine,
        tasks,
        rounds: settings.rounds,
        candidates: settings.candidates as usize,
        select: settings.select,
        seed: settings.seed,
        report: ExecutionReportOptions {
            show_gold: settings.proposer_settings.show_gold,
            budget_tokens: settings.proposer_settings.report_tokens,
        },
        on_round: &on_round,
    };
    let first_error: Mutex<Option<EvalError>> = Mutex::new(None);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..concurrency)
            .map(|_| s.spawn(|| engine.work()))
            .collect();
        let mut trajectories = Vec::new();
        for arm in arms {
            for t in 0..tasks.len() {
                for m in (0..settings.samples).filter(|&m| settings.runs_unit(t, m)) {
                    let (shared, first_error) = (&shared, &first_error);
                    trajectories.push(s.spawn(move || {
                        if let Err(e) = rounds::run_trajectory(shared, arm, t, m) {
                            let mut fe = first_error.lock().unwrap_or_else(|e| e.into_inner());
                            if fe.is_none() {
                                engine.abort(&e.to_string());
                                *fe = Some(e);
                            }
                        }
                    }));
                }
            }
        }
        for t in trajectories {
            let _ = t.join();
        }
        engine.shutdown();
        for w in workers {
            let _ = w.join();
        }
    });
    report_progress();
    first_error.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// Each arm's summary from its records, with the run's statistics, written as
/// `summary.json`.
fn write_summaries(
    arms: &[Arm],
    configs: &[EvalConfig],
    engine: &Engine<'_>,
    backend: &Backend,
    started: std::time::Instant,
    resume: bool,
) -> Result<Vec<ArmOutcome>, EvalError> {
    // Summaries (computed first, so the overhead figure includes them).
    let mut computed = Vec::new();
    for (arm, config) in arms.iter().zip(configs) {
        let rounds: Vec<RoundRecord> = records::read(&arm.dir.file(run_dir::ROUNDS))?;
        let candidates: Vec<CandidateRecord> = records::read(&arm.dir.file(run_dir::CANDIDATES))?;
        computed.push((summary::compute(config, &rounds, &candidates), rounds));
    }
    let (idle, wall) = engine.busy.idle();
    let batches = engine.batches();
    let mut outcomes = Vec::new();
    for (arm, (mut s, rounds)) in arms.iter().zip(computed) {
        let dev: Vec<&records::DevBatch> =
            rounds.iter().filter_map(|r| r.dev_batch.as_ref()).collect();
        let mut task_wall = std::collections::BTreeMap::new();
        for r in &rounds {
            *task_wall.entry(r.task.clone()).or_insert(0.0) += r.wall_ms as f64 / 1e3;
        }
        let cache = backend.cache.as_ref().map(|c| c.counters());
        s.run_stats = RunStats {
            wall_s: started.elapsed().as_secs_f64(),
            idle_s: idle.as_secs_f64(),
            overhead_fraction: if wall.as_secs_f64() > 0.0 {
                idle.as_secs_f64() / wall.as_secs_f64()
            } else {
                0.0
            },
            rollouts_run: engine.counters.run.load(Ordering::Relaxed),
            rollouts_reused: engine.counters.reused.load(Ordering::Relaxed),
            evaluations: engine.counters.evaluations.load(Ordering::Relaxed),
            memo_hits: engine.counters.memo_hits.load(Ordering::Relaxed),
            executor_batches: batches.batches,
            executor_batch_mean: batches.mean_size(),
            executor_batch_max: batches.max_size,
            dev_batches: dev.len(),
            dev_batch_harnesses_mean: mean(dev.iter().map(|d| d.harnesses as f64)),
            dev_batch_rollouts_mean: mean(dev.iter().map(|d| d.rollouts as f64)),
            dev_batch_rollouts_max: dev.iter().map(|d| d.rollouts).max().unwrap_or(0),
            cache_hits: cache.map(|c| c.hits()),
            cache_misses: cache.map(|c| c.misses()),
            task_round_wall_s: task_wall,
            resumed: resume,
        };
        run_dir::write_json(&arm.dir.file(run_dir::SUMMARY), &s)?;
        outcomes.push(ArmOutcome {
            label: arm.label.clone(),
            dir: arm.dir.path.clone(),
            summary: s,
        });
    }
    Ok(outcomes)
}

/// `I/N`, or `none`.
fn shard_name(s: Option<crate::shard::Shard>) -> String {
    s.map_or_else(|| "none (unsharded)".into(), |s| s.to_string())
}

pub(crate) fn mean(it: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = it.collect();
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}
