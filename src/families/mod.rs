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
//!
//! Every family is built from one shared [`kit`]: bounded metadata readers, the
//! question layout (body parts plus answer format), question templates, grid and list
//! text, word lists, sampling helpers. The [`InstanceStream`] composes the question
//! and writes the level parameters into each instance's metadata, so a family only
//! draws its instance.
//!
//! Format-varied questions: every family lists at least two question templates besides
//! its canonical question ([`Family::templates`]); the stream's [`Variant`] setting
//! picks one (`0` canonical, `K`, or `random` per instance from the instance's own
//! stream) and renders it from the drawn instance, so the task and the gold answer are
//! the same in every variant (see `kit::variant`).

pub mod answer;
pub mod decimal;
pub mod entry;
pub mod kit;
pub mod mixture;
pub mod parse;
pub mod splits;

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

pub use answer::{ScoreMode, Scored, extract_answer, extract_with, score_line, score_response};
pub use entry::{parse_entry, score_entry};
pub use kit::variant::Variant;

/// Lowest and highest difficulty level every family supports.
pub const MIN_LEVEL: u8 = 1;
pub const MAX_LEVEL: u8 = 5;

/// Errors from looking up families and generating instances.
#[derive(Debug, thiserror::Error)]
pub enum FamilyError {
    #[error("unknown family `{0}`{hint} (see `hrl tasks list`)", hint = did_you_mean_family(.0))]
    UnknownFamily(String),
    #[error("level {0} is out of range: levels are {MIN_LEVEL}..={MAX_LEVEL}")]
    LevelOutOfRange(u8),
    #[error("the number of instances must be at least 1")]
    ZeroCount,
    #[error(
        "variant {variant} is out of range for `{family}`: it has {count} question templates (variants 0..={})",
        count - 1
    )]
    VariantOutOfRange {
        family: String,
        variant: u8,
        count: usize,
    },
    /// A JSON record that should hold an instance (see [`entry`]) does not.
    #[error("{0}")]
    MalformedEntry(String),
    /// The parts of a mixture (see [`mixture`]) cannot make one.
    #[error("{0}")]
    BadMixture(String),
}

impl crate::error::Classify for FamilyError {
    fn kind(&self) -> crate::error::ErrorKind {
        match self {
            FamilyError::UnknownFamily(_)
            | FamilyError::LevelOutOfRange(_)
            | FamilyError::ZeroCount
            | FamilyError::VariantOutOfRange { .. }
            | FamilyError::MalformedEntry(_)
            | FamilyError::BadMixture(_) => crate::error::ErrorKind::Usage,
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

/// What a generator produces; the instance stream attaches the common fields, writes
/// the question text from `body` and `format` (`kit::question::compose`) and puts the
/// level parameters into the metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// What the question asks, without the answer instruction.
    pub body: kit::question::Body,
    /// What the answer must look like (the instruction the question ends with).
    pub format: kit::question::AnswerFormat,
    /// One gold answer in the canonical format the question asks for.
    pub answer: String,
    /// The structured input (numbers, grid, graph, board) so an outside tool can
    /// re-solve the instance without parsing the question; the stream adds `params`
    /// in front (reserved keys: `kit::meta`).
    pub metadata: serde_json::Map<String, serde_json::Value>,
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

use kit::question::{INSTRUCTION_LEAD, INSTRUCTION_TAGS, Wording};

/// Where a question's answer instruction is and what its phrase and example are.
struct Split<'a> {
    /// Byte range of the instruction in `question`: a suffix (up to the trailing
    /// whitespace), or a prefix for a leading wording; `len..len` when there is none.
    start: usize,
    end: usize,
    phrase: &'a str,
    example: Option<&'a str>,
}

impl Instance {
    /// The split recorded by the instance stream: the answer format stored under the
    /// reserved metadata key `answer_format` (see `kit::meta`), whose instruction (in
    /// its recorded wording) the question must end with, or for a leading wording
    /// start with. `None` for an instance without it (a file written before the key
    /// existed) or whose question does not match it (edited).
    fn recorded_split(&self) -> Option<Split<'_>> {
        let f = self.metadata.get(kit::meta::ANSWER_FORMAT)?.as_object()?;
        let phrase = f.get("phrase")?.as_str()?;
        let example = match f.get("example") {
            None => None,
            Some(e) => Some(e.as_str()?),
        };
        let wording = match f.get("wording") {
            None => None,
            Some(w) => Some(Wording::from_name(w.as_str()?)?),
        };
        if f.len() != 1 + usize::from(example.is_some()) + usize::from(wording.is_some()) {
            return None;
        }
        match wording {
            None | Some(Wording::Give) => {
                let question = self.question.trim_end();
                let start = question
                    .len()
                    .checked_sub(kit::question::instruction_len(phrase, example))?;
                let tail = question.get(start..)?;
                kit::question::is_instruction(tail, phrase, example).then_some(Split {
                    start,
                    end: question.len(),
                    phrase,
                    example,
                })
            }
            Some(w) if w.leads() => {
                let end = w.instruction_len(phrase, example);
                let head = self.question.get(..end)?;
                w.is_instruction(head, phrase, example).then_some(Split {
                    start: 0,
                    end,
                    phrase,
                    example,
                })
            }
            Some(w) => {
                let question = self.question.trim_end();
                let start = question
                    .len()
                    .checked_sub(w.instruction_len(phrase, example))?;
                let tail = question.get(start..)?;
                w.is_instruction(tail, phrase, example).then_some(Split {
                    start,
                    end: question.len(),
                    phrase,
                    example,
                })
            }
        }
    }

    /// The split read off the text, for questions without a recorded format: the
    /// instruction starts at the last "Give your final answer ".
    fn parsed_split(&self) -> Split<'_> {
        let Some(start) = self.question.rfind(INSTRUCTION_LEAD) else {
            return Split {
                start: self.question.len(),
                end: self.question.len(),
                phrase: "",
                example: None,
            };
        };
        let rest = &self.question[start + INSTRUCTION_LEAD.len()..];
        let phrase = rest
            .find(INSTRUCTION_TAGS)
            .map_or("", |end| rest[..end].trim());
        let example = rest
            .split_once(", for example <answer>")
            .and_then(|(_, e)| e.trim_end().strip_suffix("</answer>."));
        Split {
            start,
            end: self.question.len(),
            phrase,
            example,
        }
    }

