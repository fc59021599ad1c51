//! Grids, lists and edge lists as question text, and grid- or list-shaped answers
//! read against a wanted value.
//!
//! Writing: [`grid`] renders rows of cells separated by single spaces (one row per
//! line), [`join_and`] a short list as `a, b and c`, [`edges`] an edge list as
//! `0-1, 2-3`. Reading (through the shared parsers in `families::parse`, so the
//! documented tolerance is the same everywhere): [`cells`] splits an answer into a grid
//! of exactly the wanted size, [`int_grid_is`] and [`int_list_is`] compare an answer
//! with a wanted grid or list of integers.

use std::fmt::Write;

use crate::families::parse;

/// One cell of a rendered grid.
pub trait Cell {
    fn push_to(&self, out: &mut String);
}

impl Cell for i64 {
    fn push_to(&self, out: &mut String) {
        if (0..10).contains(self) {
            out.push(char::from(b'0' + *self as u8));
        } else {
            let _ = write!(out, "{self}");
        }
    }
}

impl Cell for u8 {
    fn push_to(&self, out: &mut String) {
        i64::from(*self).push_to(out);
    }
}

impl Cell for str {
    fn push_to(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl Cell for String {
    fn push_to(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl Cell for char {
    fn push_to(&self, out: &mut String) {
        out.push(*self);
    }
}

impl<T: Cell + ?Sized> Cell for &T {
    fn push_to(&self, out: &mut String) {
        (**self).push_to(out);
    }
}

/// Rows of cells as text: cells separated by single spaces, rows by newlines.
pub fn grid<R, C>(rows: impl IntoIterator<Item = R>) -> String
where
    R: IntoIterator<Item = C>,
    C: Cell,
{
    let mut s = String::new();
    for (i, row) in rows.into_iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        for (j, c) in row.into_iter().enumerate() {
            if j > 0 {
                s.push(' ');
            }
            c.push_to(&mut s);
        }
    }
    s
}

/// A list as `a, b and c` (`a` alone, `a and b` for two).
pub fn join_and<T: std::fmt::Display>(items: &[T]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => {
            let mut s = String::new();
            for (i, x) in init.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                let _ = write!(s, "{x}");
            }
            let _ = write!(s, " and {last}");
            s
        }
    }
}

/// An edge list as `0-1, 0-2, 3-4` (with `sep` between the two ends).
pub fn edges(pairs: &[(usize, usize)], sep: &str) -> String {
    let mut s = String::with_capacity(pairs.len() * 6);
    for (i, (u, v)) in pairs.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{u}{sep}{v}");
    }
    s
}

/// Split an answer into grid rows of cells (see `parse::grid` for the accepted forms).
/// A row written as one token of exactly `width` characters (`_Q__`, `0110`) is split
/// into characters. `None` unless the grid has exactly `height` rows of `width` cells.
pub fn cells(answer: &str, height: usize, width: usize) -> Option<Vec<Vec<String>>> {
    let rows = parse::grid(answer)?;
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

/// Does `answer` read (see `parse::int_grid`) as exactly `want`?
pub fn int_grid_is(answer: &str, want: &[Vec<i64>]) -> bool {
    let Some(g) = parse::int_grid(answer) else {
        return false;
    };
    g.len() == want.len()
        && g.iter()
            .zip(want)
            .all(|(a, b)| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| *x == i128::from(*y)))
}

/// Does `answer` read (see `parse::int_list`) as exactly `want`?
pub fn int_list_is(answer: &str, want: &[i64]) -> bool {
    match parse::int_list(answer) {
        Some(v) => v.len() == want.len() && v.iter().zip(want).all(|(a, b)| *a == i128::from(*b)),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_render_and_compare_exactly() {
        let g = vec![vec![1i64, 2], vec![3, 40]];
        assert_eq!(grid(&g), "1 2\n3 40");
        assert_eq!(grid([["Q", "_"], ["_", "Q"]]), "Q _\n_ Q");
        assert_eq!(grid([[0u8, 1]]), "0 1");
        assert_eq!(grid(vec![vec![-5i64]]), "-5");
        assert!(int_grid_is(" [[1, 2], [3, 40]] ", &g));
        assert!(!int_grid_is("1 2\n3 40\n5 6", &g));
        assert!(!int_grid_is("1 2 3\n40", &g));
        assert!(int_list_is("[1, 2, 3]", &[1, 2, 3]));
        assert!(!int_list_is("1 2", &[1, 2, 3]));
    }

    #[test]
    fn lists_and_cells() {
        assert_eq!(join_and::<u64>(&[]), "");
        assert_eq!(join_and(&[4]), "4");
        assert_eq!(join_and(&[4, 5]), "4 and 5");
        assert_eq!(join_and(&[4, 5, 6]), "4, 5 and 6");
        assert_eq!(edges(&[(0, 1), (2, 3)], "-"), "0-1, 2-3");
        assert_eq!(
            cells("_Q\nQ_", 2, 2),
            Some(vec![
                vec!["_".into(), "Q".into()],
                vec!["Q".into(), "_".into()]
            ])
        );
        assert_eq!(cells("0 1\n1 0", 2, 3), None);
        assert_eq!(cells("0 1", 2, 2), None);
    }
}
