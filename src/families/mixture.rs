//! Weighted mixtures of families: a composite dataset whose item `i` is drawn from one
//! of several (family, level, variant) parts with probability proportional to the
//! part's weight.
//!
//! Which part serves item `i` comes from one ChaCha20 stream keyed by SHA-256 over the
//! seed and every part (name, version, level, variant, weight), so a mixture is a
//! function of its seed and parts alone. The instance itself is the next unused one of
//! its part's own [`InstanceStream`] at the mixture's seed: the k-th item drawn from a
//! part is that stream's instance `k`, exactly what `hrl tasks gen FAMILY --seed SEED
//! --level LEVEL --variant VARIANT` prints on line `k + 1`. Parts are never split
//! between mixtures of different seeds, and a part appears at most once.

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use rand_chacha::rand_core::SeedableRng;
use sha2::{Digest, Sha256};

use super::{Family, FamilyError, Instance, InstanceStream, Level, Variant};

/// One part of a mixture.
#[derive(Clone, Copy)]
pub struct Part {
    pub family: &'static dyn Family,
    pub level: Level,
    pub variant: Variant,
    /// Relative weight: finite and above 0.
    pub weight: f64,
}

/// A mixture of `len` items over its parts (see the module docs).
pub struct Mixture {
    parts: Vec<Part>,
    streams: Vec<InstanceStream>,
    /// Per item: its part and its index in that part's stream.
    part: Vec<u16>,
    index: Vec<u64>,
}

impl Mixture {
    /// Draw which part serves each of `size` items. Refuses no parts, more than
    /// 65,535 parts, a weight that is not finite and above 0, a part listed twice
    /// (same family, level and variant), a variant out of a family's range and a size
    /// of 0.
    pub fn new(parts: Vec<Part>, seed: u64, size: u64) -> Result<Mixture, FamilyError> {
        if parts.is_empty() {
            return Err(FamilyError::BadMixture(
                "a mixture needs at least one family".into(),
            ));
        }
        if parts.len() > usize::from(u16::MAX) {
            return Err(FamilyError::BadMixture(format!(
                "a mixture holds at most {} parts, not {}",
                u16::MAX,
                parts.len()
            )));
        }
        if size == 0 {
            return Err(FamilyError::ZeroCount);
        }
        for (i, p) in parts.iter().enumerate() {
            if !(p.weight.is_finite() && p.weight > 0.0) {
                return Err(FamilyError::BadMixture(format!(
                    "the weight of `{}` must be a finite number above 0, not {}",
                    p.family.name(),
                    p.weight
                )));
            }
            if parts[..i].iter().any(|q| same_part(p, q)) {
                return Err(FamilyError::BadMixture(format!(
                    "`{}` at level {} and variant {} is listed twice",
                    p.family.name(),
                    p.level.get(),
                    p.variant
                )));
            }
        }
        let streams = parts
            .iter()
            .map(|p| InstanceStream::new(p.family, p.level, seed).with_variant(p.variant))
            .collect::<Result<Vec<_>, _>>()?;
        let total: f64 = parts.iter().map(|p| p.weight).sum();
        let mut bounds = Vec::with_capacity(parts.len());
        let mut acc = 0.0;
        for p in &parts {
            acc += p.weight / total;
            bounds.push(acc);
        }
        let mut rng = ChaCha20Rng::from_seed(key(&parts, seed));
        let cap = usize::try_from(size).unwrap_or(usize::MAX).min(1 << 24);
        let (mut part, mut index) = (Vec::with_capacity(cap), Vec::with_capacity(cap));
        let mut next = vec![0u64; parts.len()];
        for _ in 0..size {
            let u: f64 = rng.random();
            // The last bound may fall short of 1.0 by rounding: the last part takes it.
            let k = bounds
                .iter()
                .position(|&b| u < b)
                .unwrap_or(parts.len() - 1);
            part.push(k as u16);
            index.push(next[k]);
            next[k] += 1;
        }
        Ok(Mixture {
            parts,
            streams,
            part,
            index,
        })
    }