    fn split(&self) -> Split<'_> {
        self.recorded_split().unwrap_or_else(|| self.parsed_split())
    }

    /// The question without its answer instruction (surrounding whitespace removed):
    /// what a harness shows when it states the answer rule itself. The instruction is
    /// the question's last paragraph, or its first in a leading wording.
    pub fn question_body(&self) -> &str {
        let s = self.split();
        if s.start == 0 && s.end > 0 {
            self.question[s.end..].trim()
        } else {
            self.question[..s.start].trim_end()
        }
    }

    /// The answer instruction of the question (empty when there is none).
    pub fn answer_instruction(&self) -> &str {
        let s = self.split();
        self.question[s.start..s.end].trim_end()
    }

    /// What the answer must look like, as a phrase that completes "Give your final
    /// answer ...", e.g. `as a single integer`. Empty when the question has no answer
    /// instruction. Scoring never depends on it: the family's verifier decides.
    pub fn answer_format(&self) -> &str {
        self.split().phrase
    }

    /// The format example the question shows in tags, if any. By the example rule
    /// (`kit::question`) it is never a right answer: it shows the shape only.
    pub fn answer_example(&self) -> Option<&str> {
        self.split().example
    }

    /// The question template this instance was written with: 0 for the canonical
    /// question (also for an instance without the record), else the `variant` the
    /// stream recorded in the metadata (see `kit::variant`).
    pub fn variant(&self) -> u8 {
        self.metadata
            .get(kit::variant::KEY)
            .and_then(|v| v.as_u64())
            .and_then(|v| u8::try_from(v).ok())
            .unwrap_or(0)
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
    /// The documented generator parameters for a level. The instance stream computes
    /// them once per family and level and copies them into every instance's metadata
    /// as `params`.
    fn level_params(&self, level: Level) -> serde_json::Value;
    /// Draw one instance from `rng` at `level`.
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated;
    /// The question templates besides the canonical one: variant `k` (1..) is
    /// `templates()[k - 1]`, rendered from the generated instance (`kit::template`).
    /// Every family lists at least two; the registry tests render each one at every
    /// level for many seeds. Changing a template changes the instances of its variant,
    /// so it needs a `version()` bump like any other generation change.
    fn templates(&self) -> &'static [kit::template::Template] {
        &[]
    }
    /// How many question variants the family has: the canonical one plus its
    /// templates.
    fn variant_count(&self) -> usize {
        1 + self.templates().len()
    }
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

