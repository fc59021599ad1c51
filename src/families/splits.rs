//! Named family splits: which task families a transfer experiment trains on and which
//! it holds out.
//!
//! A split is a TOML file (the built-in ones are `suites/splits/*.toml`, compiled into
//! the crate, so [`load`] finds them by name anywhere):
//!
//! ```toml
//! description = "one line for `hrl tasks splits`"
//!
//! [[role]]
//! name = "warm_start"          # [a-z][a-z0-9_]*, unique in the file
//! description = "optional"
//! families = ["gcd", "maze"]   # registered family names, each in one role only
//!
//! [[role]]
//! name = "held_out"
//! categories = ["games"]       # optional: the role holds these whole categories
//! families = ["maze", ...]
//! ```
//!
//! The roles the evaluator and trainer use are `warm_start` (supervised warm start of
//! the proposer), `rl` (reinforcement learning) and `held_out` (task-transfer test,
//! never trained on); a split may name other roles too, in any order it likes, and the
//! order is kept.
//!
//! Parsing is strict: an unknown key, a missing or mistyped field, an unknown family or
//! category, a family listed twice (in one role or two), an empty or duplicate role
//! and a `categories` claim that does not hold (a family of another category in the
//! role, a family of the category left out of it, or one placed in another role) are
//! errors naming the file, the line and the field. Families of the registry that no
//! role lists are allowed (a split need not use every family); [`Split::unassigned`]
//! names them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Category, registry};

/// The built-in splits: `(name, TOML text)`, from `suites/splits/`.
const BUILTIN: &[(&str, &str)] = &[
    (
        "paper-like",
        include_str!("../../suites/splits/paper-like.toml"),
    ),
    (
        "category-holdout",
        include_str!("../../suites/splits/category-holdout.toml"),
    ),
];

/// The names of the built-in splits, in a stable order.
pub fn builtin_names() -> impl Iterator<Item = &'static str> {
    BUILTIN.iter().map(|(n, _)| *n)
}

/// Errors from loading a split. Every problem inside a file names the file and line.
#[derive(Debug, thiserror::Error)]
pub enum SplitError {
    #[error(
        "unknown split `{name}`: the built-in splits are {builtin}; or give a path to a .toml file"
    )]
    UnknownSplit { name: String, builtin: String },
    #[error("cannot read split file {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}:{line}: {message}")]
    Invalid {
        file: String,
        line: usize,
        /// The field the problem is in, e.g. `role[2].families`.
        field: String,
        message: String,
    },
}

impl crate::error::Classify for SplitError {
    fn kind(&self) -> crate::error::ErrorKind {
        match self {
            SplitError::UnknownSplit { .. }
            | SplitError::Io { .. }
            | SplitError::Invalid { .. } => crate::error::ErrorKind::Usage,
        }
    }
}

/// One role of a split: its families, in the file's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Role {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The whole categories this role holds (empty unless the file claims them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<Category>,
    pub families: Vec<&'static str>,
}

/// A loaded split: roles → family lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Split {
    /// The built-in name, or the file name without `.toml`.
    pub name: String,
    /// `built-in` or the path it was read from.
    pub source: String,
    pub description: String,
    pub roles: Vec<Role>,
}

impl Split {
    /// The role called `name`.
    pub fn role(&self, name: &str) -> Option<&Role> {
        self.roles.iter().find(|r| r.name == name)
    }

    /// The families of role `name`.
    pub fn families(&self, role: &str) -> Option<&[&'static str]> {
        self.role(role).map(|r| r.families.as_slice())
    }

    /// Roles → family lists.
    pub fn by_role(&self) -> BTreeMap<&str, &[&'static str]> {
        self.roles
            .iter()
            .map(|r| (r.name.as_str(), r.families.as_slice()))
            .collect()
    }

    /// The role a family is in, if any.
    pub fn role_of(&self, family: &str) -> Option<&Role> {
        self.roles.iter().find(|r| r.families.contains(&family))
    }