    pub fn len(&self) -> u64 {
        self.part.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.part.is_empty()
    }

    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// The part serving item `i` and the index of the instance in that part's stream.
    /// Panics when `i` is out of range.
    pub fn source(&self, i: u64) -> (usize, u64) {
        let i = usize::try_from(i).expect("item index fits usize");
        (usize::from(self.part[i]), self.index[i])
    }

    /// Item `i`. Panics when `i` is out of range.
    pub fn instance(&self, i: u64) -> Instance {
        let (p, k) = self.source(i);
        self.streams[p].instance(k)
    }
}

fn same_part(a: &Part, b: &Part) -> bool {
    a.family.name() == b.family.name() && a.level == b.level && a.variant == b.variant
}

fn key(parts: &[Part], seed: u64) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"harness-rl/mixture/v1\0");
    h.update(seed.to_le_bytes());
    h.update((parts.len() as u64).to_le_bytes());
    for p in parts {
        let name = p.family.name();
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update(p.family.version().to_le_bytes());
        h.update([p.level.get()]);
        let variant = p.variant.to_string();
        h.update((variant.len() as u64).to_le_bytes());
        h.update(variant.as_bytes());
        h.update(p.weight.to_bits().to_le_bytes());
    }
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(name: &str, level: u8, weight: f64) -> Part {
        Part {
            family: super::super::get(name).unwrap(),
            level: Level::new(level).unwrap(),
            variant: Variant::CANONICAL,
            weight,
        }
    }

    #[test]
    fn items_are_the_parts_streams_in_order_and_follow_the_weights() {
        let m = Mixture::new(vec![part("gcd", 1, 3.0), part("maze", 2, 1.0)], 5, 2000).unwrap();
        let mut seen = [0u64; 2];
        for i in 0..m.len() {
            let (p, k) = m.source(i);
            assert_eq!(k, seen[p], "item {i}");
            seen[p] += 1;
        }
        // 3:1 weights: the first part's share is 0.75 within a few standard errors.
        let share = seen[0] as f64 / 2000.0;
        assert!((share - 0.75).abs() < 0.04, "share {share}");
        let (p, k) = m.source(17);
        let want = InstanceStream::new(m.parts()[p].family, m.parts()[p].level, 5).instance(k);
        assert_eq!(m.instance(17), want);
        // A function of seed and parts: the same again, another seed differs.
        let again = Mixture::new(vec![part("gcd", 1, 3.0), part("maze", 2, 1.0)], 5, 2000).unwrap();
        assert_eq!(again.part, m.part);
        let other = Mixture::new(vec![part("gcd", 1, 3.0), part("maze", 2, 1.0)], 6, 2000).unwrap();
        assert_ne!(other.part, m.part);
    }

    #[test]
    fn bad_mixtures_are_refused_by_name() {
        let err = |parts: Vec<Part>| Mixture::new(parts, 0, 10).err().unwrap().to_string();
        assert_eq!(err(vec![]), "a mixture needs at least one family");
        assert!(err(vec![part("gcd", 1, 0.0)]).contains("weight of `gcd`"));
        assert!(err(vec![part("gcd", 1, f64::NAN)]).contains("weight of `gcd`"));
        assert!(err(vec![part("gcd", 1, 1.0), part("gcd", 1, 2.0)]).contains("listed twice"));
        assert!(Mixture::new(vec![part("gcd", 1, 1.0), part("gcd", 2, 2.0)], 0, 10).is_ok());
        let mut p = part("gcd", 1, 1.0);
        p.variant = Variant::Fixed(200);
        assert!(err(vec![p]).contains("variant 200 is out of range for `gcd`"));
        assert!(matches!(
            Mixture::new(vec![part("gcd", 1, 1.0)], 0, 0),
            Err(FamilyError::ZeroCount)
        ));
    }
}
