//! The shape of an answer: a coarse, task-agnostic description (a number, one token,
//! one line of items, several lines, prose) used to tell a `bad_format` failure (the
//! extracted answer does not look like an answer of this kind at all) from a `wrong`
//! one, and as a report feature that does not reveal the task.
//!
//! This is a documented heuristic, never used for scoring (the family's verifier
//! decides the score): an extracted answer is *compatible* with the gold answer when
//! - it is not empty;
//! - a gold answer that is one number is answered by one number (`17`, `-3`, `2.5`,
//!   `3/4`, `1,000`, `+7`);
//! - a gold answer on one line is answered on one line, or on a few lines when the
//!   gold is a list (a list may be written one item per line);
//! - it has at most `2 * gold_words + 3` words (a sentence where a short answer is
//!   expected is not the answer's shape); a word is a whitespace-separated token with at
//!   least one letter or digit, so spacing around symbols (`A -> B`, `x = 3`) does not
//!   count.

use serde::{Deserialize, Serialize};

/// A coarse shape class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerShape {
    Empty,
    /// One number: integer, decimal or fraction, optionally signed, `1,000` allowed.
    Number,
    /// One token without spaces that is not a number (`knight`, `D`, `true`).
    Token,
    /// One line with several items or words.
    Line,
    /// Several lines (grids, boards, one item per line).
    Lines,
}

impl AnswerShape {
    pub fn of(text: &str) -> AnswerShape {
        let t = text.trim();
        if t.is_empty() {
            return AnswerShape::Empty;
        }
        if t.lines().filter(|l| !l.trim().is_empty()).count() > 1 {
            return AnswerShape::Lines;
        }
        if is_number(t) {
            return AnswerShape::Number;
        }
        if t.split_whitespace().count() == 1 {
            return AnswerShape::Token;
        }
        AnswerShape::Line
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AnswerShape::Empty => "empty",
            AnswerShape::Number => "number",
            AnswerShape::Token => "token",
            AnswerShape::Line => "line",
            AnswerShape::Lines => "lines",
        }
    }
}

fn is_number(t: &str) -> bool {
    let t = t.strip_prefix(['+', '-']).unwrap_or(t);
    let (num, den) = match t.split_once('/') {
        Some((a, b)) => (a, Some(b)),
        None => (t, None),
    };
    let decimal = |s: &str| {
        let s = s.trim();
        let (int, frac) = match s.split_once('.') {
            Some((i, f)) => (i, Some(f)),
            None => (s, None),
        };
        let int_ok = int.is_empty() && frac.is_some()
            || (!int.is_empty()
                && int.chars().all(|c| c.is_ascii_digit() || c == ',')
                && int.starts_with(|c: char| c.is_ascii_digit()));
        let frac_ok = frac.is_none_or(|f| !f.is_empty() && f.chars().all(|c| c.is_ascii_digit()));
        int_ok && frac_ok
    };
    decimal(num) && den.is_none_or(decimal)
}

/// Whether `extracted` has a shape compatible with `gold` (see the module doc).
pub fn compatible(gold: &str, extracted: &str) -> bool {
    let g = AnswerShape::of(gold);
    let e = AnswerShape::of(extracted);
    if e == AnswerShape::Empty {
        return false;
    }
    let words = |s: &str| {
        s.split_whitespace()
            .filter(|w| w.chars().any(char::is_alphanumeric))
            .count()
    };
    if words(extracted) > 2 * words(gold) + 3 {
        return false;
    }
    match g {
        AnswerShape::Number => e == AnswerShape::Number,
        AnswerShape::Token => matches!(
            e,
            AnswerShape::Number | AnswerShape::Token | AnswerShape::Line
        ),
        AnswerShape::Line => e != AnswerShape::Lines || looks_like_list(gold),
        AnswerShape::Lines | AnswerShape::Empty => true,
    }
}

fn looks_like_list(line: &str) -> bool {
    line.contains(',') || line.split_whitespace().count() > 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(AnswerShape::of(" 17 "), AnswerShape::Number);
        assert_eq!(AnswerShape::of("-2.50"), AnswerShape::Number);
        assert_eq!(AnswerShape::of("3/4"), AnswerShape::Number);
        assert_eq!(AnswerShape::of("1,000"), AnswerShape::Number);
        assert_eq!(AnswerShape::of(".5"), AnswerShape::Number);
        assert_eq!(AnswerShape::of("1."), AnswerShape::Token);
        assert_eq!(AnswerShape::of("knight"), AnswerShape::Token);
        assert_eq!(AnswerShape::of("1, 2, 3"), AnswerShape::Line);
        assert_eq!(AnswerShape::of("0 1\n1 0"), AnswerShape::Lines);
        assert_eq!(AnswerShape::of("  "), AnswerShape::Empty);
    }

    #[test]
    fn compatibility() {
        assert!(compatible("17", "18"));
        assert!(!compatible("17", "The answer is 17"));
        assert!(!compatible("17", "seventeen"));
        assert!(compatible("knight", "knave"));
        assert!(compatible("sister-in-law", "sister in law"));
        assert!(compatible("1, 2, 3", "[1, 2, 4]"));
        assert!(compatible("1, 2, 3", "1\n2\n3"));
        assert!(!compatible(
            "yes",
            "I think that the premises do not imply it at all"
        ));
        assert!(compatible("0 1\n1 0", "[[0, 1], [1, 0]]"));
        assert!(!compatible("5", ""));
        // Symbols between spaces are not words: seven moves written `K -> M` one per
        // line have the shape of seven comma-separated `C->J` (a wrong answer, not a
        // badly formatted one); a sentence is still too long.
        let moves = "C->J, C->O, J->O, C->J, O->C, O->J, C->J";
        assert!(compatible(moves, &["K -> M"; 7].join("\n")));
        assert!(!compatible(
            moves,
            "First we move the smallest disk from the left peg to the middle one, then \
             the next disk from the left peg to the right one, and then again the smallest \
             from the middle to the right, which frees the left peg for the largest disk"
        ));
        assert!(!compatible("yes", "I think - that is - not at all"));
    }
}
