//! `hrl transfer task|temporal|horizon`: the evaluator's protocol on the held-out side
//! of a transfer suite (`[transfer]` table, see [`super::suite::Transfer`]) for every
//! proposer on identical tasks, instances and seeds.
//!
//! - **task**: the held-out families of a family split (never used in training),
//!   from the suite's seed harness; the suite checks that no task is a training
//!   family.
//! - **temporal**: LiveCodeBench problems new in v6 (`test6.jsonl`, dated after the
//!   last `release_v5` problem), from the shipped fixtures or a real
//!   `code_generation_lite` directory (`--lcb-dir`); the test score of a code item is
//!   pass@1 of one greedy program. The training side (all of `release_v5`) is
//!   recorded in the index for the trainer, never evaluated here.
//! - **horizon**: K = 1..K_max rounds for a proposer trained with fewer rounds.
//!
//! One run of K_max rounds gives every K of the suite's list: a round's kept harness
//! and test score do not depend on later rounds (round seeds derive from (task,
//! sample, round), never from K), so the test score at K is the curve at round K.
//!
//! Layout of `--out DIR`: one run directory per proposer, `DIR/<label>/` (the
//! evaluator's layout; reference proposers such as an oracle harness are marked as
//! such), `DIR/transfer.json` (the index: kind, suite, held-out tasks, training side,
//! the run directories) and `DIR/transfer.md` (the tables per K, with CIs).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::config::{EvalSettings, Overrides, SuiteRef};
use super::suite::{Suite, TaskSource, Transfer, TransferKind};
use super::{ArmOutcome, Backend, EvalError, EvalProgress, read_json};
use crate::proposer::{self, ProposerSpec};
use crate::records::run_dir;
use crate::sandbox::Sandbox;
use crate::shard::Shard;

/// The index file of a transfer output directory.
pub const INDEX: &str = "transfer.json";
/// Its text summary.
pub const SUMMARY_MD: &str = "transfer.md";
/// Version of `transfer.json`.
pub const INDEX_SCHEMA: u32 = 1;

/// Command-line overrides of a transfer run.
#[derive(Debug, Clone, Default)]
pub struct TransferOverrides {
    pub eval: Overrides,
    /// A real LiveCodeBench `code_generation_lite` directory for every LiveCodeBench
    /// task (temporal transfer).
    pub lcb_dir: Option<PathBuf>,
    /// Leave out the suite's reference proposers.
    pub no_reference: bool,
}

/// The training side of a transfer suite, as recorded for the trainer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainSide {
    pub rule: String,
    /// Task transfer: the training families. Temporal: none (see `rule`).
    pub families: Vec<String>,
    /// Temporal: problems of the training side and their last release date.
    pub problems: Option<usize>,
    pub last_date: Option<String>,
    /// Horizon: the rounds the proposer was trained with.
    pub rounds: Option<u32>,
}

/// One run directory of the index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexEntry {
    pub label: String,
    pub spec: String,
    /// A reference line (e.g. an oracle harness), not a transfer result.
    pub reference: bool,
    /// Relative to the output directory.
    pub dir: PathBuf,
}

/// `transfer.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransferIndex {
    pub schema: u32,
    pub kind: TransferKind,
    pub suite: SuiteRef,
    pub k: Vec<u32>,
    /// The held-out tasks evaluated.
    pub held_out: Vec<String>,
    pub held_out_rule: String,
    pub train: TrainSide,
    pub runs: Vec<IndexEntry>,
    pub lcb_dir: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// The evaluator settings of the whole invocation (what `--resume` continues).
    pub settings: EvalSettings,
}

/// A resolved transfer run.
#[derive(Debug, Clone)]
pub struct TransferSettings {
    pub index: TransferIndex,
    pub transfer: Transfer,
}

