//! Suite files (TOML, in `suites/`): the tasks of an evaluation and its defaults.
//!
//! ```toml
//! name = "demo"
//! description = "..."
//! seed_harness = "harnesses/zero-shot.toml"   # relative to this file
//! rounds = 3            # K
//! candidates = 4        # G
//! samples = 3           # M (harness samples, i.e. proposer seeds)
//! select = "best"       # keep the best candidate if it beats the parent; "always" for ablations
//! seed = 0              # the run seed (proposer seeds derive from it)
//! executor = "llama:qwen2.5-coder-0.5b,threads=1,n_parallel=16,prefix_reuse=off"
//! proposers = ["identity", "llm:llama:qwen2.5-coder-0.5b,...", "file:harnesses/oracle"]
//!
//! [sets]                # instances per task and set (tasks may override)
//! feedback = 6
//! dev = 8
//! test = 16
//!
//! [proposer]            # settings of prompted proposers (see proposer::ProposerSettings)
//! temperature = 0.7
//! top_p = 0.95
//! max_tokens = 768
//! report_tokens = 1200
//! show_gold = false
//! constrain = "off"       # "edits" | "harness": llm replies decoded under a grammar
//! template = "prompts/proposer-v1.toml"   # optional, relative to this file
//!
//! [limits]              # per-rollout limits (optional; see harness::runtime)
//! tool_timeout_s = 10
//! harness_timeout_s = 60
//! max_llm_calls = 32
//! max_item_tokens = 65536
//! max_tool_calls = 32
//! concurrency = 32      # rollouts in flight [default: 2 x the executor's parallelism]
//! batch_window_ms = 20  # longest wait for more executor calls before a batch leaves
//!
//! [[task]]              # family tasks: one task per family
//! families = ["count_primes", "gcd"]
//! level = 1
//! seed = 0              # the instance stream seed (optional)
//! # feedback / dev / test / seed_harness may be overridden per task
//!
//! [[task]]              # the families of one role of a family split
//! split = "paper-like"  # a built-in split (suites/splits/) or a split file
//! role = "held_out"
//! level = 1
//!
//! [[task]]              # a LiveCodeBench selection
//! name = "lcb-fixtures"
//! lcb = "../fixtures/lcb"
//! release = "release_latest"   # and optional from, to, platform, difficulty
//! ```
//!
//! A suite may carry a `[train]` table for `hrl train` ([`TrainSpec`]; `hrl eval`
//! ignores it):
//!
//! ```toml
//! [train]
//! train = ["rl@paper-like"]        # task ids, family names, or ROLE@SPLIT (the suite's
//! heldout = ["count_primes"]       #   tasks whose family is in that role of that split)
//! steps = 40            # default number of steps (--steps overrides)
//! batch = 4             # training contexts per step
//! group = 4             # G: revisions sampled per context
//! lr = 0.05             # Adam learning rate
//! entropy = 0.01        # entropy bonus coefficient
//! kl = 0.0              # KL-to-initial-policy coefficient
//! max_edits = 3         # longest revision (edits before stop)
//! rounds = 1            # revision rounds per context (k; 1 = single-revision training)
//! validity_bonus = 0.0  # added to a valid revision's dev score
//! invalid_reward = 0.0  # the reward of an invalid revision
//! mask_invalid = true   # give invalid actions probability 0
//! adv_eps = 1e-6        # advantage = (r - mean) / (std + adv_eps)
//! checkpoint_every = 10 # ckpt-<step>.json every N steps (last.json after every step)
//! eval_every = 5        # held-out score every N steps (0: only after the last step)
//! validation = 16       # held-out validation instances per task the monitor scores
//!                       #   [default: the task's test size; never the test set]
//! seed = 0              # training seed [default: the suite's seed]
//! ```
//!
//! Parsing is strict: unknown fields, wrong types, out-of-range values and unknown
//! families are errors naming the file, line and field. Relative paths (seed
//! harnesses, templates, `lcb` directories, `file:` proposers) are resolved against
//! the suite file's directory.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::EvalError;
use crate::families::{self, Level};
use crate::harness::locate;
use crate::proposer::{ProposerSettings, ProposerSpec};

mod transfer;

pub use transfer::{Transfer, TransferKind};
use transfer::{TransferFile, check_transfer};

