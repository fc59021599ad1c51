//! Tolerant-but-strict parsers for extracted answers.
//!
//! The tolerance policy, shared by every family and documented in the README:
//! - surrounding whitespace is ignored, and runs of internal whitespace are treated as
//!   one separator;
//! - integers may carry a leading `+`, and thousands separators written as `1,000`
//!   (groups of exactly three digits after the first comma) — but inside a *list* a
//!   comma is always a separator;
//! - lists may be wrapped in one pair of `[...]` and separated by commas, whitespace or
//!   both;
//! - case is ignored only where the family says case carries no meaning.
//!
//! Anything else — trailing words, a second number, an empty answer — makes the parser
//! return `None`, and the verifier scores 0. No function here panics.

/// Runs of whitespace collapsed to one space, trimmed.
pub fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Compare two strings after collapsing whitespace, ignoring ASCII and Unicode case.
pub fn eq_ci(a: &str, b: &str) -> bool {
    collapse_ws(a).to_lowercase() == collapse_ws(b).to_lowercase()
}

/// Compare two strings after collapsing whitespace (case-sensitive).
pub fn eq_ws(a: &str, b: &str) -> bool {
    collapse_ws(a) == collapse_ws(b)
}

fn plain_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// One integer, e.g. `42`, ` -7 `, `+3`, `1,000,000`. Rejects `1,00`, `4 2`, `42.`,
/// `42 apples`, hexadecimal, and values that overflow `i128`.
pub fn int(s: &str) -> Option<i128> {
    let t = s.trim();
    let (neg, body) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let digits: String = if body.contains(',') {
        let mut groups = body.split(',');
        let first = groups.next()?;
        if !plain_digits(first) || first.len() > 3 {
            return None;
        }
        let mut d = first.to_string();
        for g in groups {
            if g.len() != 3 || !plain_digits(g) {
                return None;
            }
            d.push_str(g);
        }
        d
    } else {
        if !plain_digits(body) {
            return None;
        }
        body.to_string()
    };
    let v: i128 = digits.parse().ok()?;
    Some(if neg { -v } else { v })
}

/// Split a list answer into items: strips one pair of surrounding brackets, splits on
/// commas and whitespace, drops empty pieces. `None` for an empty list.
pub fn list_items(s: &str) -> Option<Vec<&str>> {
    let mut t = s.trim();
    if let Some(inner) = t.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        t = inner;
    }
    let items: Vec<&str> = t
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .collect();
    if items.is_empty() { None } else { Some(items) }
}

/// A list of integers, e.g. `1, 2, 3`, `[1 2 3]`, `-1,4`. Every item must be an integer.
pub fn int_list(s: &str) -> Option<Vec<i128>> {
    list_items(s)?.into_iter().map(int).collect()
}

/// A fraction `p/q` (or a plain integer `p`, read as `p/1`). Whitespace around the
/// slash is allowed; the denominator must be positive... or negative, which is
/// normalised onto the numerator. Returns the pair as written (not reduced).
pub fn fraction(s: &str) -> Option<(i128, i128)> {
    let t = s.trim();
    match t.split_once('/') {
        None => Some((int(t)?, 1)),
        Some((p, q)) => {
            let (p, q) = (int(p)?, int(q)?);
            if q == 0 {
                return None;
            }
            if q < 0 {
                Some((p.checked_neg()?, q.checked_neg()?))
            } else {
                Some((p, q))
            }
        }
    }
}

/// A grid: one row per non-empty line, cells separated by whitespace and/or commas.
/// Also accepts a bracketed form `[[1, 2], [3, 4]]` (rows split on `],`).
pub fn grid(s: &str) -> Option<Vec<Vec<String>>> {
    let t = s.trim();
    let rows: Vec<&str> = if t.starts_with("[[") && t.ends_with("]]") {
        t[1..t.len() - 1].split("],").collect()
    } else {
        t.lines().filter(|l| !l.trim().is_empty()).collect()
    };
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let items = list_items(r.trim().trim_end_matches(']').trim_start_matches('['))?;
        out.push(items.into_iter().map(str::to_string).collect());
    }
    if out.is_empty() { None } else { Some(out) }
}

/// A grid of integers (see [`grid`]).
pub fn int_grid(s: &str) -> Option<Vec<Vec<i128>>> {
    grid(s)?
        .into_iter()
        .map(|r| r.iter().map(|c| int(c)).collect::<Option<Vec<_>>>())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(int(" 42 "), Some(42));
        assert_eq!(int("+42"), Some(42));
        assert_eq!(int("-1,000"), Some(-1000));
        assert_eq!(int("12,345,678"), Some(12_345_678));
        for bad in [
            "",
            "-",
            "1,00",
            "1,0000",
            ",100",
            "4 2",
            "42.",
            "42 apples",
            "0x10",
            "1e3",
            "--1",
            "1234,567",
        ] {
            assert_eq!(int(bad), None, "{bad:?}");
        }
        assert_eq!(int("999999999999999999999999999999999999999999"), None);
    }

    #[test]
    fn lists_and_fractions() {
        assert_eq!(int_list("[1, 2,3 4]"), Some(vec![1, 2, 3, 4]));
        assert_eq!(int_list("1, two"), None);
        assert_eq!(int_list(" [ ] "), None);
        assert_eq!(fraction("3 / -4"), Some((-3, 4)));
        assert_eq!(fraction("5"), Some((5, 1)));
        assert_eq!(fraction("1/0"), None);
        assert_eq!(fraction("1/2 or 2/4"), None);
    }

    #[test]
    fn grids() {
        assert_eq!(int_grid("1 2\n3 4\n"), Some(vec![vec![1, 2], vec![3, 4]]));
        assert_eq!(
            int_grid("[[1, 2], [3, 4]]"),
            Some(vec![vec![1, 2], vec![3, 4]])
        );
        assert_eq!(int_grid("1 2\nx 4"), None);
    }
}
