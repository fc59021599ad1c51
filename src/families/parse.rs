//! Tolerant-but-strict parsers for extracted answers.
//!
//! The tolerance policy, shared by every family and documented in docs/FAMILIES.md:
//! - whitespace is any Unicode `White_Space` character (space, tab, newline, no-break
//!   space, ...): surrounding whitespace is ignored, and runs of internal whitespace are
//!   treated as one separator; zero-width characters are *not* whitespace;
//! - integers may carry a leading `+` (or `-`), leading zeros (`014` is 14), and
//!   thousands separators written as `1,000` (groups of exactly three digits after the
//!   first comma) — but inside a *list* a comma is always a separator;
//! - digits are ASCII `0-9` only (full-width or other scripts' digits score 0);
//! - lists may be wrapped in one pair of `[...]` and separated by commas, whitespace or
//!   both;
//! - case is ignored only where the family says case carries no meaning, and then only
//!   ASCII case ([`eq_ci`]): no Unicode case folding, so a lookalike such as the KELVIN
//!   SIGN (U+212A) never stands in for `k`.
//!
//! Anything else — trailing words, a second number, an empty answer — makes the parser
//! return `None`, and the verifier scores 0. No function here panics.

/// Runs of whitespace collapsed to one space, trimmed.
pub fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Compare two strings after collapsing whitespace, ignoring ASCII case only (a
/// non-ASCII character must match exactly, so Unicode lookalikes never fold onto
/// ASCII letters).
pub fn eq_ci(a: &str, b: &str) -> bool {
    let mut x = a.split_whitespace();
    let mut y = b.split_whitespace();
    loop {
        match (x.next(), y.next()) {
            (None, None) => return true,
            (Some(p), Some(q)) if p.eq_ignore_ascii_case(q) => {}
            _ => return false,
        }
    }
}

/// Compare two strings after collapsing whitespace (case-sensitive).
pub fn eq_ws(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
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
/// slash is allowed. The numerator is an integer as [`int`] reads it (so it may carry
/// a sign); the denominator is unsigned digits (thousands separators allowed) and not
/// zero: `+5/4` and `-5/4` parse, `5/-4`, `5/+4` and `-5/-4` do not. Returns the pair
/// as written (not reduced).
pub fn fraction(s: &str) -> Option<(i128, i128)> {
    let t = s.trim();
    match t.split_once('/') {
        None => Some((int(t)?, 1)),
        Some((p, q)) => {
            let q = q.trim();
            if !q.starts_with(|c: char| c.is_ascii_digit()) {
                return None;
            }
            let (p, q) = (int(p)?, int(q)?);
            (q != 0).then_some((p, q))
        }
    }
}

/// A grid: one row per non-empty line, cells separated by whitespace and/or commas,
/// each row optionally wrapped in one pair of `[...]`; or the nested form
/// `[[1, 2], [3, 4]]` (on one line or several; the commas between rows may be left
/// out, as numpy prints `[[1 2]\n [3 4]]`). `None` for an empty grid, an empty
/// row, or unbalanced brackets.
pub fn grid(s: &str) -> Option<Vec<Vec<String>>> {
    let t = s.trim();
    let rows: Vec<&str> = match t.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        // The nested form: the outer brackets hold bracketed rows separated by commas.
        Some(inner) if inner.trim_start().starts_with('[') => {
            let mut rows = Vec::new();
            let mut rest = inner.trim();
            while !rest.is_empty() {
                let body = rest.strip_prefix('[')?;
                let end = body.find(']')?;
                rows.push(&body[..end]);
                rest = body[end + 1..].trim_start();
                if let Some(r) = rest.strip_prefix(',') {
                    rest = r.trim_start();
                    if rest.is_empty() {
                        return None;
                    }
                }
            }
            rows
        }
        _ => t.lines().filter(|l| !l.trim().is_empty()).collect(),
    };
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        // `list_items` removes at most one pair of brackets around the row.
        let items = list_items(r)?;
        if items.iter().any(|c| c.contains(['[', ']'])) {
            return None;
        }
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
        // Leading zeros are tolerated (decimal, never octal).
        assert_eq!(int("014"), Some(14));
        assert_eq!(int("-007"), Some(-7));
        // Digits of other scripts are not digits.
        for bad in ["\u{ff11}4", "\u{0661}", "4\u{200b}2"] {
            assert_eq!(int(bad), None, "{bad:?}");
        }
        // A no-break space around the number is whitespace.
        assert_eq!(int("\u{a0}42\u{a0}"), Some(42));
    }

    #[test]
    fn case_folding_is_ascii_only() {
        assert!(eq_ci("Hello  World", " hello world"));
        assert!(!eq_ci("koobeton", "\u{212a}oobeton"));
        assert!(!eq_ci("sun", "\u{17f}un"));
        assert!(!eq_ci("ice", "\u{130}ce"));
        assert!(!eq_ci("ice", "\u{131}ce"));
        assert!(!eq_ci("a b", "ab"));
        assert!(!eq_ci("a", "a b"));
        assert!(eq_ws("a  b\n", "a b"));
        assert!(!eq_ws("A b", "a b"));
    }

    #[test]
    fn lists_and_fractions() {
        assert_eq!(int_list("[1, 2,3 4]"), Some(vec![1, 2, 3, 4]));
        assert_eq!(int_list("1, two"), None);
        assert_eq!(int_list(" [ ] "), None);
        assert_eq!(fraction("-3 / 4"), Some((-3, 4)));
        assert_eq!(fraction("+5/4"), Some((5, 4)));
        assert_eq!(fraction("5"), Some((5, 1)));
        assert_eq!(fraction("1,000/3"), Some((1000, 3)));
        for bad in [
            "1/0",
            "1/2 or 2/4",
            "3 / -4",
            "5/+4",
            "-5/-4",
            "5/",
            "/4",
            "5//4",
        ] {
            assert_eq!(fraction(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn grids() {
        assert_eq!(int_grid("1 2\n3 4\n"), Some(vec![vec![1, 2], vec![3, 4]]));
        assert_eq!(
            int_grid("[[1, 2], [3, 4]]"),
            Some(vec![vec![1, 2], vec![3, 4]])
        );
        assert_eq!(int_grid("1 2\nx 4"), None);
        let g = Some(vec![vec![1, 2], vec![3, 4]]);
        for ok in [
            "1, 2\n3, 4",
            "1,2\n3,4",
            "[1, 2]\n[3, 4]",
            "[[1,2],[3,4]]",
            "[[1, 2],\n [3, 4]]",
            "[[1 2]\n [3 4]]",
            "\u{a0}1 2\n3 4\u{a0}",
        ] {
            assert_eq!(int_grid(ok), g, "{ok:?}");
        }
        for bad in [
            "[1, 2]]\n[3, 4]",
            "[[1, 2]], [3, 4]]",
            "[[1, 2], [3, 4],]",
            "[[1, 2], [3, 4]",
            "1 2 3 4",
            "[1, 2\n3, 4]",
            "[[1, 2], []]",
        ] {
            let got = int_grid(bad);
            assert!(got.is_none() || got != g, "{bad:?} -> {got:?}");
        }
    }
}
