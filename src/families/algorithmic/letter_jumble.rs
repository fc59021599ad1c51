//! `letter_jumble`: restore words whose letters have been shuffled.
//!
//! Words come from the shared word list (`words::WORDS`), restricted to words that
//! have no anagram — neither in the list nor among common English words (a hand-kept
//! exclusion list, [`HAS_ANAGRAM`]) — so every jumbled word has exactly one answer
//! (`tca` could be `cat` or `act`, so neither is used). Each word's letters are
//! shuffled until they differ from the word.
//!
//! Levels (number of distinct words, word length): 1: 1, 3..=5 · 2: 2..=3, 4..=5 ·
//! 3: 3..=5, 4..=7 · 4: 5..=7, 5..=10 · 5: 7..=10, 6..=14.
//!
//! Gold: the words in order, separated by single spaces. Verifier: the same number of
//! words, separated by whitespace and/or commas, each equal to its original word with
//! ASCII case ignored (U+212A KELVIN SIGN and other lookalikes are not letters here).
//! The format example has a different number of words than the instance, so it is
//! never accepted. Metadata: `jumbled` and `words` (lists of strings).

use std::sync::OnceLock;

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::lexicon::WORDS;
use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct LetterJumble;

/// (words min, words max, length min, length max) per level.
const PARAMS: [(usize, usize, usize, usize); 5] = [
    (1, 1, 3, 5),
    (2, 3, 4, 5),
    (3, 5, 4, 7),
    (5, 7, 5, 10),
    (7, 10, 6, 14),
];

/// Words of the shared list that are anagrams of common English words outside the
/// list (`ant`/`tan`, `east`/`seat`, `listen`/`silent`, ...). Anagram pairs inside the
/// list are found by [`pool`] itself.
pub(crate) const HAS_ANAGRAM: &[&str] = &[
    "ant", "arm", "art", "bag", "bat", "boy", "bus", "car", "dog", "ear", "eat", "end", "gas",
    "gum", "ink", "jar", "lap", "law", "leg", "lid", "map", "new", "nut", "owl", "pan", "pin",
    "run", "sip", "tap", "tin", "top", "pot", "barn", "bear", "bone", "calm", "coat", "cold",
    "crab", "deer", "door", "dust", "east", "fire", "goat", "idea", "iron", "lake", "leaf", "lion",
    "moon", "nest", "news", "nose", "pear", "rain", "road", "room", "rope", "salt", "ship", "shoe",
    "snow", "star", "stem", "tide", "wolf", "yard", "blue", "soap", "bread", "brush", "cloud",
    "coast", "crane", "dance", "dream", "field", "grape", "horse", "lemon", "mango", "night",
    "ocean", "olive", "paint", "peach", "pearl", "plate", "quiet", "smile", "snake", "spoon",
    "stone", "table", "tower", "whale", "listen", "garden", "forest", "desert", "planet", "parrot",
    "castle", "silver", "spider", "orange", "finger", "farmer", "travel", "painter", "teacher",
    "meadow", "fruit", "toast", "eagle", "heart", "earth", "hop", "sad", "bed", "animal", "street",
    "ginger",
];

/// The words usable by the generator: no anagram inside the list, none in
/// [`HAS_ANAGRAM`], and not made of one repeated letter. Sorted by (length, word).
fn pool() -> &'static [&'static str] {
    static POOL: OnceLock<Vec<&'static str>> = OnceLock::new();
    POOL.get_or_init(|| {
        let sig = |w: &str| {
            let mut b = w.as_bytes().to_vec();
            b.sort_unstable();
            b
        };
        let mut v: Vec<&'static str> = WORDS
            .iter()
            .copied()
            .filter(|w| !HAS_ANAGRAM.contains(w))
            .filter(|w| {
                let s = sig(w);
                WORDS.iter().filter(|x| sig(x) == s).count() == 1
            })
            .filter(|w| w.bytes().any(|b| b != w.as_bytes()[0]))
            .collect();
        v.sort_by_key(|w| (w.len(), *w));
        v
    })
}

fn with_len(min: usize, max: usize) -> &'static [&'static str] {
    let all = pool();
    let lo = all.partition_point(|w| w.len() < min);
    let hi = all.partition_point(|w| w.len() <= max);
    &all[lo..hi]
}

fn jumble(rng: &mut ChaCha20Rng, w: &str) -> String {
    let mut b = w.as_bytes().to_vec();
    loop {
        b.shuffle(rng);
        if b != w.as_bytes() {
            // Words are lowercase ASCII, so any byte order is valid UTF-8.
            return String::from_utf8(b).expect("ASCII word");
        }
    }
}

impl Family for LetterJumble {
    fn name(&self) -> &'static str {
        "letter_jumble"
    }
    fn category(&self) -> Category {
        Category::Algorithmic
    }
    fn description(&self) -> &'static str {
        "Restore words whose letters were shuffled (each has exactly one answer)"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> Value {
        let (wmin, wmax, lmin, lmax) = PARAMS[level.idx()];
        json!({"words_min": wmin, "words_max": wmax, "length_min": lmin, "length_max": lmax})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (wmin, wmax, lmin, lmax) = PARAMS[level.idx()];
        let candidates = with_len(lmin, lmax);
        let n = rng.random_range(wmin..=wmax);
        let words: Vec<&str> = rand::seq::index::sample(rng, candidates.len(), n)
            .into_iter()
            .map(|i| candidates[i])
            .collect();
        let jumbled: Vec<String> = words.iter().map(|w| jumble(rng, w)).collect();
        // A different number of words, or (one word) a word longer than any at level 1,
        // so the example is never the answer.
        let example = match n {
            1 => "example",
            2 => "first second third",
            _ => "first second",
        };
        let (what, them) = if n == 1 {
            ("The letters of this English word have", "Write the word")
        } else {
            (
                "The letters of each of these English words have",
                "Write the words in the same order, separated by spaces",
            )
        };
        Generated {
            body: Body::new()
                .text(format!(
                    "{what} been shuffled. Restore the original {}. Each has exactly one answer.",
                    if n == 1 { "word" } else { "words" }
                ))
                .data(jumbled.join(" "))
                .text(format!("{them}. Case does not matter.")),
            format: AnswerFormat::with_example(
                if n == 1 {
                    "as the restored word"
                } else {
                    "as the restored words"
                },
                example,
            ),
            answer: words.join(" "),
            metadata: fields([("jumbled", json!(jumbled)), ("words", json!(words))]),
        }
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let (Some(words), Some(given)) =
            (Meta::of(instance).strs("words"), parse::list_items(answer))
        else {
            return 0.0;
        };
        if given.len() == words.len()
            && given
                .iter()
                .zip(&words)
                .all(|(a, w)| a.eq_ignore_ascii_case(w))
        {
            1.0
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_level_has_enough_words() {
        // The one-word example is longer than level 1's words (the only one-word level).
        assert!(PARAMS.iter().all(|p| p.0 > 1 || p.3 < "example".len()));
        for (_, _, lo, hi) in PARAMS {
            assert!(with_len(lo, hi).len() >= 40, "{lo}..={hi}");
        }
        assert!(!pool().contains(&"cat") && !pool().contains(&"east"));
        assert!(pool().contains(&"zebra"));
        for w in HAS_ANAGRAM {
            assert!(WORDS.contains(w), "{w} is not in the word list");
        }
    }
}
