//! `Dataset`: the instances of one family (`create_dataset`) or of a weighted mixture
//! of families (`create_composite`), generated on demand like reasoning-gym's (a
//! dataset holds its stream, not its entries) and handed out as fresh dicts, so a
//! caller may change an entry without touching the dataset. Indexing generates one
//! instance; iteration and slices generate in chunks (iteration's grow to
//! [`MAX_CHUNK`]) with the GIL released, so other Python threads run meanwhile;
//! turning instances into dicts needs the GIL.

use std::sync::Mutex;

use harness_rl::families::mixture::{Mixture, Part};
use harness_rl::families::{self, Instance, InstanceStream, Level, Variant};
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyMapping, PySlice, PyString, PyTuple};

use crate::convert;
use crate::{family_err, score_entry_obj};

/// Instances a dataset may hold (a composite stores 10 bytes per instance).
const MAX_SIZE: u64 = 100_000_000;

/// Iteration generates this many instances ahead at most (the first chunks are
/// smaller, so breaking out early wastes little).
pub const MAX_CHUNK: usize = 4096;

/// Batches at least this large are generated with the GIL released.
const DETACH_MIN: usize = 64;

/// Where a dataset's instances come from.
enum Source {
    Stream(InstanceStream),
    Mixture(Mixture),
}

/// A generated dataset. Entries are dicts with exactly the fields of an `hrl tasks
/// gen` line: `id`, `family`, `level`, `seed`, `index`, `question`, `answer`,
/// `metadata`.
#[pyclass(module = "harness_rl._native", frozen, sequence)]
pub struct Dataset {
    source: Source,
    size: u64,
    /// `create_dataset`'s family, or `composite`.
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    seed: u64,
    /// The level and variant asked for (a composite's parts may override them).
    #[pyo3(get)]
    level: u8,
    variant: Variant,
    /// The parts of a composite: (family, weight, level, variant).
    parts: Vec<(String, f64, u8, Variant)>,
    /// Add reasoning-gym's `source_dataset` / `source_index` metadata keys.
    source_keys: bool,
}

fn variant_to_py<'py>(py: Python<'py>, v: Variant) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::IntoPyObjectExt;
    match v {
        Variant::Fixed(k) => k.into_bound_py_any(py),
        Variant::Random => Ok(PyString::new(py, "random").into_any()),
    }
}

/// `level` as given in Python: an int in 1..=5.
pub fn level_arg(level: i64) -> PyResult<Level> {
    u8::try_from(level)
        .ok()
        .and_then(|l| Level::new(l).ok())
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "level {level} is out of range: levels are {}..={}",
                families::MIN_LEVEL,
                families::MAX_LEVEL
            ))
        })
}

/// `variant` as given in Python: an int 0..=255 or "random".
pub fn variant_arg(v: &Bound<'_, PyAny>) -> PyResult<Variant> {
    if let Ok(s) = v.cast::<PyString>() {
        return s
            .to_str()?
            .parse::<Variant>()
            .map_err(|e| PyValueError::new_err(format!("variant: {e}")));
    }
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(
            "variant must be an int or \"random\", not bool",
        ));
    }
    match v.extract::<i64>() {
        Ok(k) => u8::try_from(k).map(Variant::Fixed).map_err(|_| {
            PyValueError::new_err(format!(
                "variant {k} is out of range (0..=255 or \"random\")"
            ))
        }),
        Err(_) => Err(PyTypeError::new_err("variant must be an int or \"random\"")),
    }
}

fn seed_arg(seed: &Bound<'_, PyAny>) -> PyResult<u64> {
    if seed.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err("seed must be an int, not bool"));
    }
    seed.extract::<u64>().map_err(|_| {
        PyValueError::new_err(format!(
            "seed must be an integer in 0..=2**64-1, not {}",
            seed.repr().map_or_else(|_| "?".into(), |r| r.to_string())
        ))
    })
}

fn size_arg(size: i64) -> PyResult<u64> {
    match u64::try_from(size) {
        Ok(n) if (1..=MAX_SIZE).contains(&n) => Ok(n),
        _ => Err(PyValueError::new_err(format!(
            "size must be in 1..={MAX_SIZE}, not {size}"
        ))),
    }
}

