//! Instance metadata: bounded, typed readers for verifiers and a builder for
//! generators.
//!
//! A verifier reads the structured input it checks an answer against from the stored
//! instance, which may come from a file that was truncated, edited by hand or written
//! by someone else. Every reader here returns `None` for anything but the expected
//! shape — a missing key, `null`, the wrong JSON type, a negative or fractional number
//! where a count is expected, a ragged grid — and bounds every size it reads
//! ([`LIST_LIMIT`], [`CELL_LIMIT`]), so a verifier built on them can neither panic nor
//! allocate without limit. The generators stay far below the limits.
//!
//! Reserved keys: [`PARAMS`] (the level parameters), `variant` (the question template
//! of a non-canonical instance, `kit::variant::KEY`) and [`ANSWER_FORMAT`] (the answer
//! format), all written by the instance stream. A family never writes them itself.

use serde_json::{Map, Value};

use crate::families::Instance;

/// Longest list, grid side or string accepted from metadata.
pub const LIST_LIMIT: usize = 4096;

/// Most grid cells (or list items of an edge list) accepted from metadata.
pub const CELL_LIMIT: usize = 1 << 16;

/// Reserved key: the level parameters, `Family::level_params(level)`.
pub const PARAMS: &str = "params";

/// Reserved key: the answer format, `{"phrase": ..., "example": ...}` (see
/// `kit::question::AnswerFormat`).
pub const ANSWER_FORMAT: &str = "answer_format";

/// A family's metadata fields built directly into a map, in the order given (the
/// `json!` macro would re-serialise every nested `Value` it is given). The instance
/// stream puts `params` in front of them.
pub fn fields<const N: usize>(items: [(&str, Value); N]) -> Map<String, Value> {
    let mut m = Map::with_capacity(N + 2);
    for (k, v) in items {
        debug_assert!(
            k != PARAMS && k != ANSWER_FORMAT && k != super::variant::KEY,
            "reserved key {k}"
        );
        m.insert(k.to_string(), v);
    }
    m
}

/// The fields of a JSON object built with `json!` (for nested metadata); anything but
/// an object gives no fields.
pub fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Pairs (edges, prerequisites, board positions) as stored: `[[a, b], ...]`, the shape
/// [`Meta::pairs`] reads back.
pub fn pairs_value(pairs: &[(usize, usize)]) -> Value {
    Value::Array(
        pairs
            .iter()
            .map(|&(a, b)| Value::Array(vec![Value::from(a), Value::from(b)]))
            .collect(),
    )
}

/// Typed, bounded read access to one instance's metadata.
#[derive(Clone, Copy, Debug)]
pub struct Meta<'a>(&'a Value);

impl<'a> Meta<'a> {
    /// The metadata of `instance`.
    pub fn of(instance: &'a Instance) -> Self {
        Meta(&instance.metadata)
    }

    /// A metadata value (normally an object).
    pub fn new(value: &'a Value) -> Self {
        Meta(value)
    }

    /// The raw value under `key`.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.0.get(key)
    }

    /// A non-negative integer.
    pub fn u64(&self, key: &str) -> Option<u64> {
        self.get(key)?.as_u64()
    }

    /// An integer.
    pub fn i64(&self, key: &str) -> Option<i64> {
        self.get(key)?.as_i64()
    }

    /// A non-negative integer no larger than `max` (guards against absurd sizes).
    pub fn usize(&self, key: &str, max: usize) -> Option<usize> {
        let v = usize::try_from(self.u64(key)?).ok()?;
        (v <= max).then_some(v)
    }

    /// A string of at most [`CELL_LIMIT`] bytes.
    pub fn str(&self, key: &str) -> Option<&'a str> {
        let s = self.get(key)?.as_str()?;
        (s.len() <= CELL_LIMIT).then_some(s)
    }

    /// An array of at most [`LIST_LIMIT`] items.
    pub fn array(&self, key: &str) -> Option<&'a [Value]> {
        let a = self.get(key)?.as_array()?;
        (a.len() <= LIST_LIMIT).then_some(a.as_slice())
    }

    /// A list of strings (each at most [`LIST_LIMIT`] bytes).
    pub fn strs(&self, key: &str) -> Option<Vec<&'a str>> {
        self.array(key)?
            .iter()
            .map(|v| v.as_str().filter(|s| s.len() <= LIST_LIMIT))
            .collect()
    }

    /// A list of integers.
    pub fn i64s(&self, key: &str) -> Option<Vec<i64>> {
        self.array(key)?.iter().map(Value::as_i64).collect()
    }

    /// A rectangular, non-empty grid of integers stored as an array of arrays.
    pub fn int_grid(&self, key: &str) -> Option<Vec<Vec<i64>>> {
        let rows = self.array(key)?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let cells = r.as_array()?;
            if cells.len() > LIST_LIMIT {
                return None;
            }
            out.push(
                cells
                    .iter()
                    .map(Value::as_i64)
                    .collect::<Option<Vec<_>>>()?,
            );
        }
        rectangular(out)
    }

    /// A rectangular, non-empty grid of small non-negative integers, each `<= max`.
    pub fn digit_grid(&self, key: &str, max: u64) -> Option<Vec<Vec<u8>>> {
        let max = max.min(u64::from(u8::MAX));
        let rows = self.array(key)?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let cells = r.as_array()?;
            if cells.len() > LIST_LIMIT {
                return None;
            }
            let row: Option<Vec<u8>> = cells
                .iter()
                .map(|x| x.as_u64().filter(|&v| v <= max).map(|v| v as u8))
                .collect();
            out.push(row?);
        }
        rectangular(out)
    }

    /// A rectangular, non-empty grid stored as an array of equally long strings.
    pub fn char_grid(&self, key: &str) -> Option<Vec<Vec<u8>>> {
        let rows = self.strs(key)?;
        rectangular(rows.iter().map(|r| r.as_bytes().to_vec()).collect())
    }

    /// A list of pairs `[[a, b], ...]` of indices below `n` (edges, prerequisites,
    /// board positions); at most [`CELL_LIMIT`] pairs.
    pub fn pairs(&self, key: &str, n: usize) -> Option<Vec<(usize, usize)>> {
        let arr = self.get(key)?.as_array()?;
        if arr.len() > CELL_LIMIT {
            return None;
        }
        arr.iter()
            .map(|e| match e.as_array()?.as_slice() {
                [a, b] => {
                    let (a, b) = (a.as_u64()?, b.as_u64()?);
                    (a < n as u64 && b < n as u64).then_some((a as usize, b as usize))
                }
                _ => None,
            })
            .collect()
    }

    /// Which of `options` the string under `key` is (e.g. `ascending`/`descending`).
    pub fn choice(&self, key: &str, options: &[&str]) -> Option<usize> {
        let s = self.str(key)?;
        options.iter().position(|o| *o == s)
    }
}

