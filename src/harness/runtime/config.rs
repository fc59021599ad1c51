//! How a run is carried out ([`RunConfig`]) and the per-instance limits of program
//! harnesses ([`ProgramLimits`]), with the hash of the settings that can change a result.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::harness::dispatch::DispatchConfig;
use crate::harness::tools::ToolLimits;

/// Per-instance limits of a program harness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramLimits {
    pub max_llm_calls: u32,
    /// Prompt plus completion tokens over all llm calls.
    pub max_tokens: u64,
    pub max_tool_calls: u32,
    /// Wall time of the harness process, not counting time spent waiting for the
    /// executor or for nested python runs.
    pub wall: Duration,
    pub memory_mb: u64,
    /// Bytes of the harness's own stdout and stderr kept; more stops it.
    pub output_bytes: usize,
    /// Largest message on the channel.
    pub max_message_bytes: usize,
}

impl Default for ProgramLimits {
    fn default() -> Self {
        ProgramLimits {
            max_llm_calls: 32,
            max_tokens: 65_536,
            max_tool_calls: 32,
            wall: Duration::from_secs(60),
            memory_mb: 1024,
            output_bytes: 1 << 20,
            max_message_bytes: 4 << 20,
        }
    }
}

/// How a run is carried out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Rollouts in flight at once.
    pub concurrency: usize,
    pub dispatch: DispatchConfig,
    pub program: ProgramLimits,
    pub tool: ToolLimits,
    /// Base seed of sampled decoding (each call's seed is derived from it, the
    /// harness's own seed, the item id, the sample and the attempt).
    pub seed: u64,
    /// Rollouts per item (sample index 0..samples).
    pub samples: u32,
    /// Reproducible batching: rollouts run in wave groups of this many consecutive
    /// (item, sample) pairs, each group's executor calls sent as barrier-synchronous
    /// waves in canonical order ([`DispatchConfig::waves`]); one group at a time
    /// (`concurrency` is then not used). The batch schedule is then a function of the
    /// items, not of timing, so a rerun gives the same rollouts. `None`: batches form
    /// by timing (the dispatch window). Part of the result hash when set.
    #[serde(default)]
    pub waves: Option<usize>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            concurrency: 16,
            dispatch: DispatchConfig::default(),
            program: ProgramLimits::default(),
            tool: ToolLimits::default(),
            seed: 0,
            samples: 1,
            waves: None,
        }
    }
}

impl RunConfig {
    /// The dispatcher's settings for this run (waves on when [`RunConfig::waves`] is set).
    pub fn dispatch_config(&self) -> DispatchConfig {
        DispatchConfig {
            waves: self.waves.is_some(),
            ..self.dispatch.clone()
        }
    }

    /// Hash of the settings that can change a rollout's result: limits, seed and the
    /// sandbox's interpreter (`python_hash`: [`crate::sandbox::PythonIdentity::hash`], over its
    /// version and installed packages), and the wave group size when waves are on (it
    /// decides which requests share a decode); not concurrency or the dispatch window.
    pub fn result_hash(&self, python_hash: &str) -> String {
        let mut v = serde_json::json!({
            "program": self.program,
            "tool": self.tool,
            "seed": self.seed,
            "python": python_hash,
        });
        if let Some(w) = self.waves {
            v["waves"] = serde_json::json!(w);
        }
        let mut h = Sha256::new();
        // v3: program harnesses see the task-agnostic question view by default.
        h.update(b"harness-rl/run-config/v3\0");
        h.update(v.to_string().as_bytes());
        h.finalize()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn python(version: &str, packages: &[&str]) -> crate::sandbox::PythonIdentity {
        crate::sandbox::PythonInstall {
            executable: "/x/bin/python3".into(),
            extra_ro_dirs: Vec::new(),
            version: version.into(),
            packages: packages.iter().map(|p| p.to_string()).collect(),
        }
        .identity()
    }

    #[test]
    fn config_hash_ignores_concurrency() {
        let py = python("cpython 3.11.7", &["pip==24.0"]);
        let a = RunConfig::default();
        let mut b = a.clone();
        b.concurrency = 3;
        b.dispatch.window = Duration::from_secs(9);
        assert_eq!(a.result_hash(&py.hash), b.result_hash(&py.hash));
        let mut w = a.clone();
        w.waves = Some(4);
        assert_ne!(a.result_hash(&py.hash), w.result_hash(&py.hash));
        w.concurrency = 8;
        let mut w2 = w.clone();
        w2.concurrency = 16;
        assert_eq!(w.result_hash(&py.hash), w2.result_hash(&py.hash));
        b.program.max_llm_calls = 1;
        assert_ne!(a.result_hash(&py.hash), b.result_hash(&py.hash));
    }

    #[test]
    fn config_hash_follows_the_sandbox_interpreter_not_its_path() {
        let c = RunConfig::default();
        let base = python("cpython 3.11.7", &["pip==24.0"]);
        let mut moved = base.clone();
        moved.executable = "/elsewhere/bin/python3".into();
        assert_eq!(c.result_hash(&base.hash), c.result_hash(&moved.hash));
        for other in [
            python("cpython 3.12.1", &["pip==24.0"]),
            python("cpython 3.11.7", &["numpy==2.4.6", "pip==24.0"]),
            python("cpython 3.11.7", &["pip==24.1"]),
            python("cpython 3.11.7", &[]),
        ] {
            assert_ne!(other.hash, base.hash, "{other:?}");
            assert_ne!(
                c.result_hash(&base.hash),
                c.result_hash(&other.hash),
                "{other:?}"
            );
        }
    }
}
