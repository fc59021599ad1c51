//! Exact decimal numbers: reading an answer such as `-2.50` or `.5` without rounding
//! (`Decimal::parse`, compared with a fraction by cross-multiplication) and writing a
//! value in canonical form (`decimal_text`). Used by `decimal_arithmetic` and
//! `pool_matrix`.

/// An exact decimal `mantissa / 10^scale`, e.g. `-2.50` is `(-250, 2)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    pub mantissa: i128,
    pub scale: u32,
}

/// Most fractional digits a parsed decimal may have (keeps `10^scale` inside `i128`
/// when multiplied by values the families produce).
const MAX_SCALE: u32 = 18;

impl Decimal {
    /// Parse `-12.5`, `+3`, `0.250`, `.5`: an optional sign, ASCII digits, and optionally
    /// a point followed by at least one digit (digits before the point may be omitted;
    /// `7.` is rejected). No exponent, no thousands separators, no spaces inside.
    pub fn parse(s: &str) -> Option<Decimal> {
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
    pub fn equals_fraction(self, num: i128, den: i128) -> bool {
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
pub fn decimal_text(mantissa: i128, scale: u32) -> String {
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
}
