//! Plural nouns written for this crate: the terms of `syllogism`'s categorical
//! statements.

/// Plural nouns for syllogism terms (64), chosen so that no two obviously overlap by
/// meaning in everyday knowledge more than any other pair.
pub const PLURALS: &[&str] = &[
    "accountants",
    "acrobats",
    "admirals",
    "alchemists",
    "archers",
    "architects",
    "astronomers",
    "bakers",
    "bankers",
    "barbers",
    "beekeepers",
    "blacksmiths",
    "botanists",
    "brewers",
    "butchers",
    "carpenters",
    "cartographers",
    "chemists",
    "chess players",
    "clockmakers",
    "cobblers",
    "composers",
    "cyclists",
    "dancers",
    "detectives",
    "diplomats",
    "divers",
    "drummers",
    "economists",
    "engineers",
    "falconers",
    "farmers",
    "fencers",
    "firefighters",
    "fishermen",
    "florists",
    "gardeners",
    "geologists",
    "glassblowers",
    "historians",
    "jugglers",
    "knitters",
    "lawyers",
    "librarians",
    "locksmiths",
    "magicians",
    "puppeteers",
    "mathematicians",
    "merchants",
    "miners",
    "hikers",
    "navigators",
    "novelists",
    "painters",
    "pharmacists",
    "philosophers",
    "pilots",
    "poets",
    "potters",
    "sailors",
    "sculptors",
    "tailors",
    "violinists",
    "weavers",
];

#[cfg(test)]
mod tests {
    use super::PLURALS;

    #[test]
    fn plurals_are_distinct_lowercase() {
        let mut seen = std::collections::BTreeSet::new();
        for p in PLURALS {
            assert!(
                p.bytes().all(|b| b.is_ascii_lowercase() || b == b' '),
                "{p}"
            );
            assert!(seen.insert(*p), "duplicate {p}");
        }
    }
}