/// How a round picks the harness it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Selection {
    /// The candidate with the best dev score, if it beats the parent's (ties keep the
    /// parent; ties among candidates go to the earliest).
    #[default]
    Best,
    /// The best valid candidate even when it is worse than the parent (ablations).
    Always,
}

/// Instances per set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetSizes {
    pub feedback: usize,
    pub dev: usize,
    pub test: usize,
    /// The held-out validation set the trainer's monitor scores (0: none; only
    /// `hrl train` gives its held-out tasks one, see `eval::sets`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub validation: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Default for SetSizes {
    fn default() -> Self {
        SetSizes {
            feedback: 6,
            dev: 8,
            test: 16,
            validation: 0,
        }
    }
}

/// Per-rollout limits and concurrency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RolloutLimits {
    pub tool_timeout_s: f64,
    pub harness_timeout_s: f64,
    pub max_llm_calls: u32,
    pub max_item_tokens: u64,
    pub max_tool_calls: u32,
    /// Rollouts in flight across the whole run (`None`: 2 x the executor's
    /// parallelism, at least 4).
    #[serde(default)]
    pub concurrency: Option<usize>,
    /// Longest wait, in milliseconds, for more executor calls before a batch leaves.
    #[serde(default = "default_window")]
    pub batch_window_ms: u64,
}

fn default_window() -> u64 {
    20
}

impl Default for RolloutLimits {
    fn default() -> Self {
        RolloutLimits {
            tool_timeout_s: 10.0,
            harness_timeout_s: 60.0,
            max_llm_calls: 32,
            max_item_tokens: 65_536,
            max_tool_calls: 32,
            concurrency: None,
            batch_window_ms: default_window(),
        }
    }
}

/// Where a task's instances come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum TaskSource {
    /// A family at a level; the sets are disjoint index ranges of its stream.
    Family {
        family: String,
        level: u8,
        /// The instance stream seed.
        seed: u64,
    },
    /// LiveCodeBench problems; the sets are disjoint problem sets (a seeded shuffle).
    Lcb {
        /// Which problems (serialised flat: `dir`, `release`, `from`, ...).
        #[serde(flatten)]
        selection: crate::lcb::LcbSelection,
        /// The shuffle seed.
        seed: u64,
    },
}

/// One task of a suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskDef {
    /// `family/L<level>` or `lcb/<name>`.
    pub id: String,
    pub source: TaskSource,
    pub sets: SetSizes,
    /// The seed harness of this task.
    pub seed_harness: PathBuf,
}

impl TaskDef {
    /// The key `file:DIR` proposers look harnesses up by.
    pub fn key(&self) -> String {
        match &self.source {
            TaskSource::Family { family, .. } => family.clone(),
            TaskSource::Lcb { .. } => "lcb".into(),
        }
    }
}

/// A parsed suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suite {
    pub name: String,
    pub description: String,
    /// The file it was read from and its sha256.
    pub path: PathBuf,
    pub sha256: String,
    pub rounds: u32,
    pub candidates: u32,
    pub samples: u32,
    pub select: Selection,
    pub seed: u64,
    pub executor: String,
    /// Proposer specs (paths of `file:` proposers resolved).
    pub proposers: Vec<String>,
    pub proposer: ProposerSettings,
    pub limits: RolloutLimits,
    pub tasks: Vec<TaskDef>,
    /// The `[train]` table, if any (`hrl train`).
    #[serde(default)]
    pub train: Option<TrainSpec>,
    /// The `[transfer]` table of a transfer suite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer: Option<Transfer>,
}

// The file's shape.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: String,
    #[serde(default)]
    description: String,
    seed_harness: PathBuf,
    rounds: u32,
    candidates: u32,
    samples: u32,
    #[serde(default)]
    select: Selection,
    #[serde(default)]
    seed: u64,
    executor: String,
    #[serde(default)]
    proposers: Vec<String>,
    #[serde(default)]
    sets: Option<SetSizes>,
    #[serde(default)]
    proposer: Option<ProposerFile>,
    #[serde(default)]
    limits: Option<RolloutLimits>,
    #[serde(default, rename = "task")]
    tasks: Vec<TaskFile>,
    #[serde(default)]
    train: Option<TrainFile>,
    transfer: Option<TransferFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TrainFile {
    #[serde(default)]
    train: Vec<String>,
    #[serde(default)]
    heldout: Vec<String>,
    steps: Option<u64>,
    batch: Option<usize>,
    group: Option<usize>,
    lr: Option<f64>,
    entropy: Option<f64>,
    kl: Option<f64>,
    max_edits: Option<usize>,
    rounds: Option<u32>,
    validity_bonus: Option<f64>,
    invalid_reward: Option<f64>,
    mask_invalid: Option<bool>,
    adv_eps: Option<f64>,
    checkpoint_every: Option<u64>,
    eval_every: Option<u64>,
    validation: Option<usize>,
    seed: Option<u64>,
}

