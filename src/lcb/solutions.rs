//! Solution files for grading (`hrl lcb grade`): JSON lines `{question_id, code}`,
//! matched to the problems of a loaded dataset. A bad line or an unknown question is
//! an error naming file and line, or, with `skip_bad`, a message in `skipped` and the
//! line left out.

use std::io::BufReader;
use std::path::Path;

use serde::Deserialize;

use super::{Dataset, LcbError, Problem, prompt};

/// One line of a solutions file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolutionLine {
    pub question_id: String,
    pub code: String,
}

/// One solution to grade: its problem, its code, its sample index among the problem's
/// solutions.
pub type GradeItem<'d> = (&'d Problem, String, usize);

/// Messages about the lines left out (with `skip_bad`).
pub type Skipped = Vec<String>;

/// The readable lines of `path` with their line numbers, and a message for each line
/// skipped (only with `skip_bad`).
pub fn read(
    path: &Path,
    skip_bad: bool,
) -> Result<(Vec<(usize, SolutionLine)>, Skipped), LcbError> {
    let io = |e: std::io::Error| LcbError::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let f = std::fs::File::open(path).map_err(io)?;
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for line in crate::jsonl::lines(BufReader::new(f)) {
        let line = line.map_err(io)?;
        if line.is_blank() {
            continue;
        }
        let n = line.number;
        let parsed = line
            .text
            .into_result()
            .and_then(|t| serde_json::from_str::<SolutionLine>(&t).map_err(|e| e.to_string()));
        match parsed {
            Ok(s) => out.push((n, s)),
            Err(e) => {
                let msg = format!(
                    "{}:{n}: not a {{question_id, code}} line: {e}",
                    path.display(),
                );
                if !skip_bad {
                    return Err(LcbError::BadSolutions(msg));
                }
                skipped.push(msg);
            }
        }
    }
    Ok((out, skipped))
}

/// The solutions matched to their problems: `(problem, code, sample index)` in file
/// order (with `extract`, the code is LiveCodeBench's extraction from a model
/// response), and a message for each solution skipped (an unknown `question_id`, only
/// with `skip_bad`).
pub fn matched<'d>(
    path: &Path,
    lines: &[(usize, SolutionLine)],
    ds: &'d Dataset,
    extract: bool,
    skip_bad: bool,
) -> Result<(Vec<GradeItem<'d>>, Skipped), LcbError> {
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    for (line, s) in lines {
        let Some(p) = ds.get(&s.question_id) else {
            let msg = format!(
                "{}:{line}: question_id `{}` is not in {} of {} (within the date window)",
                path.display(),
                s.question_id,
                ds.release,
                ds.dir.display()
            );
            if !skip_bad {
                return Err(LcbError::BadSolutions(msg));
            }
            skipped.push(msg);
            continue;
        };
        let code = if extract {
            prompt::extract_code(&s.code).unwrap_or_default()
        } else {
            s.code.clone()
        };
        found.push((p, code));
    }
    let (samples, _) = crate::grading::solutions::sample_indices(
        found.iter().map(|(p, _)| p.question_id.as_str()),
    );
    Ok((
        found
            .into_iter()
            .zip(samples)
            .map(|((p, c), k)| (p, c, k))
            .collect(),
        skipped,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_utf8_line_is_named_or_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sols.jsonl");
        let mut bytes = b"{\"question_id\": \"a\", \"code\": \"print(1)\"}\n".to_vec();
        bytes.extend(b"{\"question_id\": \"b\", \"code\": \"\xff\"}\n\n");
        bytes.extend(b"{\"question_id\": \"c\", \"code\": \"print(3)\"}\n");
        std::fs::write(&path, bytes).unwrap();
        let err = read(&path, false).unwrap_err().to_string();
        assert!(
            err.contains("sols.jsonl:2: not a {question_id, code} line: invalid UTF-8 at byte"),
            "{err}"
        );
        let (ok, skipped) = read(&path, true).unwrap();
        let got: Vec<(usize, &str)> = ok
            .iter()
            .map(|(n, s)| (*n, s.question_id.as_str()))
            .collect();
        assert_eq!(got, vec![(1, "a"), (4, "c")]);
        assert_eq!(skipped.len(), 1);
        assert!(skipped[0].contains("sols.jsonl:2:"), "{skipped:?}");
    }
}
