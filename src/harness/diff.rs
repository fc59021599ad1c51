//! A readable line diff between two harnesses: of their canonical forms, so
//! formatting differences never show, in unified style (`-` old, `+` new, ` ` kept,
//! with up to `context` unchanged lines around each change and `@@` hunk headers).
//! Longest-common-subsequence over lines; harnesses are small.

use super::Harness;

/// One line of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line<'a> {
    Same(&'a str),
    Removed(&'a str),
    Added(&'a str),
}

/// Line diff of two texts.
pub fn lines<'a>(a: &'a str, b: &'a str) -> Vec<Line<'a>> {
    let x: Vec<&str> = a.lines().collect();
    let y: Vec<&str> = b.lines().collect();
    let (n, m) = (x.len(), y.len());
    // lcs[i][j] = LCS length of x[i..] and y[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if x[i] == y[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(n + m);
    while i < n || j < m {
        if i < n && j < m && x[i] == y[j] {
            out.push(Line::Same(x[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push(Line::Removed(x[i]));
            i += 1;
        } else {
            out.push(Line::Added(y[j]));
            j += 1;
        }
    }
    out
}

/// A unified diff of two texts with `context` lines around changes; empty when equal.
pub fn unified(a: &str, b: &str, label_a: &str, label_b: &str, context: usize) -> String {
    let d = lines(a, b);
    if d.iter().all(|l| matches!(l, Line::Same(_))) {
        return String::new();
    }
    let mut out = format!("--- {label_a}\n+++ {label_b}\n");
    // Line numbers (1-based) in a and b at each diff position.
    let mut pos = Vec::with_capacity(d.len());
    let (mut ia, mut ib) = (1usize, 1usize);
    for l in &d {
        pos.push((ia, ib));
        match l {
            Line::Same(_) => {
                ia += 1;
                ib += 1;
            }
            Line::Removed(_) => ia += 1,
            Line::Added(_) => ib += 1,
        }
    }
    let changed: Vec<usize> = d
        .iter()
        .enumerate()
        .filter(|(_, l)| !matches!(l, Line::Same(_)))
        .map(|(i, _)| i)
        .collect();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(context);
        let mut end = changed[k];
        while k + 1 < changed.len() && changed[k + 1] <= end + 2 * context + 1 {
            k += 1;
            end = changed[k];
        }
        let end = (end + context + 1).min(d.len());
        let count = |f: fn(&Line) -> bool| d[start..end].iter().filter(|l| f(l)).count();
        let na = count(|l| !matches!(l, Line::Added(_)));
        let nb = count(|l| !matches!(l, Line::Removed(_)));
        out.push_str(&format!(
            "@@ -{},{na} +{},{nb} @@\n",
            pos[start].0, pos[start].1
        ));
        for l in &d[start..end] {
            match l {
                Line::Same(s) => out.push_str(&format!(" {s}\n")),
                Line::Removed(s) => out.push_str(&format!("-{s}\n")),
                Line::Added(s) => out.push_str(&format!("+{s}\n")),
            }
        }
        k += 1;
    }
    out
}

/// The diff of two harnesses' canonical forms (a kind change shows as a whole-text
/// replacement with a header saying so).
pub fn harnesses(a: &Harness, b: &Harness, label_a: &str, label_b: &str) -> String {
    let mut out = String::new();
    if a.kind() != b.kind() {
        out.push_str(&format!(
            "# kind: {} -> {}\n",
            a.kind().as_str(),
            b.kind().as_str()
        ));
    }
    out.push_str(&unified(
        &a.canonical(),
        &b.canonical(),
        label_a,
        label_b,
        3,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unified_diff_by_hand() {
        let a = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let b = "a\nb\nC\nd\ne\nf\ng\nh\ni\n";
        let d = unified(a, b, "old", "new", 1);
        assert_eq!(
            d,
            "--- old\n+++ new\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n@@ -8,1 +8,2 @@\n h\n+i\n"
        );
        assert_eq!(unified(a, a, "x", "y", 3), "");
    }

    #[test]
    fn lcs_keeps_common_lines() {
        let d = lines("x\ny\nz", "y\nz\nw");
        assert_eq!(
            d,
            vec![
                Line::Removed("x"),
                Line::Same("y"),
                Line::Same("z"),
                Line::Added("w")
            ]
        );
    }
}