/// A dataset of one family's instances 0..size at `level` (1..=5) and `variant` (0,
/// a template number, or "random"), generated on demand; entries are the `hrl tasks
/// gen` lines as dicts.
#[pyfunction]
#[pyo3(signature = (name, seed=None, size=500, level=1, variant=None, *, source_keys=false))]
pub fn create_dataset(
    name: &str,
    seed: Option<&Bound<'_, PyAny>>,
    size: i64,
    level: i64,
    variant: Option<&Bound<'_, PyAny>>,
    source_keys: bool,
) -> PyResult<Dataset> {
    let family = families::get(name).map_err(family_err)?;
    let level = level_arg(level)?;
    let variant = variant.map(variant_arg).transpose()?.unwrap_or_default();
    let seed = seed.map(seed_arg).transpose()?.unwrap_or(0);
    let size = size_arg(size)?;
    let stream = InstanceStream::new(family, level, seed)
        .with_variant(variant)
        .map_err(family_err)?;
    Ok(Dataset {
        source: Source::Stream(stream),
        size,
        name: family.name().to_string(),
        seed,
        level: level.get(),
        variant,
        parts: Vec::new(),
        source_keys,
    })
}

/// One part of a composite as given: a (name, weight) pair, or a dict with `name` and
/// optional `weight`, `level`, `variant`.
fn part_arg(
    item: &Bound<'_, PyAny>,
    weight: Option<&Bound<'_, PyAny>>,
    level: Level,
    variant: Variant,
) -> PyResult<Part> {
    let (name, weight, level, variant) = if let Some(w) = weight {
        (item.extract::<String>()?, Some(w.clone()), level, variant)
    } else if let Ok(d) = item.cast::<PyDict>() {
        for k in d.keys() {
            let k: String = k.extract()?;
            if !["name", "weight", "level", "variant"].contains(&k.as_str()) {
                return Err(PyValueError::new_err(format!(
                    "composite part: unknown key `{k}` (name, weight, level, variant)"
                )));
            }
        }
        let name: String = d
            .get_item("name")?
            .ok_or_else(|| PyValueError::new_err("composite part: missing `name`"))?
            .extract()?;
        let level = match d.get_item("level")? {
            Some(l) => level_arg(l.extract()?)?,
            None => level,
        };
        let variant = match d.get_item("variant")? {
            Some(v) => variant_arg(&v)?,
            None => variant,
        };
        (name, d.get_item("weight")?, level, variant)
    } else if let Ok(t) = item.cast::<PyTuple>() {
        if t.len() != 2 {
            return Err(PyValueError::new_err(
                "composite part: a tuple must be (name, weight)",
            ));
        }
        (
            t.get_item(0)?.extract()?,
            Some(t.get_item(1)?),
            level,
            variant,
        )
    } else {
        return Err(PyTypeError::new_err(
            "composite part: expected a (name, weight) tuple or a dict with `name`",
        ));
    };
    let family = families::get(&name).map_err(family_err)?;
    let weight = match weight {
        None => 1.0,
        Some(w) => w.extract::<f64>().map_err(|_| {
            PyValueError::new_err(format!("the weight of `{name}` must be a number"))
        })?,
    };
    Ok(Part {
        family,
        level,
        variant,
        weight,
    })
}

