//! The task SPEC grammar of `hrl run --tasks` (several `--tasks` are concatenated):
//!
//! ```text
//! families:FAMILIES[:KEY=VALUE]...   generated family instances
//!     FAMILIES  `all`, comma-separated names (`count_primes,gcd`), or
//!               ROLE@SPLIT: the families of a role of a named family split
//!               (`held_out@paper-like`; SPLIT is a built-in name or a .toml path)
//!     level=L   levels: `1`, `1,2` or `1-3`                       [default 1]
//!     n=N       instances per family and level                    [default 8]
//!     seed=S    generator seed                                    [default 0]
//!     start=I   first instance index (disjoint sets: start=100)   [default 0]
//!     variant=V question template: 0 (canonical), K, or `random`  [default 0]
//!     distinct=B  `true`: skip an index whose question (its canonical wording)
//!               repeats an earlier one of the same family and level, so the n
//!               items are n different questions (ids keep their index; an
//!               error when 50n+100 indices give fewer)              [default false]
//! jsonl:PATH                          instances as written by `hrl tasks gen`
//! lcb:DIR[:KEY=VALUE]...              LiveCodeBench code_generation_lite files
//!     release=TAG   release_vN | release_latest | vN | vA_vB      [release_latest]
//!     from=DATE, to=DATE   inclusive contest_date window
//!     platform=P    leetcode | codeforces | atcoder
//!     difficulty=D  easy | medium | hard
//!     n=N, start=I  take N problems from position I (file, line order)
//! humaneval[:PATH][:KEY=VALUE]...    HumanEval-format problems
//!     PATH   a HumanEval-format file     [the installed HumanEval, `hrl humaneval fetch`]
//!     n=N, start=I  take N problems from position I (file order)
//! ```
//!
//! Options are the trailing `:key=value` segments, so a path may contain `:` as long
//! as no segment after it looks like `key=value`. Items come out in a fixed order
//! (spec order; families in the given order, or the registry's for `all`; levels
//! ascending; indices ascending), so the same SPEC always names the same items.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Item, TaskError};
use crate::families::{self, Instance, InstanceStream, Level, Variant};
use crate::humaneval;
use crate::lcb::{self, GradeConfig, Grader, LcbSelection};
use crate::sandbox::SandboxConfig;

/// A parsed task SPEC.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskSpec {
    Families {
        /// `None` = every registered family.
        names: Option<Vec<String>>,
        levels: Vec<u8>,
        n: u64,
        seed: u64,
        start: u64,
        /// The question template (`families::Variant`): 0 = canonical.
        variant: Variant,
        /// Skip repeated questions (`distinct=true`).
        distinct: bool,
    },
    Jsonl(PathBuf),
    Lcb {
        /// Which problems (release, dates, platform, difficulty).
        selection: LcbSelection,
        n: Option<usize>,
        start: usize,
    },
    HumanEval {
        /// `None`: the installed HumanEval ([`crate::humaneval::default_data`]).
        path: Option<PathBuf>,
        n: Option<usize>,
        start: usize,
    },
}

/// How code items are graded: what loading them needs (the grader's sandbox and
/// settings).
#[derive(Debug, Clone, Default)]
pub struct GradingSetup {
    pub sandbox: SandboxConfig,
    /// LiveCodeBench grading.
    pub grade: GradeConfig,
    /// HumanEval grading (CPU-time limit 3 s per problem by default, as HumanEval's).
    pub humaneval: humaneval::GradeConfig,
}

/// Items loaded from one or more SPECs.
#[derive(Debug, Clone)]
pub struct TaskSet {
    /// The SPEC strings, as given.
    pub specs: Vec<String>,
    pub items: Vec<Item>,
}

fn bad(spec: &str, message: impl Into<String>) -> TaskError {
    TaskError::BadSpec {
        spec: spec.to_string(),
        message: message.into(),
    }
}

/// Split off the trailing `key=value` segments.
fn split_options(rest: &str) -> (String, Vec<(String, String)>) {
    let mut segs: Vec<&str> = rest.split(':').collect();
    let mut opts = Vec::new();
    while segs.len() > 1 {
        let last = segs[segs.len() - 1];
        match last.split_once('=') {
            Some((k, v))
                if !k.is_empty() && k.chars().all(|c| c.is_ascii_lowercase() || c == '_') =>
            {
                opts.push((k.to_string(), v.to_string()));
                segs.pop();
            }
            _ => break,
        }
    }
    opts.reverse();
    (segs.join(":"), opts)
}

