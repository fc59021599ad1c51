//! `caesar_cipher`: decrypt a sentence whose letters were shifted through the alphabet.
//!
//! The plaintext is a sequence of upper-case words from the crate's word list; each
//! letter was shifted forward by the key (wrapping Z to A), spaces are kept. At levels
//! 1 and 2 the question states the key; from level 3 on it does not, and the generator
//! redraws any sentence for which another key would also decode every word into a
//! word of the list, so the intended plaintext is the only sensible decryption.
//!
//! Verifier: case-insensitive (the question says so), runs of whitespace count as one
//! space; anything else (punctuation, extra words) scores 0.
//!
//! Levels (words, longest word, key range, key stated):
//! 1: 2..=3 words of at most 5 letters, key 1..=3, stated ·
//! 2: 3..=5 words of at most 6 letters, key 1..=7, stated ·
//! 3: 4..=6 words of at most 8 letters, key 1..=25, hidden ·
//! 4: 6..=10 words, any length, key 1..=25, hidden ·
//! 5: 10..=16 words, any length, key 1..=25, hidden.

use std::collections::HashSet;
use std::sync::OnceLock;

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::lexicon::{MAX_WORD, WORDS, words_with_len};
use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct CaesarCipher;

/// (min words, max words, max word length, max key, key stated) per level.
const PARAMS: [(usize, usize, usize, u8, bool); 5] = [
    (2, 3, 5, 3, true),
    (3, 5, 6, 7, true),
    (4, 6, 8, 25, false),
    (6, 10, 99, 25, false),
    (10, 16, 99, 25, false),
];

/// Shift every ASCII letter of `s` forward by `k` (mod 26), keeping its case.
pub(crate) fn shift(s: &str, k: u8) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' => (b'A' + (b - b'A' + k % 26) % 26) as char,
            b'a'..=b'z' => (b'a' + (b - b'a' + k % 26) % 26) as char,
            _ => b as char,
        })
        .collect()
}

fn dictionary() -> &'static HashSet<String> {
    static D: OnceLock<HashSet<String>> = OnceLock::new();
    D.get_or_init(|| WORDS.iter().map(|w| w.to_ascii_uppercase()).collect())
}

/// A word's letters relative to its first letter (mod 26): the same for every shift
/// of the word, different for words that are not shifts of each other.
fn shift_signature(w: &[u8]) -> Vec<u8> {
    let first = w.first().copied().unwrap_or(b'A');
    w.iter().map(|&b| (b + 26 - first) % 26).collect()
}

/// Signatures shared by two or more dictionary words (such as `CHEER` and `JOLLY`).
fn shared_signatures() -> &'static HashSet<Vec<u8>> {
    static S: OnceLock<HashSet<Vec<u8>>> = OnceLock::new();
    S.get_or_init(|| {
        let mut seen = HashSet::new();
        let mut shared = HashSet::new();
        for w in WORDS {
            let sig = shift_signature(w.to_ascii_uppercase().as_bytes());
            if !seen.insert(sig.clone()) {
                shared.insert(sig);
            }
        }
        shared
    })
}

/// Does a key other than `key` also turn every cipher word into a dictionary word?
/// A cipher word whose signature no two dictionary words share decodes to a
/// dictionary word under one key only, which settles the question without trying
/// all 25 keys.
fn ambiguous(cipher: &str, key: u8) -> bool {
    let shared = shared_signatures();
    if cipher
        .split(' ')
        .any(|w| !shared.contains(&shift_signature(w.as_bytes())))
    {
        return false;
    }
    let d = dictionary();
    (1..26u8)
        .filter(|&k| k != key)
        .any(|k| cipher.split(' ').all(|w| d.contains(&shift(w, 26 - k))))
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Data("{ciphertext}"),
            Piece::Text(
                "The line above is English text encrypted with a Caesar cipher: {#params.key_stated}every letter was moved {key} places forward in the alphabet (Z wraps around to A){/}{^params.key_stated}every letter was moved forward in the alphabet by the same number of places, which is not given (Z wraps around to A), and the plaintext consists of English words{/}. Spaces were left as they are. Recover the plaintext; letter case does not matter.",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[Piece::Text(
            "Caesar cipher decryption.\nCiphertext: {ciphertext|quoted}\nShift: {#params.key_stated}each letter was shifted forward by {key} (wrapping from Z to A){/}{^params.key_stated}unknown; each letter was shifted forward by the same amount (wrapping from Z to A), and the plaintext is made of English words{/}\nSpaces are unchanged and letter case does not matter. Decrypt the text.",
        )],
    ),
];

