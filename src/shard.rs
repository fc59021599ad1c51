//! `--shard I/N`: a deterministic partition of a run's work units among N processes,
//! so that any batch system (a Slurm array, a Kubernetes indexed Job) can fan a run
//! out without a scheduler of ours. Units are numbered in the run's canonical order;
//! shard `I` (1-based) takes every unit `u` with `u mod N = I - 1` (round-robin, like
//! `cargo nextest --partition count:I/N`), so shards are disjoint, cover every unit,
//! and differ in size by at most one. `hrl merge` (`crate::eval::merge`) combines the
//! shards' run directories into the run directory of the unsharded run.
//!
//! What a unit is depends on the command: `hrl eval` and `hrl transfer`, one
//! (task, harness sample) pair, numbered task-major in suite order; `hrl run`, one
//! item (with all its `--samples` rollouts), numbered in task-set order.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A bad `--shard` value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--shard {given}: {message}")]
pub struct ShardError {
    pub given: String,
    pub message: String,
}

impl crate::error::Classify for ShardError {
    fn kind(&self) -> crate::error::ErrorKind {
        crate::error::ErrorKind::Usage
    }
}

/// Shard `index` of `count` (1 <= index <= count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shard {
    index: u32,
    count: u32,
}

/// Most shards of one run.
pub const MAX_SHARDS: u32 = 100_000;

impl Shard {
    pub fn new(index: u32, count: u32) -> Result<Shard, ShardError> {
        let given = format!("{index}/{count}");
        if count == 0 || count > MAX_SHARDS {
            return Err(ShardError {
                given,
                message: format!("the shard count must be in 1..={MAX_SHARDS}"),
            });
        }
        if index == 0 || index > count {
            return Err(ShardError {
                given,
                message: format!("the shard index must be in 1..={count} (shards count from 1)"),
            });
        }
        Ok(Shard { index, count })
    }

    /// The 1-based index.
    pub fn index(&self) -> u32 {
        self.index
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    /// Does unit `unit` (0-based, in the run's canonical order) belong to this shard?
    pub fn contains(&self, unit: usize) -> bool {
        unit % self.count as usize == (self.index - 1) as usize
    }

    /// The units of `0..total` this shard takes.
    pub fn units(&self, total: usize) -> Vec<usize> {
        (0..total).filter(|&u| self.contains(u)).collect()
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = ShardError;
    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let bad = |m: &str| ShardError {
            given: s.to_string(),
            message: m.to_string(),
        };
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| bad("expected I/N, e.g. 2/8 (the second of eight shards)"))?;
        let i: u32 = i
            .trim()
            .parse()
            .map_err(|_| bad("the shard index is not a whole number"))?;
        let n: u32 = n
            .trim()
            .parse()
            .map_err(|_| bad("the shard count is not a whole number"))?;
        Shard::new(i, n).map_err(|e| ShardError {
            given: s.to_string(),
            message: e.message,
        })
    }
}

impl Serialize for Shard {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Shard {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Shard, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_units() {
        for n in 1..=7u32 {
            let mut seen = vec![0; 23];
            for i in 1..=n {
                let s = Shard::new(i, n).unwrap();
                let u = s.units(23);
                assert!(u.len() == 23 / n as usize || u.len() == 23 / n as usize + 1);
                for x in u {
                    seen[x] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "n = {n}: {seen:?}");
        }
    }

    #[test]
    fn parse_and_errors() {
        let s: Shard = "2/3".parse().unwrap();
        assert_eq!((s.index(), s.count()), (2, 3));
        assert_eq!(s.to_string(), "2/3");
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"2/3\"");
        assert_eq!(serde_json::from_str::<Shard>("\"2/3\"").unwrap(), s);
        for (bad, why) in [
            ("0/3", "count from 1"),
            ("4/3", "1..=3"),
            ("1/0", "count must be"),
            ("x/3", "index is not"),
            ("3", "expected I/N"),
        ] {
            let e = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(
                e.contains(why) && e.starts_with(&format!("--shard {bad}")),
                "{e}"
            );
        }
    }
}