fn parse_levels(spec: &str, v: &str) -> Result<Vec<u8>, TaskError> {
    let mut out = Vec::new();
    for part in v.split(',') {
        let range = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part.trim(), part.trim()),
        };
        let parse = |s: &str| {
            s.parse::<u8>()
                .map_err(|_| bad(spec, format!("level `{s}` is not a number")))
                .and_then(|l| {
                    Level::new(l)
                        .map(|l| l.get())
                        .map_err(|e| bad(spec, e.to_string()))
                })
        };
        let (a, b) = (parse(range.0)?, parse(range.1)?);
        if a > b {
            return Err(bad(spec, format!("level range {a}-{b} is empty")));
        }
        for l in a..=b {
            if !out.contains(&l) {
                out.push(l);
            }
        }
    }
    out.sort_unstable();
    Ok(out)
}

fn num<T: std::str::FromStr>(spec: &str, key: &str, v: &str) -> Result<T, TaskError> {
    v.parse()
        .map_err(|_| bad(spec, format!("{key}=`{v}` is not a valid number")))
}

impl TaskSpec {
    pub fn parse(spec: &str) -> Result<TaskSpec, TaskError> {
        if spec == "humaneval" {
            return Ok(TaskSpec::HumanEval {
                path: None,
                n: None,
                start: 0,
            });
        }
        let (kind, rest) = spec.split_once(':').ok_or_else(|| {
            bad(
                spec,
                "expected families:..., jsonl:PATH, lcb:DIR or humaneval[:PATH]",
            )
        })?;
        match kind {
            "families" => {
                let (names, opts) = split_options(rest);
                if names.is_empty() {
                    return Err(bad(spec, "name the families (or `all`)"));
                }
                let names = if names == "all" {
                    None
                } else if let Some((role, split)) = names.split_once('@') {
                    let split = families::splits::load(split.trim())
                        .map_err(|e| bad(spec, e.to_string()))?;
                    let Some(list) = split.families(role.trim()) else {
                        let roles: Vec<&str> =
                            split.roles.iter().map(|r| r.name.as_str()).collect();
                        return Err(bad(
                            spec,
                            format!(
                                "split `{}` has no role `{}` (roles: {})",
                                split.name,
                                role.trim(),
                                roles.join(", ")
                            ),
                        ));
                    };
                    Some(list.iter().map(|f| f.to_string()).collect())
                } else {
                    let v: Vec<String> = names.split(',').map(|s| s.trim().to_string()).collect();
                    for n in &v {
                        families::get(n).map_err(|e| bad(spec, e.to_string()))?;
                    }
                    Some(v)
                };
                let (mut levels, mut n, mut seed, mut start) = (vec![1u8], 8u64, 0u64, 0u64);
                let mut variant = Variant::CANONICAL;
                let mut distinct = false;
                for (k, v) in opts {
                    match k.as_str() {
                        "distinct" => {
                            distinct = match v.as_str() {
                                "true" => true,
                                "false" => false,
                                _ => return Err(bad(spec, "distinct must be true or false")),
                            }
                        }
                        "level" => levels = parse_levels(spec, &v)?,
                        "n" => n = num(spec, "n", &v)?,
                        "seed" => seed = num(spec, "seed", &v)?,
                        "start" => start = num(spec, "start", &v)?,
                        "variant" => {
                            variant = v.parse().map_err(
                                |e: families::kit::variant::VariantParseError| {
                                    bad(spec, e.to_string())
                                },
                            )?
                        }
                        other => {
                            return Err(bad(
                                spec,
                                format!(
                                    "unknown option `{other}` (level, n, seed, start, variant, distinct)"
                                ),
                            ));
                        }
                    }
                }
                if n == 0 {
                    return Err(bad(spec, "n must be at least 1"));
                }
                // A fixed template must exist for every family named.
                let named: Vec<&'static dyn families::Family> = match &names {
                    None => families::registry().to_vec(),
                    Some(v) => v.iter().filter_map(|n| families::get(n).ok()).collect(),
                };
                for f in named {
                    InstanceStream::new(f, Level::new(1).expect("level 1"), seed)
                        .with_variant(variant)
                        .map_err(|e| bad(spec, e.to_string()))?;
                }
                Ok(TaskSpec::Families {
                    names,
                    levels,
                    n,
                    seed,
                    start,
                    variant,
                    distinct,
                })
            }
            "jsonl" => {
                if rest.is_empty() {
                    return Err(bad(spec, "jsonl: needs a path"));
                }
                Ok(TaskSpec::Jsonl(PathBuf::from(rest)))
            }
            "lcb" => {
                let (dir, opts) = split_options(rest);
                if dir.is_empty() {
                    return Err(bad(spec, "lcb: needs a directory"));
                }
                let mut selection = LcbSelection::new(dir);
                let (mut n, mut start) = (None, 0usize);
                for (k, v) in opts {
                    match k.as_str() {
                        "n" => {
                            let x: usize = num(spec, "n", &v)?;
                            if x == 0 {
                                return Err(bad(spec, "n must be at least 1"));
                            }
                            n = Some(x);
                        }
                        "start" => start = num(spec, "start", &v)?,
                        other => {
                            if !selection.set(other, &v).map_err(|e| bad(spec, e))? {
                                return Err(bad(
                                    spec,
                                    format!(
                                        "unknown option `{other}` (release, from, to, platform, difficulty, n, start)"
                                    ),
                                ));
                            }
                        }
                    }
                }
                Ok(TaskSpec::Lcb {
                    selection,
                    n,
                    start,
                })
            }
            "humaneval" => {
                // Every segment may be an option (`humaneval:n=5`): then no path.
                let (p, opts) = split_options(&format!("x:{rest}"));
                let path = p.strip_prefix("x:").unwrap_or("").to_string();
                let (mut n, mut start) = (None, 0usize);
                for (k, v) in opts {
                    match k.as_str() {
                        "n" => {
                            let x: usize = num(spec, "n", &v)?;
                            if x == 0 {
                                return Err(bad(spec, "n must be at least 1"));
                            }
                            n = Some(x);
                        }
                        "start" => start = num(spec, "start", &v)?,
                        other => {
                            return Err(bad(spec, format!("unknown option `{other}` (n, start)")));
                        }
                    }
                }
                Ok(TaskSpec::HumanEval {
                    path: (!path.is_empty()).then(|| PathBuf::from(path)),
                    n,
                    start,
                })
            }
            other => Err(bad(
                spec,
                format!("unknown source `{other}` (families, jsonl, lcb, humaneval)"),
            )),
        }
    }

    /// Load the items this SPEC names.
    pub fn load(&self, spec_text: &str, ctx: &GradingSetup) -> Result<Vec<Item>, TaskError> {
        match self {
            TaskSpec::Families {
                names,
                levels,
                n,
                seed,
                start,
                variant,
                distinct,
            } => {
                let fams: Vec<&'static dyn families::Family> = match names {
                    None => families::registry().to_vec(),
                    Some(v) => v
                        .iter()
                        .map(|n| families::get(n))
                        .collect::<Result<_, _>>()?,
                };
                let mut items = Vec::new();
                for fam in fams {
                    for &l in levels {
                        let level = Level::new(l)?;
                        let stream =
                            InstanceStream::new(fam, level, *seed).with_variant(*variant)?;
                        let indices: Vec<u64> = if *distinct {
                            // Small levels repeat questions (compared in the canonical
                            // wording); the budget bounds the search.
                            let budget = n.saturating_mul(50).saturating_add(100);
                            let mut seen = std::collections::HashSet::new();
                            stream
                                .fresh_questions(
                                    *start,
                                    usize::try_from(*n).unwrap_or(usize::MAX),
                                    budget,
                                    &mut seen,
                                )
                                .map_err(|found| {
                                    bad(
                                        spec_text,
                                        format!(
                                            "{} level {l}: distinct=true needs {n} different questions but indices {start}..{} hold only {} (the level repeats questions; lower n or use another level)",
                                            fam.name(),
                                            start.saturating_add(budget),
                                            found.len()
                                        ),
                                    )
                                })?
                                .into_iter()
                                .map(|(i, _)| i)
                                .collect()
                        } else {
                            (*start..start + n).collect()
                        };
                        for i in indices {
                            items.push(Item::Answer {
                                instance: Arc::new(stream.instance(i)),
                                family: fam,
                            });
                        }
                    }
                }
                Ok(items)
            }
            TaskSpec::Jsonl(path) => read_instances(path),
            TaskSpec::Lcb {
                selection,
                n,
                start,
            } => {
                let problems = selection.load()?;
                let grader = Arc::new(Grader::new(ctx.sandbox.clone(), ctx.grade.clone())?);
                let chosen: Vec<lcb::Problem> = problems
                    .into_iter()
                    .skip(*start)
                    .take(n.unwrap_or(usize::MAX))
                    .collect();
                if chosen.is_empty() {
                    return Err(bad(spec_text, "no LiveCodeBench problem matches"));
                }
                Ok(chosen
                    .into_iter()
                    .map(|p| Item::Code(Arc::new(super::lcb::LcbTask::new(p, Arc::clone(&grader)))))
                    .collect())
            }
            TaskSpec::HumanEval { path, n, start } => {
                let path = match path {
                    Some(p) => p.clone(),
                    None => humaneval::default_data()?,
                };
                let problems = humaneval::load(&path)?;
                let total = problems.len();
                let chosen: Vec<humaneval::Problem> = problems
                    .into_iter()
                    .skip(*start)
                    .take(n.unwrap_or(usize::MAX))
                    .collect();
                if chosen.is_empty() {
                    return Err(bad(
                        spec_text,
                        format!("start={start} is past the last of {total} problems"),
                    ));
                }
                let grader = Arc::new(humaneval::Grader::new(
                    ctx.sandbox.clone(),
                    ctx.humaneval.clone(),
                )?);
                Ok(chosen
                    .into_iter()
                    .map(|p| {
                        Item::Code(Arc::new(super::humaneval::HumanEvalTask::new(
                            p,
                            Arc::clone(&grader),
                        )))
                    })
                    .collect())
            }
        }
    }
}

