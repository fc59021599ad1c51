//! Helpers shared by the algorithmic and graph families: defensive metadata readers,
//! grid formatting and comparison, word lookup by length, and answer examples that are
//! never the gold answer.

use std::sync::OnceLock;

use rand::Rng;
use rand_chacha::ChaCha20Rng;

use super::words::WORDS;
use crate::families::{Family, Instance, Level, parse};

/// Largest grid side or list length accepted from metadata; anything bigger is treated
/// as a corrupted instance (the generators stay far below it).
pub(crate) const META_LIMIT: usize = 4096;

/// Largest number of grid cells accepted from metadata (bounds verifier memory).
pub(crate) const META_CELLS: usize = 1 << 16;

pub(crate) fn meta_str<'a>(inst: &'a Instance, key: &str) -> Option<&'a str> {
    inst.metadata.get(key)?.as_str()
}

pub(crate) fn meta_u64(inst: &Instance, key: &str) -> Option<u64> {
    inst.metadata.get(key)?.as_u64()
}

/// A rectangular, non-empty grid of integers stored as an array of arrays.
pub(crate) fn meta_int_grid(inst: &Instance, key: &str) -> Option<Vec<Vec<i64>>> {
    let rows = inst.metadata.get(key)?.as_array()?;
    if rows.is_empty() || rows.len() > META_LIMIT {
        return None;
    }
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let cells = r.as_array()?;
        if cells.is_empty() || cells.len() > META_LIMIT {
            return None;
        }
        out.push(
            cells
                .iter()
                .map(|c| c.as_i64())
                .collect::<Option<Vec<_>>>()?,
        );
    }
    let w = out[0].len();
    (out.len() * w <= META_CELLS && out.iter().all(|r| r.len() == w)).then_some(out)
}

/// A rectangular, non-empty grid stored as an array of equally long strings.
pub(crate) fn meta_char_grid(inst: &Instance, key: &str) -> Option<Vec<Vec<u8>>> {
    let rows = inst.metadata.get(key)?.as_array()?;
    if rows.is_empty() || rows.len() > META_LIMIT {
        return None;
    }
    let out: Vec<Vec<u8>> = rows
        .iter()
        .map(|r| r.as_str().map(|s| s.as_bytes().to_vec()))
        .collect::<Option<_>>()?;
    let w = out[0].len();
    (w > 0 && out.len() * w <= META_CELLS && out.iter().all(|r| r.len() == w)).then_some(out)
}

/// A family's `level_params` as JSON, built once per family and level and cloned
/// afterwards (cloning a small `serde_json` map is cheaper than building one).
pub(crate) fn cached_params(
    cell: &'static OnceLock<Vec<serde_json::Value>>,
    family: &dyn Family,
    level: Level,
) -> serde_json::Value {
    cell.get_or_init(|| Level::all().map(|l| family.level_params(l)).collect())[level.idx()].clone()
}

/// Integer grid as text: one row per line, cells separated by single spaces.
pub(crate) fn grid_text(grid: &[Vec<i64>]) -> String {
    let mut s = String::with_capacity(grid.len() * grid.first().map_or(0, |r| r.len()) * 3);
    for (i, row) in grid.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        for (j, v) in row.iter().enumerate() {
            if j > 0 {
                s.push(' ');
            }
            push_int(&mut s, *v);
        }
    }
    s
}

/// Append the decimal form of `v` without a temporary allocation.
pub(crate) fn push_int(s: &mut String, v: i64) {
    if (0..10).contains(&v) {
        s.push(char::from(b'0' + v as u8));
    } else {
        use std::fmt::Write;
        let _ = write!(s, "{v}");
    }
}

/// Does `answer` parse (see [`parse::int_grid`]) to exactly `want`?
pub(crate) fn grid_answer_is(answer: &str, want: &[Vec<i64>]) -> bool {
    let Some(g) = parse::int_grid(answer) else {
        return false;
    };
    g.len() == want.len()
        && g.iter()
            .zip(want)
            .all(|(a, b)| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| *x == i128::from(*y)))
}

/// Does `answer` parse (see [`parse::int_list`]) to exactly `want`?
pub(crate) fn list_answer_is(answer: &str, want: &[i64]) -> bool {
    match parse::int_list(answer) {
        Some(v) => v.len() == want.len() && v.iter().zip(want).all(|(a, b)| *a == i128::from(*b)),
        None => false,
    }
}

/// The format example for a count whose largest possible value is `max_possible`:
/// one more than that, so it is never the gold answer, and since it depends only on
/// what the question shows, it says nothing about the gold either (an example chosen
/// by looking at the gold, such as "7 unless the answer is 7", would leak it to anyone
/// who sees many questions, a proposer in particular).
pub(crate) fn count_example(max_possible: usize) -> String {
    (max_possible + 1).to_string()
}

/// Words sorted by (length, text), built once.
fn by_length() -> &'static [&'static str] {
    static SORTED: OnceLock<Vec<&'static str>> = OnceLock::new();
    SORTED.get_or_init(|| {
        let mut v = WORDS.to_vec();
        v.sort_by_key(|w| (w.len(), *w));
        v
    })
}

/// Every word whose length lies in `min..=max` (a contiguous slice of a static table).
pub(crate) fn words_with_len(min: usize, max: usize) -> &'static [&'static str] {
    let all = by_length();
    let lo = all.partition_point(|w| w.len() < min);
    let hi = all.partition_point(|w| w.len() <= max);
    &all[lo..hi.max(lo)]
}

/// Length of the longest word in the list (a unit test keeps it honest).
pub(crate) const MAX_WORD: usize = 14;

/// `k` distinct indices of `0..n` in random order (partial Fisher-Yates).
pub(crate) fn distinct_indices(rng: &mut ChaCha20Rng, n: usize, k: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    let k = k.min(n);
    for i in 0..k {
        let j = rng.random_range(i..n);
        idx.swap(i, j);
    }
    idx.truncate(k);
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_by_length_are_in_range() {
        let w = words_with_len(5, 6);
        assert!(w.len() > 50);
        assert!(w.iter().all(|x| (5..=6).contains(&x.len())));
        assert!(words_with_len(12, 99).len() >= 20);
        assert!(words_with_len(40, 50).is_empty());
        assert_eq!(WORDS.iter().map(|w| w.len()).max(), Some(MAX_WORD));
    }

    #[test]
    fn grids_compare_exactly() {
        let g = vec![vec![1, 2], vec![3, 4]];
        assert_eq!(grid_text(&g), "1 2\n3 4");
        assert!(grid_answer_is(" [[1, 2], [3, 4]] ", &g));
        assert!(!grid_answer_is("1 2\n3 4\n5 6", &g));
        assert!(!grid_answer_is("1 2 3\n4", &g));
        assert!(list_answer_is("[1, 2, 3]", &[1, 2, 3]));
        assert!(!list_answer_is("1 2", &[1, 2, 3]));
    }
}
