//! String and array manipulation: sorting, counting, ciphers, matrices.

use super::Family;

pub static FAMILIES: &[&dyn Family] = &[];