/// A dataset mixing families by weight: `parts` is a dict {name: weight} or a list of
/// (name, weight) pairs or dicts with `name` and optional `weight`, `level`, `variant`
/// (see docs/PYTHON.md).
#[pyfunction]
#[pyo3(signature = (parts, seed=None, size=500, level=1, variant=None, *, source_keys=false))]
pub fn create_composite(
    py: Python<'_>,
    parts: &Bound<'_, PyAny>,
    seed: Option<&Bound<'_, PyAny>>,
    size: i64,
    level: i64,
    variant: Option<&Bound<'_, PyAny>>,
    source_keys: bool,
) -> PyResult<Dataset> {
    let level = level_arg(level)?;
    let variant = variant.map(variant_arg).transpose()?.unwrap_or_default();
    let seed = seed.map(seed_arg).transpose()?.unwrap_or(0);
    let size = size_arg(size)?;
    let mut list = Vec::new();
    if let Ok(m) = parts.cast::<PyDict>() {
        for (k, w) in m.iter() {
            list.push(part_arg(&k, Some(&w), level, variant)?);
        }
    } else if parts.cast::<PyString>().is_ok() || parts.cast::<PyMapping>().is_ok() {
        return Err(PyTypeError::new_err(
            "parts must be a dict {name: weight} or a list of parts",
        ));
    } else {
        for item in parts.try_iter()? {
            list.push(part_arg(&item?, None, level, variant)?);
        }
    }
    let described = list
        .iter()
        .map(|p| {
            (
                p.family.name().to_string(),
                p.weight,
                p.level.get(),
                p.variant,
            )
        })
        .collect();
    let mixture = py
        .detach(|| Mixture::new(list, seed, size))
        .map_err(family_err)?;
    Ok(Dataset {
        source: Source::Mixture(mixture),
        size,
        name: "composite".into(),
        seed,
        level: level.get(),
        variant,
        parts: described,
        source_keys,
    })
}

impl Dataset {
    fn instance(&self, i: u64) -> Instance {
        match &self.source {
            Source::Stream(s) => s.instance(i),
            Source::Mixture(m) => m.instance(i),
        }
    }

    /// Append instances `start, start + step, ...` (`n` of them) to `out`, generated
    /// with the GIL released unless they are few (giving the GIL up and taking it back
    /// costs more than a few instances when other threads want it).
    fn generate_into(
        &self,
        py: Python<'_>,
        start: u64,
        step: i64,
        n: usize,
        out: &mut (impl Extend<Instance> + Send),
    ) {
        let mut run =
            || out.extend((0..n as i64).map(|k| self.instance((start as i64 + k * step) as u64)));
        if n >= DETACH_MIN {
            py.detach(run)
        } else {
            run()
        }
    }

    fn to_dicts<'py>(
        &self,
        py: Python<'py>,
        instances: &[Instance],
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        // Python's cyclic collector would run every few hundred new containers and walk
        // every entry made so far; these dicts form no cycles, so it is paused for the
        // batch (the GIL is held throughout, no other thread sees the pause).
        let _pause = (instances.len() >= 256).then(|| convert::PauseGc::new(py));
        convert::with_keys(|keys| {
            instances
                .iter()
                .map(|inst| convert::instance_to_py(py, inst, self.source_keys, keys))
                .collect()
        })
    }
}

