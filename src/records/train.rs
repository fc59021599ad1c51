//! The records of a training run (`hrl train`): the file names and the one type of
//! each JSON-lines file the trainer appends and `hrl report` reads.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{RecordsError, SetName};
use crate::harness::edit::Edit;

/// One line per optimisation step ([`TrainStep`]).
pub const TRAIN_LOG: &str = "train.jsonl";
/// One line per sampled revision ([`TrajectoryRecord`], the trajectory export).
pub const TRAJECTORIES: &str = "trajectories.jsonl";
/// One line per held-out task and measured step ([`HeldoutRecord`]).
pub const HELDOUT: &str = "heldout.jsonl";

/// `train.jsonl`: one line per optimisation step, exactly these fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainStep {
    pub step: u64,
    pub reward_mean: f64,
    pub reward_std: f64,
    /// The held-out monitor's score; `null` when not measured this step.
    #[serde(default)]
    pub heldout_score: Option<f64>,
    /// The set the monitor scored (`validation`); absent in logs written before the
    /// monitor had a validation set, which scored `test`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heldout_set: Option<SetName>,
    /// Mean policy entropy per sampled action (nats).
    pub entropy: f64,
    /// Shares of the step's proposals that were invalid and valid.
    pub invalid_rate: f64,
    pub valid_rate: f64,
    /// Set evaluations answered by the reward memo / computed, this step.
    pub memo_hits: u64,
    pub memo_misses: u64,
    /// Executor calls answered by the completion cache / not, this step (0 without a
    /// cache).
    pub cache_hits: u64,
    pub cache_misses: u64,
    pub wall_s: f64,
}

/// `trajectories.jsonl`: one line per sampled revision (the trajectory export).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryRecord {
    pub step: u64,
    /// `s<step>/c<context>/r<round>`.
    pub context: String,
    pub task: String,
    pub round: u32,
    pub candidate: usize,
    /// The parent harness's hash.
    pub parent: String,
    pub edits: Vec<Edit>,
    /// Policy action names, `stop` included when sampled.
    pub actions: Vec<String>,
    /// The revised harness's hash (`null` when invalid).
    pub harness: Option<String>,
    pub valid: bool,
    pub invalid_reason: Option<String>,
    /// Mean dev score of the revision (`null` when invalid).
    pub dev_score: Option<f64>,
    pub parent_dev_score: f64,
    pub validity_bonus: f64,
    pub reward: f64,
    pub advantage: f64,
}

/// `heldout.jsonl`: one line per held-out task and measured step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldoutRecord {
    pub step: u64,
    pub task: String,
    pub edits: Vec<Edit>,
    pub harness: Option<String>,
    /// The set scored: `validation` (older runs: `test`, read from their
    /// `test_score` fields).
    #[serde(default = "test_set")]
    pub set: SetName,
    /// The revision's and the seed harness's mean score on `set`.
    #[serde(alias = "test_score")]
    pub score: f64,
    #[serde(alias = "seed_test_score")]
    pub seed_score: f64,
}

fn test_set() -> SetName {
    SetName::Test
}

/// Read a `train.jsonl` strictly: a bad line is an error naming the file, the line
/// and serde's reason (a missing or mistyped field, a number that is not finite),
/// except a torn last line (a trainer killed while writing), which is ignored.
/// `None` when there is no such file.
pub fn read_train_log(path: &Path) -> Result<Option<Vec<TrainStep>>, RecordsError> {
    super::read_checked(path, |s: &TrainStep| {
        let fields = [
            ("reward_mean", s.reward_mean),
            ("reward_std", s.reward_std),
            ("entropy", s.entropy),
            ("invalid_rate", s.invalid_rate),
            ("valid_rate", s.valid_rate),
            ("wall_s", s.wall_s),
        ];
        let heldout = s.heldout_score.map(|h| ("heldout_score", h));
        match fields
            .into_iter()
            .chain(heldout)
            .find(|(_, v)| !v.is_finite())
        {
            Some((name, _)) => Err(format!("{name} is not a finite number")),
            None => Ok(()),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(step: u64, heldout: &str) -> String {
        format!(
            "{{\"step\":{step},\"reward_mean\":0.5,\"reward_std\":0.1,\"heldout_score\":{heldout},\"entropy\":1.2,\"invalid_rate\":0.25,\"valid_rate\":0.75,\"memo_hits\":3,\"memo_misses\":1,\"cache_hits\":5,\"cache_misses\":2,\"wall_s\":1.5}}\n"
        )
    }

    #[test]
    fn reads_steps_names_bad_lines_and_ignores_a_torn_tail() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(TRAIN_LOG);
        assert_eq!(read_train_log(&p).unwrap(), None);
        std::fs::write(
            &p,
            format!("{}{}{{\"step\":3,", line(1, "null"), line(2, "0.4")),
        )
        .unwrap();
        let steps = read_train_log(&p).unwrap().unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].heldout_score, None);
        assert_eq!(steps[1].heldout_score, Some(0.4));
        // A bad line that is not the last names the file, line and field.
        std::fs::write(
            &p,
            format!("{}{{\"step\":2}}\n{}", line(1, "null"), line(3, "null")),
        )
        .unwrap();
        let e = read_train_log(&p).unwrap_err().to_string();
        assert!(
            e.contains("train.jsonl:2") && e.contains("reward_mean"),
            "{e}"
        );
    }
}
