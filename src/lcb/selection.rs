//! Which LiveCodeBench problems a task uses: a dataset directory, a release tag, an
//! inclusive date window and optional platform and difficulty filters. One type for
//! both vocabularies that name problems — a task SPEC (`lcb:DIR:release=v6:...`,
//! `crate::task::spec`) and a suite's `[[task]] lcb = DIR` table (`crate::eval::suite`)
//! — with one validation of every field, so the two cannot drift apart.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{
    DateBound, DateWindow, Difficulty, LcbError, LoadOptions, Platform, Problem, ReleaseTag,
    load_dir,
};

/// The selection. Fields are kept as the user wrote them (the run's `config.json`
/// records them so); [`LcbSelection::check`] validates every one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LcbSelection {
    pub dir: PathBuf,
    /// A release tag (`release_v5`, `v6`, `release_latest`, `v1_v3`, ...).
    pub release: String,
    /// First contest date admitted (`YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SS`), inclusive.
    pub from: Option<String>,
    /// Last contest date admitted, inclusive.
    pub to: Option<String>,
    /// A [`Platform`] name.
    pub platform: Option<String>,
    /// A [`Difficulty`] name.
    pub difficulty: Option<String>,
}

impl LcbSelection {
    /// The names [`LcbSelection::set`] takes, in the order they are documented.
    pub const KEYS: [&'static str; 5] = ["release", "from", "to", "platform", "difficulty"];

    /// Every problem of the latest release in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> LcbSelection {
        LcbSelection {
            dir: dir.into(),
            release: "release_latest".into(),
            from: None,
            to: None,
            platform: None,
            difficulty: None,
        }
    }

    /// Set the field `key` (one of [`LcbSelection::KEYS`]) to `value`, validated.
    /// `Ok(false)` when `key` is not a selection field (the caller may own it).
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, String> {
        check_field(key, value)?;
        let v = value.to_string();
        match key {
            "release" => self.release = v,
            "from" => self.from = Some(v),
            "to" => self.to = Some(v),
            "platform" => self.platform = Some(v),
            "difficulty" => self.difficulty = Some(v),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Validate every field; the error names the first bad field and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let fields = [
            ("release", Some(&self.release)),
            ("from", self.from.as_ref()),
            ("to", self.to.as_ref()),
            ("platform", self.platform.as_ref()),
            ("difficulty", self.difficulty.as_ref()),
        ];
        for (k, v) in fields {
            if let Some(v) = v {
                check_field(k, v).map_err(|m| (k, m))?;
            }
        }
        Ok(())
    }

    /// The loader's options for this release and date window.
    pub fn load_options(&self) -> Result<LoadOptions, LcbError> {
        Ok(LoadOptions {
            release: self.release.parse::<ReleaseTag>()?,
            window: DateWindow {
                from: self.from.as_deref().map(DateBound::parse).transpose()?,
                to: self.to.as_deref().map(DateBound::parse).transpose()?,
            },
            ..LoadOptions::default()
        })
    }

    /// Whether `p` passes the platform and difficulty filters (release and dates are
    /// applied by the loader).
    pub fn admits(&self, p: &Problem) -> bool {
        self.platform
            .as_deref()
            .is_none_or(|x| p.platform.as_str() == x)
            && self
                .difficulty
                .as_deref()
                .is_none_or(|x| p.difficulty.as_str() == x)
    }

    /// The selected problems, in the dataset's order.
    pub fn load(&self) -> Result<Vec<Problem>, LcbError> {
        let ds = load_dir(&self.dir, &self.load_options()?)?;
        Ok(ds.problems.into_iter().filter(|p| self.admits(p)).collect())
    }

    /// The dataset directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// The one validation of a selection field; other keys pass (they are not ours).
fn check_field(key: &str, value: &str) -> Result<(), String> {
    match key {
        "release" => value
            .parse::<ReleaseTag>()
            .map(|_| ())
            .map_err(|e| e.to_string()),
        "from" | "to" => DateBound::parse(value)
            .map(|_| ())
            .map_err(|e| e.to_string()),
        "platform" => value.parse::<Platform>().map(|_| ()),
        "difficulty" => value.parse::<Difficulty>().map(|_| ()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_validates_each_field_and_leaves_other_keys_alone() {
        let mut s = LcbSelection::new("d");
        assert_eq!(s.set("release", "v6"), Ok(true));
        assert_eq!(s.set("from", "2024-08-01"), Ok(true));
        assert_eq!(s.set("platform", "atcoder"), Ok(true));
        assert_eq!(s.set("n", "5"), Ok(false));
        assert!(s.set("release", "v99x").is_err());
        assert!(s.set("to", "yesterday").is_err());
        let e = s.set("platform", "hackerrank").unwrap_err();
        assert!(e.contains("hackerrank") && e.contains("atcoder"), "{e}");
        assert!(s.set("difficulty", "extreme").is_err());
        assert_eq!(s.release, "v6");
        assert_eq!(s.platform.as_deref(), Some("atcoder"));
        assert!(s.check().is_ok());
        s.difficulty = Some("extreme".into());
        assert_eq!(s.check().unwrap_err().0, "difficulty");
    }

    #[test]
    fn serialises_with_the_field_names_config_json_always_had() {
        let mut s = LcbSelection::new("/data/lcb");
        s.set("to", "2024-01-31").unwrap();
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"dir":"/data/lcb","release":"release_latest","from":null,"to":"2024-01-31","platform":null,"difficulty":null}"#
        );
    }
}