impl TransferSettings {
    /// A transfer suite with overrides: the one place `hrl transfer`'s flags become
    /// settings.
    pub fn resolve(
        kind: TransferKind,
        suite: &Suite,
        o: &TransferOverrides,
    ) -> Result<TransferSettings, EvalError> {
        let Some(transfer) = suite.transfer.clone() else {
            return Err(EvalError::Usage(format!(
                "{}: not a transfer suite (no [transfer] table); run it with hrl eval",
                suite.path.display()
            )));
        };
        if transfer.kind != kind {
            return Err(EvalError::Usage(format!(
                "{} is a {} transfer suite; run it with `hrl transfer {}`",
                suite.path.display(),
                transfer.kind.as_str(),
                transfer.kind.as_str()
            )));
        }
        if o.eval.rounds.is_some() {
            return Err(EvalError::Usage(
                "a transfer suite's rounds are its largest K (transfer.k); edit the suite to change them".into(),
            ));
        }
        let mut suite = suite.clone();
        if let Some(d) = &o.lcb_dir {
            if kind != TransferKind::Temporal {
                return Err(EvalError::Usage(
                    "--lcb-dir applies to temporal transfer only".into(),
                ));
            }
            if !d.is_dir() {
                return Err(EvalError::Usage(format!(
                    "--lcb-dir {}: not a directory",
                    d.display()
                )));
            }
        }
        let mut train = TrainSide {
            rule: String::new(),
            families: transfer.train_families.clone(),
            problems: None,
            last_date: None,
            rounds: transfer.train_rounds,
        };
        let held_out_rule;
        match kind {
            TransferKind::Task | TransferKind::Horizon => {
                match (&transfer.split, &transfer.held_out_role) {
                    (Some(split), Some(held)) => {
                        train.rule = format!(
                            "families of roles {} of split `{split}`",
                            transfer.train_roles.join(", ")
                        );
                        held_out_rule = format!("families of role `{held}` of split `{split}`");
                    }
                    _ => {
                        train.rule = "not recorded by the suite".into();
                        held_out_rule = "the suite's tasks".into();
                    }
                }
                if kind == TransferKind::Horizon {
                    train.rule = format!(
                        "{}; the proposer was trained with {} round(s)",
                        train.rule,
                        transfer.train_rounds.unwrap_or(1)
                    );
                }
            }
            TransferKind::Temporal => {
                let mut rule = None;
                for t in &mut suite.tasks {
                    let TaskSource::Lcb { selection, .. } = &mut t.source else {
                        continue;
                    };
                    let crate::lcb::LcbSelection {
                        dir, release, from, ..
                    } = selection;
                    if let Some(d) = &o.lcb_dir {
                        *dir = d.clone();
                    }
                    let split = crate::lcb::split::split(
                        dir,
                        crate::lcb::split::SplitSpec::V5ToV6,
                        &crate::lcb::loader::LoadOptions::default(),
                    )
                    .map_err(|e| EvalError::Usage(format!("task {}: {e}", t.id)))?;
                    let first = split.test.iter().map(|p| p.contest_date).min().ok_or_else(|| {
                        EvalError::Usage(format!(
                            "task {}: {}: no problem is new in v6 (test6.jsonl after the last release_v5 date)",
                            t.id,
                            dir.display()
                        ))
                    })?;
                    *release = "v6".into();
                    *from = Some(first.to_string());
                    train.problems = Some(split.train.len());
                    train.last_date = split
                        .train
                        .iter()
                        .map(|p| p.contest_date)
                        .max()
                        .map(|d| d.to_string());
                    train.rule = split.train_rule.clone();
                    rule = Some(split.test_rule.clone());
                }
                held_out_rule = rule.unwrap_or_default();
            }
        }
        let mut eo = o.eval.clone();
        let mut proposers: Vec<String> = if eo.proposers.is_empty() {
            suite.proposers.clone()
        } else {
            eo.proposers
                .iter()
                .map(|p| {
                    ProposerSpec::parse(p)
                        .map(|s| s.normalized())
                        .map_err(|e| EvalError::Usage(format!("--proposer: {e}")))
                })
                .collect::<Result<_, _>>()?
        };
        let mut reference = Vec::new();
        if !o.no_reference {
            for r in &transfer.reference {
                if !proposers.contains(r) {
                    proposers.push(r.clone());
                    reference.push(r.clone());
                }
            }
        }
        if proposers.is_empty() {
            return Err(EvalError::Usage(
                "no proposer: give --proposer SPEC or list `proposers` in the suite".into(),
            ));
        }
        let out = eo
            .out
            .clone()
            .unwrap_or_else(|| SuiteRef::of(&suite).default_out("transfer"));
        // Always one directory per proposer: with one proposer the evaluator writes
        // into `out` itself, so point it at `out/<label>`.
        eo.out = Some(if proposers.len() == 1 {
            out.join(ProposerSpec::parse(&proposers[0])?.label())
        } else {
            out.clone()
        });
        eo.proposers = proposers.clone();
        let mut settings = EvalSettings::resolve(&suite, &eo)?;
        let mut runs = Vec::new();
        for (i, spec) in settings.proposers.iter().enumerate() {
            let label = ProposerSpec::parse(spec)?.label();
            let dir = settings.arm_dir(i)?;
            let rel = dir.strip_prefix(&out).map(Path::to_path_buf).unwrap_or(dir);
            runs.push(IndexEntry {
                label,
                spec: spec.clone(),
                reference: reference.contains(spec),
                dir: rel,
            });
        }
        settings.shard = o.eval.shard;
        let index = TransferIndex {
            schema: INDEX_SCHEMA,
            kind,
            suite: settings.suite.clone(),
            k: transfer.k.clone(),
            held_out: settings.tasks.iter().map(|t| t.id.clone()).collect(),
            held_out_rule,
            train,
            runs,
            lcb_dir: o.lcb_dir.clone(),
            shard: settings.shard,
            settings,
        };
        Ok(TransferSettings { index, transfer })
    }

