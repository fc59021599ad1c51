//! JSON values to Python objects and back, and the text of a response.
//!
//! Python → JSON is strict: `None`, `bool`, `int` (64-bit, signed or unsigned), finite
//! `float`, `str`, `list`/`tuple` and `dict` with `str` keys, nested at most
//! [`MAX_DEPTH`] levels; anything else is an error naming where it is
//! (`metadata.grid[3]`), never a silent conversion. JSON → Python keeps object key
//! order, and numbers keep their kind (an integer stays `int`, a float `float`), so an
//! entry written back by [`harness_rl::families::Instance`]'s serialiser is the same
//! bytes as `hrl tasks gen` prints.

use std::borrow::Cow;

use harness_rl::families::Instance;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple,
};
use pyo3::{IntoPyObjectExt, intern};
use serde_json::{Map, Number, Value};

/// Deepest nesting accepted from Python (serde_json's own parser stops at 128 too).
pub const MAX_DEPTH: usize = 128;

/// Python strings for the object keys seen so far (metadata keys come from each
/// family's fixed set, so a few hundred cover every family): a key is created once and
/// then shared, with its hash cached, instead of being decoded for every entry.
pub struct Keys(std::collections::HashMap<Box<str>, Py<PyString>, Fnv>);

/// FNV-1a: the keys are short and not chosen by an adversary, so a simple hash beats
/// SipHash here.
#[derive(Default, Clone, Copy)]
pub struct Fnv;

pub struct FnvHasher(u64);

impl std::hash::BuildHasher for Fnv {
    type Hasher = FnvHasher;
    fn build_hasher(&self) -> FnvHasher {
        FnvHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for FnvHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Keys cached at most (beyond this, new keys are created per use).
const MAX_KEYS: usize = 4096;

static KEYS: std::sync::Mutex<Option<Keys>> = std::sync::Mutex::new(None);

/// Run `f` with the key cache. The caller holds the GIL, so the lock is free unless
/// this thread already holds it (a finaliser run by Python's collector in the middle
/// of a conversion calling back into this module): then `f` gets an empty cache of its
/// own instead of waiting for itself.
pub fn with_keys<T>(f: impl FnOnce(&mut Keys) -> T) -> T {
    let fresh = || Keys(std::collections::HashMap::with_hasher(Fnv));
    match KEYS.try_lock() {
        Ok(mut guard) => f(guard.get_or_insert_with(fresh)),
        Err(std::sync::TryLockError::Poisoned(e)) => f(e.into_inner().get_or_insert_with(fresh)),
        Err(std::sync::TryLockError::WouldBlock) => f(&mut fresh()),
    }
}

impl Keys {
    fn get<'py>(&mut self, py: Python<'py>, k: &str) -> Bound<'py, PyString> {
        if let Some(s) = self.0.get(k) {
            return s.bind(py).clone();
        }
        let s = PyString::new(py, k);
        if self.0.len() < MAX_KEYS {
            self.0.insert(k.into(), s.clone().unbind());
        }
        s
    }
}

/// A JSON value as a new Python object.
pub fn to_py<'py>(py: Python<'py>, v: &Value, keys: &mut Keys) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_bound_py_any(py)?
            } else if let Some(u) = n.as_u64() {
                u.into_bound_py_any(py)?
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_bound_py_any(py)?
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let items = a
                .iter()
                .map(|x| to_py(py, x, keys))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Object(m) => {
            let d = PyDict::new(py);
            for (k, x) in m {
                d.set_item(keys.get(py, k), to_py(py, x, keys)?)?;
            }
            d.into_any()
        }
    })
}

/// A JSON value as a new Python object (a one-off: takes the key cache itself).
pub fn value_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    with_keys(|keys| to_py(py, v, keys))
}

/// An instance as the dict of its `hrl tasks gen` line: the same keys in the same
/// order (`Instance`'s field order, which its serialiser writes). With `source_keys`,
/// reasoning-gym's `source_dataset` and `source_index` are appended to `metadata`.
pub fn instance_to_py<'py>(
    py: Python<'py>,
    inst: &Instance,
    source_keys: bool,
    keys: &mut Keys,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(intern!(py, "id"), PyString::new(py, &inst.id))?;
    d.set_item(intern!(py, "family"), keys.get(py, &inst.family))?;
    d.set_item(intern!(py, "level"), inst.level)?;
    d.set_item(intern!(py, "seed"), inst.seed)?;
    d.set_item(intern!(py, "index"), inst.index)?;
    d.set_item(intern!(py, "question"), PyString::new(py, &inst.question))?;
    d.set_item(intern!(py, "answer"), PyString::new(py, &inst.answer))?;
    let meta = to_py(py, &inst.metadata, keys)?;
    if source_keys {
        if let Ok(m) = meta.cast::<PyDict>() {
            m.set_item(intern!(py, "source_dataset"), keys.get(py, &inst.family))?;
            m.set_item(intern!(py, "source_index"), inst.index)?;
        }
    }
    d.set_item(intern!(py, "metadata"), meta)?;
    Ok(d)
}

/// Python's cyclic garbage collector paused while this value lives (when it was
/// running). Only for making many new acyclic containers with the GIL held.
pub struct PauseGc(bool);