/// A family as `hrl tasks list --json` prints it: name, category, levels, version,
/// variants, description and the documented parameters of every level.
pub fn describe(f: &dyn Family) -> serde_json::Value {
    serde_json::json!({
        "name": f.name(),
        "category": f.category(),
        "levels": [MIN_LEVEL, MAX_LEVEL],
        "version": f.version(),
        "variants": f.variant_count(),
        "description": f.description(),
        "level_params": Level::all().map(|l| f.level_params(l)).collect::<Vec<_>>(),
    })
}

/// ` (did you mean `NAME`?)` for the family name closest to `name`, or nothing.
pub fn did_you_mean_family(name: &str) -> String {
    crate::suggest::did_you_mean(name, registry().iter().map(|f| f.name()))
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

/// An instance with its index in its stream.
pub type Indexed = (u64, Instance);

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
    params: std::borrow::Cow<'static, serde_json::Value>,
    variant: Variant,
}

/// `level_params` of every registered family at every level, computed once (cloning a
/// small map is cheaper than building it), keyed by family name.
fn params_table() -> &'static std::collections::HashMap<&'static str, [serde_json::Value; 5]> {
    use std::sync::OnceLock;
    static TABLE: OnceLock<std::collections::HashMap<&'static str, [serde_json::Value; 5]>> =
        OnceLock::new();
    TABLE.get_or_init(|| {
        registry()
            .iter()
            .map(|f| {
                let p = std::array::from_fn(|i| {
                    f.level_params(Level::new(i as u8 + MIN_LEVEL).expect("level 1..=5"))
                });
                (f.name(), p)
            })
            .collect()
    })
}

/// The level parameters of `family` at `level`: from the table for a registered family
/// (a registered name is that family), computed once per stream otherwise.
fn level_params_of(
    family: &'static dyn Family,
    level: Level,
) -> std::borrow::Cow<'static, serde_json::Value> {
    match params_table().get(family.name()) {
        Some(p) => std::borrow::Cow::Borrowed(&p[level.idx()]),
        None => std::borrow::Cow::Owned(family.level_params(level)),
    }
}

impl InstanceStream {
    pub fn new(family: &'static dyn Family, level: Level, seed: u64) -> Self {
        let key = seed_key(family.name(), family.version(), level, seed);
        InstanceStream {
            family,
            level,
            seed,
            key,
            params: level_params_of(family, level),
            variant: Variant::CANONICAL,
        }
    }

    /// The same stream with another question variant (see `kit::variant`): the
    /// instances keep their task and gold answer, the question is written with the
    /// chosen template. `Variant::Fixed(k)` must be below the family's
    /// `variant_count()`.
    pub fn with_variant(mut self, variant: Variant) -> Result<Self, FamilyError> {
        if let Variant::Fixed(k) = variant {
            let count = self.family.variant_count();
            if usize::from(k) >= count {
                return Err(FamilyError::VariantOutOfRange {
                    family: self.family.name().to_string(),
                    variant: k,
                    count,
                });
            }
        }
        self.variant = variant;
        Ok(self)
    }

    /// The variant setting of this stream.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The question template instance `index` is written with.
    pub fn variant_of(&self, index: u64) -> u8 {
        match self.variant {
            Variant::Fixed(k) => k,
            Variant::Random => Variant::Random.pick(self.family.variant_count(), self.rng(index)),
        }
    }

    /// Instances from index `start` on (at most `budget` indices) whose questions are
    /// not yet in `seen`, until `n` are found; each kept question joins `seen`.
    /// Questions are compared in the canonical wording (two templates of one task are
    /// one question), and the instances returned are canonical. `Err` holds what was
    /// found when the budget ran out first (a level that repeats its questions).
    pub fn fresh_questions(
        &self,
        start: u64,
        n: usize,
        budget: u64,
        seen: &mut std::collections::HashSet<String>,
    ) -> Result<Vec<Indexed>, Vec<Indexed>> {
        let canonical = InstanceStream {
            variant: Variant::CANONICAL,
            ..self.clone()
        };
        let mut out = Vec::with_capacity(n.min(4096));
        for i in start..start.saturating_add(budget) {
            if out.len() == n {
                break;
            }
            let inst = canonical.instance(i);
            if seen.insert(inst.question.clone()) {
                out.push((i, inst));
            }
        }
        if out.len() == n { Ok(out) } else { Err(out) }
    }

