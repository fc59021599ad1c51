//! `read_run(dir)`: a run directory's files as Python values, read with the
//! evaluator's own rules (`records::read`: a torn last line is ignored, any other
//! bad line is an error naming `file:line`, a missing log is empty; the file names are
//! `records::run_dir`'s).

use std::path::{Path, PathBuf};

use harness_rl::records::{self, RecordsError, run_dir};
use pyo3::exceptions::{PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::{Map, Value};

use crate::convert;

/// The JSON-lines logs `read_run` returns, by key.
const LOGS: [(&str, &str); 4] = [
    ("rollouts", run_dir::ROLLOUTS),
    ("proposals", run_dir::PROPOSALS),
    ("candidates", run_dir::CANDIDATES),
    ("rounds", run_dir::ROUNDS),
];

struct Read {
    config: Value,
    summary: Option<Value>,
    logs: Vec<Vec<Map<String, Value>>>,
}

fn json_file(path: &Path) -> Result<Option<Value>, String> {
    match std::fs::read_to_string(path) {
        Ok(t) => serde_json::from_str(&t)
            .map(Some)
            .map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Run directories directly inside `dir` (an `hrl eval` or `hrl transfer` output).
fn inner_runs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join(run_dir::CONFIG).is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn read(dir: &Path) -> Result<Read, String> {
    let config = match json_file(&dir.join(run_dir::CONFIG))? {
        Some(c) => c,
        None => {
            let inner = inner_runs(dir);
            return Err(if inner.is_empty() {
                format!(
                    "{}: not a run directory (no {})",
                    dir.display(),
                    run_dir::CONFIG
                )
            } else {
                format!(
                    "{}: not a run directory but holds {} (one per proposer); load one of them",
                    dir.display(),
                    inner.join(", ")
                )
            });
        }
    };
    let summary = json_file(&dir.join(run_dir::SUMMARY))?;
    let logs = LOGS
        .iter()
        .map(|(_, file)| records::read::<Map<String, Value>>(&dir.join(file)))
        .collect::<Result<Vec<_>, RecordsError>>()
        .map_err(|e| e.to_string())?;
    Ok(Read {
        config,
        summary,
        logs,
    })
}

/// `{"path", "config", "summary" (None while the run has not finished), "rollouts",
/// "proposals", "candidates", "rounds"}` of one run directory.
#[pyfunction]
pub fn read_run(py: Python<'_>, dir: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    if !dir.is_dir() {
        return Err(PyFileNotFoundError::new_err(format!(
            "{}: no such run directory",
            dir.display()
        )));
    }
    let r = py.detach(|| read(&dir)).map_err(PyValueError::new_err)?;
    convert::with_keys(|keys| {
        let d = PyDict::new(py);
        d.set_item("path", dir.to_string_lossy())?;
        d.set_item("config", convert::to_py(py, &r.config, keys)?)?;
        d.set_item(
            "summary",
            match &r.summary {
                Some(s) => convert::to_py(py, s, keys)?,
                None => py.None().into_bound(py),
            },
        )?;
        for ((key, _), rows) in LOGS.iter().zip(&r.logs) {
            let items = rows
                .iter()
                .map(|m| {
                    let dict = PyDict::new(py);
                    for (k, v) in m {
                        dict.set_item(k, convert::to_py(py, v, keys)?)?;
                    }
                    Ok(dict)
                })
                .collect::<PyResult<Vec<_>>>()?;
            d.set_item(*key, PyList::new(py, items)?)?;
        }
        Ok(d)
    })
}
