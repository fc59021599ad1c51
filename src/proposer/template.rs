//! The prompt template of `llm:` proposers: a versioned TOML file with a `system`
//! message and two user-message templates, `declarative` (the parent is a TOML
//! harness) and `program` (the parent is a Python program harness). The shipped
//! template is `suites/prompts/proposer-v1.toml` (compiled in); a user's copy
//! overrides it. Placeholders ([`VARS`]) are checked when the file loads, so a typo is
//! an error naming file, line and field, not a silent prompt change. The file's
//! version and sha256 go into every run's `config.json`.

use std::path::Path;

use serde::Deserialize;

use super::ProposerError;
use crate::harness::declarative::{check_template, render_template};
use crate::harness::locate;

/// The shipped template.
pub const DEFAULT_TEMPLATE: &str = include_str!("../../suites/prompts/proposer-v1.toml");

/// Placeholders a template may use.
pub const VARS: &[&str] = &["task", "harness", "report", "history", "round"];

/// A loaded template.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Template {
    pub version: String,
    pub system: String,
    pub declarative: String,
    pub program: String,
    /// Where it came from (`<built-in>` or a path).
    #[serde(skip)]
    pub origin: String,
    /// SHA-256 of the file's bytes.
    #[serde(skip)]
    pub sha256: String,
}

/// The values of one prompt.
pub struct Vars<'a> {
    pub task: &'a str,
    pub harness: &'a str,
    pub report: &'a str,
    pub history: &'a str,
    pub round: u32,
}

impl Template {
    /// The shipped template.
    pub fn builtin() -> Template {
        Template::parse(DEFAULT_TEMPLATE, "<built-in proposer-v1>")
            .expect("the shipped proposer template is valid")
    }

    /// Load a template file.
    pub fn load(path: &Path) -> Result<Template, ProposerError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ProposerError::Usage(format!("template {}: {e}", path.display())))?;
        Template::parse(&text, &path.display().to_string())
    }

    /// Parse and check a template text.
    pub fn parse(text: &str, origin: &str) -> Result<Template, ProposerError> {
        let mut t: Template = toml::from_str(text).map_err(|e| {
            let (line, field, message) = locate::toml_error(text, &e);
            ProposerError::Usage(format!(
                "{origin}{}{}: {message}",
                line.map(|l| format!(":{l}")).unwrap_or_default(),
                field.map(|f| format!(": {f}")).unwrap_or_default()
            ))
        })?;
        for (field, value) in [
            ("version", &t.version),
            ("system", &t.system),
            ("declarative", &t.declarative),
            ("program", &t.program),
        ] {
            let at = || {
                format!(
                    "{origin}{}: {field}",
                    locate::line_of_path(text, field)
                        .map(|l| format!(":{l}"))
                        .unwrap_or_default()
                )
            };
            if value.trim().is_empty() {
                return Err(ProposerError::Usage(format!("{}: is empty", at())));
            }
            if field != "version" {
                check_template(value, VARS)
                    .map_err(|m| ProposerError::Usage(format!("{}: {m}", at())))?;
            }
        }
        t.origin = origin.to_string();
        t.sha256 = super::sha256_hex(text.as_bytes());
        Ok(t)
    }

    /// The user message for a parent of the given kind.
    pub fn render(&self, program: bool, v: &Vars<'_>) -> String {
        let round = v.round.to_string();
        let vars = [
            ("task", v.task),
            ("harness", v.harness.trim_end()),
            ("report", v.report.trim_end()),
            ("history", v.history.trim_end()),
            ("round", round.as_str()),
        ];
        let t = if program {
            &self.program
        } else {
            &self.declarative
        };
        render_template(t, &vars).expect("placeholders were checked when the template loaded")
    }

    /// The system message (no placeholders are filled in it).
    pub fn system(&self) -> String {
        render_template(
            &self.system,
            &VARS.iter().map(|k| (*k, "")).collect::<Vec<_>>(),
        )
        .expect("checked at load")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_renders_every_part() {
        let t = Template::builtin();
        assert_eq!(t.version, "proposer-v1");
        let v = Vars {
            task: "TASK",
            harness: "HARNESS",
            report: "REPORT",
            history: "HISTORY",
            round: 2,
        };
        let d = t.render(false, &v);
        for s in [
            "TASK", "HARNESS", "REPORT", "HISTORY", "```toml", "{format}",
        ] {
            assert!(d.contains(s), "{s}");
        }
        let p = t.render(true, &v);
        assert!(p.contains("```python\nHARNESS\n```"), "{p}");
        assert!(!t.system().is_empty());
        assert_eq!(t.sha256.len(), 64);
    }

    #[test]
    fn bad_templates_name_file_line_and_field() {
        let ok = "version = \"x\"\nsystem = \"s\"\ndeclarative = \"d {task}\"\nprogram = \"p\"\n";
        assert!(Template::parse(ok, "t.toml").is_ok());
        let e = Template::parse(&ok.replace("{task}", "{tsk}"), "t.toml").unwrap_err();
        assert!(
            e.to_string()
                .contains("t.toml:3: declarative: unknown placeholder `{tsk}`"),
            "{e}"
        );
        let e = Template::parse(&format!("{ok}colour = 1\n"), "t.toml").unwrap_err();
        assert!(e.to_string().contains("t.toml:5: colour"), "{e}");
        let e = Template::parse("version = \"x\"\n", "t.toml").unwrap_err();
        assert!(e.to_string().contains("missing field"), "{e}");
    }
}
