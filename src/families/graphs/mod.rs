//! Graph and grid search: islands, paths, colourings, schedules.

use super::Family;

pub static FAMILIES: &[&dyn Family] = &[];