    /// Registered families that no role lists, in registry order.
    pub fn unassigned(&self) -> Vec<&'static str> {
        registry()
            .iter()
            .map(|f| f.name())
            .filter(|n| self.role_of(n).is_none())
            .collect()
    }

    /// The split as `hrl tasks splits --json` prints it: name, source, description,
    /// the roles (each with its family `count`) and the unassigned families.
    pub fn to_json(&self) -> serde_json::Value {
        let roles: Vec<serde_json::Value> = self
            .roles
            .iter()
            .map(|r| {
                let mut v = serde_json::to_value(r).unwrap_or(serde_json::Value::Null);
                if let serde_json::Value::Object(m) = &mut v {
                    m.insert("count".into(), r.families.len().into());
                }
                v
            })
            .collect();
        serde_json::json!({
            "name": self.name,
            "source": self.source,
            "description": self.description,
            "roles": roles,
            "unassigned": self.unassigned(),
        })
    }
}

/// Load a split by built-in name (`paper-like`) or from a path (anything containing
/// `/` or ending in `.toml`).
pub fn load(name_or_path: &str) -> Result<Split, SplitError> {
    if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
        return parse(
            text,
            &format!("suites/splits/{name}.toml"),
            name,
            "built-in",
        );
    }
    if name_or_path.contains('/') || name_or_path.ends_with(".toml") {
        let path = Path::new(name_or_path);
        let text = std::fs::read_to_string(path).map_err(|source| SplitError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let name = path
            .file_stem()
            .map_or_else(|| name_or_path.to_string(), |s| s.to_string_lossy().into());
        return parse(&text, name_or_path, &name, name_or_path);
    }
    Err(SplitError::UnknownSplit {
        name: name_or_path.to_string(),
        builtin: builtin_names().collect::<Vec<_>>().join(", "),
    })
}

