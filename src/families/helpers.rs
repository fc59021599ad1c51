//! Small helpers of the families added for issue 8 (second batch): bounded metadata
//! readers, cached level parameters, metadata assembly, ASCII-only case folding, exact
//! decimals, grid text and an answer instruction that shows no tagged example.
//!
//! These overlap the per-category `common.rs` files on purpose: they are the subset
//! the new families need, kept in one place so that porting them onto the shared
//! `families::kit` is one mechanical change.

use std::fmt::{Display, Write};
use std::sync::OnceLock;

use serde_json::Value;

use super::{Family, Instance, Level};

/// Largest list length or grid side accepted from metadata; bigger values mean a
/// corrupted instance (the generators stay far below it).
pub(crate) const META_LIMIT: usize = 4096;

/// The documented parameters of `level`, built once per family and cloned afterwards.
pub(crate) fn cached_params(
    cache: &'static OnceLock<[Value; 5]>,
    family: &dyn Family,
    level: Level,
) -> Value {
    cache.get_or_init(|| {
        std::array::from_fn(|i| family.level_params(Level::new(i as u8 + 1).expect("level 1..=5")))
    })[level.idx()]
    .clone()
}

/// Instance metadata: `params` first, then the given fields in order.
pub(crate) fn metadata<const N: usize>(params: Value, fields: [(&str, Value); N]) -> Value {
    let mut m = serde_json::Map::with_capacity(N + 1);
    m.insert("params".to_string(), params);
    for (k, v) in fields {
        m.insert(k.to_string(), v);
    }
    Value::Object(m)
}

pub(crate) fn meta_u64(inst: &Instance, key: &str) -> Option<u64> {
    inst.metadata.get(key)?.as_u64()
}

/// A `usize` field no larger than `max`.
pub(crate) fn meta_usize(inst: &Instance, key: &str, max: usize) -> Option<usize> {
    let v = usize::try_from(meta_u64(inst, key)?).ok()?;
    (v <= max).then_some(v)
}

pub(crate) fn meta_str<'a>(inst: &'a Instance, key: &str) -> Option<&'a str> {
    inst.metadata.get(key)?.as_str()
}

/// A non-empty array of strings of at most [`META_LIMIT`] items.
pub(crate) fn meta_strs<'a>(inst: &'a Instance, key: &str) -> Option<Vec<&'a str>> {
    let arr = inst.metadata.get(key)?.as_array()?;
    if arr.is_empty() || arr.len() > META_LIMIT {
        return None;
    }
    arr.iter().map(Value::as_str).collect()
}

/// A non-empty array of integers of at most [`META_LIMIT`] items.
pub(crate) fn meta_i64s(v: &Value) -> Option<Vec<i64>> {
    let arr = v.as_array()?;
    if arr.is_empty() || arr.len() > META_LIMIT {
        return None;
    }
    arr.iter().map(Value::as_i64).collect()
}

/// A rectangular, non-empty grid of integers with sides of at most `max_side`.
pub(crate) fn meta_i64_grid(v: &Value, max_side: usize) -> Option<Vec<Vec<i64>>> {
    let rows = v.as_array()?;
    if rows.is_empty() || rows.len() > max_side {
        return None;
    }
    let out: Vec<Vec<i64>> = rows.iter().map(meta_i64s).collect::<Option<_>>()?;
    let w = out[0].len();
    (w <= max_side && out.iter().all(|r| r.len() == w)).then_some(out)
}

/// Equal after ASCII case folding only: `K` matches `k`, but U+212A KELVIN SIGN or a
/// Cyrillic lookalike matches nothing but itself.
pub(crate) fn eq_ascii_ci(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// Grid as text: one row per line, cells separated by single spaces.
pub(crate) fn grid_text<T: Display>(rows: &[Vec<T>]) -> String {
    let mut s = String::with_capacity(rows.len() * rows.first().map_or(0, Vec::len) * 3);
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        for (j, v) in row.iter().enumerate() {
            if j > 0 {
                s.push(' ');
            }
            let _ = write!(s, "{v}");
        }
    }
    s
}

/// The final answer instruction for answers drawn from a small closed set (weekday
/// names, yes/no): it names the allowed values instead of showing one inside tags, so
/// that no question contains a complete tagged answer.
pub(crate) fn instruction_without_example(format: &str) -> String {
    format!("Give your final answer {format} inside <answer></answer> tags.")
}

/// An exact decimal `mantissa / 10^scale`, e.g. `-2.50` is `(-250, 2)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Decimal {
    pub mantissa: i128,
    pub scale: u32,
}

/// Most fractional digits a parsed decimal may have (keeps `10^scale` inside `i128`
/// when multiplied by values the families produce).
const MAX_SCALE: u32 = 18;

