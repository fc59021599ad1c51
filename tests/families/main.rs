//! Properties every task family must have, plus per-category independent re-solvers.
//!
//! Each category module (`arithmetic.rs`, ...) exposes `resolvers()`: for each of its
//! families, a solver written independently of the generator (usually brute force over
//! `metadata`) whose answer the family's verifier must accept, and which for families
//! with a unique answer must also match the gold answer.

mod algorithmic;
mod arithmetic;
mod cli;
mod cognition;
mod corruption;
mod formats;
mod games;
mod graphs;
mod logic;
mod new_families;
mod splits;
mod variants;

use std::collections::BTreeMap;

use harness_rl::families::{self, Family, Instance, Level, ScoreMode};
use proptest::prelude::*;
use sha2::{Digest, Sha256};

/// An independent solver for one family.
pub struct Resolver {
    pub family: &'static str,
    /// `true` when the instance has exactly one correct answer (up to the documented
    /// formatting tolerance), so a one-character change of the gold must score 0.
    pub unique: bool,
    pub solve: fn(&Instance) -> String,
}

fn all_resolvers() -> Vec<Resolver> {
    let mut v = Vec::new();
    v.extend(arithmetic::resolvers());
    v.extend(algorithmic::resolvers());
    v.extend(graphs::resolvers());
    v.extend(games::resolvers());
    v.extend(logic::resolvers());
    v.extend(cognition::resolvers());
    v
}

fn tagged(a: &str) -> String {
    format!("Let me think.\n<answer>{a}</answer>")
}

fn score(f: &dyn Family, inst: &Instance, response: &str) -> f64 {
    families::score_response(f, inst, response, ScoreMode::Strict).score
}

fn proptest_cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

fn level_strategy() -> impl Strategy<Value = Level> {
    (1u8..=5).prop_map(|l| Level::new(l).unwrap())
}

#[test]
fn registry_meets_the_contract() {
    let reg = families::registry();
    assert!(reg.len() >= 32, "only {} families", reg.len());
    let cats: std::collections::BTreeSet<_> = reg.iter().map(|f| f.category()).collect();
    assert!(cats.len() >= 6, "only {} categories", cats.len());
    let names: std::collections::BTreeSet<_> = reg.iter().map(|f| f.name()).collect();
    assert_eq!(names.len(), reg.len(), "duplicate family names");
    for required in [
        "count_primes",
        "largest_island",
        "basic_arithmetic",
        "chain_sum",
        "gcd",
        "lcm",
        "prime_factorization",
        "base_conversion",
        "fraction_simplification",
        "letter_counting",
        "word_sorting",
        "spell_backward",
        "number_sorting",
        "caesar_cipher",
        "rotate_matrix",
        "spiral_matrix",
        "binary_matrix",
        "game_of_life",
        "maze",
        "shortest_path",
        "n_queens",
        "mini_sudoku",
        "tower_of_hanoi",
        "family_relationships",
        "syllogism",
        "propositional_logic",
        "graph_color",
        "course_schedule",
        "number_sequence",
    ] {
        assert!(names.contains(required), "missing family {required}");
    }
}

#[test]
fn every_family_has_an_independent_resolver() {
    let have: std::collections::BTreeSet<_> = all_resolvers().iter().map(|r| r.family).collect();
    for f in families::registry() {
        assert!(have.contains(f.name()), "no re-solver for {}", f.name());
    }
}

#[test]
fn questions_state_the_answer_convention() {
    for f in families::registry() {
        for level in Level::all() {
            let inst = families::generate(*f, level, 1, 0);
            assert!(
                inst.question.contains("<answer>"),
                "{}: {}",
                f.name(),
                inst.question
            );
            assert!(
                !inst.answer.trim().is_empty(),
                "{} has an empty gold answer",
                f.name()
            );
            assert!(
                inst.metadata.is_object(),
                "{} metadata is not an object",
                f.name()
            );
        }
    }
}

