//! The library config of `hrl train` ([`TrainSettings`]: a suite with a `[train]`
//! table plus command-line overrides, resolved in one place by
//! [`TrainSettings::resolve`]). The trainer reuses the evaluator's machinery, so the
//! settings also give the equivalent [`EvalSettings`] (executor, limits, cache,
//! sandbox, grading) through [`TrainSettings::eval_settings`].
//!
//! Held out means held out: a suite whose held-out tasks share a family (at any
//! level) with its training tasks is refused unless `--allow-family-overlap`, and
//! every held-out task gets a validation set (`[train] validation`, default its test
//! size) for the monitor, so the test sets stay untouched by training.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::TrainError;
use crate::eval::config::{CacheChoice, EngineOverrides, EvalSettings, SuiteRef};
use crate::eval::suite::{RolloutLimits, Selection, Suite, TaskDef, TaskSource, TrainSpec};
use crate::proposer::{ProposerSettings, TrainedOn, TrainedTask};

/// A family task's family (LiveCodeBench tasks have none: their problem sets are
/// told apart by release and date window).
fn family_of(d: &TaskDef) -> Option<&str> {
    match &d.source {
        TaskSource::Family { family, .. } => Some(family),
        TaskSource::Lcb { .. } => None,
    }
}

/// Everything a training run needs, resolved (kept in `DIR/train-config.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainSettings {
    pub suite: SuiteRef,
    /// The training and held-out tasks (in that order).
    pub tasks: Vec<TaskDef>,
    /// Executor SPEC (normalised).
    pub executor: String,
    pub train: TrainSpec,
    /// Report rendering settings the suite gives proposers (`show_gold`, budget).
    pub proposer_settings: ProposerSettings,
    pub limits: RolloutLimits,
    pub cache: CacheChoice,
    pub unsafe_no_isolation: bool,
    /// `--python`: the sandbox's interpreter (`python3` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<PathBuf>,
    /// `--allow-family-overlap`: held-out tasks may share a family (at another level)
    /// with training tasks; recorded here and in every checkpoint.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_family_overlap: bool,
    pub out: PathBuf,
}

/// Command-line overrides (every field optional).
#[derive(Debug, Clone, Default)]
pub struct TrainOverrides {
    pub steps: Option<u64>,
    pub batch: Option<usize>,
    pub group: Option<usize>,
    pub lr: Option<f64>,
    pub entropy: Option<f64>,
    pub kl: Option<f64>,
    pub max_edits: Option<usize>,
    pub rounds: Option<u32>,
    pub checkpoint_every: Option<u64>,
    pub eval_every: Option<u64>,
    pub seed: Option<u64>,
    pub engine: EngineOverrides,
    pub out: Option<PathBuf>,
    pub allow_family_overlap: bool,
}

