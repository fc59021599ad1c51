//! The crate's own word lists, written for this project and shared by every family
//! that needs words: English words (by length), given names, plural nouns. Unit tests
//! keep each list clean (ASCII, no duplicates) so generators can rely on it.

mod names;
mod nouns;
mod words;

use std::sync::OnceLock;

pub use names::{FEMALE, MALE, NAMES};
pub use nouns::PLURALS;
pub use words::WORDS;

/// Length of the longest word in [`WORDS`] (a unit test keeps it honest).
pub const MAX_WORD: usize = 14;

/// Words sorted by (length, text), built once.
fn by_length() -> &'static [&'static str] {
    static SORTED: OnceLock<Vec<&'static str>> = OnceLock::new();
    SORTED.get_or_init(|| {
        let mut v = WORDS.to_vec();
        v.sort_by_key(|w| (w.len(), *w));
        v
    })
}

/// Every word of [`WORDS`] whose length lies in `min..=max` (a contiguous slice of a
/// table built once).
pub fn words_with_len(min: usize, max: usize) -> &'static [&'static str] {
    let all = by_length();
    let lo = all.partition_point(|w| w.len() < min);
    let hi = all.partition_point(|w| w.len() <= max);
    &all[lo..hi.max(lo)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_by_length_are_in_range() {
        let w = words_with_len(5, 6);
        assert!(w.len() > 50);
        assert!(w.iter().all(|x| (5..=6).contains(&x.len())));
        assert!(words_with_len(12, 99).len() >= 20);
        assert!(words_with_len(40, 50).is_empty());
        assert!(words_with_len(6, 5).is_empty());
        assert_eq!(WORDS.iter().map(|w| w.len()).max(), Some(MAX_WORD));
    }
}
