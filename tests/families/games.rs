//! Independent re-solvers for this category's families.

use crate::Resolver;

pub fn resolvers() -> Vec<Resolver> {
    vec![]
}
