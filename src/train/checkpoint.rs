//! Policy checkpoints: versioned JSON that loads back bit-exactly.
//!
//! A checkpoint holds the action vocabulary and feature list the weights follow (a
//! checkpoint whose lists differ from this build's is refused, never silently
//! re-mapped), the weights θ, the initial weights θ₀ (for the KL term), the Adam
//! state, the randomness state and the metadata of the run that wrote it (suite path
//! and sha256, seed, executor spec and identity hash, executor model id — a GGUF's
//! sha256 —, the training families and levels (`trained_on`), steps done, crate version, the resolved training settings).
//!
//! Randomness: every random choice of training derives from (run seed, step, context,
//! candidate) by hashing ([`super::trainer`]), so the RNG state is the seed and the
//! number of steps done; nothing else needs saving for `--resume` to continue exactly.
//! Floats are written by serde_json with `float_roundtrip`, so every f64 parses back
//! to the same bits (tested).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::TrainError;
use super::features::FEATURES;
use super::policy::{Adam, Policy, Vocabulary};
use crate::proposer::TrainedOn;

/// The `format` field of every checkpoint.
pub const FORMAT: &str = "harness-rl/policy-checkpoint";
/// The version this build writes and reads.
pub const VERSION: u32 = 1;

/// What produced a checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    pub crate_version: String,
    pub git_commit: String,
    pub suite: Option<String>,
    pub suite_sha256: Option<String>,
    pub seed: u64,
    pub executor_spec: Option<String>,
    /// The executor identity hash (model, build, output settings).
    pub executor_hash: Option<String>,
    /// The executor's model id: the GGUF's sha256 for llama.cpp models.
    pub executor_model_sha256: Option<String>,
    /// The hash of the sandbox's interpreter (version and installed packages:
    /// `PythonInstall::hash`) the rollouts ran with; absent in checkpoints written
    /// before it was recorded and in the untrained policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_python: Option<String>,
    /// The training tasks (families and levels), their splits and the suite's
    /// sha256: what `hrl eval` / `hrl transfer` check held-out claims against.
    /// Absent in checkpoints written before it was recorded (accepted with a warning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trained_on: Option<TrainedOn>,
    /// Training steps done.
    pub steps: u64,
    /// The resolved training settings without what does not change a result (the
    /// output directory, the step count, the cache: `TrainSettings::fingerprint`).
    pub settings: serde_json::Value,
}

/// The randomness state (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RngState {
    pub seed: u64,
    pub step: u64,
}

/// A checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    pub format: String,
    pub version: u32,
    pub actions: Vec<String>,
    pub features: Vec<String>,
    /// The longest revision (edits before `stop`).
    pub max_edits: usize,
    pub mask_invalid: bool,
    pub theta: Vec<f64>,
    pub theta0: Vec<f64>,
    pub adam: Adam,
    pub rng: RngState,
    pub metadata: Metadata,
}

impl Checkpoint {
    /// A fresh, uniform (all-zero) policy.
    pub fn uniform(max_edits: usize, mask_invalid: bool, metadata: Metadata) -> Checkpoint {
        let vocab = Vocabulary::builtin();
        let p = Policy::uniform(vocab.len(), FEATURES.len());
        Checkpoint {
            format: FORMAT.into(),
            version: VERSION,
            actions: vocab.names(),
            features: FEATURES.iter().map(|s| s.to_string()).collect(),
            max_edits,
            mask_invalid,
            adam: Adam::new(p.theta.len()),
            theta0: p.theta.clone(),
            theta: p.theta,
            rng: RngState {
                seed: metadata.seed,
                step: 0,
            },
            metadata,
        }
    }

    pub fn policy(&self) -> Policy {
        Policy {
            actions: self.actions.len(),
            features: self.features.len(),
            theta: self.theta.clone(),
        }
    }

    pub fn initial_policy(&self) -> Policy {
        Policy {
            actions: self.actions.len(),
            features: self.features.len(),
            theta: self.theta0.clone(),
        }
    }