impl Decimal {
    /// Parse `-12.5`, `+3`, `0.250`, `.5`, `7.`-free decimals: an optional sign, digits,
    /// and optionally a point followed by at least one digit (digits before the point
    /// may be omitted). No exponent, no thousands separators, no spaces inside.
    pub(crate) fn parse(s: &str) -> Option<Decimal> {
        let t = s.trim();
        let (neg, body) = match t.as_bytes().first()? {
            b'-' => (true, &t[1..]),
            b'+' => (false, &t[1..]),
            _ => (false, t),
        };
        let (ip, fp) = match body.split_once('.') {
            Some((i, f)) => {
                if f.is_empty() {
                    return None;
                }
                (i, f)
            }
            None => (body, ""),
        };
        if ip.is_empty() && fp.is_empty() {
            return None;
        }
        if !ip.bytes().all(|b| b.is_ascii_digit()) || !fp.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        // Trailing zeros of the fraction carry no value; dropping them keeps the scale
        // bounded for answers like `2.5000000000000000000000`.
        let fp = fp.trim_end_matches('0');
        let ip = ip.trim_start_matches('0');
        if fp.len() as u32 > MAX_SCALE || ip.len() > 20 {
            return None;
        }
        let mut m: i128 = 0;
        for b in ip.bytes().chain(fp.bytes()) {
            m = m.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
        }
        Some(Decimal {
            mantissa: if neg { -m } else { m },
            scale: fp.len() as u32,
        })
    }

    /// Does this decimal equal the fraction `num / den` (`den > 0`)?
    pub(crate) fn equals_fraction(self, num: i128, den: i128) -> bool {
        // mantissa / 10^scale == num / den  <=>  mantissa * den == num * 10^scale
        let Some(p) = 10i128.checked_pow(self.scale) else {
            return false;
        };
        match (self.mantissa.checked_mul(den), num.checked_mul(p)) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        }
    }
}

/// Canonical text of `mantissa / 10^scale`: no trailing fractional zeros, no point for
/// whole numbers, `-` only for negative values, e.g. `(-250, 2)` -> `-2.5`.
pub(crate) fn decimal_text(mantissa: i128, scale: u32) -> String {
    let neg = mantissa < 0;
    let digits = mantissa.unsigned_abs().to_string();
    let scale = scale as usize;
    let (ip, fp) = if digits.len() > scale {
        digits.split_at(digits.len() - scale)
    } else {
        ("0", digits.as_str())
    };
    let pad = scale.saturating_sub(fp.len());
    let mut frac = "0".repeat(pad);
    frac.push_str(fp);
    let frac = frac.trim_end_matches('0');
    let mut s = String::new();
    if neg && mantissa != 0 {
        s.push('-');
    }
    s.push_str(ip);
    if !frac.is_empty() {
        s.push('.');
        s.push_str(frac);
    }
    s
}

/// Split an answer into lines of cells: non-empty lines, cells separated by whitespace
/// and/or commas, one optional `[...]` around each line, or the whole answer written
/// `[[a, b], [c, d]]`. `None` when empty or larger than [`META_LIMIT`] rows/cells.
pub(crate) fn answer_rows(s: &str) -> Option<Vec<Vec<&str>>> {
    let t = s.trim();
    let rows: Vec<&str> = if t.starts_with("[[") && t.ends_with("]]") {
        t[1..t.len() - 1].split("],").collect()
    } else {
        t.lines().filter(|l| !l.trim().is_empty()).collect()
    };
    if rows.is_empty() || rows.len() > META_LIMIT {
        return None;
    }
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let r = r.trim();
        let r = r.strip_prefix('[').unwrap_or(r);
        let r = r.strip_suffix(']').unwrap_or(r);
        let cells: Vec<&str> = r
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|p| !p.is_empty())
            .collect();
        if cells.is_empty() || cells.len() > META_LIMIT {
            return None;
        }
        out.push(cells);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_parse_exactly() {
        let d = |s| Decimal::parse(s);
        assert_eq!(
            d("-2.50"),
            Some(Decimal {
                mantissa: -25,
                scale: 1
            })
        );
        assert_eq!(
            d(".5"),
            Some(Decimal {
                mantissa: 5,
                scale: 1
            })
        );
        assert_eq!(
            d("+007"),
            Some(Decimal {
                mantissa: 7,
                scale: 0
            })
        );
        for bad in [
            "", "-", ".", "7.", "1e3", "1,5", "1.2.3", "- 1", "0x1", "١", "1 2", "½",
        ] {
            assert_eq!(d(bad), None, "{bad:?}");
        }
        assert!(d("2.5").unwrap().equals_fraction(5, 2));
        assert!(d("-0.25").unwrap().equals_fraction(-1, 4));
        assert!(!d("0.33").unwrap().equals_fraction(1, 3));
        assert!(d("0").unwrap().equals_fraction(0, 7));
        assert_eq!(d("99999999999999999999999"), None);
    }

    #[test]
    fn decimal_text_is_canonical() {
        assert_eq!(decimal_text(-250, 2), "-2.5");
        assert_eq!(decimal_text(5, 3), "0.005");
        assert_eq!(decimal_text(0, 4), "0");
        assert_eq!(decimal_text(1200, 2), "12");
        assert_eq!(decimal_text(-7, 0), "-7");
    }

    #[test]
    fn ascii_folding_only() {
        assert!(eq_ascii_ci("Koo", "kOO"));
        assert!(!eq_ascii_ci("\u{212a}oo", "koo"));
    }

    #[test]
    fn rows_of_cells() {
        assert_eq!(
            answer_rows("1 2\n 3,4 \n\n").unwrap(),
            vec![vec!["1", "2"], vec!["3", "4"]]
        );
        assert_eq!(
            answer_rows("[[1, 2], [3, 4]]").unwrap(),
            vec![vec!["1", "2"], vec!["3", "4"]]
        );
        assert_eq!(answer_rows("  "), None);
    }
}
