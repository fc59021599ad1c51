//! Deduction: kinship, syllogisms, propositional logic.

mod circuit_logic;
mod common;
mod cryptarithm;
mod family_relationships;
mod knights_knaves;
mod names;
mod propositional_logic;
mod syllogism;
mod zebra_puzzles;

use super::Family;

pub static FAMILIES: &[&dyn Family] = &[
    &circuit_logic::CircuitLogic,
    &family_relationships::FamilyRelationships,
    &knights_knaves::KnightsKnaves,
    &propositional_logic::PropositionalLogic,
    &syllogism::Syllogism,
    &cryptarithm::Cryptarithm,
    &zebra_puzzles::ZebraPuzzles,
];
