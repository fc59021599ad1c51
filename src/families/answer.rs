//! Answer extraction and the scoring entry point shared by every family.
//!
//! Strict mode (the default): the answer is the text between the last `</answer>` and
//! the last `<answer>` before it (see [`extract_answer`] for the exact pairing rule;
//! tag names are matched ASCII-case-insensitively, the content is trimmed). No pair, no
//! credit. Lenient mode is an explicit opt-in for
//! diagnosing formatting failures: without a tag it falls back to the last non-empty
//! line of the response; results are labelled with the mode that produced them.

use serde::{Deserialize, Serialize};

use super::{Family, Instance};

const OPEN: &str = "<answer>";
const CLOSE: &str = "</answer>";

/// How the final answer is taken out of a model response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoreMode {
    /// Only the last `<answer>...</answer>` pair counts.
    #[default]
    Strict,
    /// Like strict, but a response with no complete tag pair falls back to its last
    /// non-empty line. Reported as lenient wherever it is used.
    Lenient,
}

/// The result of scoring one response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scored {
    pub score: f64,
    /// The extracted answer, or `None` when nothing could be extracted.
    pub extracted: Option<String>,
}

/// Find `needle` in `hay` ignoring ASCII case, searching backwards from `end`.
fn rfind_ci(hay: &str, needle: &str, end: usize) -> Option<usize> {
    let h = hay.as_bytes();
    let n = needle.as_bytes();
    if n.len() > end {
        return None;
    }
    (0..=end - n.len())
        .rev()
        .find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

/// The trimmed content of the last complete `<answer>...</answer>` pair.
///
/// The pairing rule: the answer is the text between the **last** `</answer>` and the
/// **last `<answer>` before it**. So `<answer>1</answer> ... <answer>2</answer>` gives
/// `2`, a trailing unclosed `<answer>3` is ignored, and a stray opening tag before the
/// pair is ignored too (`<answer><answer>X</answer>` gives `X`). If the text between
/// the two tags contains another `</answer>` — a closing tag with no opening tag of its
/// own, as in `<answer>X</answer></answer>` — the response has no answer (`None`),
/// because it cannot be told which closing tag ends the answer. Tag names are matched
/// ASCII-case-insensitively; the content is trimmed of whitespace (any Unicode
/// `White_Space`, so a no-break space around the answer is ignored; zero-width
/// characters are not whitespace).
pub fn extract_answer(response: &str) -> Option<String> {
    let close = rfind_ci(response, CLOSE, response.len())?;
    let open = rfind_ci(response, OPEN, close)?;
    // Both tags are ASCII, so these offsets are char boundaries.
    let inner = &response[open + OPEN.len()..close];
    if rfind_ci(inner, CLOSE, inner.len()).is_some() {
        return None;
    }
    Some(inner.trim().to_string())
}

fn extract(response: &str, mode: ScoreMode) -> Option<String> {
    match (extract_answer(response), mode) {
        (Some(a), _) => Some(a),
        (None, ScoreMode::Strict) => None,
        (None, ScoreMode::Lenient) => response
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_string),
    }
}

/// Score a full model response against an instance.
///
/// An empty extracted answer scores 0 without consulting the family. The family's
/// verifier result is clamped into `0.0..=1.0` (NaN becomes 0).
pub fn score_response(
    family: &dyn Family,
    instance: &Instance,
    response: &str,
    mode: ScoreMode,
) -> Scored {
    let extracted = extract(response, mode);
    let score = match extracted.as_deref() {
        None | Some("") => 0.0,
        Some(a) => {
            let s = family.verify(instance, a);
            if s.is_nan() { 0.0 } else { s.clamp(0.0, 1.0) }
        }
    };
    Scored { score, extracted }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_complete_tag_wins() {
        assert_eq!(
            extract_answer("<answer>1</answer> then <answer> 2 </answer>").as_deref(),
            Some("2")
        );
        assert_eq!(
            extract_answer("<answer>1</answer> <answer>3").as_deref(),
            Some("1")
        );
        assert_eq!(extract_answer("<ANSWER>x</Answer>").as_deref(), Some("x"));
        assert_eq!(extract_answer("no tags"), None);
        assert_eq!(extract_answer("</answer><answer>"), None);
        assert_eq!(extract_answer("é<answer>ü</answer>é").as_deref(), Some("ü"));
    }

    #[test]
    fn pairing_rule() {
        // A stray opening tag before the pair is ignored.
        assert_eq!(
            extract_answer("<answer><answer>X</answer>").as_deref(),
            Some("X")
        );
        assert_eq!(
            extract_answer("<answer>a <answer> X </answer>").as_deref(),
            Some("X")
        );
        // A closing tag without its own opening tag: no answer at all.
        assert_eq!(extract_answer("<answer>X</answer></answer>"), None);
        assert_eq!(extract_answer("<answer>X</ANSWER> and </answer>"), None);
        // ... but an earlier complete pair does not rescue it either.
        assert_eq!(
            extract_answer("<answer>1</answer> <answer>2</answer></answer>"),
            None
        );
        // An empty pair is an (empty) answer.
        assert_eq!(extract_answer("<answer></answer>").as_deref(), Some(""));
        // No-break spaces around the answer are whitespace; a zero-width space is not.
        assert_eq!(
            extract_answer("<answer>\u{a0}42\u{a0}</answer>").as_deref(),
            Some("42")
        );
        assert_eq!(
            extract_answer("<answer>\u{200b}42</answer>").as_deref(),
            Some("\u{200b}42")
        );
        // Lookalike tags are not tags.
        assert_eq!(
            extract_answer("<answer>1</answer><аnswer>2</аnswer>").as_deref(),
            Some("1")
        );
    }

    #[test]
    fn lenient_falls_back_to_last_line_only_when_asked() {
        assert_eq!(extract("a\n 42 \n\n", ScoreMode::Strict), None);
        assert_eq!(
            extract("a\n 42 \n\n", ScoreMode::Lenient).as_deref(),
            Some("42")
        );
    }
}