proptest! {
    // 48 cases by default; PROPTEST_CASES=N overrides it for longer shake-out runs.
    #![proptest_config(ProptestConfig { cases: proptest_cases(), ..ProptestConfig::default() })]

    /// Gold scores 1; the re-solver agrees; junk and near misses score 0.
    #[test]
    fn gold_resolver_and_junk(seed in any::<u64>(), index in 0u64..1_000_000, level in level_strategy()) {
        let resolvers = all_resolvers();
        for f in families::registry() {
            let inst = families::generate(*f, level, seed, index);
            let name = f.name();
            prop_assert_eq!(score(*f, &inst, &tagged(&inst.answer)), 1.0, "{} gold fails: {}", name, inst.id);
            if let Some(r) = resolvers.iter().find(|r| r.family == name) {
                let mine = (r.solve)(&inst);
                prop_assert_eq!(f.verify(&inst, &mine), 1.0, "{} re-solver answer {:?} rejected (gold {:?}) for {}", name, mine, inst.answer, inst.id);
                if r.unique {
                    // The independent answer must *be* the gold (up to the documented
                    // notation), not merely be accepted alongside it.
                    prop_assert_eq!(canonical(name, &mine), canonical(name, &inst.answer), "{} re-solver answer {:?} differs from the gold {:?} for {}", name, mine, inst.answer, inst.id);
                    if let Some(near) = near_miss(&inst.answer) {
                        prop_assert_eq!(score(*f, &inst, &tagged(&near)), 0.0, "{} near miss {:?} scored for gold {:?}", name, near, inst.answer);
                    }
                }
            }
            let every: Vec<String> = (0..60).map(|i| i.to_string()).collect();
            let junk = [
                String::new(),
                format!("{} junk", inst.answer),
                format!("{}\nand also something else", inst.answer),
                format!("I think it is {}, or maybe not", inst.answer),
                inst.question.clone(),
                every.join(", "),
                "I don't know".to_string(),
            ];
            for j in junk {
                if j.trim() == inst.answer.trim() { continue; }
                prop_assert_eq!(score(*f, &inst, &tagged(&j)), 0.0, "{} junk {:?} scored for gold {:?}", name, j, inst.answer);
            }
            // No tag: strict mode gives 0 even when the answer is right.
            prop_assert_eq!(score(*f, &inst, &inst.answer), 0.0);
        }
    }

    /// Verifiers never panic, whatever the text.
    #[test]
    fn verifiers_never_panic(text in ".{0,200}", seed in 0u64..1000, level in level_strategy()) {
        for f in families::registry() {
            let inst = families::generate(*f, level, seed, 0);
            let s = f.verify(&inst, &text);
            prop_assert!((0.0..=1.0).contains(&s));
            let _ = score(*f, &inst, &text);
            let _ = score(*f, &inst, &tagged(&text));
        }
    }

    /// Verifiers never panic on inputs shaped like answers (numbers, grids, lists).
    #[test]
    fn verifiers_never_panic_on_answer_shaped_text(text in "[0-9a-zA-Z ,\\[\\]\\n/\\-+()>=|&!]{0,120}", seed in 0u64..1000) {
        for f in families::registry() {
            let inst = families::generate(*f, Level::new(3).unwrap(), seed, 1);
            let s = f.verify(&inst, &text);
            prop_assert!((0.0..=1.0).contains(&s));
        }
    }
}