    /// The RNG of instance `index`.
    pub fn rng(&self, index: u64) -> ChaCha20Rng {
        let mut rng = ChaCha20Rng::from_seed(self.key);
        rng.set_stream(index);
        rng
    }

    /// Generate instance `index`: the family draws it from its own RNG; the stream
    /// composes the question text, puts the level parameters (`params`) in front of
    /// the family's metadata fields and the answer format (`answer_format`: phrase and
    /// example) after them, so `Instance::question_body`, `answer_instruction` and
    /// `answer_format` come from recorded structure, also after a JSONL round trip.
    ///
    /// A non-canonical variant renders the family's template from the same generated
    /// instance (`kit::template`), records `variant` just before `answer_format` (whose
    /// record then names the instruction's `wording`) and ends the id with `/v{k}`.
    pub fn instance(&self, index: u64) -> Instance {
        let f = self.family;
        let g = f.generate(&mut self.rng(index), self.level);
        let k = match self.variant {
            Variant::Fixed(0) => 0,
            _ => self.variant_of(index),
        };
        if k != 0 {
            return self.variant_instance(index, g, k);
        }
        let question = kit::question::compose(g.body, &g.format);
        let mut metadata = g.metadata;
        debug_assert!(!metadata.contains_key(kit::meta::PARAMS));
        debug_assert!(!metadata.contains_key(kit::meta::ANSWER_FORMAT));
        // In place (`fields` leaves room for both): params first, the format last.
        metadata.shift_insert(
            0,
            kit::meta::PARAMS.to_string(),
            self.params.as_ref().clone(),
        );
        metadata.insert(kit::meta::ANSWER_FORMAT.to_string(), g.format.to_json());
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
            question,
            answer: g.answer,
            metadata: serde_json::Value::Object(metadata),
        }
    }
}

