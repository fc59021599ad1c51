//! The library config of `hrl eval` ([`EvalSettings`]: a suite plus command-line
//! overrides, resolved in one place by [`EvalSettings::resolve`]) and the record of a
//! run's fully resolved settings ([`EvalConfig`], `config.json`), from which
//! `--resume` rebuilds exactly the same run.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::EvalError;
use super::sets::SetIds;
use super::suite::{RolloutLimits, Selection, Suite, TaskDef};
use crate::executor::spec::{BuildIdentity, CacheSetting, ExecutorIdentity, ExecutorSpec};
use crate::harness::HarnessKind;
use crate::harness::dispatch::DispatchConfig;
use crate::harness::runtime::{ProgramLimits, RunConfig};
use crate::harness::tools::ToolLimits;
use crate::lcb::{GradeConfig, TimeoutClock};
use crate::proposer::{ProposerIdentity, ProposerSettings, ProposerSpec};
use crate::sandbox::{PythonIdentity, SandboxConfig};
use crate::shard::Shard;

/// Version of `config.json`.
pub const CONFIG_SCHEMA: u32 = 1;

/// The git commit this binary was built from (`+dirty` with uncommitted changes;
/// `unknown` outside a git checkout), set by `build.rs`.
pub const GIT_COMMIT: &str = env!("HRL_GIT_COMMIT");

/// The suite a run came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteRef {
    pub name: String,
    pub path: PathBuf,
    pub sha256: String,
}

impl SuiteRef {
    /// The reference of a loaded suite.
    pub fn of(suite: &Suite) -> SuiteRef {
        SuiteRef {
            name: suite.name.clone(),
            path: suite.path.clone(),
            sha256: suite.sha256.clone(),
        }
    }

    /// The default output directory of `command` (eval, train, transfer) on this
    /// suite: `runs/<command>-<suite name>-<first 8 hex of the suite's sha256>`.
    pub fn default_out(&self, command: &str) -> PathBuf {
        PathBuf::from("runs").join(format!("{command}-{}-{}", self.name, &self.sha256[..8]))
    }
}

/// The suite's limits with a `--concurrency` override (which must be at least 1).
fn limits_with_concurrency(
    suite: &Suite,
    concurrency: Option<usize>,
) -> Result<RolloutLimits, EvalError> {
    let mut limits = suite.limits.clone();
    if let Some(c) = concurrency {
        if c == 0 {
            return Err(EvalError::Usage("--concurrency must be at least 1".into()));
        }
        limits.concurrency = Some(c);
    }
    Ok(limits)
}

/// Where completions are cached (a serialisable [`CacheSetting`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheChoice {
    Default,
    Path(PathBuf),
    Off,
}

impl CacheChoice {
    pub fn setting(&self) -> CacheSetting {
        match self {
            CacheChoice::Default => CacheSetting::Default,
            CacheChoice::Path(p) => CacheSetting::Path(p.clone()),
            CacheChoice::Off => CacheSetting::Off,
        }
    }
}

/// Everything an evaluation needs, resolved (serialisable: a run directory keeps it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalSettings {
    pub suite: SuiteRef,
    pub tasks: Vec<TaskDef>,
    /// Executor SPEC (normalised).
    pub executor: String,
    /// Proposer SPECs (normalised); one run directory each.
    pub proposers: Vec<String>,
    pub proposer_settings: ProposerSettings,
    pub rounds: u32,
    pub candidates: u32,
    pub samples: u32,
    pub select: Selection,
    pub seed: u64,
    /// `--limit N`: every set cut to N instances (the summary says not comparable).
    pub limit: Option<usize>,
    pub limits: RolloutLimits,
    pub cache: CacheChoice,
    pub unsafe_no_isolation: bool,
    /// `--python`: the sandbox's interpreter (`python3` on `PATH` when absent); what
    /// it resolves to is recorded in each run directory's config
    /// ([`EvalConfig::sandbox_python`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<PathBuf>,
    /// Code items: seconds per test and what the limit measures.
    pub grade_timeout_s: f64,
    pub grade_cpu_clock: bool,
    /// The output directory: the run directory itself for one proposer, else the
    /// parent of one run directory per proposer.
    pub out: PathBuf,
    /// `--shard I/N`: this process runs only its part of the (task, harness sample)
    /// units (see [`crate::shard`]); `hrl merge` combines the parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// `--accept-proposer-change` (a resume only, never recorded as a setting): continue
    /// a run whose proposer's files (a `cmd:` script) changed since it started; the
    /// change is recorded in `config.json` ([`EvalConfig::proposer_history`]).
    #[serde(skip)]
    pub accept_proposer_change: bool,
}