/// `Some(grid)` when it is non-empty, its rows are non-empty and equally long, and it
/// has at most [`CELL_LIMIT`] cells.
fn rectangular<T>(grid: Vec<Vec<T>>) -> Option<Vec<Vec<T>>> {
    let w = grid.first()?.len();
    (w > 0 && grid.len() * w <= CELL_LIMIT && grid.iter().all(|r| r.len() == w)).then_some(grid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn readers_take_only_the_expected_shape() {
        let v = json!({
            "n": 5, "neg": -3, "frac": 1.5, "s": "abc", "numstr": "5",
            "g": [[1, 2], [3, 4]], "ragged": [[1, 2], [3]], "empty": [], "rows": ["ab", "cd"],
            "bad_rows": ["ab", "c"], "pairs": [[0, 1], [4, 2]], "bad_pairs": [[0, 1, 2]],
            "digits": [[0, 1], [1, 0]], "order": "ascending", "words": ["a", 7],
        });
        let m = Meta::new(&v);
        assert_eq!(m.u64("n"), Some(5));
        assert_eq!(m.u64("neg"), None);
        assert_eq!(m.i64("neg"), Some(-3));
        assert_eq!(m.u64("frac"), None);
        assert_eq!(m.u64("numstr"), None);
        assert_eq!(m.u64("missing"), None);
        assert_eq!(m.usize("n", 4), None);
        assert_eq!(m.usize("n", 5), Some(5));
        assert_eq!(m.str("s"), Some("abc"));
        assert_eq!(m.str("n"), None);
        assert_eq!(m.int_grid("g"), Some(vec![vec![1, 2], vec![3, 4]]));
        assert_eq!(m.int_grid("ragged"), None);
        assert_eq!(m.int_grid("empty"), None);
        assert_eq!(
            m.char_grid("rows"),
            Some(vec![b"ab".to_vec(), b"cd".to_vec()])
        );
        assert_eq!(m.char_grid("bad_rows"), None);
        assert_eq!(m.pairs("pairs", 5), Some(vec![(0, 1), (4, 2)]));
        assert_eq!(m.pairs("pairs", 4), None);
        assert_eq!(m.pairs("bad_pairs", 5), None);
        assert_eq!(m.pairs("empty", 5), Some(vec![]));
        assert_eq!(
            m.digit_grid("digits", 1),
            Some(vec![vec![0, 1], vec![1, 0]])
        );
        assert_eq!(m.digit_grid("g", 1), None);
        assert_eq!(m.choice("order", &["ascending", "descending"]), Some(0));
        assert_eq!(m.choice("s", &["ascending", "descending"]), None);
        assert_eq!(m.strs("words"), None);
        assert_eq!(m.strs("rows"), Some(vec!["ab", "cd"]));
    }

    #[test]
    fn sizes_are_bounded() {
        let long = Value::from(vec![1; LIST_LIMIT + 1]);
        let wide = json!({ "l": long, "g": [vec![0; LIST_LIMIT + 1]] });
        let m = Meta::new(&wide);
        assert_eq!(m.i64s("l"), None);
        assert_eq!(m.int_grid("g"), None);
        let big: Vec<Vec<i64>> = vec![vec![0; 300]; 300];
        let v = json!({ "g": big });
        assert_eq!(
            Meta::new(&v).int_grid("g"),
            None,
            "90000 cells > CELL_LIMIT"
        );
    }

    #[test]
    fn pairs_round_trip() {
        let v = json!({ "p": pairs_value(&[(0, 1), (3, 2)]) });
        assert_eq!(v["p"], json!([[0, 1], [3, 2]]));
        assert_eq!(Meta::new(&v).pairs("p", 4), Some(vec![(0, 1), (3, 2)]));
    }

    #[test]
    fn fields_keep_their_order() {
        let m = fields([("b", json!(1)), ("a", json!(2))]);
        assert_eq!(m.keys().collect::<Vec<_>>(), ["b", "a"]);
    }
}
