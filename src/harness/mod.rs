//! Harnesses: what wraps the frozen executor, as first-class serialisable objects.
//!
//! Two kinds ([`Harness`]):
//! - [`Declarative`] (TOML or JSON, [`declarative`]): prompt parts, a strategy, a
//!   verification procedure, the answer rule, sampling overrides, worked examples;
//!   changed by typed [`edit::Edit`]s (the action space of the compact proposer).
//! - [`Program`] (a Python file, [`program`]): `solve(question, llm, python)` run in the
//!   sandbox, its `llm` calls batched across instances by [`dispatch`].
//!
//! Both have a canonical form ([`Harness::canonical`]) and a content hash
//! ([`Harness::hash`]): formatting-only changes to a file (whitespace, key order,
//! comments in TOML, quoting) never change it; [`diff`] shows the difference between
//! two harnesses line by line. Parsing is strict: unknown fields, bad values and bad
//! templates are errors naming file, line and field ([`HarnessError`]).
//!
//! Running: [`runtime`] runs a harness on task items with an executor and records a
//! [`rollout::Rollout`] per item; [`report`] turns rollouts into the execution report
//! a proposer reads and into the run summary.

pub mod declarative;
pub mod diff;
pub mod dispatch;
pub mod edit;
pub mod execution_report;
pub mod extract;
pub mod job;
pub mod locate;
pub mod program;
pub mod render;
pub mod rollout;
pub mod runtime;
pub mod snippets;
pub mod tools;

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use declarative::{
    Declarative, Example, Format, SamplingOverrides, Strategy, Verification, Vote,
};
pub use edit::Edit;
pub use program::Program;

/// Bumped whenever the runtime's behaviour for the same harness changes (fixed
/// follow-up messages, extraction rules, strategy defaults). Part of every hash.
pub const HARNESS_SEMANTICS: u32 = 1;

/// Where a harness error is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file (or a label such as `<proposer output>`).
    pub origin: String,
    pub line: Option<usize>,
    pub field: Option<String>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.origin)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(fld) = &self.field {
            write!(f, ": {fld}")?;
        }
        Ok(())
    }
}

/// Errors of loading, validating and editing harnesses.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The file does not parse, or a field is unknown or of the wrong type.
    #[error("{at}: {message}")]
    Parse { at: Location, message: String },
    /// The file parses but a value is out of range or inconsistent.
    #[error("{at}: {message}")]
    Invalid { at: Location, message: String },
    /// An edit that cannot be applied to this harness.
    #[error("edit {index} ({op}): {message}")]
    Edit {
        index: usize,
        op: String,
        message: String,
    },
}

impl crate::error::Classify for HarnessError {
    fn kind(&self) -> crate::error::ErrorKind {
        use crate::error::ErrorKind::{Runtime, Usage};
        match self {
            HarnessError::Io { source, .. } => {
                if source.kind() == std::io::ErrorKind::NotFound {
                    Usage
                } else {
                    Runtime
                }
            }
            HarnessError::Parse { .. }
            | HarnessError::Invalid { .. }
            | HarnessError::Edit { .. } => Usage,
        }
    }
}

/// The two kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HarnessKind {
    Declarative,
    Program,
}

impl HarnessKind {
    pub fn as_str(self) -> &'static str {
        match self {
            HarnessKind::Declarative => "declarative",
            HarnessKind::Program => "program",
        }
    }

    /// The file extension of the canonical form.
    pub fn extension(self) -> &'static str {
        match self {
            HarnessKind::Declarative => "toml",
            HarnessKind::Program => "py",
        }
    }
}

/// The text format of a declarative harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    Toml,
    Json,
}

