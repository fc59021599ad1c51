//! A trainer's `train.jsonl`: one JSON object per optimisation step (written by the
//! trainer as it goes), read strictly: a bad line is an error naming the file, the
//! line and serde's reason (a missing or mistyped field), except a torn last line (a
//! trainer killed while writing), which is ignored.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ReportError;

/// The file a report looks for in a run directory.
pub const TRAIN_LOG: &str = "train.jsonl";

/// One trainer step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainStep {
    pub step: u64,
    /// Mean and standard deviation of the rewards of the step's rollouts.
    pub reward_mean: f64,
    pub reward_std: f64,
    /// The held-out score, on the steps where it was measured.
    #[serde(default)]
    pub heldout_score: Option<f64>,
    pub entropy: f64,
    /// Shares of the step's proposals that were invalid and valid.
    pub invalid_rate: f64,
    pub valid_rate: f64,
    pub memo_hits: u64,
    pub memo_misses: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
    pub wall_s: f64,
}

/// Read `path`; `None` when there is no such file.
pub fn read(path: &Path) -> Result<Option<Vec<TrainStep>>, ReportError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ReportError::Io(format!("{}: {e}", path.display()))),
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let last = lines.len().saturating_sub(1);
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<TrainStep>(line) {
            Ok(s) => {
                for (name, v) in [
                    ("reward_mean", s.reward_mean),
                    ("reward_std", s.reward_std),
                    ("entropy", s.entropy),
                    ("invalid_rate", s.invalid_rate),
                    ("valid_rate", s.valid_rate),
                    ("wall_s", s.wall_s),
                ]
                .into_iter()
                .chain(s.heldout_score.map(|h| ("heldout_score", h)))
                {
                    if !v.is_finite() {
                        return Err(ReportError::Input(format!(
                            "{}:{}: {name} is not a finite number",
                            path.display(),
                            i + 1
                        )));
                    }
                }
                out.push(s);
            }
            // A torn last line: the trainer was killed while writing it.
            Err(_) if i == last => {}
            Err(e) => {
                return Err(ReportError::Input(format!(
                    "{}:{}: {e}",
                    path.display(),
                    i + 1
                )));
            }
        }
    }
    Ok(Some(out))
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
        assert_eq!(read(&p).unwrap(), None);
        std::fs::write(
            &p,
            format!("{}{}{{\"step\":3,", line(1, "null"), line(2, "0.4")),
        )
        .unwrap();
        let steps = read(&p).unwrap().unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].heldout_score, None);
        assert_eq!(steps[1].heldout_score, Some(0.4));
        // A bad line that is not the last names the file, line and field.
        std::fs::write(
            &p,
            format!("{}{{\"step\":2}}\n{}", line(1, "null"), line(3, "null")),
        )
        .unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(
            e.contains("train.jsonl:2") && e.contains("reward_mean"),
            "{e}"
        );
    }
}
