//! Solution files for grading (`hrl humaneval grade`): JSON lines with `task_id` and
//! exactly one of `completion` (appended to the prompt) or `solution` (a whole
//! program), matched to the problems of a HumanEval-format file. Every bad line is an
//! error naming file and line.

use std::io::BufReader;
use std::path::Path;

use super::{HumanEvalError, Problem, Solution};
use crate::lcb::prompt;

/// The solutions of `path` as `(line, task_id, solution)`; with `extract`, each text
/// is first reduced to the code LiveCodeBench's extraction finds in a model response.
pub fn read(path: &Path, extract: bool) -> Result<Vec<(usize, String, Solution)>, HumanEvalError> {
    let io = |e: std::io::Error| HumanEvalError::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let f = std::fs::File::open(path).map_err(io)?;
    let mut out = Vec::new();
    for line in crate::jsonl::lines(BufReader::new(f)) {
        let line = line.map_err(io)?;
        if line.is_blank() {
            continue;
        }
        let n = line.number;
        let at = format!("{}:{n}", path.display());
        let bad = |m: String| HumanEvalError::BadSolutions(format!("{at}: {m}"));
        let line = line.text.into_result().map_err(bad)?;
        let v: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| bad(format!("not JSON: {e}")))?;
        let obj = v
            .as_object()
            .ok_or_else(|| bad("not a JSON object".into()))?;
        let text = |k: &str| obj.get(k).and_then(|x| x.as_str()).map(str::to_string);
        let Some(task_id) = text("task_id") else {
            return Err(bad("missing string `task_id`".into()));
        };
        let take = |s: String| {
            if extract {
                prompt::extract_code(&s).unwrap_or_default()
            } else {
                s
            }
        };
        let solution = match (text("completion"), text("solution")) {
            (Some(c), None) => Solution::Completion(take(c)),
            (None, Some(s)) => Solution::Program(take(s)),
            _ => {
                return Err(bad(
                    "expected exactly one string field of `completion` and `solution`".into(),
                ));
            }
        };
        out.push((n, task_id, solution));
    }
    Ok(out)
}

/// The solutions matched to their problems: `(problem, solution, sample index)` in
/// file order. A `task_id` not in `problems` is an error naming the line.
pub fn matched<'p>(
    path: &Path,
    data: &Path,
    lines: Vec<(usize, String, Solution)>,
    problems: &'p [Problem],
) -> Result<Vec<(&'p Problem, Solution, usize)>, HumanEvalError> {
    let mut found = Vec::new();
    for (line, task_id, solution) in lines {
        let Some(p) = problems.iter().find(|p| p.task_id == task_id) else {
            return Err(HumanEvalError::BadSolutions(format!(
                "{}:{line}: task_id `{task_id}` is not in {}",
                path.display(),
                data.display()
            )));
        };
        found.push((p, solution));
    }
    let (samples, _) =
        crate::grading::solutions::sample_indices(found.iter().map(|(p, _)| p.task_id.as_str()));
    Ok(found
        .into_iter()
        .zip(samples)
        .map(|((p, s), k)| (p, s, k))
        .collect())
}

/// Every problem's canonical solution, one sample each (the data's self-check).
pub fn canonical(problems: &[Problem]) -> Vec<(&Problem, Solution, usize)> {
    problems
        .iter()
        .map(|p| (p, Solution::Completion(p.canonical_solution.clone()), 0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_that_is_not_utf8_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sols.jsonl");
        let mut bytes = b"{\"task_id\": \"a\", \"completion\": \"  return 1\"}\n".to_vec();
        bytes.extend(b"{\"task_id\": \"b\", \"completion\": \"\xff\"}\n");
        std::fs::write(&path, bytes).unwrap();
        let err = read(&path, false).unwrap_err().to_string();
        assert!(err.contains("sols.jsonl:2: invalid UTF-8 at byte"), "{err}");
    }

    #[test]
    fn both_fields_or_neither_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sols.jsonl");
        std::fs::write(
            &path,
            "{\"task_id\": \"a\", \"completion\": \"x\", \"solution\": \"y\"}\n",
        )
        .unwrap();
        let err = read(&path, false).unwrap_err().to_string();
        assert!(err.contains("sols.jsonl:1: expected exactly one"), "{err}");
    }
}