impl Family for CaesarCipher {
    fn name(&self) -> &'static str {
        "caesar_cipher"
    }
    fn category(&self) -> Category {
        Category::Algorithmic
    }
    fn description(&self) -> &'static str {
        "Decrypt a Caesar-shifted sentence (case-insensitive)"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let (lo, hi, maxlen, kmax, stated) = PARAMS[level.idx()];
        json!({"words_min": lo, "words_max": hi, "word_length_max": maxlen.min(MAX_WORD),
               "key_min": 1, "key_max": kmax, "key_stated": stated})
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let (lo, hi, maxlen, kmax, stated) = PARAMS[level.idx()];
        let pool = words_with_len(3, maxlen);
        let (plain, key, cipher) = loop {
            let n = rng.random_range(lo..=hi);
            let mut plain = String::with_capacity(n * 8);
            for i in 0..n {
                if i > 0 {
                    plain.push(' ');
                }
                plain.push_str(&pool[rng.random_range(0..pool.len())].to_ascii_uppercase());
            }
            let key = rng.random_range(1..=kmax);
            let cipher = shift(&plain, key);
            if stated || !ambiguous(&cipher, key) {
                break (plain, key, cipher);
            }
        };
        let how = if stated {
            format!(
                "Each letter was shifted forward by {key} positions in the alphabet (wrapping from Z to A)."
            )
        } else {
            "Each letter was shifted forward through the alphabet by the same unknown number \
             of positions (wrapping from Z to A); the plaintext is made of English words."
                .to_string()
        };
        Generated {
            body: Body::new()
                .text(format!(
                    "Decrypt this Caesar cipher text. {how} Spaces are unchanged. Case does not \
                     matter."
                ))
                .data(format!("Ciphertext: {cipher}")),
            format: AnswerFormat::with_example("as the decrypted text only", "THE QUICK BROWN FOX"),
            answer: plain.clone(),
            metadata: fields([
                ("ciphertext", Value::from(cipher)),
                ("key", Value::from(key)),
                ("plaintext", Value::from(plain)),
            ]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let m = Meta::of(instance);
        let (Some(cipher), Some(key)) = (m.str("ciphertext"), m.u64("key")) else {
            return 0.0;
        };
        if !(1..26).contains(&key) {
            return 0.0;
        }
        let want = shift(cipher, 26 - key as u8);
        if parse::eq_ci(answer, &want) {
            1.0
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::shift;

    #[test]
    fn ambiguity_is_detected() {
        // Find two list words that are shifts of each other (like ADD and BEE).
        let words: Vec<String> = super::WORDS
            .iter()
            .map(|w| w.to_ascii_uppercase())
            .collect();
        let pair = words.iter().find_map(|a| {
            (1..26u8).find_map(|k| words.contains(&shift(a, k)).then(|| (a.clone(), k)))
        });
        let (a, k) = pair.expect("the list has words that are shifts of each other");
        // Encrypted with key `key`, `a` also decodes under key `key - k` to a list word.
        let key = if k == 3 { 4 } else { 3 };
        assert!(super::ambiguous(&shift(&a, key), key), "{a} / {k}");
        assert!(!super::ambiguous(&shift("MOUNTAIN GARDEN", 4), 4));
    }

    #[test]
    fn the_format_example_is_never_a_plaintext() {
        // Plaintexts are list words; the example's words are not all in the list.
        let words = ["the", "quick", "brown", "fox"];
        assert!(!words.iter().all(|w| super::WORDS.contains(w)));
    }

    #[test]
    fn shifts_wrap() {
        assert_eq!(shift("XYZ abc", 3), "ABC def");
        assert_eq!(shift(&shift("HELLO WORLD", 11), 15), "HELLO WORLD");
    }
}
