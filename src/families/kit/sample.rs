//! Sampling helpers over a family's RNG. Generators stay pure functions of their
//! stream, so these only ever draw from the `ChaCha20Rng` they are given.

use rand::Rng;
use rand::seq::index::sample;
use rand_chacha::ChaCha20Rng;

/// `k` distinct indices of `0..n` in random order (a partial Fisher-Yates shuffle;
/// `k` is capped at `n`).
pub fn distinct_indices(rng: &mut ChaCha20Rng, n: usize, k: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    let k = k.min(n);
    for i in 0..k {
        let j = rng.random_range(i..n);
        idx.swap(i, j);
    }
    idx.truncate(k);
    idx
}

/// `k` distinct entries of `list`, in random order (`k <= list.len()`).
pub fn pick<'a>(rng: &mut ChaCha20Rng, list: &[&'a str], k: usize) -> Vec<&'a str> {
    sample(rng, list.len(), k)
        .into_iter()
        .map(|i| list[i])
        .collect()
}

/// One entry of a non-empty slice, uniformly.
pub fn one_of<'a, T>(rng: &mut ChaCha20Rng, list: &'a [T]) -> &'a T {
    &list[rng.random_range(0..list.len())]
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn draws_are_distinct_and_in_range() {
        let mut rng = ChaCha20Rng::from_seed([7; 32]);
        let v = distinct_indices(&mut rng, 10, 4);
        assert_eq!(v.len(), 4);
        assert!(v.iter().all(|&i| i < 10));
        let mut s = v.clone();
        s.sort_unstable();
        s.dedup();
        assert_eq!(s.len(), 4);
        assert_eq!(distinct_indices(&mut rng, 3, 9).len(), 3);
        let names = ["a", "b", "c", "d"];
        let p = pick(&mut rng, &names, 4);
        let mut q = p.clone();
        q.sort_unstable();
        assert_eq!(q, names);
        assert!(names.contains(one_of(&mut rng, &names)));
    }
}