/// A harness of either kind.
// Few harnesses exist at a time; boxing the larger variant would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Harness {
    Declarative(Declarative),
    Program(Program),
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl Harness {
    /// Load a harness file: `.toml` and `.json` are declarative, `.py` is a program.
    pub fn load(path: &Path) -> Result<Harness, HarnessError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| HarnessError::Io {
            path: origin.clone(),
            source,
        })?;
        match path.extension().and_then(|e| e.to_str()) {
            Some("toml") => Harness::parse_declarative(&text, TextFormat::Toml, &origin),
            Some("json") => Harness::parse_declarative(&text, TextFormat::Json, &origin),
            Some("py") => Harness::parse_program(&text, &origin, name_of(path)),
            _ => Err(HarnessError::Parse {
                at: Location {
                    origin,
                    line: None,
                    field: None,
                },
                message: "unknown harness file type (expected .toml, .json or .py)".into(),
            }),
        }
    }

    /// Parse and validate a declarative harness. `origin` names the source in errors.
    pub fn parse_declarative(
        text: &str,
        format: TextFormat,
        origin: &str,
    ) -> Result<Harness, HarnessError> {
        let h: Declarative = match format {
            TextFormat::Toml => toml::from_str(text).map_err(|e| {
                let offset = e.span().map(|s| s.start);
                let message = e.message().trim().to_string();
                let mut line = offset.map(|o| locate::line_of_offset(text, o));
                let mut field = offset.and_then(|o| locate::path_at_offset(text, o));
                // An unknown key: serde points at its table; name the key itself.
                if let Some(key) = message
                    .strip_prefix("unknown field `")
                    .and_then(|r| r.split('`').next())
                {
                    let path = match &field {
                        Some(t) if !t.ends_with(key) => format!("{t}.{key}"),
                        Some(t) => t.clone(),
                        None => key.to_string(),
                    };
                    if let Some(l) = locate::line_of_path(text, &path) {
                        line = Some(l);
                        field = Some(path);
                    }
                }
                HarnessError::Parse {
                    at: Location {
                        origin: origin.to_string(),
                        line,
                        field,
                    },
                    message,
                }
            })?,
            TextFormat::Json => serde_json::from_str(text).map_err(|e| HarnessError::Parse {
                at: Location {
                    origin: origin.to_string(),
                    line: Some(e.line()).filter(|&l| l > 0),
                    field: None,
                },
                message: e.to_string(),
            })?,
        };
        h.validate().map_err(|inv| HarnessError::Invalid {
            at: Location {
                origin: origin.to_string(),
                line: match format {
                    TextFormat::Toml => locate::line_of_path(text, &inv.field),
                    TextFormat::Json => None,
                },
                field: Some(inv.field.clone()),
            },
            message: inv.message,
        })?;
        Ok(Harness::Declarative(h))
    }

    /// Parse a program harness (see [`Program::parse`]).
    pub fn parse_program(text: &str, origin: &str, name: String) -> Result<Harness, HarnessError> {
        Program::parse(text, origin, name).map(Harness::Program)
    }

    pub fn kind(&self) -> HarnessKind {
        match self {
            Harness::Declarative(_) => HarnessKind::Declarative,
            Harness::Program(_) => HarnessKind::Program,
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Harness::Declarative(d) => &d.name,
            Harness::Program(p) => &p.name,
        }
    }

    /// The canonical text: TOML with a fixed field order for a declarative harness,
    /// the normalised source for a program. `parse(canonical(h)) == h`.
    pub fn canonical(&self) -> String {
        match self {
            Harness::Declarative(d) => render_toml(d),
            Harness::Program(p) => p.source.clone(),
        }
    }

    /// The content hash (hex SHA-256): over the runtime semantics version, the kind
    /// and the content — for a declarative harness the canonical JSON of every field
    /// except `name` and `description`; for a program its normalised source (line
    /// endings, trailing spaces and trailing blank lines do not count; everything
    /// else, comments included, does).
    pub fn hash(&self) -> String {
        let mut h = Sha256::new();
        h.update(b"harness-rl/harness\0");
        h.update(HARNESS_SEMANTICS.to_le_bytes());
        h.update(self.kind().as_str().as_bytes());
        h.update([0]);
        match self {
            Harness::Declarative(d) => h.update(d.content().to_string().as_bytes()),
            Harness::Program(p) => h.update(p.source.as_bytes()),
        }
        hex(&h.finalize())
    }

    /// The first 12 hex digits of the hash.
    pub fn short_hash(&self) -> String {
        self.hash()[..12].to_string()
    }

    /// Write the canonical form to `dir/<hash>.<ext>` and return the path.
    pub fn save_canonical(&self, dir: &Path) -> Result<std::path::PathBuf, HarnessError> {
        let path = dir.join(format!("{}.{}", self.hash(), self.kind().extension()));
        std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&path, self.canonical()))
            .map_err(|source| HarnessError::Io {
                path: path.display().to_string(),
                source,
            })?;
        Ok(path)
    }
}