    /// The JSON text (pretty, newline-terminated).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a checkpoint serialises");
        s.push('\n');
        s
    }

    /// Parse and check a checkpoint text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Checkpoint, TrainError> {
        let bad = |m: String| TrainError::Checkpoint {
            path: origin.to_string(),
            message: m,
        };
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| bad(format!("line {}: {e}", e.line())))?;
        match v.get("format").and_then(|f| f.as_str()) {
            Some(FORMAT) => {}
            other => {
                return Err(bad(format!(
                    "not a policy checkpoint (format {other:?}, expected {FORMAT:?})"
                )));
            }
        }
        match v.get("version").and_then(|f| f.as_u64()) {
            Some(x) if x == u64::from(VERSION) => {}
            other => {
                return Err(bad(format!(
                    "checkpoint version {other:?}; this build reads version {VERSION}"
                )));
            }
        }
        let c: Checkpoint =
            serde_json::from_str(text).map_err(|e| bad(format!("line {}: {e}", e.line())))?;
        let vocab = Vocabulary::builtin().names();
        if c.actions != vocab {
            return Err(bad(format!(
                "its action vocabulary ({} actions) is not this build's ({} actions)",
                c.actions.len(),
                vocab.len()
            )));
        }
        if c.features != FEATURES {
            return Err(bad(format!(
                "its feature list ({} features) is not this build's ({})",
                c.features.len(),
                FEATURES.len()
            )));
        }
        let n = c.actions.len() * c.features.len() + c.actions.len();
        for (field, len) in [
            ("theta", c.theta.len()),
            ("theta0", c.theta0.len()),
            ("adam.m", c.adam.m.len()),
            ("adam.v", c.adam.v.len()),
        ] {
            if len != n {
                return Err(bad(format!("`{field}` has {len} values, expected {n}")));
            }
        }
        if c.max_edits == 0 || c.max_edits > 32 {
            return Err(bad(format!(
                "`max_edits` {} is outside 1..=32",
                c.max_edits
            )));
        }
        if c.theta.iter().chain(&c.theta0).any(|x| !x.is_finite()) {
            return Err(bad("a weight is not finite".into()));
        }
        Ok(c)
    }

    pub fn load(path: &Path) -> Result<Checkpoint, TrainError> {
        let text = std::fs::read_to_string(path).map_err(|e| TrainError::Checkpoint {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Checkpoint::parse(&text, &path.display().to_string())
    }

    /// Write atomically (a temporary file, then a rename).
    pub fn save(&self, path: &Path) -> Result<(), TrainError> {
        let tmp = path.with_extension("json.tmp");
        let io = |e: std::io::Error| TrainError::Io(format!("{}: {e}", path.display()));
        std::fs::write(&tmp, self.to_json()).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn meta() -> Metadata {
        Metadata {
            crate_version: env!("CARGO_PKG_VERSION").into(),
            git_commit: "x".into(),
            suite: Some("s.toml".into()),
            suite_sha256: Some("ab".into()),
            seed: 3,
            executor_spec: None,
            executor_hash: None,
            executor_model_sha256: None,
            sandbox_python: None,
            trained_on: None,
            steps: 0,
            settings: serde_json::json!({}),
        }
    }

    #[test]
    fn a_checkpoint_round_trips_bit_exactly() {
        let mut c = Checkpoint::uniform(3, true, meta());
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for x in c.theta.iter_mut().chain(c.adam.m.iter_mut()) {
            *x = (r.random::<f64>() - 0.5) * 10f64.powi(r.random_range(-300..300));
        }
        for x in c.adam.v.iter_mut() {
            *x = r.random::<f64>() * 1e-17;
        }
        c.theta[0] = f64::MIN_POSITIVE / 3.0; // subnormal
        c.theta[1] = -0.0;
        c.adam.t = 17;
        let back = Checkpoint::parse(&c.to_json(), "c.json").unwrap();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&back.theta), bits(&c.theta));
        assert_eq!(bits(&back.adam.m), bits(&c.adam.m));
        assert_eq!(bits(&back.adam.v), bits(&c.adam.v));
        assert_eq!(back.to_json(), c.to_json());
    }

    #[test]
    fn bad_checkpoints_are_refused_with_a_reason() {
        let c = Checkpoint::uniform(3, true, meta());
        let text = c.to_json();
        let e = Checkpoint::parse("{}", "x.json").unwrap_err().to_string();
        assert!(
            e.contains("x.json") && e.contains("not a policy checkpoint"),
            "{e}"
        );
        let e = Checkpoint::parse(&text.replace("\"version\": 1", "\"version\": 9"), "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("version"), "{e}");
        let mut short = c.clone();
        short.theta.pop();
        let e = Checkpoint::parse(&short.to_json(), "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`theta`"), "{e}");
        let mut other = c.clone();
        other.features[0] = "family".into();
        let e = Checkpoint::parse(&other.to_json(), "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("feature list"), "{e}");
    }
}