/// The `[train]` table of a suite, resolved (see the module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainSpec {
    /// Ids of the suite's training tasks.
    pub train: Vec<String>,
    /// Ids of the suite's held-out tasks (disjoint from `train`).
    pub heldout: Vec<String>,
    pub steps: u64,
    pub batch: usize,
    pub group: usize,
    pub lr: f64,
    pub entropy: f64,
    pub kl: f64,
    pub max_edits: usize,
    pub rounds: u32,
    pub validity_bonus: f64,
    pub invalid_reward: f64,
    pub mask_invalid: bool,
    pub adv_eps: f64,
    pub checkpoint_every: u64,
    pub eval_every: u64,
    pub seed: u64,
    /// Instances of each held-out task's validation set, which the held-out monitor
    /// scores (default: the task's test size; never the test set itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<usize>,
    /// The family splits the `train` selectors name (`ROLE@SPLIT`), recorded in
    /// checkpoints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub splits: Vec<String>,
}

/// Resolve a `[train]` selector: a task id, a family name, or `ROLE@SPLIT`.
fn select_tasks(sel: &str, tasks: &[TaskDef], base: &Path) -> Result<Vec<String>, String> {
    let found: Vec<String> = if let Some((role, split)) = sel.split_once('@') {
        let fams = split_families(split, Some(role), base).map_err(|(_, m)| m)?;
        tasks
            .iter()
            .filter(|t| fams.contains(&t.key()))
            .map(|t| t.id.clone())
            .collect()
    } else {
        tasks
            .iter()
            .filter(|t| t.id == sel || t.key() == sel)
            .map(|t| t.id.clone())
            .collect()
    };
    if found.is_empty() {
        return Err(format!(
            "`{sel}` matches no task of the suite (give a task id, a family name or ROLE@SPLIT)"
        ));
    }
    Ok(found)
}

