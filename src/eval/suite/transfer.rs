//! The `[transfer]` table of a transfer suite (`hrl transfer`): what is held out (a
//! family split's held-out role, LiveCodeBench problems after a cutoff, or more rounds
//! than training used), the K settings and the reference proposers, checked against the
//! suite's tasks and rounds.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{TaskDef, TaskSource};
use crate::eval::EvalError;
use crate::families;
use crate::proposer::ProposerSpec;

/// The kind of transfer a suite measures (`hrl transfer task|temporal|horizon`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransferKind {
    /// Held-out task families, never used in training.
    Task,
    /// LiveCodeBench problems released after the training cutoff.
    Temporal,
    /// More revision rounds than the proposer was trained with.
    Horizon,
}

impl TransferKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TransferKind::Task => "task",
            TransferKind::Temporal => "temporal",
            TransferKind::Horizon => "horizon",
        }
    }
}

/// The `[transfer]` table of a transfer suite: what is held out, and the K settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transfer {
    pub kind: TransferKind,
    /// The K settings reported (increasing); the suite's `rounds` is the largest, and
    /// each smaller K is read off the per-round curve of that one run (round r's
    /// harness and test score do not depend on later rounds: round seeds derive from
    /// (task, sample, round), never from K).
    pub k: Vec<u32>,
    /// Task (and optionally horizon) transfer: the family split (a built-in name or a
    /// split file, resolved), its training roles and its held-out role.
    pub split: Option<String>,
    pub train_roles: Vec<String>,
    pub held_out_role: Option<String>,
    /// The families of the training roles (recorded for the trainer; every task of
    /// the suite is checked to be outside them).
    pub train_families: Vec<String>,
    /// Temporal transfer: the LiveCodeBench split (`v5-to-v6`).
    pub lcb_split: Option<String>,
    /// Horizon transfer: the rounds the proposer was trained with.
    pub train_rounds: Option<u32>,
    /// Proposers drawn as reference lines beside the transfer results (e.g. an oracle
    /// harness), appended to the proposers of a run.
    pub reference: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TransferFile {
    kind: TransferKind,
    k: Vec<u32>,
    split: Option<String>,
    #[serde(default)]
    train_roles: Vec<String>,
    held_out_role: Option<String>,
    lcb_split: Option<String>,
    train_rounds: Option<u32>,
    #[serde(default)]
    reference: Vec<String>,
}

