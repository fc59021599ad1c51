//! Procedurally seeded task families with strict, independent verifiers.
//!
//! A [`Family`] is a generator plus a verifier. Each instance is drawn from its own
//! ChaCha20 stream: the key is SHA-256 of `(family name, family version, level, seed)`
//! and the stream number is the index (see [`InstanceStream`]), so no two instances
//! share randomness and neighbouring seeds never produce shifted copies of each
//! other's streams.
//!
//! Scoring is strict: the model's final answer is the content of the *last*
//! `<answer>...</answer>` pair ([`extract_answer`]); a response without one scores 0
//! unless the caller explicitly asks for [`ScoreMode::Lenient`]. Each family's
//! verifier then parses the extracted text with the tolerant-but-strict helpers in
//! [`parse`] and checks it against the instance (by constraint checking or simulation
//! where several answers are correct). Verifiers never panic.

pub mod answer;
pub(crate) mod helpers;
pub mod parse;

pub mod algorithmic;
pub mod arithmetic;
pub mod cognition;
pub mod games;
pub mod graphs;
pub mod logic;

use std::fmt;

use rand_chacha::ChaCha20Rng;
use rand_chacha::rand_core::SeedableRng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use answer::{ScoreMode, Scored, extract_answer, score_response};

/// Lowest and highest difficulty level every family supports.
pub const MIN_LEVEL: u8 = 1;
pub const MAX_LEVEL: u8 = 5;

/// Errors from looking up families and generating instances.
#[derive(Debug, thiserror::Error)]
pub enum FamilyError {
    #[error("unknown family `{0}` (see `hrl tasks list`)")]
    UnknownFamily(String),
    #[error("level {0} is out of range: levels are {MIN_LEVEL}..={MAX_LEVEL}")]
    LevelOutOfRange(u8),
    #[error("the number of instances must be at least 1")]
    ZeroCount,
}

impl crate::error::Classify for FamilyError {
    fn kind(&self) -> crate::error::ErrorKind {
        match self {
            FamilyError::UnknownFamily(_)
            | FamilyError::LevelOutOfRange(_)
            | FamilyError::ZeroCount => crate::error::ErrorKind::Usage,
        }
    }
}