fn name_of(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Canonical TOML of a declarative harness: a fixed order, every setting written out
/// (so a reader sees every knob), multi-line strings as TOML multi-line literals when
/// they can be.
pub fn render_toml(d: &Declarative) -> String {
    toml::to_string_pretty(d).expect("a validated harness always serialises to TOML")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Harness, HarnessError> {
        Harness::parse_declarative(text, TextFormat::Toml, "h.toml")
    }

    #[test]
    fn formatting_does_not_change_the_hash() {
        let a = parse(
            "name = \"a\"\nsystem = \"You are careful.\"\ninstructions = [\"x\", \"y\"]\n[strategy]\nkind = \"program\"\nrepl_print = true\n",
        )
        .unwrap();
        let c = parse(
            "instructions = [ 'x' , 'y' ]   # same\nsystem = 'You are careful.'\nname = \"renamed\"\n\n[strategy]\nrepl_print = true\nkind = \"program\"\n",
        )
        .unwrap();
        assert_eq!(a.hash(), c.hash());
        assert_ne!(a, c, "labels differ");
        let d = parse("system = \"You are careful!\"\ninstructions = [\"x\", \"y\"]\n[strategy]\nkind = \"program\"\nrepl_print = true\n").unwrap();
        assert_ne!(a.hash(), d.hash());
    }

    #[test]
    fn canonical_round_trips() {
        let a = parse(
            "system = \"line one\\nline two\"\nnotes = [\"n\"]\n[verification]\nkind = \"re-run-on-error\"\n[sampling]\nmax_tokens = 300\nstop = [\"</answer>\"]\n[[examples]]\nquestion = \"q\"\nresponse = \"<answer>1</answer>\"\n",
        )
        .unwrap();
        let text = a.canonical();
        let b = parse(&text).unwrap();
        assert_eq!(a, b, "{text}");
        // A prefill is content; an empty one is absent from the canonical form.
        assert!(!text.contains("prefill"), "{text}");
        let c =
            parse("prefill = \"Sure:\\n```python\\n\"\n[sampling]\nstop = [\"\\n```\"]\n").unwrap();
        let text = c.canonical();
        assert_eq!(parse(&text).unwrap(), c, "{text}");
        let d = parse("[sampling]\nstop = [\"\\n```\"]\n").unwrap();
        assert_ne!(c.hash(), d.hash());
    }

    #[test]
    fn sampling_floats_are_written_as_typed() {
        let a = parse("[sampling]\ntemperature = 0.7\ntop_p = 0.95\nmin_p = 0.05\n").unwrap();
        let text = a.canonical();
        assert!(text.contains("temperature = 0.7\n"), "{text}");
        assert!(text.contains("top_p = 0.95\n"), "{text}");
        assert!(text.contains("min_p = 0.05\n"), "{text}");
        assert_eq!(parse(&text).unwrap(), a);
        // The content hash is what it was before the TOML fix (the widened f32 in
        // its JSON): the hash of this harness as computed by the earlier release.
        let b = parse("name = \"t\"\n[sampling]\ntemperature = 0.7\n").unwrap();
        assert_eq!(
            b.hash(),
            "48e4a10d15036250272bc850f551fd441bab14885e759ccf390fccc9a89524b2"
        );
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let e = parse("name = \"x\"\n[strategy]\nkind = \"direct\"\ncolour = 1\n").unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with("h.toml:"), "{s}");
        assert!(s.contains("colour"), "{s}");
        let e = parse("[strategy]\nkind = \"python-tool\"\nmax_calls = 99\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "h.toml:3: strategy.max_calls: 99 is outside 1..=16"
        );
        let e = parse("instructions = [\"a\",\n  \"\"]\n").unwrap_err();
        assert!(
            e.to_string().starts_with("h.toml:2: instructions[1]"),
            "{e}"
        );
        let e = parse("instructions = \"not a list\"\n").unwrap_err();
        assert!(e.to_string().starts_with("h.toml:1: instructions:"), "{e}");
        let e = parse("[strategy]\nkind = \"telepathy\"\n").unwrap_err();
        assert!(e.to_string().contains("telepathy"), "{e}");
    }
}
