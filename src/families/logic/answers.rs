//! Answer vocabularies of the logic families: answers of the form "one choice from a
//! fixed vocabulary" (yes/no, an option letter, kinship words), read with ASCII case
//! folding only.

/// ASCII lower-case (no Unicode case folding, so lookalikes such as U+212A KELVIN SIGN
/// stay distinct), hyphens read as spaces, whitespace collapsed: `Father-In-Law ` and
/// `father in law` compare equal.
pub fn norm_words(s: &str) -> String {
    s.to_ascii_lowercase()
        .replace('-', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A yes/no answer (case ignored): `Some(true)` for `yes`, `Some(false)` for `no`.
pub fn yes_no(s: &str) -> Option<bool> {
    match norm_words(s).as_str() {
        "yes" => Some(true),
        "no" => Some(false),
        _ => None,
    }
}

/// A multiple-choice letter `A`..: `B`, `b`, `(B)` or `B)` (the ways options are
/// labelled); `None` for anything else, including an unbalanced `(B`, `B.` or `[B]`.
pub fn choice_letter(s: &str, options: usize) -> Option<usize> {
    let t = s.trim();
    let t = match t.strip_suffix(')') {
        Some(inner) => inner.strip_prefix('(').unwrap_or(inner),
        None => t,
    }
    .trim();
    let mut it = t.chars();
    let c = it.next()?.to_ascii_uppercase();
    if it.next().is_some() || !c.is_ascii_uppercase() {
        return None;
    }
    let i = (c as u8 - b'A') as usize;
    (i < options).then_some(i)
}