/// The broad kind of reasoning a family exercises; used to group task-transfer splits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Arithmetic,
    Algorithmic,
    Graphs,
    Games,
    Logic,
    Cognition,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Arithmetic => "arithmetic",
            Category::Algorithmic => "algorithmic",
            Category::Graphs => "graphs",
            Category::Games => "games",
            Category::Logic => "logic",
            Category::Cognition => "cognition",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A validated difficulty level in `MIN_LEVEL..=MAX_LEVEL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub struct Level(u8);

impl Level {
    pub fn new(level: u8) -> Result<Self, FamilyError> {
        if (MIN_LEVEL..=MAX_LEVEL).contains(&level) {
            Ok(Level(level))
        } else {
            Err(FamilyError::LevelOutOfRange(level))
        }
    }
    pub fn get(self) -> u8 {
        self.0
    }
    /// All levels, easiest first.
    pub fn all() -> impl Iterator<Item = Level> {
        (MIN_LEVEL..=MAX_LEVEL).map(Level)
    }
    /// Index 0..5, handy for per-level parameter tables.
    pub fn idx(self) -> usize {
        (self.0 - MIN_LEVEL) as usize
    }
}

impl TryFrom<u8> for Level {
    type Error = FamilyError;
    fn try_from(v: u8) -> Result<Self, FamilyError> {
        Level::new(v)
    }
}

impl From<Level> for u8 {
    fn from(l: Level) -> u8 {
        l.0
    }
}

/// What a generator produces before the common fields are attached.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// The full question, including the required answer format and the request to
    /// put the final answer inside `<answer>...</answer>`.
    pub question: String,
    /// One gold answer in the canonical format the question asks for.
    pub answer: String,
    /// Generator parameters and the structured input (numbers, grid, graph, board) so
    /// an outside tool can re-solve the instance without parsing the question.
    pub metadata: serde_json::Value,
}

/// One generated problem. Serialises to exactly the fields of the `hrl tasks gen`
/// JSONL contract: `id, family, level, seed, index, question, answer, metadata`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Instance {
    pub id: String,
    pub family: String,
    pub level: u8,
    pub seed: u64,
    pub index: u64,
    pub question: String,
    pub answer: String,
    pub metadata: serde_json::Value,
}

/// The words every answer instruction starts with (see [`answer_instruction`]).
const INSTRUCTION_LEAD: &str = "Give your final answer ";
/// What follows the format description in an answer instruction.
const INSTRUCTION_TAGS: &str = " inside <answer></answer> tags";

impl Instance {
    /// Byte offset where the final answer instruction starts (`question.len()` when
    /// the question has none).
    fn instruction_start(&self) -> usize {
        self.question
            .rfind(INSTRUCTION_LEAD)
            .unwrap_or(self.question.len())
    }

    /// The question without its final answer instruction (trailing whitespace
    /// removed): what a harness shows when it states the answer rule itself.
    pub fn question_body(&self) -> &str {
        self.question[..self.instruction_start()].trim_end()
    }

    /// The answer instruction the question ends with (empty when there is none).
    pub fn answer_instruction(&self) -> &str {
        self.question[self.instruction_start()..].trim_end()
    }

    /// What the answer must look like, as a phrase that completes "Give your final
    /// answer ...", e.g. `as a single integer`. Empty when the question has no answer
    /// instruction. Scoring never depends on it: the family's verifier decides.
    pub fn answer_format(&self) -> &str {
        let ins = self.answer_instruction();
        let Some(rest) = ins.strip_prefix(INSTRUCTION_LEAD) else {
            return "";
        };
        rest.find(INSTRUCTION_TAGS)
            .map_or("", |end| rest[..end].trim())
    }
}

/// A task family: a seeded generator and its verifier.
///
/// Implementations must be pure functions of the RNG they are given (no global state,
/// no clock), and `verify` must never panic on any input string.
pub trait Family: Send + Sync {
    /// Stable snake_case name, e.g. `count_primes`.
    fn name(&self) -> &'static str;
    fn category(&self) -> Category;
    /// One line for `hrl tasks list`.
    fn description(&self) -> &'static str;
    /// Bumped whenever generation changes for the same seed (the golden hashes in
    /// `fixtures/families/golden.json` catch forgotten bumps).
    fn version(&self) -> u32;
    /// The documented generator parameters for a level (also copied into metadata).
    fn level_params(&self, level: Level) -> serde_json::Value;
    /// Draw one instance from `rng` at `level`.
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated;
    /// Score an extracted answer (the text inside the last `<answer>` tag) against an
    /// instance: 1.0 when correct, 0.0 otherwise. Families that check constraints read
    /// the structured input from `instance.metadata`. Must never panic.
    fn verify(&self, instance: &Instance, answer: &str) -> f64;
}

/// Every registered family, in a stable order (category, then name).
pub fn registry() -> &'static [&'static dyn Family] {
    use std::sync::OnceLock;
    static ALL: OnceLock<Vec<&'static dyn Family>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut v: Vec<&'static dyn Family> = Vec::new();
        v.extend_from_slice(arithmetic::FAMILIES);
        v.extend_from_slice(algorithmic::FAMILIES);
        v.extend_from_slice(graphs::FAMILIES);
        v.extend_from_slice(games::FAMILIES);
        v.extend_from_slice(logic::FAMILIES);
        v.extend_from_slice(cognition::FAMILIES);
        v.sort_by_key(|f| (f.category(), f.name()));
        v
    })
}

/// Look a family up by name.
pub fn get(name: &str) -> Result<&'static dyn Family, FamilyError> {
    registry()
        .iter()
        .copied()
        .find(|f| f.name() == name)
        .ok_or_else(|| FamilyError::UnknownFamily(name.to_string()))
}

/// The 32-byte ChaCha20 key of one `(family, version, level, seed)` stream: SHA-256
/// over a domain tag and every coordinate, each length-prefixed, so that no two
/// seeds, levels, versions or families share a key.
pub fn seed_key(family: &str, version: u32, level: Level, seed: u64) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"harness-rl/instance/v2\0");
    h.update((family.len() as u64).to_le_bytes());
    h.update(family.as_bytes());
    h.update(version.to_le_bytes());
    h.update([level.get()]);
    h.update(seed.to_le_bytes());
    h.finalize().into()
}

/// Instances of one `(family, level, seed)`: the key is hashed once, and instance
/// `index` reads ChaCha20 stream number `index` under that key. Distinct stream numbers
/// under one key, and distinct keys, give independent keystreams, so instance `i` of
/// seed `s` shares no randomness with instance `i + 1` of seed `s - 1` (the overlap the
/// Python reasoning-gym has) or with any other instance.
#[derive(Clone)]
pub struct InstanceStream {
    family: &'static dyn Family,
    level: Level,
    seed: u64,
    key: [u8; 32],
}

impl InstanceStream {
    pub fn new(family: &'static dyn Family, level: Level, seed: u64) -> Self {
        let key = seed_key(family.name(), family.version(), level, seed);
        InstanceStream {
            family,
            level,
            seed,
            key,
        }
    }

    /// The RNG of instance `index`.
    pub fn rng(&self, index: u64) -> ChaCha20Rng {
        let mut rng = ChaCha20Rng::from_seed(self.key);
        rng.set_stream(index);
        rng
    }

    /// Generate instance `index`.
    pub fn instance(&self, index: u64) -> Instance {
        let f = self.family;
        let g = f.generate(&mut self.rng(index), self.level);
        Instance {
            id: format!(
                "{}/L{}/s{}/i{}",
                f.name(),
                self.level.get(),
                self.seed,
                index
            ),
            family: f.name().to_string(),
            level: self.level.get(),
            seed: self.seed,
            index,
            question: g.question,
            answer: g.answer,
            metadata: g.metadata,
        }
    }
}

/// Generate instance `index` of `(family, seed, level)` (see [`InstanceStream`]).
pub fn generate(family: &'static dyn Family, level: Level, seed: u64, index: u64) -> Instance {
    InstanceStream::new(family, level, seed).instance(index)
}

/// Generate `n` consecutive instances starting at index 0.
pub fn generate_many(
    family: &'static dyn Family,
    level: Level,
    seed: u64,
    n: u64,
) -> Result<Vec<Instance>, FamilyError> {
    if n == 0 {
        return Err(FamilyError::ZeroCount);
    }
    let stream = InstanceStream::new(family, level, seed);
    Ok((0..n).map(|i| stream.instance(i)).collect())
}

/// The sentence every question ends with, so the answer convention is stated the same
/// way everywhere. `format` describes the required answer format ("as a single
/// integer"); `example` is an illustrative answer in that format that must not be the
/// gold answer of the instance.
pub fn answer_instruction(format: &str, example: &str) -> String {
    format!(
        "Give your final answer {format} inside <answer></answer> tags, for example <answer>{example}</answer>."
    )
}

#[cfg(test)]
mod answer_format_tests {
    use super::*;

    #[test]
    fn every_family_splits_into_body_instruction_and_format() {
        for fam in registry() {
            for level in Level::all() {
                for index in 0..3 {
                    let inst = generate(*fam, level, 11, index);
                    let body = inst.question_body();
                    let ins = inst.answer_instruction();
                    assert!(!body.is_empty(), "{}: empty body", inst.id);
                    assert!(
                        ins.starts_with(INSTRUCTION_LEAD) && ins.contains(INSTRUCTION_TAGS),
                        "{}: instruction {ins:?}",
                        inst.id
                    );
                    assert!(!body.contains(INSTRUCTION_LEAD), "{}", inst.id);
                    assert!(inst.question.starts_with(body), "{}", inst.id);
                    assert!(inst.question.trim_end().ends_with(ins), "{}", inst.id);
                    let fmt = inst.answer_format();
                    assert!(
                        !fmt.is_empty() && !fmt.contains('<'),
                        "{}: {fmt:?}",
                        inst.id
                    );
                    assert!(ins.contains(fmt), "{}", inst.id);
                }
            }
        }
    }

    #[test]
    fn a_question_without_instruction_is_all_body() {
        let mut inst = generate(registry()[0], Level::new(1).unwrap(), 0, 0);
        inst.question = "What is 2 + 2?\n".into();
        assert_eq!(inst.question_body(), "What is 2 + 2?");
        assert_eq!(inst.answer_instruction(), "");
        assert_eq!(inst.answer_format(), "");
    }
}