fn resolve_train(
    t: TrainFile,
    tasks: &[TaskDef],
    base: &Path,
    suite_seed: u64,
) -> Result<TrainSpec, (String, String)> {
    let mut lists = Vec::new();
    for (name, sels) in [("train", &t.train), ("heldout", &t.heldout)] {
        let mut ids: Vec<String> = Vec::new();
        for (i, s) in sels.iter().enumerate() {
            for id in select_tasks(s, tasks, base).map_err(|m| (format!("train.{name}[{i}]"), m))? {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        lists.push(ids);
    }
    let heldout = lists.pop().expect("two lists");
    let train = lists.pop().expect("two lists");
    let mut splits: Vec<String> = Vec::new();
    for sel in &t.train {
        if let Some((_, split)) = sel.split_once('@')
            && !splits.iter().any(|s| s == split)
        {
            splits.push(split.to_string());
        }
    }
    if train.is_empty() {
        return Err((
            "train.train".into(),
            "name at least one training task".into(),
        ));
    }
    if let Some(x) = heldout.iter().find(|h| train.contains(h)) {
        return Err((
            "train.heldout".into(),
            format!("task `{x}` is both a training and a held-out task"),
        ));
    }
    let spec = TrainSpec {
        train,
        heldout,
        steps: t.steps.unwrap_or(20),
        batch: t.batch.unwrap_or(4),
        group: t.group.unwrap_or(4),
        lr: t.lr.unwrap_or(0.05),
        entropy: t.entropy.unwrap_or(0.01),
        kl: t.kl.unwrap_or(0.0),
        max_edits: t.max_edits.unwrap_or(3),
        rounds: t.rounds.unwrap_or(1),
        validity_bonus: t.validity_bonus.unwrap_or(0.0),
        invalid_reward: t.invalid_reward.unwrap_or(0.0),
        mask_invalid: t.mask_invalid.unwrap_or(true),
        adv_eps: t.adv_eps.unwrap_or(1e-6),
        checkpoint_every: t.checkpoint_every.unwrap_or(10),
        eval_every: t.eval_every.unwrap_or(5),
        seed: t.seed.unwrap_or(suite_seed),
        validation: t.validation,
        splits,
    };
    spec.check().map_err(|(k, m)| (format!("train.{k}"), m))?;
    Ok(spec)
}

impl TrainSpec {
    /// Range checks; errors name the field (without the `train.` prefix).
    pub fn check(&self) -> Result<(), (String, String)> {
        let out = |k: &str, m: String| Err((k.to_string(), m));
        if self.steps > 1_000_000 {
            return out("steps", format!("{} is outside 0..=1000000", self.steps));
        }
        for (k, v, lo, hi) in [
            ("batch", self.batch, 1, 4096),
            ("group", self.group, 2, 256),
            ("max_edits", self.max_edits, 1, 32),
        ] {
            if !(lo..=hi).contains(&v) {
                return out(k, format!("{v} is outside {lo}..={hi}"));
            }
        }
        if !(1..=16).contains(&self.rounds) {
            return out("rounds", format!("{} is outside 1..=16", self.rounds));
        }
        if let Some(v) = self.validation
            && !(1..=100_000).contains(&v)
        {
            return out("validation", format!("{v} is outside 1..=100000"));
        }
        for (k, v) in [
            ("lr", self.lr),
            ("entropy", self.entropy),
            ("kl", self.kl),
            ("adv_eps", self.adv_eps),
        ] {
            if !(v.is_finite() && (0.0..=100.0).contains(&v)) {
                return out(k, format!("{v} must be a number in 0..=100"));
            }
        }
        for (k, v) in [
            ("validity_bonus", self.validity_bonus),
            ("invalid_reward", self.invalid_reward),
        ] {
            if !(v.is_finite() && (-100.0..=100.0).contains(&v)) {
                return out(k, format!("{v} must be a number in -100..=100"));
            }
        }
        if self.checkpoint_every == 0 {
            return out("checkpoint_every", "must be at least 1".into());
        }
        Ok(())
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProposerFile {
    template: Option<PathBuf>,
    temperature: Option<f32>,
    top_p: Option<f32>,
    max_tokens: Option<u32>,
    report_tokens: Option<usize>,
    show_gold: Option<bool>,
    constrain: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskFile {
    family: Option<String>,
    families: Option<Vec<String>>,
    split: Option<String>,
    role: Option<String>,
    level: Option<u8>,
    lcb: Option<PathBuf>,
    name: Option<String>,
    release: Option<String>,
    from: Option<String>,
    to: Option<String>,
    platform: Option<String>,
    difficulty: Option<String>,
    seed: Option<u64>,
    feedback: Option<usize>,
    dev: Option<usize>,
    test: Option<usize>,
    seed_harness: Option<PathBuf>,
}

/// The families of `role` in split `name` (a built-in name such as `paper-like`, or a
/// split file, relative to the suite's directory). Errors carry the field they concern.
fn split_families(
    name: &str,
    role: Option<&str>,
    base: &Path,
) -> Result<Vec<String>, (&'static str, String)> {
    let Some(role) = role else {
        return Err((
            "role",
            "a split task needs the role whose families it runs (e.g. held_out)".into(),
        ));
    };
    let builtin = families::splits::builtin_names().any(|n| n == name);
    let arg = if builtin || Path::new(name).is_absolute() {
        name.to_string()
    } else {
        base.join(name).display().to_string()
    };
    let split = families::splits::load(&arg).map_err(|e| ("split", e.to_string()))?;
    match split.families(role) {
        Some(f) if !f.is_empty() => Ok(f.iter().map(|s| s.to_string()).collect()),
        Some(_) => Err((
            "role",
            format!("role `{role}` of split `{}` is empty", split.name),
        )),
        None => Err((
            "role",
            format!(
                "split `{}` has no role `{role}` (its roles: {})",
                split.name,
                split
                    .roles
                    .iter()
                    .map(|r| r.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// Largest set size (sets are index ranges `SET_STRIDE` apart).
pub const MAX_SET: usize = 100_000;

impl Suite {
    /// Read and check a suite file.
    pub fn load(path: &Path) -> Result<Suite, EvalError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| EvalError::Usage(format!("{}: {e}", path.display())))?;
        Suite::parse(&text, path)
    }

    /// Parse a suite text; `path` names it in errors and anchors relative paths.
    pub fn parse(text: &str, path: &Path) -> Result<Suite, EvalError> {
        let origin = path.display().to_string();
        let f: File = toml::from_str(text).map_err(|e| {
            let (line, field, message) = locate::toml_error(text, &e);
            EvalError::Suite {
                origin: origin.clone(),
                line,
                field,
                message,
            }
        })?;
        let err = |field: &str, message: String| EvalError::Suite {
            origin: origin.clone(),
            line: locate::line_of_path(text, field),
            field: Some(field.to_string()),
            message,
        };
        let base = path.parent().unwrap_or(Path::new("")).to_path_buf();
        let resolve = |p: &Path| -> PathBuf {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                base.join(p)
            }
        };
        if f.name.trim().is_empty() {
            return Err(err("name", "is empty".into()));
        }
        for (field, v, lo, hi) in [
            ("rounds", f.rounds, 1, 100),
            ("candidates", f.candidates, 1, 64),
            ("samples", f.samples, 1, 1000),
        ] {
            if !(lo..=hi).contains(&v) {
                return Err(err(field, format!("{v} is outside {lo}..={hi}")));
            }
        }
        crate::executor::ExecutorSpec::parse(&f.executor)
            .map_err(|e| err("executor", e.to_string()))?;
        let mut proposers = Vec::new();
        for (i, p) in f.proposers.iter().enumerate() {
            let field = format!("proposers[{i}]");
            let spec = ProposerSpec::parse(p).map_err(|e| err(&field, e.to_string()))?;
            let spec = match spec {
                ProposerSpec::File(p) => ProposerSpec::File(resolve(&p)),
                other => other,
            };
            proposers.push(spec.normalized());
        }
        let defaults = f.sets.unwrap_or_default();
        check_sets(&defaults).map_err(|(k, m)| err(&format!("sets.{k}"), m))?;
        let mut proposer = ProposerSettings::default();
        if let Some(p) = f.proposer {
            if let Some(t) = p.template {
                proposer.template = Some(resolve(&t));
            }
            if let Some(x) = p.temperature {
                if !(x.is_finite() && (0.0..=2.0).contains(&x)) {
                    return Err(err("proposer.temperature", format!("{x} is outside 0..=2")));
                }
                proposer.temperature = x;
            }
            if let Some(x) = p.top_p {
                if !(x > 0.0 && x <= 1.0) {
                    return Err(err("proposer.top_p", format!("{x} is outside (0, 1]")));
                }
                proposer.top_p = x;
            }
            if let Some(x) = p.max_tokens {
                if x == 0 || x > 32_768 {
                    return Err(err(
                        "proposer.max_tokens",
                        format!("{x} is outside 1..=32768"),
                    ));
                }
                proposer.max_tokens = x;
            }
            if let Some(x) = p.report_tokens {
                if !(100..=200_000).contains(&x) {
                    return Err(err(
                        "proposer.report_tokens",
                        format!("{x} is outside 100..=200000"),
                    ));
                }
                proposer.report_tokens = x;
            }
            if let Some(x) = p.show_gold {
                proposer.show_gold = x;
            }
            if let Some(x) = p.constrain {
                proposer.constrain = crate::proposer::constrain::Constrain::parse(&x)
                    .map_err(|m| err("proposer.constrain", m))?;
            }
        }
        let limits = f.limits.unwrap_or_default();
        for (k, v) in [
            ("tool_timeout_s", limits.tool_timeout_s),
            ("harness_timeout_s", limits.harness_timeout_s),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 86_400.0) {
                return Err(err(
                    &format!("limits.{k}"),
                    format!("{v} must be in (0, 86400]"),
                ));
            }
        }
        if limits.concurrency == Some(0) {
            return Err(err("limits.concurrency", "must be at least 1".into()));
        }
        let seed_harness = resolve(&f.seed_harness);
        let mut tasks: Vec<TaskDef> = Vec::new();
        if f.tasks.is_empty() {
            return Err(err("task", "a suite needs at least one [[task]]".into()));
        }
        for (i, t) in f.tasks.into_iter().enumerate() {
            let at = |k: &str| format!("task[{i}].{k}");
            let sets = SetSizes {
                feedback: t.feedback.unwrap_or(defaults.feedback),
                dev: t.dev.unwrap_or(defaults.dev),
                test: t.test.unwrap_or(defaults.test),
                validation: 0,
            };
            check_sets(&sets).map_err(|(k, m)| err(&at(k), m))?;
            let task_harness = t
                .seed_harness
                .as_deref()
                .map(resolve)
                .unwrap_or(seed_harness.clone());
            if t.role.is_some() && t.split.is_none() {
                return Err(err(&at("role"), "a role needs a split".into()));
            }
            let names: Vec<String> = match (&t.family, &t.families, &t.split, &t.lcb) {
                (Some(n), None, None, None) => vec![n.clone()],
                (None, Some(v), None, None) if !v.is_empty() => v.clone(),
                (None, None, Some(name), None) => split_families(name, t.role.as_deref(), &base)
                    .map_err(|(k, m)| err(&at(k), m))?,
                (None, None, None, Some(_)) => Vec::new(),
                _ => {
                    return Err(err(
                        &format!("task[{i}]"),
                        "give exactly one of family, families (non-empty), split (with role) or lcb"
                            .into(),
                    ));
                }
            };
            if let Some(dir) = &t.lcb {
                if t.level.is_some() {
                    return Err(err(
                        &at("level"),
                        "LiveCodeBench tasks have no level".into(),
                    ));
                }
                let selection = crate::lcb::LcbSelection {
                    release: t.release.clone().unwrap_or_else(|| "release_latest".into()),
                    from: t.from.clone(),
                    to: t.to.clone(),
                    platform: t.platform.clone(),
                    difficulty: t.difficulty.clone(),
                    ..crate::lcb::LcbSelection::new(resolve(dir))
                };
                selection.check().map_err(|(k, m)| err(&at(k), m))?;
                let name = t.name.clone().unwrap_or_else(|| "lcb".into());
                tasks.push(TaskDef {
                    id: format!("lcb/{name}"),
                    source: TaskSource::Lcb {
                        selection,
                        seed: t.seed.unwrap_or(f.seed),
                    },
                    sets,
                    seed_harness: task_harness.clone(),
                });
            } else {
                for k in ["release", "from", "to", "platform", "difficulty"] {
                    let given = match k {
                        "release" => t.release.is_some(),
                        "from" => t.from.is_some(),
                        "to" => t.to.is_some(),
                        "platform" => t.platform.is_some(),
                        _ => t.difficulty.is_some(),
                    };
                    if given {
                        return Err(err(&at(k), "only LiveCodeBench tasks take this".into()));
                    }
                }
                if t.name.is_some() {
                    return Err(err(
                        &at("name"),
                        "family tasks are named by family and level".into(),
                    ));
                }
                let level = t.level.unwrap_or(1);
                Level::new(level).map_err(|e| err(&at("level"), e.to_string()))?;
                for (j, n) in names.iter().enumerate() {
                    let field = if t.families.is_some() {
                        format!("task[{i}].families[{j}]")
                    } else if t.split.is_some() {
                        at("split")
                    } else {
                        at("family")
                    };
                    families::get(n).map_err(|e| err(&field, e.to_string()))?;
                    tasks.push(TaskDef {
                        id: format!("{n}/L{level}"),
                        source: TaskSource::Family {
                            family: n.clone(),
                            level,
                            seed: t.seed.unwrap_or(f.seed),
                        },
                        sets,
                        seed_harness: task_harness.clone(),
                    });
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        for t in &tasks {
            if !seen.insert(t.id.clone()) {
                return Err(err("task", format!("task `{}` is listed twice", t.id)));
            }
        }
        let train = match f.train {
            None => None,
            Some(t) => Some(resolve_train(t, &tasks, &base, f.seed).map_err(|(k, m)| err(&k, m))?),
        };
        let transfer = match f.transfer {
            None => None,
            Some(t) => Some(check_transfer(t, f.rounds, &tasks, &base, &err, &resolve)?),
        };
        Ok(Suite {
            name: f.name,
            description: f.description,
            path: path.to_path_buf(),
            sha256: crate::proposer::sha256_hex(text.as_bytes()),
            rounds: f.rounds,
            candidates: f.candidates,
            samples: f.samples,
            select: f.select,
            seed: f.seed,
            executor: f.executor,
            proposers,
            proposer,
            limits,
            train,
            tasks,
            transfer,
        })
    }
}

fn check_sets(s: &SetSizes) -> Result<(), (&'static str, String)> {
    for (k, v) in [("feedback", s.feedback), ("dev", s.dev), ("test", s.test)] {
        if v == 0 || v > MAX_SET {
            return Err((k, format!("{v} is outside 1..={MAX_SET}")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"name = "t"
seed_harness = "harnesses/zero-shot.toml"
rounds = 2
candidates = 3
samples = 2
executor = "llama:smollm2-135m"
proposers = ["identity", "file:harnesses/zero-shot.toml"]

[sets]
feedback = 2
dev = 3
test = 4

[proposer]
temperature = 0.5

[[task]]
families = ["gcd", "count_primes"]
level = 2

[[task]]
family = "maze"
test = 9
"#;

    #[test]
    fn a_suite_parses_with_paths_resolved() {
        let s = Suite::parse(OK, Path::new("suites/t.toml")).unwrap();
        assert_eq!(s.tasks.len(), 3);
        assert_eq!(s.tasks[0].id, "gcd/L2");
        assert_eq!(s.tasks[2].id, "maze/L1");
        assert_eq!(
            s.tasks[2].sets,
            SetSizes {
                feedback: 2,
                dev: 3,
                test: 9,
                validation: 0,
            }
        );
        assert_eq!(
            s.tasks[0].seed_harness,
            PathBuf::from("suites/harnesses/zero-shot.toml")
        );
        assert_eq!(s.proposers[1], "file:suites/harnesses/zero-shot.toml");
        assert_eq!(s.proposer.temperature, 0.5);
        assert_eq!(s.select, Selection::Best);
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let e = |text: &str| {
            Suite::parse(text, Path::new("s.toml"))
                .unwrap_err()
                .to_string()
        };
        let m = e(&OK.replace("rounds = 2", "rounds = 0"));
        assert_eq!(m, "s.toml:3: rounds: 0 is outside 1..=100");
        let m = e(&OK.replace("level = 2", "level = 2\ncolour = 1"));
        assert!(
            m.starts_with("s.toml:22: task[0].colour") || m.contains("colour"),
            "{m}"
        );
        let m = e(&OK.replace("\"gcd\", ", "\"gcd\", \"nope\", "));
        assert!(m.starts_with("s.toml:18: task[0].families[1]"), "{m}");
        let m = e(&OK.replace("test = 4", "test = 0"));
        assert!(m.starts_with("s.toml:12: sets.test: 0 is outside"), "{m}");
        let m = e(&OK.replace("family = \"maze\"", "family = \"maze\"\nlcb = \"x\""));
        assert!(m.contains("exactly one of"), "{m}");
        let m = e(&OK.replace("\"identity\"", "\"magic:x\""));
        assert!(m.starts_with("s.toml:7: proposers[0]"), "{m}");
        let m = e(&OK
            .replace("select", "x")
            .replace("samples = 2", "samples = 2\nselect = \"worst\""));
        assert!(m.contains("worst"), "{m}");
        let m = e(&format!("{OK}\n[[task]]\nfamily = \"gcd\"\nlevel = 2\n"));
        assert!(m.contains("listed twice"), "{m}");
    }

    #[test]
    fn a_split_role_names_its_families() {
        let text = OK.replace(
            "family = \"maze\"\ntest = 9",
            "split = \"paper-like\"\nrole = \"held_out\"\nlevel = 1",
        );
        let s = Suite::parse(&text, Path::new("suites/t.toml")).unwrap();
        let split = families::splits::load("paper-like").unwrap();
        let want: Vec<String> = split
            .families("held_out")
            .unwrap()
            .iter()
            .map(|f| format!("{f}/L1"))
            .collect();
        let got: Vec<String> = s.tasks[2..].iter().map(|t| t.id.clone()).collect();
        assert_eq!(got, want);
        assert!(got.contains(&"largest_island/L1".to_string()), "{got:?}");
        // Errors name the field: an unknown role, a missing role, a role alone, an
        // unknown split.
        let e = |text: String| {
            Suite::parse(&text, Path::new("s.toml"))
                .unwrap_err()
                .to_string()
        };
        let m = e(text.replace("held_out", "nope"));
        assert!(
            m.starts_with("s.toml:") && m.contains("task[1].role"),
            "{m}"
        );
        assert!(m.contains("held_out"), "lists the roles: {m}");
        let m = e(text.replace("role = \"held_out\"\n", ""));
        assert!(m.contains("task[1].role"), "{m}");
        let m = e(text.replace("split = \"paper-like\"\n", ""));
        assert!(
            m.contains("task[1].role") && m.contains("needs a split"),
            "{m}"
        );
        let m = e(text.replace("paper-like", "no-such-split"));
        assert!(
            m.contains("task[1].split") && m.contains("category-holdout"),
            "{m}"
        );
    }
}
