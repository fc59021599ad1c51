//! Properties every task family must have, plus per-category independent re-solvers.
//!
//! Each category module (`arithmetic.rs`, ...) exposes `resolvers()`: for each of its
//! families, a solver written independently of the generator (usually brute force over
//! `metadata`) whose answer the family's verifier must accept, and which for families
//! with a unique answer must also match the gold answer.

mod algorithmic;
mod arithmetic;
mod cognition;
mod games;
mod graphs;
mod logic;
mod new_families;

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
                    prop_assert_eq!(f.verify(&inst, &inst.answer), f.verify(&inst, &mine));
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

/// Golden hashes of the first instances of every family at every level. Regenerate
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
            for inst in families::generate_many(*f, level, 0, 5).unwrap() {
                h.update(serde_json::to_string(&inst).unwrap());
                h.update(b"\n");
            }
            let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
            levels.insert(level.get().to_string(), hex.into());
        }
        now.insert(
            f.name().to_string(),
            serde_json::json!({"version": f.version(), "levels": levels}),
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
