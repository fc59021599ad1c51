//! `letter_jumble`: restore words whose letters have been shuffled.
//!
//! Words come from the shared word list (`words::WORDS`), restricted to words that
//! have no other anagram — neither in the list nor among English words outside it (a
//! hand-kept exclusion list, [`HAS_ANAGRAM`]) — so every jumbled word has exactly one
//! answer (`tca` could be `cat` or `act`, so neither is used). Each word's letters
//! are shuffled until they differ from the word. Two tests keep the promise over the
//! whole pool: no pool word has another anagram in any of the crate's word lists
//! (`WORDS`, `word_ladder`'s three- and four-letter words, the plural nouns), nor
//! among the lowercase entries of Debian's `wamerican` list
//! (`/usr/share/dict/american-english`, installed by `make deps`; the test says so
//! loudly and skips where the file is missing).
//!
//! Version 2 removed the 24 pool words version 1 drew that have another anagram in
//! that list (`rock`/`cork`, `add`/`dad`, `friend`/`finder`, `kitchen`/`thicken`,
//! `woodland`/`download`, `education`/`auctioned`, ...): their jumbles had two
//! answers and the verifier accepts one.
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
use crate::families::kit::question::{AnswerFormat, Body, Wording};
use crate::families::kit::template::{Piece, Template};
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

/// Words of the shared list that are anagrams of English words outside the list
/// (`ant`/`tan`, `east`/`seat`, `listen`/`silent`, `rock`/`cork`, ...). Anagram pairs
/// inside the list are found by [`pool`] itself.
pub(crate) const HAS_ANAGRAM: &[&str] = &[
    "ant",
    "arm",
    "art",
    "bag",
    "bat",
    "boy",
    "bus",
    "car",
    "dog",
    "ear",
    "eat",
    "end",
    "gas",
    "gum",
    "ink",
    "jar",
    "lap",
    "law",
    "leg",
    "lid",
    "map",
    "new",
    "nut",
    "owl",
    "pan",
    "pin",
    "run",
    "sip",
    "tap",
    "tin",
    "top",
    "pot",
    "barn",
    "bear",
    "bone",
    "calm",
    "coat",
    "cold",
    "crab",
    "deer",
    "door",
    "dust",
    "east",
    "fire",
    "goat",
    "idea",
    "iron",
    "lake",
    "leaf",
    "lion",
    "moon",
    "nest",
    "news",
    "nose",
    "pear",
    "rain",
    "road",
    "room",
    "rope",
    "salt",
    "ship",
    "shoe",
    "snow",
    "star",
    "stem",
    "tide",
    "wolf",
    "yard",
    "blue",
    "soap",
    "bread",
    "brush",
    "cloud",
    "coast",
    "crane",
    "dance",
    "dream",
    "field",
    "grape",
    "horse",
    "lemon",
    "mango",
    "night",
    "ocean",
    "olive",
    "paint",
    "peach",
    "pearl",
    "plate",
    "quiet",
    "smile",
    "snake",
    "spoon",
    "stone",
    "table",
    "tower",
    "whale",
    "listen",
    "garden",
    "forest",
    "desert",
    "planet",
    "parrot",
    "castle",
    "silver",
    "spider",
    "orange",
    "finger",
    "farmer",
    "travel",
    "painter",
    "teacher",
    "meadow",
    "fruit",
    "toast",
    "eagle",
    "heart",
    "earth",
    "hop",
    "sad",
    "bed",
    "animal",
    "street",
    "ginger",
    // Version 2: another anagram among the lowercase words of Debian's `wamerican`
    // list (`dad`, `cork` are in the crate's own lists as well).
    "add",
    "hot",
    "lab",
    "kind",
    "kite",
    "rock",
    "silk",
    "tail",
    "glass",
    "candle",
    "circle",
    "friend",
    "ladder",
    "saddle",
    "kitchen",
    "weather",
    "treasure",
    "woodland",
    "education",
    "hurricane",
    "wonderful",
    "instrument",
    "conversation",
    "presentation",
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

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[
            Piece::Text(
                "Unscramble {^jumbled.1}this word{/}{#jumbled.1}each of these {jumbled|len} words{/}: {jumbled|comma}. {^jumbled.1}It is an English word{/}{#jumbled.1}Each is an English word{/} whose letters were put in a random order, and there is exactly one solution.",
            ),
            Piece::Text(
                "{^jumbled.1}Write the word.{/}{#jumbled.1}Write the words in the order given, separated by spaces.{/} Letter case does not matter.",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Data("{jumbled|lines}"),
            Piece::Text(
                "{^jumbled.1}The line above is an English word{/}{#jumbled.1}Each line above is an English word{/} with its letters shuffled; each has exactly one answer. Recover {^jumbled.1}the original word{/}{#jumbled.1}the original words and write them on one line in the same order, separated by spaces{/}. Case is ignored.",
            ),
        ],
    ),
];

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
        2
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
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
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

    fn signature(w: &str) -> Vec<u8> {
        let mut b = w.to_ascii_lowercase().into_bytes();
        b.sort_unstable();
        b
    }

    /// The pool words that share their letters with another word of `words`.
    fn with_other_anagram<'a>(words: impl Iterator<Item = &'a str> + Clone) -> Vec<String> {
        pool()
            .iter()
            .filter_map(|w| {
                let s = signature(w);
                let others: Vec<&str> = words
                    .clone()
                    .filter(|x| *x != *w && signature(x) == s)
                    .collect();
                (!others.is_empty()).then(|| format!("{w} ({})", others.join(", ")))
            })
            .collect()
    }

    #[test]
    fn no_pool_word_has_another_anagram_in_the_crates_word_lists() {
        use crate::families::games::ladder_words::{FOUR, THREE};
        use crate::families::kit::lexicon::PLURALS;
        let lists = WORDS
            .iter()
            .chain(THREE.iter())
            .chain(FOUR.iter())
            .chain(PLURALS.iter())
            .copied();
        let bad = with_other_anagram(lists);
        assert!(bad.is_empty(), "jumbles with two answers: {bad:?}");
        // The two the audit found (level 1, seeds 5 and 7).
        assert!(!pool().contains(&"rock") && !pool().contains(&"add"));
    }

    #[test]
    fn no_pool_word_has_another_anagram_in_a_standard_word_list() {
        const LIST: &str = "/usr/share/dict/american-english";
        let Ok(text) = std::fs::read(LIST) else {
            eprintln!(
                "\n*** SKIPPED letter_jumble's standard-word-list check: {LIST} is missing; \
                 install Debian's `wamerican` (`make deps` does) to run it ***\n"
            );
            return;
        };
        // Lowercase ASCII entries only: proper nouns and possessives are not answers.
        let text = String::from_utf8_lossy(&text);
        let words: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase()))
            .collect();
        assert!(words.len() > 10_000, "{LIST} has {} words", words.len());
        let bad = with_other_anagram(words.iter().copied());
        assert!(bad.is_empty(), "jumbles with two answers: {bad:?}");
    }
}
