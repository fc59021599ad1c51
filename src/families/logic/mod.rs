//! Deduction: kinship, syllogisms, propositional logic.

use super::Family;

pub static FAMILIES: &[&dyn Family] = &[];