#[pymethods]
impl Dataset {
    fn __len__(&self) -> usize {
        self.size as usize
    }

    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        idx: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let n = self.size as isize;
        if let Ok(s) = idx.cast::<PySlice>() {
            let ind = s.indices(n)?;
            // In chunks, so the instances waiting for conversion stay few.
            let mut out = Vec::with_capacity(ind.slicelength);
            let mut batch = Vec::with_capacity(ind.slicelength.min(MAX_CHUNK));
            let mut done = 0;
            while done < ind.slicelength {
                let n = (ind.slicelength - done).min(MAX_CHUNK);
                let start = ind.start as i64 + done as i64 * ind.step as i64;
                self.generate_into(py, start as u64, ind.step as i64, n, &mut batch);
                out.extend(self.to_dicts(py, &batch)?);
                batch.clear();
                done += n;
            }
            return Ok(PyList::new(py, out)?.into_any());
        }
        let i: isize = idx
            .extract()
            .map_err(|_| PyTypeError::new_err("dataset indices must be integers or slices"))?;
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n {
            return Err(PyIndexError::new_err(format!(
                "dataset index {i} out of range (size {n})"
            )));
        }
        let inst = self.instance(j as u64);
        convert::with_keys(|keys| convert::instance_to_py(py, &inst, self.source_keys, keys))
            .map(Bound::into_any)
    }

    fn __iter__(slf: Py<Self>) -> DatasetIter {
        DatasetIter {
            dataset: slf,
            state: Mutex::new(IterState {
                next: 0,
                chunk: 16,
                ready: std::collections::VecDeque::new(),
            }),
        }
    }

    /// The number of entries (reasoning-gym's `size`).
    #[getter]
    fn size(&self) -> u64 {
        self.size
    }

    #[getter]
    fn variant<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        variant_to_py(py, self.variant)
    }

    /// The families it draws from, in order.
    #[getter]
    fn families(&self) -> Vec<String> {
        if self.parts.is_empty() {
            vec![self.name.clone()]
        } else {
            self.parts.iter().map(|p| p.0.clone()).collect()
        }
    }

    /// A composite's parts as dicts (name, weight, level, variant); empty otherwise.
    #[getter]
    fn parts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rows = self
            .parts
            .iter()
            .map(|(name, weight, level, variant)| {
                let d = PyDict::new(py);
                d.set_item("name", name)?;
                d.set_item("weight", weight)?;
                d.set_item("level", level)?;
                d.set_item("variant", variant_to_py(py, *variant)?)?;
                Ok(d)
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, rows)
    }

    /// The settings as a dict (reasoning-gym datasets carry a `config`).
    #[getter]
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("name", &self.name)?;
        d.set_item("seed", self.seed)?;
        d.set_item("size", self.size)?;
        d.set_item("level", self.level)?;
        d.set_item("variant", variant_to_py(py, self.variant)?)?;
        if !self.parts.is_empty() {
            d.set_item("parts", self.parts(py)?)?;
        }
        Ok(d)
    }

    /// Score a final answer against an entry, reasoning-gym's contract: `answer` is the
    /// answer already taken out of the response (`None` scores 0.0); if it still holds
    /// an `<answer>...</answer>` pair, the last pair's content counts, otherwise the
    /// whole text, trimmed. The entry's own family verifies it (strictly: 1.0 or 0.0).
    #[pyo3(signature = (answer, entry))]
    fn score_answer(
        &self,
        py: Python<'_>,
        answer: Option<&Bound<'_, PyAny>>,
        entry: &Bound<'_, PyAny>,
    ) -> PyResult<f64> {
        score_entry_obj(py, entry, answer, families::ScoreMode::Bare).map(|s| s.score)
    }

    fn __repr__(&self) -> String {
        let variant = match self.variant {
            Variant::Fixed(k) => k.to_string(),
            Variant::Random => "'random'".into(),
        };
        if self.parts.is_empty() {
            format!(
                "Dataset(name='{}', seed={}, size={}, level={}, variant={variant})",
                self.name, self.seed, self.size, self.level
            )
        } else {
            let parts: Vec<String> = self
                .parts
                .iter()
                .map(|(n, w, l, _)| format!("{n}@L{l}:{w}"))
                .collect();
            format!(
                "Dataset(name='composite', parts=[{}], seed={}, size={})",
                parts.join(", "),
                self.seed,
                self.size
            )
        }
    }
}

struct IterState {
    /// The index of the next instance to generate.
    next: u64,
    /// The size of the next chunk.
    chunk: usize,
    /// Generated, not yet handed out.
    ready: std::collections::VecDeque<Instance>,
}

/// Iteration over a dataset's entries, in order.
#[pyclass(module = "harness_rl._native", frozen)]
pub struct DatasetIter {
    dataset: Py<Dataset>,
    state: Mutex<IterState>,
}

#[pymethods]
impl DatasetIter {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let ds = self.dataset.get();
        let mut st = self
            .state
            .try_lock()
            .map_err(|_| PyRuntimeError::new_err("this iterator is already in use"))?;
        if st.ready.is_empty() {
            let n = (ds.size - st.next).min(st.chunk as u64) as usize;
            if n == 0 {
                return Ok(None);
            }
            let start = st.next;
            // The buffer keeps its capacity from chunk to chunk: no large allocation
            // (and no page faults) per chunk.
            ds.generate_into(py, start, 1, n, &mut st.ready);
            st.next += n as u64;
            st.chunk = (st.chunk * 2).min(MAX_CHUNK);
        }
        let inst = st.ready.pop_front().expect("a chunk is never empty");
        drop(st);
        convert::with_keys(|keys| convert::instance_to_py(py, &inst, ds.source_keys, keys))
            .map(Some)
    }

    fn __length_hint__(&self) -> usize {
        let ds = self.dataset.get();
        match self.state.try_lock() {
            Ok(st) => (ds.size - st.next) as usize + st.ready.len(),
            Err(_) => 0,
        }
    }
}
