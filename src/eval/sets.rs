//! A task's disjoint feedback, dev and test sets, and the optional held-out
//! validation set (size 0 unless `hrl train` asks for one: its held-out monitor scores
//! validation instead of test, so picking a checkpoint by the monitor cannot leak test).
//!
//! - Family tasks: disjoint index ranges of one seeded instance stream: feedback from
//!   index 0, dev from [`SET_STRIDE`], test from 2 x [`SET_STRIDE`], validation from
//!   3 x [`SET_STRIDE`] (built last, so it never changes the other sets' instances). Fixed bases (not
//!   back to back) keep each set the same when another set's size changes, so two
//!   runs with different feedback sizes still share their test instances. Instances are
//!   also disjoint by content: an instance whose question text already appeared (in
//!   an earlier set or earlier in the same set) is skipped and the next index taken,
//!   so a small level that repeats questions never leaks a test question into the
//!   feedback a proposer reads. A level that cannot give enough distinct questions is
//!   an error.
//! - LiveCodeBench tasks: the selected problems (release, date window, platform,
//!   difficulty) in a seeded shuffle, cut into feedback, dev, test and validation (in
//!   that order, so validation takes problems after the test set's): disjoint problem
//!   sets.
//!
//! The resolved item ids of every set go into the run's `config.json`.

use std::collections::HashSet;
use std::sync::Arc;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::EvalError;
use super::suite::{SetSizes, TaskDef, TaskSource};
use crate::families::{self, InstanceStream, Level};
use crate::task::Item;
use crate::task::spec::{GradingSetup, TaskSpec};

/// Index distance between the sets of a family task.
pub const SET_STRIDE: u64 = 1_000_000;

pub use crate::records::SetName;

/// A task's items, per set.
#[derive(Debug, Clone)]
pub struct TaskSets {
    pub feedback: Arc<Vec<Item>>,
    pub dev: Arc<Vec<Item>>,
    pub test: Arc<Vec<Item>>,
    /// Empty unless asked for (the trainer's held-out tasks).
    pub validation: Arc<Vec<Item>>,
}

impl TaskSets {
    pub fn get(&self, s: SetName) -> &Arc<Vec<Item>> {
        match s {
            SetName::Feedback => &self.feedback,
            SetName::Dev => &self.dev,
            SetName::Test => &self.test,
            SetName::Validation => &self.validation,
        }
    }

    /// The item ids of each set.
    pub fn ids(&self) -> SetIds {
        let ids = |v: &[Item]| v.iter().map(Item::id).collect();
        SetIds {
            feedback: ids(&self.feedback),
            dev: ids(&self.dev),
            test: ids(&self.test),
            validation: ids(&self.validation),
        }
    }
}

/// The item ids of a task's sets, as recorded in `config.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetIds {
    pub feedback: Vec<String>,
    pub dev: Vec<String>,
    pub test: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validation: Vec<String>,
}

/// Set sizes after `--limit`.
pub fn limited(sizes: SetSizes, limit: Option<usize>) -> SetSizes {
    match limit {
        None => sizes,
        Some(n) => SetSizes {
            feedback: sizes.feedback.min(n),
            dev: sizes.dev.min(n),
            test: sizes.test.min(n),
            validation: sizes.validation.min(n),
        },
    }
}