/// An answer reduced to what it says, so that two answers written by different code in
/// different accepted notations compare equal exactly when they mean the same thing.
/// Written here, independently of the verifiers: integers by value, factorisations as
/// sorted prime lists, numerals without leading zeros, knight/knave assignments as
/// sorted pairs, decimals without trailing zeros, everything else as its tokens (ASCII
/// lower-case for the case-insensitive families).
fn canonical(family: &str, answer: &str) -> String {
    let t = answer.trim();
    let tokens = |s: &str| -> Vec<String> {
        s.split(|c: char| c.is_whitespace() || ",;[]".contains(c))
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect()
    };
    let int = |s: &str| -> String {
        let s = s.trim().replace(',', "");
        let s = s.strip_prefix('+').unwrap_or(&s);
        s.parse::<i128>()
            .map(|v| v.to_string())
            .unwrap_or_else(|_| format!("not an integer: {s}"))
    };
    match family {
        "basic_arithmetic"
        | "chain_sum"
        | "connected_components"
        | "count_bits"
        | "count_primes"
        | "gcd"
        | "largest_island"
        | "lcm"
        | "letter_counting"
        | "maze"
        | "number_sequence"
        | "power_function"
        | "rectangle_count" => int(t),
        "prime_factorization" => {
            let mut ps: Vec<u64> = Vec::new();
            for piece in t.split(['×', '*', 'x', 'X', '·']) {
                let (p, e) = piece.split_once('^').unwrap_or((piece, "1"));
                let (p, e): (u64, usize) = (p.trim().parse().unwrap(), e.trim().parse().unwrap());
                ps.extend(std::iter::repeat_n(p, e));
            }
            ps.sort_unstable();
            format!("{ps:?}")
        }
        "base_conversion" => {
            let d = t.to_ascii_lowercase();
            let d = d.trim_start_matches('0');
            if d.is_empty() { "0".into() } else { d.into() }
        }
        "fraction_simplification" => t.replace(' ', ""),
        "knights_knaves" => {
            let mut pairs: Vec<(String, String)> = t
                .split([',', ';', '\n'])
                .map(|item| {
                    let item = item.trim().trim_end_matches('.').to_ascii_lowercase();
                    let (name, role) = item
                        .split_once(':')
                        .or_else(|| item.split_once(" is a "))
                        .unwrap_or((item.as_str(), ""));
                    (name.trim().to_string(), role.trim().to_string())
                })
                .collect();
            pairs.sort();
            format!("{pairs:?}")
        }
        "needle_haystack" => {
            let v = t.trim_end_matches('.').to_ascii_lowercase();
            let v = ["the ", "an ", "a "]
                .iter()
                .find_map(|a| v.strip_prefix(a))
                .unwrap_or(&v)
                .to_string();
            v.split_whitespace().collect::<Vec<_>>().join(" ")
        }
        "family_relationships" => t.to_ascii_lowercase().replace('-', " "),
        // A partition: members sorted within a group, groups sorted.
        "group_anagrams" => {
            let mut groups: Vec<Vec<String>> = t
                .lines()
                .map(|l| {
                    let mut g = tokens(&l.to_ascii_lowercase());
                    g.sort();
                    g
                })
                .collect();
            groups.sort();
            format!("{groups:?}")
        }
        "number_sorting" => tokens(t)
            .iter()
            .map(|n| {
                let n = n.strip_prefix('+').unwrap_or(n);
                let (neg, n) = n.strip_prefix('-').map_or((false, n), |m| (true, m));
                let (i, f) = n.split_once('.').unwrap_or((n, ""));
                let i = i.trim_start_matches('0');
                let f = f.trim_end_matches('0');
                let v = match (i.is_empty(), f.is_empty()) {
                    (true, true) => "0".to_string(),
                    (_, true) => i.to_string(),
                    (true, false) => format!("0.{f}"),
                    (false, false) => format!("{i}.{f}"),
                };
                if neg && v != "0" { format!("-{v}") } else { v }
            })
            .collect::<Vec<_>>()
            .join(" "),
        "propositional_logic" => t.trim_matches(['(', ')']).to_ascii_uppercase(),
        "caesar_cipher" | "isomorphic_strings" | "spell_backward" | "syllogism"
        | "tower_of_hanoi" => tokens(&t.to_ascii_lowercase()).join(" "),
        _ => tokens(t).join(" "),
    }
}

#[test]
fn canonical_forms_mean_the_same_thing() {
    assert_eq!(canonical("gcd", "+1,000"), canonical("gcd", "1000"));
    assert_ne!(canonical("gcd", "1000"), canonical("gcd", "100"));
    assert_eq!(
        canonical("prime_factorization", "3 * 2^2"),
        canonical("prime_factorization", "2 × 2 × 3")
    );
    assert_eq!(
        canonical("knights_knaves", "Bo is a knave; Ada is a knight"),
        canonical("knights_knaves", "Ada: knight, Bo: knave")
    );
    assert_ne!(
        canonical("knights_knaves", "Ada: knave, Bo: knave"),
        canonical("knights_knaves", "Ada: knight, Bo: knave")
    );
    assert_eq!(
        canonical("number_sorting", "-0.50, 2, 003.10"),
        canonical("number_sorting", "-.5 2.0 3.1")
    );
    assert_eq!(canonical("needle_haystack", "The Mango."), "mango");
    assert_eq!(
        canonical("rotate_matrix", "[[1, 2], [3, 4]]"),
        canonical("rotate_matrix", "1 2\n3 4")
    );
    assert_ne!(
        canonical("word_sorting", "Apple, pear"),
        canonical("word_sorting", "apple, pear")
    );
}