impl TrainSettings {
    /// A suite with overrides: the one place flags become settings.
    pub fn resolve(suite: &Suite, o: &TrainOverrides) -> Result<TrainSettings, TrainError> {
        let usage = |m: String| TrainError::Usage(m);
        let Some(spec) = &suite.train else {
            return Err(usage(format!(
                "{}: the suite has no [train] table (see suites/train-smoke.toml)",
                suite.path.display()
            )));
        };
        let mut t = spec.clone();
        if let Some(x) = o.steps {
            t.steps = x;
        }
        if let Some(x) = o.batch {
            t.batch = x;
        }
        if let Some(x) = o.group {
            t.group = x;
        }
        if let Some(x) = o.lr {
            t.lr = x;
        }
        if let Some(x) = o.entropy {
            t.entropy = x;
        }
        if let Some(x) = o.kl {
            t.kl = x;
        }
        if let Some(x) = o.max_edits {
            t.max_edits = x;
        }
        if let Some(x) = o.rounds {
            t.rounds = x;
        }
        if let Some(x) = o.checkpoint_every {
            t.checkpoint_every = x;
        }
        if let Some(x) = o.eval_every {
            t.eval_every = x;
        }
        if let Some(x) = o.seed {
            t.seed = x;
        }
        t.check()
            .map_err(|(k, m)| usage(format!("--{}: {m}", k.replace('_', "-"))))?;
        let engine = o.engine.resolve(suite)?;
        let n_train = t.train.len();
        let mut tasks: Vec<TaskDef> = t
            .train
            .iter()
            .chain(&t.heldout)
            .map(|id| {
                suite
                    .tasks
                    .iter()
                    .find(|d| d.id == *id)
                    .cloned()
                    .expect("the suite resolved its [train] ids")
            })
            .collect();
        // Held out means another family, not another level of a trained one.
        let (train_tasks, heldout_tasks) = tasks.split_at(n_train);
        let overlap: Vec<String> = heldout_tasks
            .iter()
            .filter_map(|h| {
                let fam = family_of(h)?;
                let t = train_tasks.iter().find(|t| family_of(t) == Some(fam))?;
                Some(format!(
                    "held-out task `{}` and training task `{}` are both family `{fam}`",
                    h.id, t.id
                ))
            })
            .collect();
        if !overlap.is_empty() && !o.allow_family_overlap {
            return Err(usage(format!(
                "{}: {}; a held-out family must not be trained on at any level (pass --allow-family-overlap to train anyway; it is recorded)",
                suite.path.display(),
                overlap.join("; ")
            )));
        }
        // The held-out monitor scores a validation set of its own, never test.
        for d in &mut tasks[n_train..] {
            d.sets.validation = t.validation.unwrap_or(d.sets.test);
        }
        let suite_ref = SuiteRef::of(suite);
        let out = o
            .out
            .clone()
            .unwrap_or_else(|| suite_ref.default_out("train"));
        Ok(TrainSettings {
            suite: suite_ref,
            tasks,
            executor: engine.executor,
            train: t,
            proposer_settings: suite.proposer.clone(),
            limits: engine.limits,
            cache: engine.cache,
            unsafe_no_isolation: engine.unsafe_no_isolation,
            python: engine.python,
            allow_family_overlap: o.allow_family_overlap,
            out,
        })
    }

    /// What a checkpoint of this run records it was trained on.
    pub fn trained_on(&self) -> TrainedOn {
        let train = &self.tasks[..self.train_task_count()];
        let mut tasks: Vec<TrainedTask> = train
            .iter()
            .map(|d| match &d.source {
                TaskSource::Family { family, level, .. } => TrainedTask {
                    family: family.clone(),
                    level: *level,
                },
                TaskSource::Lcb { .. } => TrainedTask {
                    family: d.key(),
                    level: 0,
                },
            })
            .collect();
        tasks.sort();
        tasks.dedup();
        let mut families: Vec<String> = tasks.iter().map(|t| t.family.clone()).collect();
        families.dedup();
        TrainedOn {
            families,
            tasks,
            splits: self.train.splits.clone(),
            suite: Some(self.suite.path.display().to_string()),
            suite_sha256: Some(self.suite.sha256.clone()),
            family_overlap_allowed: self.allow_family_overlap,
        }
    }

    /// The equivalent evaluator settings (for the executor, limits and sandbox).
    pub fn eval_settings(&self) -> EvalSettings {
        EvalSettings {
            suite: self.suite.clone(),
            tasks: self.tasks.clone(),
            executor: self.executor.clone(),
            proposers: vec!["identity".into()],
            proposer_settings: self.proposer_settings.clone(),
            rounds: self.train.rounds,
            candidates: self.train.group as u32,
            samples: 1,
            select: Selection::Best,
            seed: self.train.seed,
            limit: None,
            limits: self.limits.clone(),
            cache: self.cache.clone(),
            unsafe_no_isolation: self.unsafe_no_isolation,
            python: self.python.clone(),
            grade_timeout_s: 6.0,
            grade_cpu_clock: false,
            out: self.out.clone(),
            shard: None,
            accept_proposer_change: false,
        }
    }

    /// What must agree for `--resume` to continue a run: everything but the number of
    /// steps, the output directory, the cache location, concurrency and the isolation
    /// switch (none of which changes a result).
    pub fn fingerprint(&self) -> serde_json::Value {
        let mut s = self.clone();
        s.train.steps = 0;
        s.out = PathBuf::new();
        s.cache = CacheChoice::Off;
        s.limits.concurrency = None;
        s.unsafe_no_isolation = false;
        serde_json::to_value(&s).unwrap_or_default()
    }

    pub fn train_task_count(&self) -> usize {
        self.train.train.len()
    }
}
