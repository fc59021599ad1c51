//! String and array manipulation: sorting, counting, ciphers, matrices.

mod binary_matrix;
mod caesar_cipher;
mod group_anagrams;
mod isomorphic_strings;
mod letter_counting;
mod letter_jumble;
mod manipulate_matrix;
mod number_sorting;
mod palindrome_generation;
mod pool_matrix;
mod rotate_matrix;
mod spell_backward;
mod spiral_matrix;
mod word_sorting;

use super::Family;

pub static FAMILIES: &[&dyn Family] = &[
    &binary_matrix::BinaryMatrix,
    &caesar_cipher::CaesarCipher,
    &isomorphic_strings::IsomorphicStrings,
    &letter_counting::LetterCounting,
    &number_sorting::NumberSorting,
    &rotate_matrix::RotateMatrix,
    &spell_backward::SpellBackward,
    &spiral_matrix::SpiralMatrix,
    &word_sorting::WordSorting,
    &letter_jumble::LetterJumble,
    &palindrome_generation::PalindromeGeneration,
    &group_anagrams::GroupAnagrams,
    &pool_matrix::PoolMatrix,
    &manipulate_matrix::ManipulateMatrix,
];