/// Change one character of the gold so that it means something else: bump the last
/// digit, or failing that change the last letter to a different letter.
fn near_miss(gold: &str) -> Option<String> {
    let mut chars: Vec<char> = gold.chars().collect();
    if let Some(i) = chars.iter().rposition(|c| c.is_ascii_digit()) {
        let d = chars[i].to_digit(10).unwrap();
        chars[i] = char::from_digit((d + 1) % 10, 10).unwrap();
        // `10` -> `11`, fine; `9` -> `0` changes value too.
        return Some(chars.into_iter().collect());
    }
    if let Some(i) = chars.iter().rposition(|c| c.is_ascii_alphabetic()) {
        let c = chars[i].to_ascii_lowercase();
        chars[i] = if c == 'z' { 'a' } else { (c as u8 + 1) as char };
        return Some(chars.into_iter().collect());
    }
    None
}

/// The instance stream puts the level parameters into every instance's metadata
/// (families never write them), and the five levels of every family differ.
#[test]
fn metadata_carries_the_level_params() {
    for f in families::registry() {
        let mut seen = std::collections::BTreeSet::new();
        for level in Level::all() {
            for index in [0, 4] {
                let x = families::generate(*f, level, 2, index);
                assert_eq!(
                    x.metadata["params"],
                    f.level_params(level),
                    "{} L{}",
                    f.name(),
                    level.get()
                );
                let first = x.metadata.as_object().unwrap().keys().next().unwrap();
                assert_eq!(first, "params", "{}: params come first", x.id);
            }
            seen.insert(f.level_params(level).to_string());
        }
        assert_eq!(
            seen.len(),
            5,
            "{}: two levels share their parameters",
            f.name()
        );
    }
}

/// A size measure of one instance.
type Measure = dyn Fn(&Instance) -> f64;

/// Higher levels ask bigger questions: the mean size of question plus gold answer grows
/// from level 1 to 3 to 5 — except where a level's difficulty is not its size, in which
/// case the family's own measure is checked instead.
#[test]
fn levels_grow_in_size() {
    let mean = |f: &'static dyn Family, level: u8, measure: &Measure| {
        let l = Level::new(level).unwrap();
        (0..40)
            .map(|i| measure(&families::generate(f, l, 8, i)))
            .sum::<f64>()
            / 40.0
    };
    let size = |x: &Instance| (x.question.len() + x.answer.len()) as f64;
    for f in families::registry() {
        let (measure, levels): (Box<Measure>, &[u8]) = match f.name() {
            // Difficulty is the number of blanks; the grid's text has the same length.
            "mini_sudoku" => (
                Box::new(|x: &Instance| x.question.matches('_').count() as f64),
                &[1, 3, 5],
            ),
            // The value converted grows; base names make the text no longer.
            "base_conversion" => (
                Box::new(|x: &Instance| {
                    let to = x.metadata["to_base"].as_u64().unwrap() as u32;
                    u128::from_str_radix(&x.answer, to).unwrap() as f64
                }),
                &[1, 3, 5],
            ),
            // Difficulty is the number of blanks; the grid's text has the same length.
            "sudoku" => (
                Box::new(|x: &Instance| x.question.matches('_').count() as f64),
                &[1, 3, 5],
            ),
            // Levels 1-3 differ in arrangement (figures, conclusion order), 4-5 in size.
            "syllogism" => (Box::new(size), &[1, 4]),
            _ => (Box::new(size), &[1, 3, 5]),
        };
        let m: Vec<f64> = levels.iter().map(|&l| mean(*f, l, &*measure)).collect();
        assert!(
            m.windows(2).all(|w| w[0] < w[1]),
            "{}: mean sizes {m:?} at levels {levels:?}",
            f.name()
        );
    }
}

