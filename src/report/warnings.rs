//! Warnings a finished (or stopped) run's records call for, shown at the end of
//! `hrl eval` / `hrl transfer` (stderr) and at the top of its `report.md` and
//! `report.html`: today, a proposer whose revisions were mostly invalid (a `cmd:`
//! script printing garbage still "runs", with `invalid 1.000` in the tables and the
//! reason only in `candidates.jsonl`).

use std::collections::BTreeMap;
use std::path::Path;

use super::ReportError;
use crate::records::run_dir;
use crate::records::{self, CandidateRecord, CandidateStatus};

/// The invalid-revision rate above which a run is warned about.
pub const INVALID_RATE_WARNING: f64 = 0.5;

/// How much of an invalid reason a warning quotes.
const REASON_CHARS: usize = 200;

/// The warning for a proposer (`label`) whose candidates were invalid more than
/// [`INVALID_RATE_WARNING`] of the time: the rate, the most common reason and its
/// count (ties go to the reason first seen). `None` when the rate is not that high.
pub fn invalid_revisions(label: &str, candidates: &[CandidateRecord]) -> Option<String> {
    let invalid: Vec<&CandidateRecord> = candidates
        .iter()
        .filter(|c| c.status == CandidateStatus::Invalid)
        .collect();
    if candidates.is_empty()
        || (invalid.len() as f64) <= INVALID_RATE_WARNING * candidates.len() as f64
    {
        return None;
    }
    // Count each reason, remembering where it was first seen (for ties).
    let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (i, c) in invalid.iter().enumerate() {
        let e = counts
            .entry(c.reason.as_deref().unwrap_or("(no reason recorded)"))
            .or_insert((0, i));
        e.0 += 1;
    }
    let (reason, (count, _)) = counts
        .iter()
        .max_by(|a, b| a.1.0.cmp(&b.1.0).then(b.1.1.cmp(&a.1.1)))
        .expect("at least one invalid candidate");
    let mut quoted: String = reason.chars().take(REASON_CHARS).collect();
    if quoted.len() < reason.len() {
        quoted.push('…');
    }
    Some(format!(
        "proposer `{label}`: {} of {} candidates were invalid ({:.0} %); the most common reason ({count} of {}): {}",
        invalid.len(),
        candidates.len(),
        100.0 * invalid.len() as f64 / candidates.len() as f64,
        invalid.len(),
        quoted.replace('\n', " ")
    ))
}

/// The warnings of the run directory `dir` (its `candidates.jsonl`), for the proposer
/// labelled `label`.
pub fn of_run_dir(label: &str, dir: &Path) -> Result<Vec<String>, ReportError> {
    let candidates: Vec<CandidateRecord> = records::read(&dir.join(run_dir::CANDIDATES))?;
    Ok(invalid_revisions(label, &candidates).into_iter().collect())
}
