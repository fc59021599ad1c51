//! String and array manipulation: sorting, counting, ciphers, matrices.

mod binary_matrix;
mod caesar_cipher;
mod isomorphic_strings;
mod letter_counting;
mod number_sorting;
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
];