    /// The output directory (holding `transfer.json`).
    pub fn out(&self) -> PathBuf {
        out_of(&self.index)
    }
}

fn out_of(index: &TransferIndex) -> PathBuf {
    if index.runs.len() == 1 {
        index
            .settings
            .out
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    } else {
        index.settings.out.clone()
    }
}

/// The settings of the transfer run in `dir` (for `--resume DIR`).
pub fn resume_settings(dir: &Path, kind: TransferKind) -> Result<TransferSettings, EvalError> {
    let p = dir.join(INDEX);
    if !p.exists() {
        return Err(EvalError::Usage(format!(
            "{}: not a transfer output directory (no {INDEX})",
            dir.display()
        )));
    }
    let mut index: TransferIndex = read_json(&p)?;
    if index.kind != kind {
        return Err(EvalError::Usage(format!(
            "{} holds a {} transfer run; continue it with `hrl transfer {} --resume {}`",
            dir.display(),
            index.kind.as_str(),
            index.kind.as_str(),
            dir.display()
        )));
    }
    // The directory may have moved since: re-anchor the run directories.
    index.settings.out = if index.runs.len() == 1 {
        dir.join(&index.runs[0].dir)
    } else {
        dir.to_path_buf()
    };
    let suite = Suite::load(&index.settings.suite.path).ok();
    let transfer = match suite.and_then(|s| s.transfer) {
        Some(t) => t,
        None => Transfer {
            kind,
            k: index.k.clone(),
            split: None,
            train_roles: Vec::new(),
            held_out_role: None,
            train_families: index.train.families.clone(),
            lcb_split: None,
            train_rounds: index.train.rounds,
            reference: Vec::new(),
        },
    };
    Ok(TransferSettings { index, transfer })
}

/// What a transfer run produced.
#[derive(Debug, Clone)]
pub struct TransferOutcome {
    pub out: PathBuf,
    pub index: TransferIndex,
    pub arms: Vec<ArmOutcome>,
}

