//! `cryptarithm`: find the digit behind every letter of a letter addition.
//!
//! Different letters stand for different digits, the same letter always for the same
//! digit, and no number starts with 0. The generator draws the addends, adds them,
//! and replaces each distinct digit by a random letter; at the lower levels the digits
//! of some letters are given. A puzzle may have more than one solution: every
//! assignment that satisfies the rules scores 1 (constraint check, not comparison with
//! the generator's digits).
//!
//! Levels (addends, digits per addend, letters left to find):
//! 1: 2, 2, 2 · 2: 2, 3, 3 · 3: 2, 3..=4, all but 2 · 4: 2, 4, all · 5: 3, 4..=5, all.
//!
//! Gold: the generator's assignment, `A=3, D=7, ...` in letter order. Verifier: pairs
//! `X=d` (or `X: d`) separated by commas, semicolons, newlines or spaces, ASCII case of
//! the letter ignored; exactly the puzzle's letters, each once; digits distinct; leading
//! letters not 0; the given digits kept; and the addition holds. The format example
//! names letters that are not in the puzzle, so it is never accepted.
//! Metadata: `addends`, `sum` (words of capital letters), `given` (letter -> digit).

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha20Rng;
use serde_json::{Map, Value, json};

use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct Cryptarithm;

/// How many letters are left for the solver to find.
#[derive(Clone, Copy)]
enum Hidden {
    Count(usize),
    AllBut(usize),
    All,
}

/// (addends, digits min, digits max, hidden letters) per level.
const PARAMS: [(usize, u32, u32, Hidden); 5] = [
    (2, 2, 2, Hidden::Count(2)),
    (2, 3, 3, Hidden::Count(3)),
    (2, 3, 4, Hidden::AllBut(2)),
    (2, 4, 4, Hidden::All),
    (3, 4, 5, Hidden::All),
];

/// Longest word accepted from metadata.
const MAX_WORD: usize = 12;

fn word_of(n: u64, letter: &[u8; 10]) -> String {
    n.to_string()
        .bytes()
        .map(|d| char::from(letter[usize::from(d - b'0')]))
        .collect()
}

/// Parse `A=1, B=2` into (letter, digit) pairs.
fn parse_assignment(answer: &str) -> Option<Vec<(u8, u8)>> {
    let compact: String = answer.chars().filter(|c| !c.is_whitespace()).collect();
    // Without whitespace, pairs may still be separated by commas or semicolons; pairs
    // written `A=1 B=2` become `A=1B=2`, split below on letter boundaries.
    let mut out = Vec::new();
    for piece in compact.split([',', ';']).filter(|p| !p.is_empty()) {
        let b = piece.as_bytes();
        let mut i = 0;
        while i < b.len() {
            // letter, '=' or ':', digit
            let (l, sep, d) = (*b.get(i)?, *b.get(i + 1)?, *b.get(i + 2)?);
            if !l.is_ascii_alphabetic() || (sep != b'=' && sep != b':') || !d.is_ascii_digit() {
                return None;
            }
            out.push((l.to_ascii_uppercase(), d - b'0'));
            i += 3;
        }
        if out.len() > 26 {
            return None;
        }
    }
    (!out.is_empty()).then_some(out)
}

fn value(word: &str, digit: &[Option<u8>; 26]) -> Option<u64> {
    word.bytes().try_fold(0u64, |acc, l| {
        let d = digit[usize::from(l.checked_sub(b'A')?)]?;
        Some(acc * 10 + u64::from(d))
    })
}

fn is_word(w: &str) -> bool {
    !w.is_empty() && w.len() <= MAX_WORD && w.bytes().all(|b| b.is_ascii_uppercase())
}

