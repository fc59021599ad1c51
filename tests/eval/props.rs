//! Property tests of the sets: for any family, level, seed and sizes, feedback, dev
//! and test never share an instance (by id or by question text), each set has the
//! size asked for, and the same coordinates give the same sets.

use std::collections::HashSet;
use std::path::PathBuf;

use harness_rl::eval::sets::{self, SET_STRIDE};
use harness_rl::eval::suite::{SetSizes, TaskDef, TaskSource};
use harness_rl::families;
use harness_rl::task::spec::GradingSetup;
use proptest::prelude::*;

fn task(family: &str, level: u8, seed: u64) -> TaskDef {
    TaskDef {
        id: format!("{family}/L{level}"),
        source: TaskSource::Family {
            family: family.into(),
            level,
            seed,
        },
        sets: SetSizes::default(),
        seed_harness: PathBuf::from("unused.toml"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(32)
    ))]

    #[test]
    fn sets_never_overlap(
        fam in 0usize..1000,
        level in 1u8..=3,
        seed in any::<u64>(),
        feedback in 1usize..12,
        dev in 1usize..12,
        test in 1usize..20,
    ) {
        let names: Vec<&str> = families::registry().iter().map(|f| f.name()).collect();
        let name = names[fam % names.len()];
        let sizes = SetSizes {
            feedback,
            dev,
            test,
            validation: 0,
        };
        let t = task(name, level, seed);
        match sets::build(&t, sizes, &GradingSetup::default()) {
            Ok(s) => {
                prop_assert_eq!(s.feedback.len(), feedback);
                prop_assert_eq!(s.dev.len(), dev);
                prop_assert_eq!(s.test.len(), test);
                let mut ids = HashSet::new();
                let mut questions = HashSet::new();
                for item in s.feedback.iter().chain(s.dev.iter()).chain(s.test.iter()) {
                    prop_assert!(ids.insert(item.id()), "id {} twice", item.id());
                    prop_assert!(questions.insert(item.question()), "question twice: {}", item.id());
                }
                // Each set comes from its own index range.
                for (k, set) in [&s.feedback, &s.dev, &s.test].into_iter().enumerate() {
                    for item in set.iter() {
                        let idx = item.instance().unwrap().index;
                        prop_assert!(idx >= k as u64 * SET_STRIDE && idx < (k as u64 + 1) * SET_STRIDE);
                    }
                }
                let again = sets::build(&t, sizes, &GradingSetup::default()).unwrap();
                prop_assert_eq!(again.ids(), s.ids());
            }
            // A level too small for the sizes asked is refused, never overlapping.
            Err(e) => prop_assert!(e.to_string().contains("distinct questions"), "{}", e),
        }
    }
}

#[test]
fn lcb_sets_are_disjoint_problem_sets() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/lcb");
    for seed in 0..5u64 {
        let t = TaskDef {
            id: "lcb/fixtures".into(),
            source: TaskSource::Lcb {
                selection: harness_rl::lcb::LcbSelection::new(dir.clone()),
                seed,
            },
            sets: SetSizes::default(),
            seed_harness: PathBuf::from("unused.toml"),
        };
        let sizes = SetSizes {
            feedback: 4,
            dev: 5,
            test: 6,
            validation: 0,
        };
        let s = sets::build(&t, sizes, &GradingSetup::default()).unwrap();
        let ids = s.ids();
        let all: Vec<&String> = ids
            .feedback
            .iter()
            .chain(&ids.dev)
            .chain(&ids.test)
            .collect();
        assert_eq!(all.len(), 15);
        assert_eq!(all.iter().collect::<HashSet<_>>().len(), 15, "seed {seed}");
        // More problems than exist: refused.
        let too_many = SetSizes {
            feedback: 100,
            dev: 100,
            test: 100,
            validation: 0,
        };
        assert!(sets::build(&t, too_many, &GradingSetup::default()).is_err());
    }
}