/// Run a transfer suite: open the sandbox, executor and proposers, then
/// [`run_with`].
pub fn run(
    ts: &TransferSettings,
    resume: bool,
    progress: &(dyn Fn(&EvalProgress) + Sync),
) -> Result<TransferOutcome, EvalError> {
    let settings = &ts.index.settings;
    check_index(ts, resume)?;
    let sandbox = Sandbox::new(settings.sandbox_config())?;
    let backend = Backend::open(settings)?;
    let proposers = super::open_proposers(settings, &backend)?;
    // Before the index is written: a refused run leaves nothing to block a retry.
    check_held_out(ts, &proposers)?;
    prepare(ts, resume)?;
    finish(
        ts,
        super::run_with(settings, &backend, &sandbox, &proposers, resume, progress),
    )
}

/// Run a transfer suite with a given executor and proposers (tests).
pub fn run_with(
    ts: &TransferSettings,
    backend: &Backend,
    sandbox: &Sandbox,
    proposers: &[std::sync::Arc<dyn proposer::Proposer>],
    resume: bool,
    progress: &(dyn Fn(&EvalProgress) + Sync),
) -> Result<TransferOutcome, EvalError> {
    check_held_out(ts, proposers)?;
    prepare(ts, resume)?;
    let settings = &ts.index.settings;
    finish(
        ts,
        super::run_with(settings, backend, sandbox, proposers, resume, progress),
    )
}

/// A task transfer suite's tasks are held-out families: refuse a proposer trained on
/// one of them (`eval::seen`). Temporal and horizon suites are not checked by family
/// (their claim is a date cutoff or a round count, recorded in the index).
fn check_held_out(
    ts: &TransferSettings,
    proposers: &[std::sync::Arc<dyn proposer::Proposer>],
) -> Result<(), EvalError> {
    if ts.index.kind == TransferKind::Task {
        super::seen::refuse_trained_families(&ts.index.settings.tasks, proposers)?;
    }
    Ok(())
}

fn prepare(ts: &TransferSettings, resume: bool) -> Result<(), EvalError> {
    check_index(ts, resume)?;
    let out = ts.out();
    std::fs::create_dir_all(&out).map_err(|e| EvalError::Io(format!("{}: {e}", out.display())))?;
    Ok(run_dir::write_json(&out.join(INDEX), &ts.index)?)
}

/// A fresh run needs an output directory without an index; a resumed one the same
/// proposers and shard as the index it continues.
fn check_index(ts: &TransferSettings, resume: bool) -> Result<(), EvalError> {
    let out = ts.out();
    let p = out.join(INDEX);
    if p.exists() && !resume {
        return Err(EvalError::Usage(format!(
            "{} already holds a transfer run; continue it with --resume {} or choose another --out",
            out.display(),
            out.display()
        )));
    }
    if resume {
        let old: TransferIndex = read_json(&p)?;
        if old.settings.proposers != ts.index.settings.proposers || old.shard != ts.index.shard {
            return Err(EvalError::Usage(format!(
                "{}: cannot resume: the run has other proposers or another shard",
                p.display()
            )));
        }
    }
    Ok(())
}

fn finish(
    ts: &TransferSettings,
    result: Result<Vec<ArmOutcome>, EvalError>,
) -> Result<TransferOutcome, EvalError> {
    Ok(TransferOutcome {
        out: ts.out(),
        index: ts.index.clone(),
        arms: result?,
    })
}

/// The run directories of a transfer output directory, in index order.
///
/// `hrl transfer` writes each one's `report.html` (`report::write`) when the run ends.
pub fn run_dirs(out: &Path) -> Result<Vec<PathBuf>, EvalError> {
    let index: TransferIndex = read_json(&out.join(INDEX))?;
    Ok(index.runs.iter().map(|r| out.join(&r.dir)).collect())
}