#[test]
fn generation_is_deterministic_and_seeds_do_not_overlap() {
    for f in families::registry() {
        for level in Level::all() {
            let a = families::generate_many(*f, level, 11, 20).unwrap();
            let b = families::generate_many(*f, level, 11, 20).unwrap();
            assert_eq!(a, b, "{} is not deterministic", f.name());
            // reasoning-gym's overlap: item i+1 of seed s == item i of seed s+1.
            let shifted = families::generate_many(*f, level, 12, 20).unwrap();
            let same = (0..19)
                .filter(|&i| a[i + 1].question == shifted[i].question)
                .count();
            assert!(
                same <= 3,
                "{} L{}: {same} of 19 shifted items coincide",
                f.name(),
                level.get()
            );
        }
    }
}

#[test]
fn instance_streams_differ_for_shifted_coordinates() {
    use rand::RngCore;
    let l = Level::new(1).unwrap();
    let gcd = families::get("gcd").unwrap();
    let first = |s, i| {
        let mut r = families::InstanceStream::new(gcd, l, s).rng(i);
        (r.next_u64(), r.next_u64())
    };
    assert_ne!(first(5, 1), first(6, 0));
    assert_ne!(first(0, 1), first(1, 0));
    assert_ne!(first(0, 0), first(0, 1));
    assert_eq!(first(3, 4), first(3, 4));
    assert_ne!(
        families::seed_key("ab", 1, l, 0),
        families::seed_key("a", 1, l, 0)
    );
    assert_ne!(
        families::seed_key("a", 1, l, 0),
        families::seed_key("a", 2, l, 0)
    );
}

/// Golden hashes of the first instances of every family at every level (every field
/// but the derived `answer_format`, see below), and of every question variant 1..
/// (one hash per variant over the first instances of all five levels, every field
/// included). Variant 0 hashes are those from before variants existed. Regenerate
/// with `HRL_BLESS=1 cargo test --release --test families golden` after a deliberate
/// generator change *and* a version bump.
#[test]
fn golden_hashes() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/families/golden.json");
    let mut now: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    for f in families::registry() {
        let mut levels = serde_json::Map::new();
        for level in Level::all() {
            let mut h = Sha256::new();
            for mut inst in families::generate_many(*f, level, 0, 5).unwrap() {
                // `answer_format` restates the question's own instruction (its
                // consistency with the question is tested for every family in
                // `families::answer_format_tests`), so it is not part of what a version
                // identifies: the question, answer and structured input are.
                inst.metadata
                    .as_object_mut()
                    .unwrap()
                    .remove("answer_format")
                    .expect("the stream records answer_format");
                h.update(serde_json::to_string(&inst).unwrap());
                h.update(b"\n");
            }
            let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
            levels.insert(level.get().to_string(), hex.into());
        }
        let mut variants = serde_json::Map::new();
        for k in 1..f.variant_count() as u8 {
            let mut h = Sha256::new();
            for level in Level::all() {
                for inst in
                    families::generate_many_variant(*f, level, 0, 3, families::Variant::Fixed(k))
                        .unwrap()
                {
                    h.update(serde_json::to_string(&inst).unwrap());
                    h.update(b"\n");
                }
            }
            let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
            variants.insert(k.to_string(), hex.into());
        }
        now.insert(
            f.name().to_string(),
            serde_json::json!({"version": f.version(), "levels": levels, "variants": variants}),
        );
    }
    if std::env::var_os("HRL_BLESS").is_some() {
        std::fs::write(path, serde_json::to_string_pretty(&now).unwrap() + "\n").unwrap();
        return;
    }
    let text = std::fs::read_to_string(path).expect("fixtures/families/golden.json is missing");
    let want: BTreeMap<String, serde_json::Value> = serde_json::from_str(&text).unwrap();
    for (name, got) in &now {
        let Some(w) = want.get(name) else {
            panic!("{name} has no golden hashes: run with HRL_BLESS=1 once its generator is final");
        };
        if w != got {
            if w["version"] == got["version"] && w["levels"] == got["levels"] {
                panic!(
                    "{name}: question variants changed (templates {} -> {}) but its version did not: \
                     a template change is a generation change; bump `version()` and re-bless",
                    w["variants"], got["variants"]
                );
            }
            if w["version"] == got["version"] {
                panic!(
                    "{name}: generated instances changed but its version did not: bump `version()` and re-bless"
                );
            }
            panic!("{name}: version bumped; re-bless the golden hashes (HRL_BLESS=1)");
        }
    }
    for name in want.keys() {
        assert!(
            now.contains_key(name),
            "golden hashes list unknown family {name}"
        );
    }
}
