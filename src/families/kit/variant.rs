//! Which question template an instance uses: the `variant` setting.
//!
//! Variant 0 is the canonical question (the generator's own body and the canonical
//! answer instruction); variant `k` in `1..count` is the family's template `k - 1`
//! (`Family::templates`, rendered by [`kit::template`](super::template)). The task,
//! the gold answer and the structured input are the same in every variant: the
//! generator draws the instance exactly as for variant 0 and the template only
//! re-words and re-lays out what it drew.
//!
//! [`Variant::Random`] draws the template from the instance's own ChaCha20 stream, at
//! word position [`DRAW_WORD_POS`] (2^67, half-way through the stream's 2^68 words),
//! far beyond anything a generator reads, so the draws that make the task are not
//! disturbed and the same `(family, level, seed, index)` gives the same task and gold
//! in every variant.
//!
//! Recorded in the instance: a variant `k > 0` adds `/v{k}` to the id and `"variant":
//! k` to the metadata (just before `answer_format`); variant 0 records neither, so
//! canonical instances are byte-identical to those written before variants existed.

use std::fmt;
use std::str::FromStr;

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Reserved metadata key: the variant of a non-canonical instance.
pub const KEY: &str = "variant";

/// The word position of the variant draw in an instance's stream (see the module docs).
pub const DRAW_WORD_POS: u128 = 1 << 67;

/// The `variant` setting: one template for every instance, or one drawn per instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Template `k` for every instance (0 = canonical).
    Fixed(u8),
    /// A template drawn uniformly from all of the family's templates (the canonical
    /// one included) for each instance, from the instance's own stream.
    Random,
}

impl Variant {
    /// The canonical question.
    pub const CANONICAL: Variant = Variant::Fixed(0);

    /// The template used for the instance whose RNG (before any draw) is `rng`, for a
    /// family with `count` templates. `rng` is repositioned, so pass a fresh one.
    pub fn pick(self, count: usize, mut rng: ChaCha20Rng) -> u8 {
        match self {
            Variant::Fixed(k) => k,
            Variant::Random => {
                rng.set_word_pos(DRAW_WORD_POS);
                rng.random_range(0..count.clamp(1, 256)) as u8
            }
        }
    }
}

impl Default for Variant {
    fn default() -> Self {
        Variant::CANONICAL
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Variant::Fixed(k) => write!(f, "{k}"),
            Variant::Random => f.write_str("random"),
        }
    }
}

/// A `variant` setting that is neither a number 0..=255 nor `random`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("variant `{0}` is not valid: write 0 (canonical), a template number, or `random`")]
pub struct VariantParseError(pub String);

impl crate::error::Classify for VariantParseError {
    fn kind(&self) -> crate::error::ErrorKind {
        crate::error::ErrorKind::Usage
    }
}

impl FromStr for Variant {
    type Err = VariantParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        if t == "random" {
            return Ok(Variant::Random);
        }
        if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(k) = t.parse::<u8>() {
                return Ok(Variant::Fixed(k));
            }
        }
        Err(VariantParseError(s.to_string()))
    }
}

/// Serialised as a number (`0`, `2`) or the string `"random"`; read from either, and
/// from a number written as a string (`"2"`).
impl Serialize for Variant {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Variant::Fixed(k) => s.serialize_u8(*k),
            Variant::Random => s.serialize_str("random"),
        }
    }
}

impl<'de> Deserialize<'de> for Variant {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(n) => u8::try_from(n)
                .map(Variant::Fixed)
                .map_err(|_| serde::de::Error::custom(VariantParseError(n.to_string()))),
            Raw::S(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn parses_prints_and_round_trips() {
        for (s, v) in [
            ("0", Variant::Fixed(0)),
            ("2", Variant::Fixed(2)),
            (" 255 ", Variant::Fixed(255)),
            ("random", Variant::Random),
        ] {
            assert_eq!(s.parse::<Variant>(), Ok(v));
            assert_eq!(v.to_string().parse::<Variant>(), Ok(v));
            let j = serde_json::to_string(&v).unwrap();
            assert_eq!(serde_json::from_str::<Variant>(&j).unwrap(), v);
        }
        assert_eq!(
            serde_json::from_str::<Variant>("\"3\"").unwrap(),
            Variant::Fixed(3)
        );
        for bad in ["", "-1", "256", "1.5", "Random", "+1", "v1"] {
            assert!(bad.parse::<Variant>().is_err(), "{bad:?}");
        }
        assert!(serde_json::from_str::<Variant>("300").is_err());
        assert!(serde_json::from_str::<Variant>("\"any\"").is_err());
        assert_eq!(Variant::default(), Variant::CANONICAL);
    }

    #[test]
    fn the_random_draw_reads_far_from_the_task_draws() {
        let rng = ChaCha20Rng::from_seed([3; 32]);
        let mut task = rng.clone();
        let before: Vec<u64> = (0..8).map(|_| task.next_u64()).collect();
        // Picking never touches the words a generator reads, and repeats.
        let k = Variant::Random.pick(3, rng.clone());
        assert!(k < 3);
        assert_eq!(Variant::Random.pick(3, rng.clone()), k);
        let mut again = rng.clone();
        let after: Vec<u64> = (0..8).map(|_| again.next_u64()).collect();
        assert_eq!(before, after);
        assert_eq!(Variant::Fixed(2).pick(3, rng), 2);
        // Over many streams every template is drawn, roughly uniformly.
        let mut seen = [0u32; 3];
        for s in 0..300u64 {
            let mut r = ChaCha20Rng::from_seed([7; 32]);
            r.set_stream(s);
            seen[usize::from(Variant::Random.pick(3, r))] += 1;
        }
        assert!(seen.iter().all(|&c| c > 60), "{seen:?}");
    }
}