/// The overrides of how the engine runs, shared by every command that runs it
/// (`hrl eval`, `hrl transfer`, `hrl train`, `hrl contexts export`,
/// `hrl reward-server`): the executor, concurrency, the completion cache and the
/// sandbox. None of them but the executor changes a result.
#[derive(Debug, Clone, Default)]
pub struct EngineOverrides {
    pub executor: Option<String>,
    pub concurrency: Option<usize>,
    pub cache: Option<CacheChoice>,
    pub unsafe_no_isolation: bool,
    pub python: Option<PathBuf>,
}

/// [`EngineOverrides`] applied to a suite.
#[derive(Debug, Clone)]
pub struct ResolvedEngine {
    /// The executor SPEC, normalised.
    pub executor: String,
    pub limits: RolloutLimits,
    pub cache: CacheChoice,
    pub unsafe_no_isolation: bool,
    pub python: Option<PathBuf>,
}

impl EngineOverrides {
    /// The suite's engine settings with these overrides.
    pub fn resolve(&self, suite: &Suite) -> Result<ResolvedEngine, EvalError> {
        let executor = self
            .executor
            .clone()
            .unwrap_or_else(|| suite.executor.clone());
        let executor = ExecutorSpec::parse(&executor)
            .map_err(|e| EvalError::Usage(format!("--executor: {e}")))?
            .normalized();
        Ok(ResolvedEngine {
            executor,
            limits: limits_with_concurrency(suite, self.concurrency)?,
            cache: self.cache.clone().unwrap_or(CacheChoice::Default),
            unsafe_no_isolation: self.unsafe_no_isolation,
            python: self.python.clone(),
        })
    }

    /// The overrides a resumed run accepts (they change no result): the cache,
    /// concurrency, the isolation switch and the interpreter's path (another
    /// interpreter is refused later by the config check, `sandbox_python`).
    pub fn apply_to_resumed(&self, s: &mut EvalSettings) {
        if let Some(c) = &self.cache {
            s.cache = c.clone();
        }
        if let Some(c) = self.concurrency {
            s.limits.concurrency = Some(c);
        }
        s.unsafe_no_isolation |= self.unsafe_no_isolation;
        if let Some(p) = &self.python {
            s.python = Some(p.clone());
        }
    }
}

/// Command-line overrides of a suite (every field optional).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub engine: EngineOverrides,
    pub proposers: Vec<String>,
    pub rounds: Option<u32>,
    pub candidates: Option<u32>,
    pub samples: Option<u32>,
    pub select: Option<Selection>,
    pub seed: Option<u64>,
    pub limit: Option<usize>,
    pub tasks: Vec<String>,
    pub template: Option<PathBuf>,
    pub out: Option<PathBuf>,
    pub shard: Option<Shard>,
}

