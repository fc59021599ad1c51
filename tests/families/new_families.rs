//! Checks shared by the families added for issue 8 (their re-solvers live in the
//! category modules): an echoed question and each format example score 0, lookalike
//! characters never pass for ASCII, and level 1 stays small.

use harness_rl::families::{self, Family, Instance, Level, ScoreMode};

/// The families added for issue 8.
pub const NEW: [&str; 17] = [
    "decimal_arithmetic",
    "bitwise_arithmetic",
    "calendar_arithmetic",
    "simple_equations",
    "polynomial_multiplication",
    "letter_jumble",
    "palindrome_generation",
    "group_anagrams",
    "pool_matrix",
    "manipulate_matrix",
    "word_ladder",
    "jugs",
    "sudoku",
    "sokoban",
    "cryptarithm",
    "arc_1d",
    "zebra_puzzles",
];

fn score(f: &dyn Family, inst: &Instance, response: &str) -> f64 {
    families::score_response(f, inst, response, ScoreMode::Strict).score
}

/// Every `<answer>...</answer>` pair shown in the question text.
fn tagged_examples(q: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = q;
    while let Some(i) = rest.find("<answer>") {
        let after = &rest[i + 8..];
        let Some(j) = after.find("</answer>") else {
            break;
        };
        out.push(&after[..j]);
        rest = &after[j + 9..];
    }
    out
}

#[test]
fn all_new_families_are_registered() {
    for name in NEW {
        assert!(families::get(name).is_ok(), "{name} is not registered");
    }
    assert!(
        families::registry().len() >= 50,
        "{}",
        families::registry().len()
    );
}

#[test]
fn echoed_questions_and_format_examples_score_zero() {
    for name in NEW {
        let f = families::get(name).unwrap();
        for level in Level::all() {
            for seed in 0..4 {
                for index in 0..12 {
                    let x = families::generate(f, level, seed, index);
                    assert_eq!(score(f, &x, &x.question), 0.0, "{}: echo", x.id);
                    assert_eq!(
                        score(f, &x, &format!("<answer>{}</answer>", x.question)),
                        0.0,
                        "{}: echo in tags",
                        x.id
                    );
                    for ex in tagged_examples(&x.question) {
                        assert_eq!(f.verify(&x, ex), 0.0, "{}: example {ex:?}", x.id);
                        assert_ne!(ex.trim(), x.answer.trim(), "{}", x.id);
                    }
                    assert!(
                        !x.question
                            .contains(&format!("<answer>{}</answer>", x.answer)),
                        "{}",
                        x.id
                    );
                    assert!(!x.answer_format().is_empty(), "{}", x.id);
                }
            }
        }
    }
}

/// Replace the first character `from` by `to` in `s`, if it occurs.
fn swap_first(s: &str, from: char, to: char) -> Option<String> {
    s.contains(from)
        .then(|| s.replacen(from, &to.to_string(), 1))
}

#[test]
fn lookalike_characters_never_pass_for_ascii() {
    for name in NEW {
        let f = families::get(name).unwrap();
        for level in Level::all() {
            for index in 0..10 {
                let x = families::generate(f, level, 5, index);
                let gold = &x.answer;
                assert_eq!(f.verify(&x, gold), 1.0);
                let variants = [
                    swap_first(gold, 'k', '\u{212a}'),
                    swap_first(gold, 'K', '\u{212a}'),
                    swap_first(gold, 'a', '\u{430}'),
                    swap_first(gold, 'e', '\u{435}'),
                    swap_first(gold, 'o', '\u{43e}'),
                    swap_first(gold, 's', '\u{17f}'),
                    swap_first(gold, '1', '\u{ff11}'),
                    swap_first(gold, '2', '\u{662}'),
                    swap_first(gold, ' ', '\u{200b}'),
                    Some(format!("{gold}\u{200b}")),
                ];
                for v in variants.into_iter().flatten() {
                    assert_eq!(f.verify(&x, &v), 0.0, "{}: {v:?}", x.id);
                }
            }
        }
    }
}

#[test]
fn level_one_questions_are_short() {
    // A 0.5B executor must sometimes solve level 1: keep its questions small.
    for name in NEW {
        let f = families::get(name).unwrap();
        let one = Level::new(1).unwrap();
        let five = Level::new(5).unwrap();
        let len = |l| {
            (0..20)
                .map(|i| families::generate(f, l, 9, i).question.len())
                .sum::<usize>()
        };
        let (l1, l5) = (len(one), len(five));
        assert!(
            l1 / 20 < 1200,
            "{name}: level 1 questions average {} bytes",
            l1 / 20
        );
        assert!(l1 <= l5, "{name}: level 1 is longer than level 5");
    }
}
