//! "Held out, never trained on", checked: a trained proposer (a `policy:CKPT`
//! checkpoint records its training families and levels, see
//! [`crate::proposer::TrainedOn`]) is compared with the tasks it is evaluated on.
//!
//! - A task transfer suite (`hrl transfer task`) measures families never used in
//!   training: a proposer trained on one of its families is refused (a usage error,
//!   exit 2, naming the family and the proposer's spec, i.e. the checkpoint).
//! - An ordinary evaluation may include trained families (a training-side score is a
//!   legitimate number); such tasks are listed in the run's `config.json`
//!   (`seen_in_training`) and marked in `summary.json`, so no table can present them as
//!   held out.
//! - A trained proposer whose checkpoint does not record what it was trained on is
//!   accepted; the run's `config.json` carries a warning saying so (`warnings`).
//!
//! A task's family is its family name (`lcb` for LiveCodeBench tasks); the check is by
//! family at any level.

use super::EvalError;
use super::suite::TaskDef;
use crate::proposer::{Proposer, Training};

/// What the check found for one proposer and a run's tasks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Seen {
    /// The ids of the tasks whose family the proposer was trained on.
    pub tasks: Vec<String>,
    /// The warning for a trained proposer without a training record.
    pub warning: Option<String>,
}

/// Which of `tasks` the proposer was trained on (see the module doc).
pub fn seen_in_training(tasks: &[TaskDef], p: &dyn Proposer) -> Seen {
    match p.training() {
        Training::NotTrained => Seen::default(),
        Training::Unrecorded => Seen {
            tasks: Vec::new(),
            warning: Some(format!(
                "proposer {}: its checkpoint does not record the families it was trained on (written before the record existed); held-out claims for this run are not checked",
                p.identity().spec
            )),
        },
        Training::Recorded(t) => Seen {
            tasks: tasks
                .iter()
                .filter(|d| t.families.contains(&d.key()))
                .map(|d| d.id.clone())
                .collect(),
            warning: None,
        },
    }
}

/// Refuse a task transfer run whose held-out tasks include a family a proposer was
/// trained on (the error names the task, the family and the checkpoint).
pub fn refuse_trained_families(
    tasks: &[TaskDef],
    proposers: &[std::sync::Arc<dyn Proposer>],
) -> Result<(), EvalError> {
    for p in proposers {
        let seen = seen_in_training(tasks, p.as_ref());
        if let Some(id) = seen.tasks.first() {
            let fam = tasks
                .iter()
                .find(|d| &d.id == id)
                .map(TaskDef::key)
                .unwrap_or_default();
            return Err(EvalError::Usage(format!(
                "held-out family `{fam}` (task {id}) was trained on by proposer {}: a task transfer suite measures families never used in training; evaluate it with hrl eval instead (its records mark the task seen_in_training) or use a checkpoint trained without it",
                p.identity().spec
            )));
        }
    }
    Ok(())
}