impl InstanceStream {
    /// Instance `index` written with template `k` (>= 1) of its family.
    fn variant_instance(&self, index: u64, g: Generated, k: u8) -> Instance {
        let f = self.family;
        let template = f
            .templates()
            .get(usize::from(k) - 1)
            .unwrap_or_else(|| panic!("{}: no question template {k}", f.name()));
        let mut metadata = g.metadata;
        metadata.shift_insert(
            0,
            kit::meta::PARAMS.to_string(),
            self.params.as_ref().clone(),
        );
        let body = kit::template::render(template, &metadata, &g.body).unwrap_or_else(|e| {
            panic!(
                "{} L{} variant {k}: its template does not fit the instance: {e}",
                f.name(),
                self.level.get()
            )
        });
        let question = kit::question::compose_in(body, &g.format, template.wording);
        metadata.insert(kit::variant::KEY.to_string(), serde_json::Value::from(k));
        metadata.insert(
            kit::meta::ANSWER_FORMAT.to_string(),
            g.format.to_json_in(template.wording),
        );
        Instance {
            id: format!(
                "{}/L{}/s{}/i{}/v{}",
                f.name(),
                self.level.get(),
                self.seed,
                index,
                k
            ),
            family: f.name().to_string(),
            level: self.level.get(),
            seed: self.seed,
            index,
            question,
            answer: g.answer,
            metadata: serde_json::Value::Object(metadata),
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
    generate_many_variant(family, level, seed, n, Variant::CANONICAL)
}

/// Generate `n` consecutive instances starting at index 0 with the question `variant`.
pub fn generate_many_variant(
    family: &'static dyn Family,
    level: Level,
    seed: u64,
    n: u64,
    variant: Variant,
) -> Result<Vec<Instance>, FamilyError> {
    if n == 0 {
        return Err(FamilyError::ZeroCount);
    }
    let stream = InstanceStream::new(family, level, seed).with_variant(variant)?;
    Ok((0..n).map(|i| stream.instance(i)).collect())
}

#[cfg(test)]
mod stream_tests {
    use super::*;
    use serde_json::json;

    /// A family outside the registry, to see what the stream adds.
    struct Toy;

    impl Family for Toy {
        fn name(&self) -> &'static str {
            "toy"
        }
        fn category(&self) -> Category {
            Category::Arithmetic
        }
        fn description(&self) -> &'static str {
            "a test family"
        }
        fn version(&self) -> u32 {
            1
        }
        fn level_params(&self, level: Level) -> serde_json::Value {
            json!({"size": level.get() * 10})
        }
        fn generate(&self, rng: &mut ChaCha20Rng, _level: Level) -> Generated {
            use rand::Rng;
            let x: u8 = rng.random_range(0..100);
            Generated {
                body: kit::question::Body::new()
                    .text("Add one to:")
                    .data(x.to_string()),
                format: kit::question::AnswerFormat::new("as a single integer"),
                answer: (u16::from(x) + 1).to_string(),
                metadata: kit::meta::fields([("x", json!(x))]),
            }
        }
        fn templates(&self) -> &'static [kit::template::Template] {
            use kit::question::Wording;
            use kit::template::{Piece, Template};
            const T: &[Template] = &[
                Template::new(
                    Wording::Put,
                    &[Piece::Text("What is {x} plus one? (size {params.size})")],
                ),
                Template::new(
                    Wording::Lead,
                    &[
                        Piece::Data("{@1}"),
                        Piece::Text("Add one to the number above."),
                    ],
                ),
            ];
            T
        }
        fn verify(&self, _instance: &Instance, _answer: &str) -> f64 {
            0.0
        }
    }

    /// A family whose template does not fit its instances.
    struct Broken;

    impl Family for Broken {
        fn name(&self) -> &'static str {
            "broken"
        }
        fn category(&self) -> Category {
            Category::Arithmetic
        }
        fn description(&self) -> &'static str {
            "a test family with a bad template"
        }
        fn version(&self) -> u32 {
            1
        }
        fn level_params(&self, _level: Level) -> serde_json::Value {
            json!({})
        }
        fn generate(&self, _rng: &mut ChaCha20Rng, _level: Level) -> Generated {
            Generated {
                body: kit::question::Body::of("Say 1."),
                format: kit::question::AnswerFormat::new("as a single integer"),
                answer: "1".into(),
                metadata: serde_json::Map::new(),
            }
        }
        fn templates(&self) -> &'static [kit::template::Template] {
            const T: &[kit::template::Template] = &[kit::template::Template::new(
                kit::question::Wording::Put,
                &[kit::template::Piece::Text("Say {missing}.")],
            )];
            T
        }
        fn verify(&self, _instance: &Instance, _answer: &str) -> f64 {
            0.0
        }
    }

    #[test]
    fn a_variant_renders_its_template_from_the_same_instance() {
        static TOY: Toy = Toy;
        let l3 = Level::new(3).unwrap();
        let canonical = generate(&TOY, l3, 5, 2);
        let x = canonical.metadata["x"].as_u64().unwrap();
        let stream = InstanceStream::new(&TOY, l3, 5);
        let v1 = stream
            .clone()
            .with_variant(Variant::Fixed(1))
            .unwrap()
            .instance(2);
        assert_eq!(v1.id, "toy/L3/s5/i2/v1");
        assert_eq!(v1.variant(), 1);
        assert_eq!(canonical.variant(), 0);
        assert_eq!(v1.answer, canonical.answer);
        assert_eq!(
            v1.question,
            format!(
                "What is {x} plus one? (size 30)\nPut your final answer inside \
                 <answer></answer> tags, written as a single integer."
            )
        );
        let keys: Vec<&String> = v1.metadata.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["params", "x", "variant", "answer_format"]);
        assert_eq!(
            v1.metadata["answer_format"],
            json!({"phrase": "as a single integer", "wording": "put"})
        );
        let v2 = stream
            .clone()
            .with_variant(Variant::Fixed(2))
            .unwrap()
            .instance(2);
        assert_eq!(
            v2.question,
            format!(
                "Answer format: your final answer goes inside <answer></answer> tags, \
                 written as a single integer.\n\n{x}\n\nAdd one to the number above."
            )
        );
        assert_eq!(
            v2.question_body(),
            format!("{x}\n\nAdd one to the number above.")
        );
        assert_eq!(v2.answer_format(), "as a single integer");
        // Variant 0 is the canonical instance, also when asked for explicitly.
        let v0 = stream
            .clone()
            .with_variant(Variant::Fixed(0))
            .unwrap()
            .instance(2);
        assert_eq!(v0, canonical);
        // A variant beyond the family's templates is refused, naming the range.
        let e = stream
            .clone()
            .with_variant(Variant::Fixed(3))
            .err()
            .unwrap();
        assert!(e.to_string().contains("variants 0..=2"), "{e}");
        // Random: drawn per instance, reproducible, the same as the fixed variant.
        let random = stream.with_variant(Variant::Random).unwrap();
        let mut seen = [0usize; 3];
        for i in 0..60 {
            let k = random.variant_of(i);
            seen[usize::from(k)] += 1;
            let fixed = InstanceStream::new(&TOY, l3, 5)
                .with_variant(Variant::Fixed(k))
                .unwrap();
            assert_eq!(random.instance(i), fixed.instance(i));
            assert_eq!(random.instance(i).variant(), k);
        }
        assert!(seen.iter().all(|&n| n > 5), "{seen:?}");
    }

    #[test]
    #[should_panic(expected = "broken L1 variant 1: its template does not fit")]
    fn a_template_that_does_not_fit_is_a_loud_bug() {
        static BROKEN: Broken = Broken;
        let _ = InstanceStream::new(&BROKEN, Level::new(1).unwrap(), 0)
            .with_variant(Variant::Fixed(1))
            .unwrap()
            .instance(0);
    }

    #[test]
    fn the_stream_composes_the_question_and_adds_the_level_params() {
        static TOY: Toy = Toy;
        let inst = generate(&TOY, Level::new(3).unwrap(), 5, 2);
        let x = inst.metadata["x"].as_u64().unwrap();
        assert_eq!(
            inst.question,
            format!(
                "Add one to:\n\n{x}\n\nGive your final answer as a single integer inside \
                 <answer></answer> tags."
            )
        );
        let keys: Vec<&String> = inst.metadata.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["params", "x", "answer_format"]);
        assert_eq!(inst.metadata["params"], json!({"size": 30}));
        assert_eq!(
            inst.metadata["answer_format"],
            json!({"phrase": "as a single integer"})
        );
        assert_eq!(inst.question_body(), format!("Add one to:\n\n{x}"));
        assert_eq!(inst.answer_format(), "as a single integer");
        assert_eq!(inst.id, "toy/L3/s5/i2");
        // A registered family gets the table's parameters, the same values.
        let gcd = get("gcd").unwrap();
        let g = generate(gcd, Level::new(2).unwrap(), 0, 0);
        assert_eq!(
            g.metadata["params"],
            gcd.level_params(Level::new(2).unwrap())
        );
    }
}

