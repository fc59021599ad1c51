//! Answer extraction and the scoring entry point shared by every family.
//!
//! Strict mode (the default): the answer is the text between the last `</answer>` and
//! the last `<answer>` before it (see [`extract_answer`] for the exact pairing rule;
//! tag names are matched ASCII-case-insensitively, the content is trimmed). No pair, no
//! credit. Lenient mode is an explicit opt-in for
//! diagnosing formatting failures: without a tag it falls back to the last non-empty
//! line of the response; results are labelled with the mode that produced them. Bare
//! mode is for a text that is already the final answer (a program's output, an answer
//! a caller extracted): a tag pair inside it still wins, otherwise the whole text is
//! the answer, never a line or a substring of it.

use serde::{Deserialize, Serialize};

use serde_json::{Value, json};

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
    /// The text is the final answer: the content of its last tag pair when it has
    /// one, otherwise the whole text, trimmed (a program's output, or an answer the
    /// caller already extracted, as reasoning-gym's `score_answer` receives it).
    Bare,
}

impl ScoreMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ScoreMode::Strict => "strict",
            ScoreMode::Lenient => "lenient",
            ScoreMode::Bare => "bare",
        }
    }
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

/// The final answer of `response` under `mode` (see [`ScoreMode`]); `None` when there
/// is none.
pub fn extract_with(response: &str, mode: ScoreMode) -> Option<String> {
    match (extract_answer(response), mode) {
        (Some(a), _) => Some(a),
        (None, ScoreMode::Strict) => None,
        (None, ScoreMode::Bare) => Some(response.trim().to_string()),
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
    let extracted = extract_with(response, mode);
    let score = match extracted.as_deref() {
        None | Some("") => 0.0,
        Some(a) => {
            let s = family.verify(instance, a);
            if s.is_nan() { 0.0 } else { s.clamp(0.0, 1.0) }
        }
    };
    Scored { score, extracted }
}

/// Score one line of `hrl tasks score` input: an instance as `hrl tasks gen` writes
/// it plus a `response` string. The line comes back with `score` and `extracted` (and
/// `"score_mode": "lenient"` in lenient mode); `Err` says what is wrong with the line
/// (not JSON, not an object, no `response` string, not an instance, an unknown family,
/// a level outside 1..=5).
pub fn score_line(line: &str, mode: ScoreMode) -> Result<Value, String> {
    let mut obj: serde_json::Map<String, Value> = match serde_json::from_str(line) {
        Ok(Value::Object(m)) => m,
        Ok(_) => return Err("not a JSON object".into()),
        Err(e) => return Err(format!("invalid JSON: {e}")),
    };
    let response = match obj.get("response") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err("`response` is not a string".into()),
        None => return Err("missing `response`".into()),
    };
    let scored = super::entry::score_entry(Value::Object(obj.clone()), &response, mode)
        .map_err(|e| e.to_string())?;
    obj.insert("score".into(), json!(scored.score));
    obj.insert("extracted".into(), json!(scored.extracted));
    if mode == ScoreMode::Lenient {
        obj.insert("score_mode".into(), json!("lenient"));
    }
    Ok(Value::Object(obj))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_line_scores_gold_and_names_what_is_wrong() {
        let inst = super::super::InstanceStream::new(
            super::super::get("gcd").unwrap(),
            super::super::Level::new(1).unwrap(),
            3,
        )
        .instance(0);
        let mut v = serde_json::to_value(&inst).unwrap();
        v["response"] = json!(format!("<answer>{}</answer>", inst.answer));
        let out = score_line(&v.to_string(), ScoreMode::Strict).unwrap();
        assert_eq!(out["score"], json!(1.0));
        assert_eq!(out["extracted"], json!(inst.answer));
        assert!(out.get("score_mode").is_none());
        v["response"] = json!(inst.answer.clone());
        let strict = score_line(&v.to_string(), ScoreMode::Strict).unwrap();
        assert_eq!(strict["score"], json!(0.0));
        let lenient = score_line(&v.to_string(), ScoreMode::Lenient).unwrap();
        assert_eq!(
            (lenient["score"].clone(), lenient["score_mode"].clone()),
            (json!(1.0), json!("lenient"))
        );
        let mut bad = v.clone();
        bad["level"] = json!(9);
        assert!(
            score_line(&bad.to_string(), ScoreMode::Strict)
                .unwrap_err()
                .contains("`level`")
        );
        let mut bad = v.clone();
        bad["family"] = json!("no_such_family");
        assert!(score_line(&bad.to_string(), ScoreMode::Strict).is_err());
        let mut bad = v.clone();
        bad["response"] = json!(3);
        assert_eq!(
            score_line(&bad.to_string(), ScoreMode::Strict).unwrap_err(),
            "`response` is not a string"
        );
        assert_eq!(
            score_line("[1]", ScoreMode::Strict).unwrap_err(),
            "not a JSON object"
        );
        assert!(
            score_line("{", ScoreMode::Strict)
                .unwrap_err()
                .starts_with("invalid JSON")
        );
    }

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
        assert_eq!(extract_with("a\n 42 \n\n", ScoreMode::Strict), None);
        assert_eq!(
            extract_with("a\n 42 \n\n", ScoreMode::Lenient).as_deref(),
            Some("42")
        );
    }

    #[test]
    fn bare_takes_the_whole_text_unless_it_has_a_tag_pair() {
        assert_eq!(
            extract_with(" 42 \n", ScoreMode::Bare).as_deref(),
            Some("42")
        );
        assert_eq!(
            extract_with("a\n 42 \n", ScoreMode::Bare).as_deref(),
            Some("a\n 42")
        );
        assert_eq!(
            extract_with("so <answer>7</answer>", ScoreMode::Bare).as_deref(),
            Some("7")
        );
        assert_eq!(extract_with("", ScoreMode::Bare).as_deref(), Some(""));
    }
}