impl PauseGc {
    pub fn new(_py: Python<'_>) -> PauseGc {
        // SAFETY: the `Python` token says this thread holds the GIL.
        PauseGc(unsafe { pyo3::ffi::PyGC_Disable() } != 0)
    }
}

impl Drop for PauseGc {
    fn drop(&mut self) {
        if self.0 {
            // SAFETY: as in `new`; the value never leaves the thread holding the GIL.
            unsafe { pyo3::ffi::PyGC_Enable() };
        }
    }
}

/// Why a Python object is not JSON, and where (innermost step last).
pub struct NotJson {
    path: Vec<String>,
    msg: String,
}

impl NotJson {
    fn new(msg: impl Into<String>) -> NotJson {
        NotJson {
            path: Vec::new(),
            msg: msg.into(),
        }
    }

    fn at(mut self, step: String) -> NotJson {
        self.path.push(step);
        self
    }

    /// `what.path: message`, e.g. `entry.metadata.grid[3]: ...`.
    pub fn describe(&self, what: &str) -> String {
        let mut s = what.to_string();
        for step in self.path.iter().rev() {
            s.push_str(step);
        }
        format!("{s}: {}", self.msg)
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string())
}

/// A Python object as a JSON value (see the module docs for what is accepted).
pub fn from_py(obj: &Bound<'_, PyAny>) -> Result<Value, NotJson> {
    from_py_at(obj, 0)
}

fn from_py_at(obj: &Bound<'_, PyAny>, depth: usize) -> Result<Value, NotJson> {
    if let Ok(s) = obj.cast::<PyString>() {
        return s
            .to_str()
            .map(|s| Value::String(s.to_string()))
            .map_err(|_| NotJson::new("a string that is not valid Unicode (a lone surrogate)"));
    }
    if depth >= MAX_DEPTH {
        return Err(NotJson::new(format!(
            "nested more than {MAX_DEPTH} levels deep"
        )));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut m = Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let Ok(k) = k.cast::<PyString>() else {
                return Err(NotJson::new(format!(
                    "a key of type {} (keys must be str)",
                    type_name(&k)
                )));
            };
            let Ok(k) = k.to_str() else {
                return Err(NotJson::new("a key that is not valid Unicode"));
            };
            let v = from_py_at(&v, depth + 1).map_err(|e| e.at(format!(".{k}")))?;
            m.insert(k.to_string(), v);
        }
        return Ok(Value::Object(m));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        let mut a = Vec::with_capacity(l.len());
        for (i, v) in l.iter().enumerate() {
            a.push(from_py_at(&v, depth + 1).map_err(|e| e.at(format!("[{i}]")))?);
        }
        return Ok(Value::Array(a));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return Err(NotJson::new("an integer outside the 64-bit range"));
    }
    if obj.is_instance_of::<PyFloat>() {
        let x: f64 = obj
            .extract()
            .map_err(|_| NotJson::new("a float that cannot be read"))?;
        return Number::from_f64(x)
            .map(Value::Number)
            .ok_or_else(|| NotJson::new(format!("{x} is not a finite number")));
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        let mut a = Vec::with_capacity(t.len());
        for (i, v) in t.iter().enumerate() {
            a.push(from_py_at(&v, depth + 1).map_err(|e| e.at(format!("[{i}]")))?);
        }
        return Ok(Value::Array(a));
    }
    Err(NotJson::new(format!(
        "a value of type {} (JSON values only: None, bool, int, float, str, list, dict)",
        type_name(obj)
    )))
}

/// The text of a model response: a `str` (lone surrogates: see [`lossy`]) or `bytes`
/// / `bytearray` (each invalid UTF-8 sequence becomes U+FFFD). Anything else is a
/// `TypeError`.
pub fn text<'a>(obj: &'a Bound<'_, PyAny>, what: &str) -> PyResult<Cow<'a, str>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return match s.to_str() {
            Ok(t) => Ok(Cow::Borrowed(t)),
            Err(_) => lossy(s).map(Cow::Owned),
        };
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(String::from_utf8_lossy(b.as_bytes()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Cow::Owned(
            String::from_utf8_lossy(&b.to_vec()).into_owned(),
        ));
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be str or bytes, not {}",
        type_name(obj)
    )))
}

/// A string with lone surrogates as UTF-8: the bytes `surrogateescape` decoding
/// stood for, read with each invalid sequence as U+FFFD (as `bytes` are), or, for
/// other surrogates, each lone one as U+FFFD.
fn lossy(s: &Bound<'_, PyString>) -> PyResult<String> {
    if let Ok(b) = s.call_method1("encode", ("utf-8", "surrogateescape")) {
        if let Ok(b) = b.cast::<PyBytes>() {
            return Ok(String::from_utf8_lossy(b.as_bytes()).into_owned());
        }
    }
    let b = s.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
    let units = b
        .cast::<PyBytes>()?
        .as_bytes()
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect::<Vec<u16>>();
    Ok(char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect())
}

/// A `ValueError` for a value that is not JSON.
pub fn not_json(e: NotJson, what: &str) -> PyErr {
    PyValueError::new_err(e.describe(what))
}
