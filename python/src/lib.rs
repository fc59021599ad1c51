//! `harness_rl._native`: the Rust half of the Python package `harness_rl` (the Python
//! half, in `harness_rl/`, adds the reasoning-gym shim, the TRL reward function and
//! `load_run`). Glue only: generation, scoring, splits and record reading are the core
//! crate's (`families`, `families::entry`, `families::mixture`, `families::splits`,
//! `records`); this file turns their values into Python objects and their
//! errors into Python exceptions.

mod convert;
mod dataset;
mod records;

use std::borrow::Cow;

use harness_rl::families::{self, Family, FamilyError, Instance, ScoreMode, Scored};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// Responses longer than this are scored with the GIL released.
const DETACH_BYTES: usize = 1 << 16;

/// A `FamilyError` as a `ValueError`; an unknown family points at `list_families()`.
pub(crate) fn family_err(e: FamilyError) -> PyErr {
    match e {
        FamilyError::UnknownFamily(name) => PyValueError::new_err(format!(
            "unknown family `{name}` (see harness_rl.list_families())"
        )),
        e => PyValueError::new_err(e.to_string()),
    }
}

/// The instance an entry dict holds, with its family (`ValueError` naming what is
/// wrong; `TypeError` when it is not a dict).
pub(crate) fn entry_arg(entry: &Bound<'_, PyAny>) -> PyResult<(&'static dyn Family, Instance)> {
    if entry.cast::<PyDict>().is_err() {
        return Err(PyTypeError::new_err(format!(
            "entry must be a dict (an instance), not {}",
            entry.get_type().name()?
        )));
    }
    let value = convert::from_py(entry).map_err(|e| convert::not_json(e, "entry"))?;
    families::entry::parse_entry(value).map_err(|e| match e {
        FamilyError::UnknownFamily(_) => family_err(e),
        e => PyValueError::new_err(format!("entry: {e}")),
    })
}

fn score_text(
    py: Python<'_>,
    family: &dyn Family,
    inst: &Instance,
    text: &str,
    mode: ScoreMode,
) -> Scored {
    if text.len() > DETACH_BYTES {
        py.detach(|| families::score_response(family, inst, text, mode))
    } else {
        families::score_response(family, inst, text, mode)
    }
}

/// Score `response` (`None`: nothing to score, 0.0) against an entry under `mode`.
pub(crate) fn score_entry_obj(
    py: Python<'_>,
    entry: &Bound<'_, PyAny>,
    response: Option<&Bound<'_, PyAny>>,
    mode: ScoreMode,
) -> PyResult<Scored> {
    let (family, inst) = entry_arg(entry)?;
    let text: Option<Cow<'_, str>> = match response {
        Some(r) if !r.is_none() => Some(convert::text(r, "the response")?),
        _ => None,
    };
    Ok(match text {
        None => Scored {
            score: 0.0,
            extracted: None,
        },
        Some(t) => score_text(py, family, &inst, &t, mode),
    })
}

fn mode_of(lenient: bool) -> ScoreMode {
    if lenient {
        ScoreMode::Lenient
    } else {
        ScoreMode::Strict
    }
}

/// Score a full model response against an entry, as `hrl tasks score` does: the
/// content of the last `<answer>...</answer>` pair, verified by the entry's family
/// (1.0 or 0.0); no pair scores 0.0 unless `lenient` (then the last non-empty line).
#[pyfunction]
#[pyo3(signature = (entry, response, *, lenient=false))]
fn score(
    py: Python<'_>,
    entry: &Bound<'_, PyAny>,
    response: &Bound<'_, PyAny>,
    lenient: bool,
) -> PyResult<f64> {
    score_entry_obj(py, entry, Some(response), mode_of(lenient)).map(|s| s.score)
}

/// `score` with what was extracted and the mode that scored it:
/// `{"score": float, "extracted": str | None, "score_mode": "strict" | "lenient"}`.
#[pyfunction]
#[pyo3(signature = (entry, response, *, lenient=false))]
fn score_details<'py>(
    py: Python<'py>,
    entry: &Bound<'py, PyAny>,
    response: &Bound<'py, PyAny>,
    lenient: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let mode = mode_of(lenient);
    let s = score_entry_obj(py, entry, Some(response), mode)?;
    let d = PyDict::new(py);
    d.set_item("score", s.score)?;
    d.set_item("extracted", s.extracted)?;
    d.set_item("score_mode", mode.as_str())?;
    Ok(d)
}

