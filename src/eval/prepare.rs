//! A run prepared once: every task's seed harness loaded (a program harness must
//! compile in the sandbox), its disjoint sets built and its description written, as
//! `hrl eval`, `hrl train` and the reward service all need them before an executor
//! runs.

use std::collections::HashSet;
use std::sync::Arc;

use super::EvalError;
use super::config::{EvalSettings, HarnessRef, TaskRecord};
use super::sets::{self, TaskSets};
use super::suite::{TaskDef, TaskSource};
use crate::harness::{Harness, runtime};
use crate::proposer::TaskInfo;
use crate::sandbox::Sandbox;
use crate::task::ItemKind;
use crate::task::spec::GradingSetup;

/// A task of an evaluation as its trajectories see it: the suite's definition, what a
/// proposer is told about it, and its seed harness.
pub struct EvalTask {
    pub def: TaskDef,
    pub info: TaskInfo,
    pub seed_harness: Arc<Harness>,
}

/// The tasks of a run, in suite order: each with its sets and its record for
/// `config.json`.
pub struct PreparedTasks {
    pub tasks: Vec<EvalTask>,
    pub sets: Vec<TaskSets>,
    pub records: Vec<TaskRecord>,
}

/// Load every task's seed harness (a program harness is compile-checked once per
/// distinct harness), build its sets (cut by `settings.limit`) and describe it.
pub fn prepare_tasks(
    settings: &EvalSettings,
    sandbox: &Sandbox,
) -> Result<PreparedTasks, EvalError> {
    let setup = GradingSetup {
        sandbox: settings.sandbox_config(),
        grade: settings.grade_config(),
        ..GradingSetup::default()
    };
    let mut out = PreparedTasks {
        tasks: Vec::new(),
        sets: Vec::new(),
        records: Vec::new(),
    };
    let mut checked: HashSet<String> = HashSet::new();
    for def in &settings.tasks {
        let h = Harness::load(&def.seed_harness)?;
        if let Harness::Program(p) = &h
            && checked.insert(h.hash())
        {
            runtime::check_program(p, sandbox, &def.seed_harness.display().to_string())?;
        }
        let s = sets::build(def, sets::limited(def.sets, settings.limit), &setup)?;
        let (kind, description) = describe(def, &s);
        out.records.push(TaskRecord {
            def: def.clone(),
            description: description.clone(),
            seed_harness_ref: HarnessRef {
                hash: h.hash(),
                kind: h.kind(),
                name: h.name().to_string(),
                path: def.seed_harness.clone(),
            },
            set_ids: s.ids(),
        });
        out.tasks.push(EvalTask {
            def: def.clone(),
            info: TaskInfo {
                id: def.id.clone(),
                key: def.key(),
                kind,
                description,
            },
            seed_harness: Arc::new(h),
        });
        out.sets.push(s);
    }
    Ok(out)
}

/// The description a prompted proposer reads.
pub fn describe(def: &TaskDef, sets: &TaskSets) -> (ItemKind, String) {
    match &def.source {
        TaskSource::Family { family, level, .. } => {
            let desc = crate::families::get(family)
                .map(|f| f.description())
                .unwrap_or_default();
            let format = sets
                .feedback
                .first()
                .map(|i| i.answer_format().to_string())
                .unwrap_or_default();
            (
                ItemKind::Answer,
                format!(
                    "Task family `{family}`, level {level}: {desc} The final answer is written {format} and checked exactly by a strict verifier."
                ),
            )
        }
        TaskSource::Lcb { .. } => (
            ItemKind::Code,
            "LiveCodeBench programming problems: write a Python program that reads standard input and writes standard output (or the function of the given starter code); it is graded by running the problem's hidden tests.".into(),
        ),
    }
}
