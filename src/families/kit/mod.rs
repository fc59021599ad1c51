//! The kit every family is built from, so that no family re-implements plumbing:
//!
//! - [`meta`]: bounded, typed readers of instance metadata ([`meta::Meta`]) — every
//!   list, string and grid read from a stored instance is size-checked, so a corrupted
//!   or hostile instance can cost a verifier neither a panic nor unbounded memory — and
//!   [`meta::fields`], the allocation-light builder of a family's metadata fields.
//! - [`question`]: a question is a [`question::Body`] (paragraphs of prose and data
//!   blocks) plus an [`question::AnswerFormat`] (what the answer must look like and an
//!   optional format example); [`question::compose`] writes the final text and the
//!   instance stream records the format under a reserved metadata key, so the body,
//!   the instruction and the format are available without parsing the text.
//! - [`template`]: question templates, the declarative re-wordings and re-layouts a
//!   family lists for its variants 1.. (a small template language over the metadata
//!   and the canonical body's parts), and [`variant`]: the `variant` setting (`0`,
//!   `K`, `random`) and how the instance stream draws and records it.
//! - [`text`]: grids, lists and edge lists as question text, and reading grid- or
//!   list-shaped answers against a wanted value.
//! - [`lexicon`]: the crate's own word lists (English words by length, given names,
//!   plural nouns).
//! - [`sample`]: small sampling helpers over a family's RNG.
//!
//! The level parameters are not a family's business beyond `level_params`: the
//! instance stream computes them once per family and level and puts them into every
//! instance's metadata as `params` (see `InstanceStream`). Domain helpers stay with
//! their families: number theory in `arithmetic/number_theory.rs`, answer vocabularies
//! (yes/no, option letters, kinship words) in `logic/answers.rs`.

pub mod lexicon;
pub mod meta;
pub mod question;
pub mod sample;
pub mod template;
pub mod text;
pub mod variant;
