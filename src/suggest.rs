//! "Did you mean" for names a user types (family names, suite and harness fields):
//! the known name closest in edit distance, when it is close enough to be a typo.
//! A leaf: it imports nothing from the crate.

/// Edit distance between `a` and `b` over characters: insertions, deletions,
/// substitutions and swaps of two adjacent characters (`gdc` is 1 from `gcd`), each
/// counting 1 (the optimal-string-alignment distance).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // d[i][j]: the distance between a[..i] and b[..j].
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// The candidate closest to `word`, if it is within a third of the longer name's
/// length (at least 1 edit, at most 3): `gdc` finds `gcd`, `tasks` finds `task`;
/// ties go to the first candidate given.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == word {
            continue;
        }
        let d = edit_distance(word, c);
        let limit = (word.chars().count().max(c.chars().count()) / 3).clamp(1, 3);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// ` (did you mean `NAME`?)` for the closest candidate, or an empty string.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates)
        .map(|c| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("gcd", "gdc"), 1);
        assert_eq!(edit_distance("abc", "ca"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("task", "tasks"), 1);
    }

    #[test]
    fn typos_find_their_name_and_strangers_find_none() {
        let names = ["gcd", "maze", "sorting", "task", "tasks_x"];
        assert_eq!(closest("gdc", names), Some("gcd"));
        assert_eq!(closest("sortng", names), Some("sorting"));
        assert_eq!(closest("tasks", names), Some("task"));
        assert_eq!(closest("banana", names), None);
        assert_eq!(closest("gcd", names), None, "an exact name is no typo");
        assert_eq!(did_you_mean("mazee", names), " (did you mean `maze`?)");
        assert_eq!(did_you_mean("zzzzzz", names), "");
    }
}