#[cfg(test)]
mod answer_format_tests {
    use super::*;

    /// The three accessors, as owned values for comparisons.
    fn pieces(inst: &Instance) -> (String, String, String, Option<String>) {
        (
            inst.question_body().to_string(),
            inst.answer_instruction().to_string(),
            inst.answer_format().to_string(),
            inst.answer_example().map(str::to_string),
        )
    }

    #[test]
    fn every_family_splits_into_body_instruction_and_format() {
        for fam in registry() {
            for level in Level::all() {
                for variant in 0..fam.variant_count() as u8 {
                    let stream = InstanceStream::new(*fam, level, 11)
                        .with_variant(Variant::Fixed(variant))
                        .unwrap();
                    for index in 0..3 {
                        check_split(&stream.instance(index));
                    }
                }
            }
        }
    }

    /// The accessors of one instance agree with its recorded format and its text.
    fn check_split(inst: &Instance) {
        // The split is the recorded one, not a parse of the text.
        let rec = inst.recorded_split().expect("answer_format recorded");
        let (body, ins, fmt, example) = pieces(inst);
        let (format, wording) =
            kit::question::AnswerFormat::from_json_in(&inst.metadata["answer_format"]).unwrap();
        assert_eq!(wording == Wording::Give, inst.variant() == 0, "{}", inst.id);
        assert!(!body.is_empty(), "{}: empty body", inst.id);
        assert_eq!(ins, format.instruction_in(wording), "{}", inst.id);
        assert!(
            ins.contains("<answer></answer>") && !body.contains("<answer>"),
            "{}: instruction {ins:?}",
            inst.id
        );
        assert!(!body.contains(INSTRUCTION_LEAD), "{}", inst.id);
        if wording.leads() {
            // question = instruction + blank line + body, exactly.
            assert_eq!(inst.question, format!("{ins}\n\n{body}"), "{}", inst.id);
        } else {
            // question = body + gap ("\n" or "\n\n") + instruction, exactly.
            let gap = &inst.question[body.len()..inst.question.len() - ins.len()];
            assert!(gap == "\n" || gap == "\n\n", "{}: gap {gap:?}", inst.id);
            assert!(inst.question.starts_with(&body), "{}", inst.id);
        }
        assert!(
            !fmt.is_empty() && !fmt.contains('<'),
            "{}: {fmt:?}",
            inst.id
        );
        assert_eq!(
            (fmt.as_str(), example.as_deref()),
            (format.phrase(), format.example()),
            "{}",
            inst.id
        );
        if wording == Wording::Give {
            // The text-parsing fallback (for older files) agrees on canonical questions.
            let parsed = inst.parsed_split();
            assert_eq!(
                (parsed.start, parsed.phrase, parsed.example),
                (rec.start, fmt.as_str(), example.as_deref()),
                "{}",
                inst.id
            );
        }
        // The pieces survive a JSONL round trip.
        let line = serde_json::to_string(inst).unwrap();
        let back: Instance = serde_json::from_str(&line).unwrap();
        assert!(back.recorded_split().is_some(), "{}", inst.id);
        assert_eq!(pieces(&back), (body, ins, fmt, example), "{}", inst.id);
    }

