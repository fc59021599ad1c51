//! Cognition and sequences: pattern induction and attention.

mod arc_1d;
mod count_bits;
mod facts;
mod needle_haystack;
mod number_sequence;
mod rectangle_count;

use super::Family;

pub static FAMILIES: &[&dyn Family] = &[
    &count_bits::CountBits,
    &needle_haystack::NeedleHaystack,
    &number_sequence::NumberSequence,
    &rectangle_count::RectangleCount,
    &arc_1d::Arc1d,
];