impl TaskSet {
    /// Parse and load several SPECs, in order. Duplicate item ids are refused (a
    /// result table must not count one item twice).
    pub fn load(specs: &[String], ctx: &GradingSetup) -> Result<TaskSet, TaskError> {
        if specs.is_empty() {
            return Err(bad("", "give at least one task SPEC"));
        }
        let mut items = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for s in specs {
            let spec = TaskSpec::parse(s)?;
            for item in spec.load(s, ctx)? {
                if !seen.insert(item.id()) {
                    return Err(bad(s, format!("item {} is named twice", item.id())));
                }
                items.push(item);
            }
        }
        Ok(TaskSet {
            specs: specs.to_vec(),
            items,
        })
    }
}

/// Read instances written by `hrl tasks gen` (one JSON object per line).
pub fn read_instances(path: &Path) -> Result<Vec<Item>, TaskError> {
    let text = std::fs::read_to_string(path).map_err(|e| TaskError::BadInstance {
        path: path.display().to_string(),
        line: 0,
        message: e.to_string(),
    })?;
    let mut items = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let err = |message: String| TaskError::BadInstance {
            path: path.display().to_string(),
            line: i + 1,
            message,
        };
        let inst: Instance = serde_json::from_str(line).map_err(|e| err(e.to_string()))?;
        items.push(Item::answer(inst).map_err(|e| err(e.to_string()))?);
    }
    if items.is_empty() {
        return Err(TaskError::BadInstance {
            path: path.display().to_string(),
            line: 0,
            message: "no instances".into(),
        });
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_grammar() {
        let s = TaskSpec::parse("families:gcd,count_primes:level=1-2:n=3:seed=5:start=10").unwrap();
        assert_eq!(
            s,
            TaskSpec::Families {
                names: Some(vec!["gcd".into(), "count_primes".into()]),
                levels: vec![1, 2],
                n: 3,
                seed: 5,
                start: 10,
                variant: Variant::CANONICAL,
                distinct: false,
            }
        );
        let items = s.load("x", &GradingSetup::default()).unwrap();
        assert_eq!(items.len(), 12);
        assert_eq!(items[0].id(), "gcd/L1/s5/i10");
        assert_eq!(items[3].id(), "gcd/L2/s5/i10");
        assert_eq!(items[11].id(), "count_primes/L2/s5/i12");
        let all = TaskSpec::parse("families:all:n=1").unwrap();
        assert_eq!(
            all.load("x", &GradingSetup::default()).unwrap().len(),
            families::registry().len()
        );
        for bad_spec in [
            "families:",
            "families:nope",
            "families:gcd:level=0",
            "families:gcd:level=3-1",
            "families:gcd:n=0",
            "families:gcd:colour=red",
            "nothing",
            "web:x",
            "families:gcd:variant=99",
            "families:gcd:variant=sometimes",
            "families:gcd:distinct=yes",
            "families:nope@paper-like",
            "families:held_out@no-such-split",
        ] {
            assert!(TaskSpec::parse(bad_spec).is_err(), "{bad_spec}");
        }
        let e = TaskSpec::parse("families:test@paper-like")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no role `test`") && e.contains("held_out"),
            "{e}"
        );
    }

    #[test]
    fn distinct_skips_repeated_questions_and_says_when_a_level_has_too_few() {
        let ctx = GradingSetup::default();
        let question = |it: &Item| match it {
            Item::Answer { instance, .. } => instance.question.clone(),
            _ => panic!("a family item"),
        };
        // jugs level 1 repeats questions within its first 24 indices.
        let plain = TaskSpec::parse("families:jugs:n=24").unwrap();
        let plain = plain.load("p", &ctx).unwrap();
        let plain_q: Vec<String> = plain.iter().map(question).collect();
        let unique: std::collections::HashSet<&String> = plain_q.iter().collect();
        assert!(unique.len() < 24, "the level repeats questions");
        let spec = TaskSpec::parse("families:jugs:n=8:distinct=true:variant=1").unwrap();
        let items = spec.load("d", &ctx).unwrap();
        assert_eq!(items.len(), 8);
        // Compared in the canonical wording: the canonical stream at the same indices.
        let idx: Vec<u64> = items
            .iter()
            .map(|it| {
                it.id()
                    .rsplit("/i")
                    .next()
                    .unwrap()
                    .split('/')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            })
            .collect();
        let canon = TaskSpec::parse("families:jugs:n=400")
            .unwrap()
            .load("c", &ctx)
            .unwrap();
        let canon_q: Vec<String> = canon.iter().map(question).collect();
        let mut seen = std::collections::HashSet::new();
        let mut want = Vec::new();
        for (i, q) in canon_q.iter().enumerate() {
            if want.len() < 8 && seen.insert(q.clone()) {
                want.push(i as u64);
            }
        }
        assert_eq!(idx, want);
        assert!(
            items.iter().all(|it| it.id().ends_with("/v1")),
            "the variant is kept"
        );
        // More than the level holds: an error naming the family, level and count.
        let e = TaskSpec::parse("families:jugs:n=24:distinct=true")
            .unwrap()
            .load("e", &ctx)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("jugs level 1") && e.contains("needs 24 different questions"),
            "{e}"
        );
    }

    #[test]
    fn families_from_a_split_role_and_a_variant() {
        let split = families::splits::load("paper-like").unwrap();
        let held = split.families("held_out").unwrap();
        let s = TaskSpec::parse("families:held_out@paper-like:n=1:variant=2").unwrap();
        let TaskSpec::Families { names, variant, .. } = &s else {
            panic!("{s:?}")
        };
        assert_eq!(names.as_deref().unwrap(), held);
        assert_eq!(*variant, Variant::Fixed(2));
        let items = s.load("x", &GradingSetup::default()).unwrap();
        assert_eq!(items.len(), held.len());
        for (item, f) in items.iter().zip(held) {
            assert_eq!(item.id(), format!("{f}/L1/s0/i0/v2"));
        }
        // `random` draws a template per instance, the canonical one included.
        let r = TaskSpec::parse("families:gcd:n=30:variant=random").unwrap();
        let ids: Vec<String> = r
            .load("x", &GradingSetup::default())
            .unwrap()
            .iter()
            .map(|i| i.id().to_string())
            .collect();
        assert!(ids.iter().any(|i| !i.contains("/v")), "{ids:?}");
        assert!(ids.iter().any(|i| i.ends_with("/v1")), "{ids:?}");
    }

    #[test]
    fn lcb_grammar_keeps_colons_in_paths() {
        let s = TaskSpec::parse("lcb:/data/a:b/lcb:release=v6:from=2024-08-01:n=5").unwrap();
        let TaskSpec::Lcb { selection, n, .. } = s else {
            panic!()
        };
        assert_eq!(selection.dir, PathBuf::from("/data/a:b/lcb"));
        assert_eq!(selection.release, "v6");
        assert_eq!(selection.from.as_deref(), Some("2024-08-01"));
        assert_eq!(n, Some(5));
        assert!(TaskSpec::parse("lcb:x:release=v99x").is_err());
        assert!(TaskSpec::parse("lcb:x:platform=hackerrank").is_err());
    }

    #[test]
    fn humaneval_grammar() {
        let he = |p: Option<&str>, n, start| TaskSpec::HumanEval {
            path: p.map(PathBuf::from),
            n,
            start,
        };
        assert_eq!(TaskSpec::parse("humaneval").unwrap(), he(None, None, 0));
        assert_eq!(TaskSpec::parse("humaneval:").unwrap(), he(None, None, 0));
        assert_eq!(
            TaskSpec::parse("humaneval:n=5:start=2").unwrap(),
            he(None, Some(5), 2)
        );
        assert_eq!(
            TaskSpec::parse("humaneval:/d/a:b/HE.jsonl:start=7").unwrap(),
            he(Some("/d/a:b/HE.jsonl"), None, 7)
        );
        assert_eq!(
            TaskSpec::parse("humaneval:x.jsonl").unwrap(),
            he(Some("x.jsonl"), None, 0)
        );
        for bad_spec in [
            "humaneval:n=0",
            "humaneval:n=x",
            "humaneval:level=1",
            "humanevalx",
        ] {
            assert!(TaskSpec::parse(bad_spec).is_err(), "{bad_spec}");
        }
    }

    #[test]
    fn humaneval_files_load_as_code_items() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("he.jsonl");
        let row = |id: &str| {
            serde_json::json!({"task_id": id, "prompt": "def f(x):\n", "entry_point": "f",
                "canonical_solution": "    return x\n", "test": "def check(c):\n    assert c(1) == 1\n"})
            .to_string()
        };
        std::fs::write(
            &path,
            format!("{}\n{}\n{}\n", row("T/0"), row("T/1"), row("T/2")),
        )
        .unwrap();
        // Loading builds the grader (the sandbox) but runs nothing.
        let ctx = GradingSetup::default();
        let spec = format!("humaneval:{}:n=2:start=1", path.display());
        let items = TaskSpec::parse(&spec).unwrap().load(&spec, &ctx).unwrap();
        let ids: Vec<String> = items.iter().map(Item::id).collect();
        assert_eq!(ids, ["humaneval:T/1", "humaneval:T/2"]);
        let it = &items[0];
        assert_eq!(it.kind(), super::super::ItemKind::Code);
        assert_eq!(it.group(), "humaneval");
        assert_eq!(it.body(), "def f(x):\n");
        assert!(
            it.question()
                .starts_with(super::super::humaneval::INSTRUCTION)
        );
        assert!(it.question().contains("```\ndef f(x):\n```"));
        let c = it.contract().unwrap();
        assert_eq!(c.entry_point.as_deref(), Some("f"));
        let spec = format!("humaneval:{}:start=3", path.display());
        let e = TaskSpec::parse(&spec)
            .unwrap()
            .load(&spec, &ctx)
            .unwrap_err();
        assert!(e.to_string().contains("past the last of 3"), "{e}");
        let spec = format!("humaneval:{}", dir.path().join("none.jsonl").display());
        let e = TaskSpec::parse(&spec)
            .unwrap()
            .load(&spec, &ctx)
            .unwrap_err();
        assert!(e.is_usage(), "{e}");
    }

    #[test]
    fn duplicates_are_refused() {
        let specs = vec!["families:gcd:n=2".to_string(), "families:gcd:n=1".into()];
        assert!(TaskSet::load(&specs, &GradingSetup::default()).is_err());
    }
}