/// Every built-in split, loaded.
pub fn builtin() -> Result<Vec<Split>, SplitError> {
    builtin_names().map(load).collect()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileToml {
    description: toml::Spanned<String>,
    #[serde(default)]
    role: Vec<toml::Spanned<RoleToml>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoleToml {
    name: toml::Spanned<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    categories: Vec<toml::Spanned<String>>,
    families: toml::Spanned<Vec<toml::Spanned<String>>>,
}

/// Parse a split file's text. `file` names it in errors, `name` and `source` are
/// recorded in the result.
pub fn parse(text: &str, file: &str, name: &str, source: &str) -> Result<Split, SplitError> {
    let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let invalid = |offset: usize, field: &str, message: String| SplitError::Invalid {
        file: file.to_string(),
        line: line_of(offset),
        field: field.to_string(),
        message: format!("{field}: {message}"),
    };
    let raw: FileToml = toml::from_str(text).map_err(|e| SplitError::Invalid {
        file: file.to_string(),
        line: e.span().map_or(1, |s| line_of(s.start)),
        field: String::new(),
        message: e.message().to_string(),
    })?;
    let description = raw.description.get_ref().trim().to_string();
    if description.is_empty() {
        return Err(invalid(
            raw.description.span().start,
            "description",
            "must not be empty".into(),
        ));
    }
    if raw.role.is_empty() {
        return Err(SplitError::Invalid {
            file: file.to_string(),
            line: 1,
            field: "role".into(),
            message: "role: a split needs at least one [[role]]".into(),
        });
    }
    let mut roles: Vec<Role> = Vec::with_capacity(raw.role.len());
    // family -> (role index, line) of its first listing
    let mut placed: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    // (role index, category, line of the claim)
    let mut claims: Vec<(usize, Category, usize)> = Vec::new();
    for (i, spanned) in raw.role.iter().enumerate() {
        let r = spanned.get_ref();
        let rname = r.name.get_ref();
        let at = |field: &str| format!("role[{i}].{field}");
        if rname.is_empty()
            || !rname.starts_with(|c: char| c.is_ascii_lowercase())
            || !rname
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(invalid(
                r.name.span().start,
                &at("name"),
                format!(
                    "`{rname}` is not a role name (lower-case letters, digits and _, starting with a letter)"
                ),
            ));
        }
        if let Some(j) = roles.iter().position(|x| x.name == *rname) {
            return Err(invalid(
                r.name.span().start,
                &at("name"),
                format!("role `{rname}` is defined twice (also role[{j}])"),
            ));
        }
        if r.families.get_ref().is_empty() {
            return Err(invalid(
                r.families.span().start,
                &at("families"),
                format!("role `{rname}` lists no families"),
            ));
        }
        let mut families = Vec::with_capacity(r.families.get_ref().len());
        for fam in r.families.get_ref() {
            let line = line_of(fam.span().start);
            let Ok(f) = super::get(fam.get_ref()) else {
                return Err(invalid(
                    fam.span().start,
                    &at("families"),
                    format!(
                        "unknown family `{}`{} (see `hrl tasks list`)",
                        fam.get_ref(),
                        super::did_you_mean_family(fam.get_ref())
                    ),
                ));
            };
            if let Some(&(j, first)) = placed.get(f.name()) {
                let where_ = if j == i {
                    format!("twice in role `{rname}`")
                } else {
                    format!(
                        "in role `{}` (line {first}) and in role `{rname}`",
                        roles[j].name
                    )
                };
                return Err(invalid(
                    fam.span().start,
                    &at("families"),
                    format!(
                        "family `{}` is listed {where_}; roles must be disjoint",
                        f.name()
                    ),
                ));
            }
            placed.insert(f.name(), (i, line));
            families.push(f.name());
        }
        let mut categories = Vec::with_capacity(r.categories.len());
        for c in &r.categories {
            let Some(cat) = ALL_CATEGORIES
                .iter()
                .copied()
                .find(|k| k.as_str() == c.get_ref())
            else {
                return Err(invalid(
                    c.span().start,
                    &at("categories"),
                    format!(
                        "unknown category `{}` (categories: {})",
                        c.get_ref(),
                        ALL_CATEGORIES.map(Category::as_str).join(", ")
                    ),
                ));
            };
            if categories.contains(&cat) {
                return Err(invalid(
                    c.span().start,
                    &at("categories"),
                    format!("category `{cat}` is listed twice"),
                ));
            }
            categories.push(cat);
            claims.push((i, cat, c.span().start));
        }
        if !categories.is_empty() {
            if let Some(stray) = families
                .iter()
                .find(|n| super::get(n).is_ok_and(|f| !categories.contains(&f.category())))
            {
                let cat = super::get(stray).map(|f| f.category()).ok();
                return Err(invalid(
                    r.families.span().start,
                    &at("families"),
                    format!(
                        "role `{rname}` claims the whole categories {} but lists `{stray}` ({})",
                        categories
                            .iter()
                            .map(|c| c.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                        cat.map_or("?", Category::as_str)
                    ),
                ));
            }
        }
        roles.push(Role {
            name: rname.clone(),
            description: r.description.clone(),
            categories,
            families,
        });
    }
    // A whole category: every registered family of it is in the claiming role.
    for (i, cat, offset) in claims {
        let missing: Vec<&str> = registry()
            .iter()
            .filter(|f| f.category() == cat && !roles[i].families.contains(&f.name()))
            .map(|f| f.name())
            .collect();
        if !missing.is_empty() {
            let elsewhere: Vec<String> = missing
                .iter()
                .filter_map(|m| {
                    placed
                        .get(m)
                        .map(|&(j, _)| format!("`{m}` is in `{}`", roles[j].name))
                })
                .collect();
            return Err(invalid(
                offset,
                &format!("role[{i}].categories"),
                format!(
                    "role `{}` claims the whole category `{cat}` but leaves out {}{}",
                    roles[i].name,
                    missing.join(", "),
                    if elsewhere.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", elsewhere.join(", "))
                    }
                ),
            ));
        }
    }
    Ok(Split {
        name: name.to_string(),
        source: source.to_string(),
        description,
        roles,
    })
}

/// Every category, in registry order.
const ALL_CATEGORIES: [Category; 6] = [
    Category::Arithmetic,
    Category::Algorithmic,
    Category::Graphs,
    Category::Games,
    Category::Logic,
    Category::Cognition,
];

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> (usize, String, String) {
        match parse(text, "t.toml", "t", "t.toml") {
            Err(SplitError::Invalid {
                file,
                line,
                field,
                message,
            }) => {
                assert_eq!(file, "t.toml");
                let shown = SplitError::Invalid {
                    file: file.clone(),
                    line,
                    field: field.clone(),
                    message: message.clone(),
                }
                .to_string();
                assert!(shown.starts_with(&format!("t.toml:{line}: ")), "{shown}");
                (line, field, message)
            }
            other => panic!("expected an invalid-file error, got {other:?}"),
        }
    }

    const GOOD: &str = r#"# a comment
description = "two roles"

[[role]]
name = "train"
description = "what we train on"
families = ["gcd", "lcm"]

[[role]]
name = "held_out"
families = ["maze"]
"#;

    #[test]
    fn a_good_file_loads_in_order() {
        let s = parse(GOOD, "t.toml", "t", "t.toml").unwrap();
        assert_eq!(s.description, "two roles");
        assert_eq!(s.roles.len(), 2);
        assert_eq!(s.families("train"), Some(&["gcd", "lcm"][..]));
        assert_eq!(
            s.role("train").unwrap().description.as_deref(),
            Some("what we train on")
        );
        assert_eq!(s.by_role()["held_out"], &["maze"]);
        assert_eq!(s.role_of("lcm").unwrap().name, "train");
        assert!(s.unassigned().contains(&"count_primes"));
        assert!(!s.unassigned().contains(&"maze"));
    }

    #[test]
    fn bad_files_name_the_line_and_field() {
        let cases: Vec<(String, usize, &str, &str)> = vec![
            (
                GOOD.replace("\"lcm\"]", "\"lcm\", \"nope\"]"),
                7,
                "role[0].families",
                "unknown family `nope`",
            ),
            (
                GOOD.replace("[\"maze\"]", "[\"gcd\"]"),
                11,
                "role[1].families",
                "in role `train` (line 7)",
            ),
            (
                GOOD.replace("[\"maze\"]", "[\"maze\", \"maze\"]"),
                11,
                "role[1].families",
                "twice in role",
            ),
            (
                GOOD.replace("[\"maze\"]", "[]"),
                11,
                "role[1].families",
                "lists no families",
            ),
            (
                GOOD.replace("name = \"held_out\"", "name = \"train\""),
                10,
                "role[1].name",
                "defined twice",
            ),
            (
                GOOD.replace("name = \"held_out\"", "name = \"Held out\""),
                10,
                "role[1].name",
                "not a role name",
            ),
            (
                GOOD.replace(
                    "families = [\"maze\"]",
                    "families = [\"maze\"]\nfamilys = []",
                ),
                12,
                "",
                "unknown field `familys`",
            ),
            (
                GOOD.replace("families = [\"maze\"]", "families = \"maze\""),
                11,
                "",
                "invalid type",
            ),
            (
                GOOD.replace("description = \"two roles\"", "description = \" \""),
                2,
                "description",
                "must not be empty",
            ),
            (
                GOOD.replace("description = \"two roles\"\n", ""),
                1,
                "",
                "missing field `description`",
            ),
            (
                GOOD.replace(
                    "name = \"held_out\"\n",
                    "name = \"held_out\"\ncategories = [\"sports\"]\n",
                ),
                11,
                "role[1].categories",
                "unknown category `sports`",
            ),
            (
                GOOD.replace(
                    "name = \"held_out\"\n",
                    "name = \"held_out\"\ncategories = [\"arithmetic\"]\n",
                ),
                12,
                "role[1].families",
                "lists `maze` (games)",
            ),
            (
                GOOD.replace(
                    "name = \"held_out\"\n",
                    "name = \"held_out\"\ncategories = [\"games\"]\n",
                ),
                11,
                "role[1].categories",
                "leaves out",
            ),
            (
                "description = \"x\"\n".to_string(),
                1,
                "role",
                "at least one",
            ),
            ("description = \"x\"\n[[role]\n".to_string(), 2, "", ""),
        ];
        for (text, line, field, needle) in cases {
            let (l, f, m) = err(&text);
            assert_eq!((l, f.as_str()), (line, field), "{m}\n{text}");
            assert!(m.contains(needle), "{m}");
        }
    }

    #[test]
    fn names_paths_and_unknown_names() {
        assert!(matches!(
            load("no-such-split"),
            Err(SplitError::UnknownSplit { .. })
        ));
        let e = load("no-such-split").unwrap_err().to_string();
        assert!(
            e.contains("paper-like") && e.contains("category-holdout"),
            "{e}"
        );
        assert!(matches!(
            load("/nonexistent/x.toml"),
            Err(SplitError::Io { .. })
        ));
        let dir = std::env::temp_dir().join(format!("hrl-splits-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("mine.toml");
        std::fs::write(&p, GOOD).unwrap();
        let s = load(p.to_str().unwrap()).unwrap();
        assert_eq!(
            (s.name.as_str(), s.source.as_str()),
            ("mine", p.to_str().unwrap())
        );
        std::fs::write(&p, GOOD.replace("\"lcm\"]", "\"lcm\", \"nope\"]")).unwrap();
        let e = load(p.to_str().unwrap()).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:7: ", p.display())), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