/// Check a `[transfer]` table against the suite's rounds and tasks.
pub(super) fn check_transfer(
    t: TransferFile,
    rounds: u32,
    tasks: &[TaskDef],
    base: &Path,
    err: &dyn Fn(&str, String) -> EvalError,
    resolve: &dyn Fn(&Path) -> PathBuf,
) -> Result<Transfer, EvalError> {
    if t.k.is_empty() {
        return Err(err("transfer.k", "needs at least one K".into()));
    }
    if t.k.windows(2).any(|w| w[0] >= w[1]) || t.k[0] == 0 {
        return Err(err(
            "transfer.k",
            format!("{:?}: K settings are positive and increasing", t.k),
        ));
    }
    let kmax = *t.k.last().expect("non-empty");
    if kmax != rounds {
        return Err(err(
            "transfer.k",
            format!(
                "the largest K is {kmax} but rounds = {rounds}: a transfer suite runs the largest K and reads the smaller ones off its per-round curve, so rounds must equal it"
            ),
        ));
    }
    let only = |field: &str, given: bool, kinds: &str| -> Result<(), EvalError> {
        if given {
            Err(err(
                &format!("transfer.{field}"),
                format!("only {kinds} transfer takes this"),
            ))
        } else {
            Ok(())
        }
    };
    let family_kind = matches!(t.kind, TransferKind::Task | TransferKind::Horizon);
    only(
        "split",
        t.split.is_some() && !family_kind,
        "task and horizon",
    )?;
    only(
        "train_roles",
        !t.train_roles.is_empty() && !family_kind,
        "task and horizon",
    )?;
    only(
        "held_out_role",
        t.held_out_role.is_some() && !family_kind,
        "task and horizon",
    )?;
    only(
        "lcb_split",
        t.lcb_split.is_some() && t.kind != TransferKind::Temporal,
        "temporal",
    )?;
    only(
        "train_rounds",
        t.train_rounds.is_some() && t.kind != TransferKind::Horizon,
        "horizon",
    )?;
    let mut out = Transfer {
        kind: t.kind,
        k: t.k.clone(),
        split: None,
        train_roles: t.train_roles.clone(),
        held_out_role: t.held_out_role.clone(),
        train_families: Vec::new(),
        lcb_split: t.lcb_split.clone(),
        train_rounds: t.train_rounds,
        reference: Vec::new(),
    };
    for (i, p) in t.reference.iter().enumerate() {
        let field = format!("transfer.reference[{i}]");
        let spec = ProposerSpec::parse(p).map_err(|e| err(&field, e.to_string()))?;
        let spec = match spec {
            ProposerSpec::File(p) => ProposerSpec::File(resolve(&p)),
            other => other,
        };
        out.reference.push(spec.normalized());
    }
    match t.kind {
        TransferKind::Task | TransferKind::Horizon => {
            if t.kind == TransferKind::Task && t.split.is_none() {
                return Err(err(
                    "transfer",
                    "task transfer needs `split`, `train_roles` and `held_out_role`".into(),
                ));
            }
            if let Some(name) = &t.split {
                if t.train_roles.is_empty() {
                    return Err(err(
                        "transfer.train_roles",
                        "name the split's training roles".into(),
                    ));
                }
                let Some(held) = &t.held_out_role else {
                    return Err(err(
                        "transfer.held_out_role",
                        "name the split's held-out role".into(),
                    ));
                };
                let builtin = families::splits::builtin_names().any(|n| n == name);
                let arg = if builtin || Path::new(name).is_absolute() {
                    name.to_string()
                } else {
                    base.join(name).display().to_string()
                };
                let split = families::splits::load(&arg)
                    .map_err(|e| err("transfer.split", e.to_string()))?;
                split.families(held).ok_or_else(|| {
                    err(
                        "transfer.held_out_role",
                        format!("split `{}` has no role `{held}`", split.name),
                    )
                })?;
                for (j, r) in t.train_roles.iter().enumerate() {
                    if r == held {
                        return Err(err(
                            &format!("transfer.train_roles[{j}]"),
                            format!("`{r}` is the held-out role"),
                        ));
                    }
                    let fs = split.families(r).ok_or_else(|| {
                        err(
                            &format!("transfer.train_roles[{j}]"),
                            format!("split `{}` has no role `{r}`", split.name),
                        )
                    })?;
                    out.train_families.extend(fs.iter().map(|f| f.to_string()));
                }
                for (i, task) in tasks.iter().enumerate() {
                    match &task.source {
                        TaskSource::Family { family, .. } => {
                            if out.train_families.contains(family) {
                                return Err(err(
                                    "task",
                                    format!(
                                        "task {} (task #{}) is a training family of split `{}`: a transfer suite evaluates held-out families only",
                                        task.id,
                                        i + 1,
                                        split.name
                                    ),
                                ));
                            }
                        }
                        TaskSource::Lcb { .. } => {
                            return Err(err(
                                "task",
                                format!(
                                    "task {}: a family transfer suite has family tasks only",
                                    task.id
                                ),
                            ));
                        }
                    }
                }
                out.split = Some(arg);
            }
            if t.kind == TransferKind::Horizon {
                let Some(tr) = t.train_rounds else {
                    return Err(err(
                        "transfer.train_rounds",
                        "horizon transfer needs the rounds the proposer was trained with".into(),
                    ));
                };
                if tr == 0 || tr > rounds {
                    return Err(err(
                        "transfer.train_rounds",
                        format!("{tr} is outside 1..={rounds}"),
                    ));
                }
            }
        }
        TransferKind::Temporal => {
            match t.lcb_split.as_deref() {
                Some("v5-to-v6") => {}
                Some(o) => {
                    return Err(err(
                        "transfer.lcb_split",
                        format!("unknown LiveCodeBench split `{o}` (known: v5-to-v6)"),
                    ));
                }
                None => {
                    return Err(err(
                        "transfer.lcb_split",
                        "temporal transfer needs `lcb_split = \"v5-to-v6\"`".into(),
                    ));
                }
            }
            for task in tasks {
                match &task.source {
                    TaskSource::Lcb { selection: sel, .. } => {
                        if sel.release != "release_latest" || sel.from.is_some() || sel.to.is_some()
                        {
                            return Err(err(
                                "task",
                                format!(
                                    "task {}: the temporal split chooses the problems; give no release, from or to",
                                    task.id
                                ),
                            ));
                        }
                    }
                    TaskSource::Family { .. } => {
                        return Err(err(
                            "task",
                            format!(
                                "task {}: temporal transfer has LiveCodeBench tasks only",
                                task.id
                            ),
                        ));
                    }
                }
            }
        }
    }
    Ok(out)
}
