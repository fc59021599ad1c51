//! Games and puzzles solved by search or simulation.

use super::Family;

pub static FAMILIES: &[&dyn Family] = &[];