    #[test]
    fn the_format_is_recorded_last_in_the_metadata() {
        let inst = generate(get("maze").unwrap(), Level::new(1).unwrap(), 0, 0);
        let keys: Vec<&String> = inst.metadata.as_object().unwrap().keys().collect();
        assert_eq!(keys.first().map(|k| k.as_str()), Some("params"));
        assert_eq!(keys.last().map(|k| k.as_str()), Some("answer_format"));
        let f = &inst.metadata["answer_format"];
        assert_eq!(f["phrase"], "as a single integer");
        assert!(f["example"].is_string());
        let yes_no = generate(get("syllogism").unwrap(), Level::new(1).unwrap(), 0, 0);
        assert_eq!(
            yes_no.metadata["answer_format"],
            serde_json::json!({"phrase": "as yes or no"})
        );
        assert_eq!(yes_no.answer_example(), None);
    }

    #[test]
    fn a_question_that_does_not_match_its_record_falls_back_to_the_text() {
        let inst = generate(get("gcd").unwrap(), Level::new(1).unwrap(), 0, 0);
        let want = pieces(&inst);
        // Without the record (a file written before it existed): the text is parsed.
        let mut old = inst.clone();
        old.metadata
            .as_object_mut()
            .unwrap()
            .remove("answer_format");
        assert!(old.recorded_split().is_none());
        assert_eq!(pieces(&old), want);
        // A record that does not match the question (edited, or damaged) is ignored.
        for bad in [
            serde_json::json!({"phrase": "as a word"}),
            serde_json::json!({"phrase": 7}),
            serde_json::json!({"phrase": "as a single integer", "example": 3}),
            serde_json::json!({"phrase": "as a single integer", "extra": "x"}),
            serde_json::json!("as a single integer"),
        ] {
            let mut b = inst.clone();
            b.metadata["answer_format"] = bad.clone();
            assert!(b.recorded_split().is_none(), "{bad}");
            assert_eq!(pieces(&b), want, "{bad}");
        }
        // A question whose body happens to contain the instruction's words is still
        // split at the recorded instruction, where parsing the text would go wrong.
        let mut tricky = inst.clone();
        tricky.question = format!("Give your final answer quickly. {}", inst.question);
        assert_eq!(tricky.answer_format(), inst.answer_format());
        assert!(
            tricky
                .question_body()
                .starts_with("Give your final answer quickly.")
        );
    }

    #[test]
    fn a_question_without_instruction_is_all_body() {
        let mut inst = generate(registry()[0], Level::new(1).unwrap(), 0, 0);
        inst.question = "What is 2 + 2?\n".into();
        assert_eq!(inst.question_body(), "What is 2 + 2?");
        assert_eq!(inst.answer_instruction(), "");
        assert_eq!(inst.answer_format(), "");
        assert_eq!(inst.answer_example(), None);
    }
}
