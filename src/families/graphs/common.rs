//! Helpers for the graph families: defensive readers for vertex counts and edge lists
//! stored in metadata, and edge-list text. Grid helpers are
//! shared with the algorithmic families (`algorithmic::common`).

use crate::families::Instance;

pub(crate) use crate::families::algorithmic::common::{
    META_LIMIT, count_example, meta_char_grid, meta_int_grid, meta_u64,
};

/// Vertex count from metadata key `n`, bounded by [`META_LIMIT`].
pub(crate) fn meta_n(inst: &Instance) -> Option<usize> {
    let n = meta_u64(inst, "n")? as usize;
    (n <= META_LIMIT).then_some(n)
}

/// An edge list `[[u, v], ...]` whose endpoints are all below `n`.
pub(crate) fn meta_edges(inst: &Instance, key: &str, n: usize) -> Option<Vec<(usize, usize)>> {
    let arr = inst.metadata.get(key)?.as_array()?;
    if arr.len() > META_LIMIT * 8 {
        return None;
    }
    arr.iter()
        .map(|e| {
            let e = e.as_array()?;
            let (u, v) = match e.as_slice() {
                [u, v] => (u.as_u64()? as usize, v.as_u64()? as usize),
                _ => return None,
            };
            (u < n && v < n).then_some((u, v))
        })
        .collect()
}

/// `0-1, 0-2, 3-4` style text of an edge list.
pub(crate) fn edges_text(edges: &[(usize, usize)], sep: &str) -> String {
    let mut s = String::with_capacity(edges.len() * 6);
    for (i, (u, v)) in edges.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&u.to_string());
        s.push_str(sep);
        s.push_str(&v.to_string());
    }
    s
}