/// Score many responses against their entries in one call (the verification runs with
/// the GIL released). `mode` is `strict`, `lenient` or `bare` (each text is the final
/// answer, as `Dataset.score_answer` takes it).
#[pyfunction]
#[pyo3(signature = (entries, responses, *, mode="strict"))]
fn score_many(
    py: Python<'_>,
    entries: &Bound<'_, PyAny>,
    responses: &Bound<'_, PyAny>,
    mode: &str,
) -> PyResult<Vec<f64>> {
    let mode = match mode {
        "strict" => ScoreMode::Strict,
        "lenient" => ScoreMode::Lenient,
        "bare" => ScoreMode::Bare,
        m => {
            return Err(PyValueError::new_err(format!(
                "mode `{m}` is not one of strict, lenient, bare"
            )));
        }
    };
    let entries: Vec<Bound<'_, PyAny>> = entries.try_iter()?.collect::<PyResult<_>>()?;
    let responses: Vec<Bound<'_, PyAny>> = responses.try_iter()?.collect::<PyResult<_>>()?;
    if entries.len() != responses.len() {
        return Err(PyValueError::new_err(format!(
            "{} entries but {} responses",
            entries.len(),
            responses.len()
        )));
    }
    let mut jobs = Vec::with_capacity(entries.len());
    for (i, (e, r)) in entries.iter().zip(&responses).enumerate() {
        let (family, inst) = entry_arg(e).map_err(|err| prefix(py, err, i))?;
        let text = if r.is_none() {
            None
        } else {
            Some(
                convert::text(r, "a response")
                    .map_err(|err| prefix(py, err, i))?
                    .into_owned(),
            )
        };
        jobs.push((family, inst, text));
    }
    Ok(py.detach(|| {
        jobs.iter()
            .map(|(f, inst, text)| {
                text.as_deref()
                    .map_or(0.0, |t| families::score_response(*f, inst, t, mode).score)
            })
            .collect()
    }))
}

/// The same exception with `item i: ` in front of its message.
fn prefix(py: Python<'_>, err: PyErr, i: usize) -> PyErr {
    let msg = format!("item {i}: {}", err.value(py));
    if err.is_instance_of::<PyTypeError>(py) {
        PyTypeError::new_err(msg)
    } else {
        PyValueError::new_err(msg)
    }
}

/// reasoning-gym's `score_answer(answer, entry)` contract (see `Dataset.score_answer`).
#[pyfunction]
#[pyo3(signature = (answer, entry))]
fn score_answer(
    py: Python<'_>,
    answer: Option<&Bound<'_, PyAny>>,
    entry: &Bound<'_, PyAny>,
) -> PyResult<f64> {
    score_entry_obj(py, entry, answer, ScoreMode::Bare).map(|s| s.score)
}

/// The content of the last `<answer>...</answer>` pair, trimmed (`None` without one).
#[pyfunction]
fn extract_answer(response: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    Ok(families::extract_answer(&convert::text(
        response,
        "the response",
    )?))
}

/// An entry as the JSON line `hrl tasks gen` prints for it (no newline); the entry is
/// checked to be an instance first.
#[pyfunction]
fn dumps(entry: &Bound<'_, PyAny>) -> PyResult<String> {
    let (_, inst) = entry_arg(entry)?;
    serde_json::to_string(&inst).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Every family as `hrl tasks list --json` describes it.
#[pyfunction]
fn list_families(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let rows = families::registry()
        .iter()
        .map(|f| convert::value_to_py(py, &families::describe(*f)))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, rows)
}

/// Every built-in family split, as `hrl tasks splits --json` prints them.
#[pyfunction]
fn splits(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let all = families::splits::builtin().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let rows = all
        .iter()
        .map(|s| convert::value_to_py(py, &s.to_json()))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, rows)
}

/// One split by built-in name or `.toml` path: its roles and their families.
#[pyfunction]
fn split<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let s = families::splits::load(name).map_err(|e| PyValueError::new_err(e.to_string()))?;
    convert::value_to_py(py, &s.to_json())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<dataset::Dataset>()?;
    m.add_class::<dataset::DatasetIter>()?;
    m.add_function(wrap_pyfunction!(dataset::create_dataset, m)?)?;
    m.add_function(wrap_pyfunction!(dataset::create_composite, m)?)?;
    m.add_function(wrap_pyfunction!(score, m)?)?;
    m.add_function(wrap_pyfunction!(score_details, m)?)?;
    m.add_function(wrap_pyfunction!(score_many, m)?)?;
    m.add_function(wrap_pyfunction!(score_answer, m)?)?;
    m.add_function(wrap_pyfunction!(extract_answer, m)?)?;
    m.add_function(wrap_pyfunction!(dumps, m)?)?;
    m.add_function(wrap_pyfunction!(list_families, m)?)?;
    m.add_function(wrap_pyfunction!(splits, m)?)?;
    m.add_function(wrap_pyfunction!(split, m)?)?;
    m.add_function(wrap_pyfunction!(records::read_run, m)?)?;
    Ok(())
}
