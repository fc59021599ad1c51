//! Helpers shared by the games families: defensive reads of instance metadata and the
//! text form of character grids.

use serde_json::Value;

/// `metadata[key]` as a `u64`, or `None` when missing or of the wrong type.
pub fn meta_u64(meta: &Value, key: &str) -> Option<u64> {
    meta.get(key)?.as_u64()
}

/// `metadata[key]` as a `usize` no larger than `max` (guards against absurd sizes in a
/// corrupted instance).
pub fn meta_usize(meta: &Value, key: &str, max: usize) -> Option<usize> {
    let v = usize::try_from(meta_u64(meta, key)?).ok()?;
    (v <= max).then_some(v)
}

/// `metadata[key]` as a rectangular matrix of small unsigned integers, every entry `<= max`.
pub fn meta_matrix(meta: &Value, key: &str, max: u64) -> Option<Vec<Vec<u8>>> {
    let rows = meta.get(key)?.as_array()?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let row: Option<Vec<u8>> = r
            .as_array()?
            .iter()
            .map(|x| x.as_u64().filter(|&v| v <= max).map(|v| v as u8))
            .collect();
        out.push(row?);
    }
    let w = out.first()?.len();
    (w > 0 && out.iter().all(|r| r.len() == w)).then_some(out)
}

/// Split an answer into grid rows of cells. Rows are non-empty lines (or `[[..],[..]]`,
/// see `parse::grid`); within a row cells are separated by whitespace and/or commas. A
/// row written as one token of exactly `width` characters (`_Q__`) is split into
/// characters. Returns `None` unless the grid has exactly `height` rows of `width`
/// cells.
pub fn cells(answer: &str, height: usize, width: usize) -> Option<Vec<Vec<String>>> {
    let rows = crate::families::parse::grid(answer)?;
    if rows.len() != height {
        return None;
    }
    let mut out = Vec::with_capacity(height);
    for r in rows {
        if r.len() == width {
            out.push(r);
        } else if r.len() == 1 && width > 1 && r[0].chars().count() == width {
            out.push(r[0].chars().map(|c| c.to_string()).collect());
        } else {
            return None;
        }
    }
    Some(out)
}

/// Rows joined with single spaces between cells and newlines between rows.
pub fn render<T: std::fmt::Display>(
    rows: impl IntoIterator<Item = impl IntoIterator<Item = T>>,
) -> String {
    let mut s = String::new();
    for (i, r) in rows.into_iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        for (j, c) in r.into_iter().enumerate() {
            if j > 0 {
                s.push(' ');
            }
            s.push_str(&c.to_string());
        }
    }
    s
}
