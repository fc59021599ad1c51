//! Cognition and sequences: pattern induction and attention.

use super::Family;

pub static FAMILIES: &[&dyn Family] = &[];