impl Family for Cryptarithm {
    fn name(&self) -> &'static str {
        "cryptarithm"
    }
    fn category(&self) -> Category {
        Category::Logic
    }
    fn description(&self) -> &'static str {
        "Find the digit of every letter in a letter addition (any valid assignment scores)"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> Value {
        let (k, lo, hi, hidden) = PARAMS[level.idx()];
        let hidden = match hidden {
            Hidden::Count(n) => json!(n),
            Hidden::AllBut(n) => json!(format!("all but {n}")),
            Hidden::All => json!("all"),
        };
        json!({"addends": k, "digits_min": lo, "digits_max": hi, "letters_to_find": hidden})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (k, lo, hi, hidden) = PARAMS[level.idx()];
        let mut alphabet: Vec<u8> = (b'A'..=b'Z').collect();
        alphabet.shuffle(rng);
        let letter: [u8; 10] = std::array::from_fn(|i| alphabet[i]);
        let (addends, sum) = loop {
            let addends: Vec<u64> = (0..k)
                .map(|_| {
                    let digits = rng.random_range(lo..=hi);
                    rng.random_range(10u64.pow(digits - 1)..10u64.pow(digits))
                })
                .collect();
            let sum: u64 = addends.iter().sum();
            // Enough letters to find: at least as many distinct digits as are hidden.
            let mut used: Vec<u8> = addends
                .iter()
                .chain([&sum])
                .flat_map(|n| n.to_string().into_bytes())
                .collect();
            used.sort_unstable();
            used.dedup();
            let need = match hidden {
                Hidden::Count(n) => n + 1,
                Hidden::AllBut(n) => n + 2,
                Hidden::All => 2,
            };
            if used.len() >= need {
                break (addends, sum);
            }
        };
        let words: Vec<String> = addends.iter().map(|&n| word_of(n, &letter)).collect();
        let sum_word = word_of(sum, &letter);
        let mut digits: Vec<u8> = words
            .iter()
            .chain([&sum_word])
            .flat_map(|w| w.bytes())
            .map(|l| letter.iter().position(|&x| x == l).expect("letter") as u8)
            .collect();
        digits.sort_unstable();
        digits.dedup();
        let mut order = digits.clone();
        order.shuffle(rng);
        let shown = match hidden {
            Hidden::Count(n) => order.len() - n,
            Hidden::AllBut(n) => n,
            Hidden::All => 0,
        };
        let mut given: Vec<(u8, u8)> = order[..shown]
            .iter()
            .map(|&d| (letter[usize::from(d)], d))
            .collect();
        given.sort_unstable();
        let mut gold: Vec<(u8, u8)> = digits
            .iter()
            .map(|&d| (letter[usize::from(d)], d))
            .collect();
        gold.sort_unstable();
        let pairs = |v: &[(u8, u8)]| {
            v.iter()
                .map(|&(l, d)| format!("{}={d}", char::from(l)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let unused: Vec<u8> = (b'A'..=b'Z')
            .filter(|l| !gold.iter().any(|g| g.0 == *l))
            .take(2)
            .collect();
        let example = pairs(&[(unused[0], 1), (unused[1], 2)]);
        let width = sum_word.len() + 2;
        let mut layout = String::new();
        for (i, w) in words.iter().enumerate() {
            let sign = if i + 1 == words.len() { "+ " } else { "  " };
            layout.push_str(&format!("{sign}{w:>0$}\n", width - 2));
        }
        layout.push_str(&"-".repeat(width));
        layout.push('\n');
        layout.push_str(&format!("  {sum_word:>0$}", width - 2));
        let letters: String = gold.iter().map(|&(l, _)| char::from(l)).collect();
        let known = if given.is_empty() {
            String::new()
        } else {
            format!(
                "You are told that {}.\n",
                pairs(&given).replace(", ", " and ")
            )
        };
        Generated {
            body: Body::new()
                .text(
                    "Solve this cryptarithm (letter addition). Each letter stands for one digit \
                     from 0 to 9, different letters stand for different digits, and no number \
                     starts with 0.",
                )
                .data(layout)
                .text(format!(
                    "That is: {} = {sum_word}.\n{known}Give the digit of every letter ({}), as \
                     LETTER=DIGIT pairs separated by commas.",
                    words.join(" + "),
                    letters
                        .chars()
                        .map(String::from)
                        .collect::<Vec<_>>()
                        .join(", "),
                )),
            format: AnswerFormat::with_example("as the letter=digit pairs", example),
            answer: pairs(&gold),
            metadata: fields([
                ("addends", json!(words)),
                ("sum", Value::from(sum_word)),
                (
                    "given",
                    Value::Object(
                        given
                            .iter()
                            .map(|&(l, d)| (char::from(l).to_string(), Value::from(d)))
                            .collect::<Map<_, _>>(),
                    ),
                ),
            ]),
        }
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let meta = Meta::of(instance);
        let (Some(addends), Some(sum)) = (meta.strs("addends"), meta.str("sum")) else {
            return 0.0;
        };
        if addends.len() > 8 || !addends.iter().all(|w| is_word(w)) || !is_word(sum) {
            return 0.0;
        }
        let Some(pairs) = parse_assignment(answer) else {
            return 0.0;
        };
        let mut digit: [Option<u8>; 26] = [None; 26];
        let mut used = [false; 10];
        for (l, d) in pairs {
            let li = usize::from(l - b'A');
            if digit[li].is_some() || used[usize::from(d)] {
                return 0.0;
            }
            digit[li] = Some(d);
            used[usize::from(d)] = true;
        }
        // Exactly the puzzle's letters.
        let mut in_puzzle = [false; 26];
        for w in addends.iter().chain([&sum]) {
            for l in w.bytes() {
                in_puzzle[usize::from(l - b'A')] = true;
            }
        }
        if (0..26).any(|i| in_puzzle[i] != digit[i].is_some()) {
            return 0.0;
        }
        // Leading letters not zero, given digits kept.
        let leading_ok = addends
            .iter()
            .chain([&sum])
            .all(|w| digit[usize::from(w.as_bytes()[0] - b'A')] != Some(0));
        let given_ok = match meta.get("given").and_then(Value::as_object) {
            Some(g) => g.iter().all(|(l, d)| {
                let b = l.as_bytes();
                b.len() == 1
                    && b[0].is_ascii_uppercase()
                    && d.as_u64()
                        .is_some_and(|d| digit[usize::from(b[0] - b'A')] == Some(d as u8))
            }),
            None => false,
        };
        let values: Option<Vec<u64>> = addends.iter().map(|w| value(w, &digit)).collect();
        let sum_ok = match (values, value(sum, &digit)) {
            (Some(v), Some(s)) => v.iter().sum::<u64>() == s,
            _ => false,
        };
        if leading_ok && given_ok && sum_ok {
            1.0
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_parse() {
        assert_eq!(
            parse_assignment("A=1, b = 2;C:3"),
            Some(vec![(b'A', 1), (b'B', 2), (b'C', 3)])
        );
        assert_eq!(
            parse_assignment("A=1 B=2"),
            Some(vec![(b'A', 1), (b'B', 2)])
        );
        for bad in [
            "A=12",
            "A=",
            "=1",
            "A=1, B",
            "AB=1",
            "A=x",
            "A==1",
            "\u{212a}=1",
            "",
        ] {
            assert_eq!(parse_assignment(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn send_more_money() {
        let inst = Instance {
            id: String::new(),
            family: "cryptarithm".into(),
            level: 4,
            seed: 0,
            index: 0,
            question: String::new(),
            answer: String::new(),
            metadata: json!({"addends": ["SEND", "MORE"], "sum": "MONEY", "given": {}}),
        };
        let f = Cryptarithm;
        let good = "S=9, E=5, N=6, D=7, M=1, O=0, R=8, Y=2";
        assert_eq!(f.verify(&inst, good), 1.0);
        assert_eq!(
            f.verify(&inst, "S=9, E=5, N=6, D=7, M=1, O=0, R=8, Y=3"),
            0.0
        );
        assert_eq!(f.verify(&inst, "S=9, E=5, N=6, D=7, M=1, O=0, R=8"), 0.0);
        assert_eq!(f.verify(&inst, &format!("{good}, Z=4")), 0.0);
    }
}
