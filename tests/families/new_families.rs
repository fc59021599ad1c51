//! Checks of the families added for issue 8 as a group (their re-solvers live in the
//! category modules; echoed questions, format examples and lookalike characters are
//! tested for the whole registry in `formats.rs`): all are registered, and level 1
//! stays small enough for a 0.5B executor.

use harness_rl::families::{self, Level};

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