/// Build a task's sets with the given sizes.
pub fn build(task: &TaskDef, sizes: SetSizes, ctx: &GradingSetup) -> Result<TaskSets, EvalError> {
    let size = |s: SetName| match s {
        SetName::Feedback => sizes.feedback,
        SetName::Dev => sizes.dev,
        SetName::Test => sizes.test,
        SetName::Validation => sizes.validation,
    };
    match &task.source {
        TaskSource::Family {
            family,
            level,
            seed,
        } => {
            let fam = families::get(family).map_err(|e| EvalError::Usage(e.to_string()))?;
            let level = Level::new(*level).map_err(|e| EvalError::Usage(e.to_string()))?;
            let stream = InstanceStream::new(fam, level, *seed);
            let mut seen: HashSet<String> = HashSet::new();
            let mut out: Vec<Vec<Item>> = Vec::new();
            for s in SetName::ALL {
                let n = size(s);
                if n == 0 && s == SetName::Validation {
                    out.push(Vec::new());
                    continue;
                }
                let base = s.index() * SET_STRIDE;
                let budget = (50 * n as u64 + 100).min(SET_STRIDE);
                let found = stream
                    .fresh_questions(base, n, budget, &mut seen)
                    .map_err(|found| {
                        EvalError::Usage(format!(
                            "task {}: the {} set needs {n} distinct questions but indices {base}..{} gave only {} new ones (the level repeats questions; use a higher level or smaller sets)",
                            task.id,
                            s.as_str(),
                            base + budget,
                            found.len()
                        ))
                    })?;
                out.push(
                    found
                        .into_iter()
                        .map(|(_, inst)| Item::Answer {
                            instance: Arc::new(inst),
                            family: fam,
                        })
                        .collect(),
                );
            }
            let validation = out.pop().expect("four sets");
            let test = out.pop().expect("four sets");
            let dev = out.pop().expect("four sets");
            let feedback = out.pop().expect("four sets");
            Ok(TaskSets {
                feedback: Arc::new(feedback),
                dev: Arc::new(dev),
                test: Arc::new(test),
                validation: Arc::new(validation),
            })
        }
        TaskSource::Lcb { selection, seed } => {
            let spec = TaskSpec::Lcb {
                selection: selection.clone(),
                n: None,
                start: 0,
            };
            let mut items = spec
                .load(&task.id, ctx)
                .map_err(|e| EvalError::Usage(format!("task {}: {e}", task.id)))?;
            let need = sizes.feedback + sizes.dev + sizes.test + sizes.validation;
            if items.len() < need {
                return Err(EvalError::Usage(format!(
                    "task {}: {} problems match but the sets need {need}",
                    task.id,
                    items.len()
                )));
            }
            items.shuffle(&mut ChaCha8Rng::seed_from_u64(*seed));
            let before_validation = need - sizes.validation;
            let validation: Vec<Item> = items.drain(before_validation..need).collect();
            let test: Vec<Item> = items
                .drain(sizes.feedback + sizes.dev..before_validation)
                .collect();
            let dev: Vec<Item> = items
                .drain(sizes.feedback..sizes.feedback + sizes.dev)
                .collect();
            items.truncate(sizes.feedback);
            Ok(TaskSets {
                feedback: Arc::new(items),
                dev: Arc::new(dev),
                test: Arc::new(test),
                validation: Arc::new(validation),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn family(name: &str, level: u8, sizes: SetSizes) -> TaskDef {
        TaskDef {
            id: format!("{name}/L{level}"),
            source: TaskSource::Family {
                family: name.into(),
                level,
                seed: 7,
            },
            sets: sizes,
            seed_harness: PathBuf::from("x.toml"),
        }
    }

    #[test]
    fn sets_are_fixed_index_ranges() {
        let sizes = SetSizes {
            feedback: 2,
            dev: 3,
            test: 4,
            validation: 0,
        };
        let t = family("count_primes", 2, sizes);
        let s = build(&t, sizes, &GradingSetup::default()).unwrap();
        let ids = s.ids();
        assert_eq!(ids.feedback.len(), 2);
        assert_eq!(ids.test.len(), 4);
        assert!(
            ids.dev[0].ends_with(&format!("/i{SET_STRIDE}")),
            "{:?}",
            ids.dev
        );
        // A bigger feedback set leaves the test set as it was.
        let more = SetSizes {
            feedback: 5,
            ..sizes
        };
        let s2 = build(&t, more, &GradingSetup::default()).unwrap();
        assert_eq!(s2.ids().test, ids.test);
        assert_eq!(s2.ids().feedback[..2], ids.feedback[..]);
    }

    #[test]
    fn the_validation_set_is_disjoint_and_leaves_the_other_sets_as_they_were() {
        let sizes = SetSizes {
            feedback: 3,
            dev: 3,
            test: 6,
            validation: 0,
        };
        // spell_backward at level 1 repeats questions, so the text check matters.
        let t = family("spell_backward", 1, sizes);
        let without = build(&t, sizes, &GradingSetup::default()).unwrap();
        let with = build(
            &t,
            SetSizes {
                validation: 8,
                ..sizes
            },
            &GradingSetup::default(),
        )
        .unwrap();
        let (a, b) = (without.ids(), with.ids());
        assert_eq!(
            (a.feedback, a.dev, a.test),
            (b.feedback.clone(), b.dev.clone(), b.test.clone())
        );
        assert!(a.validation.is_empty());
        assert_eq!(b.validation.len(), 8);
        assert!(
            b.validation[0].ends_with(&format!("/i{}", 3 * SET_STRIDE)),
            "{:?}",
            b.validation
        );
        let question =
            |v: &[Item]| -> Vec<String> { v.iter().map(|i| i.body().to_string()).collect() };
        let others: HashSet<String> = [&with.feedback, &with.dev, &with.test]
            .into_iter()
            .flat_map(|v| question(v))
            .collect();
        assert!(
            question(&with.validation)
                .iter()
                .all(|q| !others.contains(q))
        );
    }

    #[test]
    fn a_level_without_enough_distinct_questions_is_an_error() {
        // spell_backward at level 1 draws from a few hundred 3-4 letter words: 2000
        // distinct questions cannot exist (and the budget bounds the search).
        let sizes = SetSizes {
            feedback: 1,
            dev: 1,
            test: 2000,
            validation: 0,
        };
        let t = family("spell_backward", 1, sizes);
        match build(&t, sizes, &GradingSetup::default()) {
            Err(e) => assert!(e.to_string().contains("distinct questions"), "{e}"),
            Ok(s) => panic!("{} test items", s.test.len()),
        }
    }
}
