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
//! question layout (body parts plus answer format), grid and list text, word lists,
//! sampling helpers. The [`InstanceStream`] composes the question and writes the level
//! parameters into each instance's metadata, so a family only draws its instance.

pub mod answer;
pub mod decimal;
pub mod kit;
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

use kit::question::{INSTRUCTION_LEAD, INSTRUCTION_TAGS};

/// Where a question's answer instruction starts and what its phrase and example are.
struct Split<'a> {
    /// Byte offset of the instruction in `question` (`question.len()` when none).
    start: usize,
    phrase: &'a str,
    example: Option<&'a str>,
}

impl Instance {
    /// The split recorded by the instance stream: the answer format stored under the
    /// reserved metadata key `answer_format` (see `kit::meta`), whose instruction the
    /// question must end with. `None` for an instance without it (a file written
    /// before the key existed) or whose question no longer ends with it (edited).
    fn recorded_split(&self) -> Option<Split<'_>> {
        let f = self.metadata.get(kit::meta::ANSWER_FORMAT)?.as_object()?;
        let phrase = f.get("phrase")?.as_str()?;
        let example = match f.get("example") {
            None => None,
            Some(e) => Some(e.as_str()?),
        };
        if f.len() != 1 + usize::from(example.is_some()) {
            return None;
        }
        let question = self.question.trim_end();
        let start = question
            .len()
            .checked_sub(kit::question::instruction_len(phrase, example))?;
        let tail = question.get(start..)?;
        kit::question::is_instruction(tail, phrase, example).then_some(Split {
            start,
            phrase,
            example,
        })
    }

    /// The split read off the text, for questions without a recorded format: the
    /// instruction starts at the last "Give your final answer ".
    fn parsed_split(&self) -> Split<'_> {
        let Some(start) = self.question.rfind(INSTRUCTION_LEAD) else {
            return Split {
                start: self.question.len(),
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
            phrase,
            example,
        }
    }

    fn split(&self) -> Split<'_> {
        self.recorded_split().unwrap_or_else(|| self.parsed_split())
    }

    /// The question without its final answer instruction (trailing whitespace
    /// removed): what a harness shows when it states the answer rule itself.
    pub fn question_body(&self) -> &str {
        self.question[..self.split().start].trim_end()
    }

    /// The answer instruction the question ends with (empty when there is none).
    pub fn answer_instruction(&self) -> &str {
        self.question[self.split().start..].trim_end()
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
    params: std::borrow::Cow<'static, serde_json::Value>,
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
        }
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
    pub fn instance(&self, index: u64) -> Instance {
        let f = self.family;
        let g = f.generate(&mut self.rng(index), self.level);
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
        fn verify(&self, _instance: &Instance, _answer: &str) -> f64 {
            0.0
        }
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
                for index in 0..3 {
                    let inst = generate(*fam, level, 11, index);
                    // The split is the recorded one, not a parse of the text.
                    let rec = inst.recorded_split().expect("answer_format recorded");
                    let (body, ins, fmt, example) = pieces(&inst);
                    assert!(!body.is_empty(), "{}: empty body", inst.id);
                    assert!(
                        ins.starts_with(INSTRUCTION_LEAD) && ins.contains(INSTRUCTION_TAGS),
                        "{}: instruction {ins:?}",
                        inst.id
                    );
                    assert!(!body.contains(INSTRUCTION_LEAD), "{}", inst.id);
                    // question = body + gap ("\n" or "\n\n") + instruction, exactly.
                    let gap = &inst.question[body.len()..inst.question.len() - ins.len()];
                    assert!(gap == "\n" || gap == "\n\n", "{}: gap {gap:?}", inst.id);
                    assert!(
                        !fmt.is_empty() && !fmt.contains('<'),
                        "{}: {fmt:?}",
                        inst.id
                    );
                    assert_eq!(
                        ins,
                        kit::question::AnswerFormat::from_json(&inst.metadata["answer_format"])
                            .unwrap()
                            .instruction()
                    );
                    // The text-parsing fallback (for older files) agrees everywhere.
                    let parsed = inst.parsed_split();
                    assert_eq!(
                        (parsed.start, parsed.phrase, parsed.example),
                        (rec.start, fmt.as_str(), example.as_deref()),
                        "{}",
                        inst.id
                    );
                    // The pieces survive a JSONL round trip.
                    let line = serde_json::to_string(&inst).unwrap();
                    let back: Instance = serde_json::from_str(&line).unwrap();
                    assert!(back.recorded_split().is_some(), "{}", inst.id);
                    assert_eq!(pieces(&back), (body, ins, fmt, example), "{}", inst.id);
                }
            }
        }
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
