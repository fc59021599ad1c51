//! Deduction: kinship, syllogisms, propositional logic.

mod answers;
mod circuit_logic;
mod cryptarithm;
mod family_relationships;
mod knights_knaves;
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
