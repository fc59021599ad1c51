//! Grading a file of solutions (`hrl lcb grade`, `hrl humaneval grade`): the steps
//! both commands share, written once — checking the grading options, numbering each
//! problem's solutions, grading them on the grader's threads with an optional
//! append-only JSON-lines log, sorting the results into graded samples and grading
//! errors, and the report both commands write (`--out`, `--json`).

use std::collections::BTreeMap;
use std::fmt::Display;
use std::io::Write;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::SampleResult;

/// The options every code grader takes from the command line, checked: a positive
/// finite timeout, pass@k with k >= 1, at least one job. The message names the flag.
pub fn check_options(timeout_s: f64, ks: &[u64], jobs: Option<usize>) -> Result<(), String> {
    if !(timeout_s.is_finite() && timeout_s > 0.0) {
        return Err(format!("--timeout must be positive, got {timeout_s}"));
    }
    if ks.contains(&0) {
        return Err("--k values must be at least 1".into());
    }
    if jobs == Some(0) {
        return Err("--jobs must be at least 1".into());
    }
    Ok(())
}

/// The sample index of each solution among its problem's solutions, in file order
/// (the first solution of a problem is sample 0), and how many each problem has.
pub fn sample_indices<'a>(
    problem_ids: impl IntoIterator<Item = &'a str>,
) -> (Vec<usize>, BTreeMap<&'a str, usize>) {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for id in problem_ids {
        let k = counts.entry(id).or_default();
        out.push(*k);
        *k += 1;
    }
    (out, counts)
}

/// The results of grading a file of solutions.
#[derive(Debug, Clone, Default)]
pub struct Graded {
    /// Every solution that could be graded, in input order.
    pub samples: Vec<SampleResult>,
    /// A message for each solution that could not be graded.
    pub errors: Vec<String>,
    pub wall_s: f64,
    /// Some lines of the log could not be written.
    pub log_incomplete: bool,
}

/// Grade `items` on up to `jobs` threads (results in input order). With `log`, each
/// result is appended to that file as one JSON line as soon as it is known (a
/// grading error as `{"error": ...}`), so a long grading run leaves a record even if
/// it is stopped. `progress` is called once per finished item.
pub fn grade_all<T: Sync, E: Display + Send>(
    items: &[T],
    jobs: usize,
    grade: impl Fn(&T) -> Result<SampleResult, E> + Sync,
    log: Option<&Path>,
    mut progress: impl FnMut(),
) -> std::io::Result<Graded> {
    let mut log = match log {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", p.display())))?,
        )),
        None => None,
    };
    let mut out = Graded::default();
    let started = std::time::Instant::now();
    let results = crate::parallel::map(items, jobs, grade, |r| {
        progress();
        if let Some(w) = log.as_mut() {
            let line = match r {
                Ok(s) => serde_json::to_string(s),
                Err(e) => serde_json::to_string(&json!({"error": e.to_string()})),
            }
            .expect("serializable");
            if writeln!(w, "{line}").and_then(|_| w.flush()).is_err() {
                out.log_incomplete = true;
            }
        }
    });
    out.wall_s = started.elapsed().as_secs_f64();
    for r in results {
        match r {
            Ok(s) => out.samples.push(s),
            Err(e) => out.errors.push(e.to_string()),
        }
    }
    Ok(out)
}

/// The report of a grading run: the source's own fields (`header`: data, settings),
/// then `isolation`, `sandbox_python`, `wall_s`, the `summary`, every graded sample
/// and the grading errors.
pub fn report(
    header: Map<String, Value>,
    isolation: bool,
    sandbox_python: &impl serde::Serialize,
    summary: &impl serde::Serialize,
    graded: &Graded,
) -> Value {
    let mut v = header;
    v.insert("isolation".into(), json!(isolation));
    v.insert("sandbox_python".into(), json!(sandbox_python));
    v.insert("wall_s".into(), json!(graded.wall_s));
    v.insert("summary".into(), json!(summary));
    v.insert("samples".into(), json!(graded.samples));
    v.insert("errors".into(), json!(graded.errors));
    Value::Object(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_checked_by_flag() {
        assert!(check_options(6.0, &[1, 5], Some(2)).is_ok());
        assert!(
            check_options(0.0, &[1], None)
                .unwrap_err()
                .contains("--timeout")
        );
        assert!(
            check_options(f64::NAN, &[1], None)
                .unwrap_err()
                .contains("--timeout")
        );
        assert!(check_options(1.0, &[0], None).unwrap_err().contains("--k"));
        assert!(
            check_options(1.0, &[1], Some(0))
                .unwrap_err()
                .contains("--jobs")
        );
    }

    #[test]
    fn samples_are_numbered_per_problem_in_file_order() {
        let (idx, counts) = sample_indices(["a", "b", "a", "a", "c", "b"]);
        assert_eq!(idx, vec![0, 0, 1, 2, 0, 1]);
        assert_eq!(counts.get("a"), Some(&3));
        assert_eq!(counts.get("c"), Some(&1));
    }
}