impl EvalSettings {
    /// A suite with overrides: the one place flags become settings.
    pub fn resolve(suite: &Suite, o: &Overrides) -> Result<EvalSettings, EvalError> {
        let usage = |m: String| EvalError::Usage(m);
        let engine = o.engine.resolve(suite)?;
        let proposers: Vec<String> = if o.proposers.is_empty() {
            suite.proposers.clone()
        } else {
            o.proposers
                .iter()
                .map(|p| {
                    ProposerSpec::parse(p)
                        .map(|s| s.normalized())
                        .map_err(|e| usage(format!("--proposer: {e}")))
                })
                .collect::<Result<_, _>>()?
        };
        if proposers.is_empty() {
            return Err(usage(
                "no proposer: give --proposer SPEC or list `proposers` in the suite".into(),
            ));
        }
        let mut labels = std::collections::HashSet::new();
        for p in &proposers {
            let label = ProposerSpec::parse(p)?.label();
            if !labels.insert(label.clone()) {
                return Err(usage(format!(
                    "two proposers have the label `{label}` (their run directories would clash)"
                )));
            }
        }
        let check = |name: &str, v: u32, lo: u32, hi: u32| {
            if (lo..=hi).contains(&v) {
                Ok(v)
            } else {
                Err(usage(format!("--{name} {v} is outside {lo}..={hi}")))
            }
        };
        let rounds = check("rounds", o.rounds.unwrap_or(suite.rounds), 1, 100)?;
        let candidates = check(
            "candidates",
            o.candidates.unwrap_or(suite.candidates),
            1,
            64,
        )?;
        let samples = check("samples", o.samples.unwrap_or(suite.samples), 1, 1000)?;
        if o.limit == Some(0) {
            return Err(usage("--limit must be at least 1".into()));
        }
        let tasks: Vec<TaskDef> = if o.tasks.is_empty() {
            suite.tasks.clone()
        } else {
            let mut v = Vec::new();
            for t in &o.tasks {
                let found: Vec<&TaskDef> = suite
                    .tasks
                    .iter()
                    .filter(|d| d.id == *t || d.key() == *t)
                    .collect();
                if found.is_empty() {
                    return Err(usage(format!(
                        "--task {t}: the suite has no such task (tasks: {})",
                        suite
                            .tasks
                            .iter()
                            .map(|d| d.id.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
                for d in found {
                    if !v.iter().any(|x: &TaskDef| x.id == d.id) {
                        v.push(d.clone());
                    }
                }
            }
            v
        };
        let mut proposer_settings = suite.proposer.clone();
        if let Some(t) = &o.template {
            proposer_settings.template = Some(t.clone());
        }
        let suite_ref = SuiteRef::of(suite);
        let out = o
            .out
            .clone()
            .unwrap_or_else(|| suite_ref.default_out("eval"));
        Ok(EvalSettings {
            suite: suite_ref,
            tasks,
            executor: engine.executor,
            proposers,
            proposer_settings,
            rounds,
            candidates,
            samples,
            select: o.select.unwrap_or(suite.select),
            seed: o.seed.unwrap_or(suite.seed),
            limit: o.limit,
            limits: engine.limits,
            cache: engine.cache,
            unsafe_no_isolation: engine.unsafe_no_isolation,
            python: engine.python,
            grade_timeout_s: 6.0,
            grade_cpu_clock: false,
            out,
            shard: o.shard,
            accept_proposer_change: false,
        })
    }

    /// Unit number of (task index, harness sample): task-major in suite order.
    pub fn unit(&self, task: usize, sample: u32) -> usize {
        task * self.samples as usize + sample as usize
    }

    /// Does this process run (task index, harness sample)? (Always, unsharded.)
    pub fn runs_unit(&self, task: usize, sample: u32) -> bool {
        self.shard
            .is_none_or(|s| s.contains(self.unit(task, sample)))
    }

    pub fn executor_spec(&self) -> Result<ExecutorSpec, EvalError> {
        ExecutorSpec::parse(&self.executor).map_err(|e| EvalError::Usage(e.to_string()))
    }

    /// The run directory of proposer `i`: `out` itself for a single proposer, else
    /// `out/<label>`.
    pub fn arm_dir(&self, i: usize) -> Result<PathBuf, EvalError> {
        if self.proposers.len() == 1 {
            Ok(self.out.clone())
        } else {
            Ok(self
                .out
                .join(ProposerSpec::parse(&self.proposers[i])?.label()))
        }
    }

    /// The rollout settings (limits; seed 0: greedy executors ignore it).
    pub fn run_config(&self, parallelism: usize) -> RunConfig {
        let l = &self.limits;
        RunConfig {
            concurrency: l.concurrency.unwrap_or((2 * parallelism).max(4)),
            dispatch: DispatchConfig {
                window: Duration::from_millis(l.batch_window_ms),
                ..DispatchConfig::default()
            },
            program: ProgramLimits {
                max_llm_calls: l.max_llm_calls,
                max_tokens: l.max_item_tokens,
                max_tool_calls: l.max_tool_calls,
                wall: Duration::from_secs_f64(l.harness_timeout_s),
                ..ProgramLimits::default()
            },
            tool: ToolLimits {
                timeout: Duration::from_secs_f64(l.tool_timeout_s),
                ..ToolLimits::default()
            },
            seed: 0,
            samples: 1,
            waves: None,
        }
    }

    pub fn sandbox_config(&self) -> SandboxConfig {
        SandboxConfig {
            unsafe_no_isolation: self.unsafe_no_isolation,
            python: self
                .python
                .clone()
                .unwrap_or_else(|| SandboxConfig::default().python),
        }
    }

    pub fn grade_config(&self) -> GradeConfig {
        GradeConfig {
            timeout: Duration::from_secs_f64(self.grade_timeout_s),
            clock: if self.grade_cpu_clock {
                TimeoutClock::Cpu
            } else {
                TimeoutClock::Wall
            },
            ..GradeConfig::default()
        }
    }
}

/// A seed harness as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HarnessRef {
    pub hash: String,
    pub kind: HarnessKind,
    pub name: String,
    pub path: PathBuf,
}

/// One task as recorded: its definition, its resolved sets and seed harness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    #[serde(flatten)]
    pub def: TaskDef,
    pub description: String,
    pub seed_harness_ref: HarnessRef,
    pub set_ids: SetIds,
}

/// `config.json`: everything that determines a run's results, fully resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalConfig {
    pub schema: u32,
    pub crate_version: String,
    pub git_commit: String,
    pub build: BuildIdentity,
    /// The settings of the whole invocation (every proposer of it).
    pub settings: EvalSettings,
    /// This run directory's proposer.
    pub proposer: ProposerIdentity,
    pub executor: ExecutorIdentity,
    /// The rollout settings and their result hash (part of every rollout's key).
    pub run: RunConfig,
    pub run_config_hash: String,
    /// The sandbox's interpreter, hashed into `run_config_hash` (absent in configs
    /// written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_python: Option<PythonIdentity>,
    pub tasks: Vec<TaskRecord>,
    /// `false` with `--limit`.
    pub comparable: bool,
    /// The proposer identities this run had before a resume with
    /// `--accept-proposer-change` replaced them (oldest first; absent when none did).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub proposer_history: Vec<ProposerIdentity>,
    /// Tasks whose family the proposer was trained on (`eval::seen`): not held out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seen_in_training: Vec<String>,
    /// Warnings about the run's validity (a checkpoint without a training record).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl EvalConfig {
    /// The fields that must agree for two runs to be paired (instances, samples,
    /// executor, settings), as `(name, value)`; [`EvalConfig::incompatibility`] names
    /// the first that differs.
    pub fn identity_fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![
            ("executor", v(&self.executor.hash)),
            (
                "sandbox_python",
                v(&self.sandbox_python.as_ref().map(|p| &p.hash)),
            ),
            ("run_config_hash", v(&self.run_config_hash)),
            ("rounds", v(&self.settings.rounds)),
            ("candidates", v(&self.settings.candidates)),
            ("samples", v(&self.settings.samples)),
            ("select", v(&self.settings.select)),
            ("seed", v(&self.settings.seed)),
            (
                "tasks",
                serde_json::Value::Array(
                    self.tasks
                        .iter()
                        .map(|t| {
                            serde_json::json!({
                                "id": t.def.id,
                                "sets": t.set_ids,
                                "seed_harness": t.seed_harness_ref.hash,
                            })
                        })
                        .collect(),
                ),
            ),
        ]
    }

    /// The first identity field in which two runs differ, or `None` when they can be
    /// paired (the proposer may differ: that is what a comparison compares).
    pub fn incompatibility(&self, other: &EvalConfig) -> Option<String> {
        self.identity_fields()
            .into_iter()
            .zip(other.identity_fields())
            .find(|(a, b)| a.1 != b.1)
            .map(|(a, _)| a.0.to_string())
    }
}

fn v<T: Serialize>(x: &T) -> serde_json::Value {
    serde_json::to_value(x).unwrap_or(serde_json::Value::Null)
}
