//! The built-in family splits (`suites/splits/`): each loads, its roles are disjoint
//! and name only registered families; `paper-like` has the published shape (21
//! warm-start, 5 RL, at least 21 held-out families that include largest_island,
//! count_primes, maze and mini_sudoku and span every category); `category-holdout`
//! holds out whole categories that no training role touches.

use std::collections::BTreeSet;

use harness_rl::families::{self, Category, splits};

fn category_of(name: &str) -> Category {
    families::get(name).unwrap().category()
}

#[test]
fn every_builtin_split_loads_with_disjoint_roles_of_registered_families() {
    let all = splits::builtin().unwrap();
    let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["paper-like", "category-holdout"]);
    for s in &all {
        assert!(!s.description.is_empty());
        let mut seen = BTreeSet::new();
        for r in &s.roles {
            assert!(!r.families.is_empty(), "{}: {} is empty", s.name, r.name);
            for f in &r.families {
                assert!(families::get(f).is_ok(), "{}: unknown {f}", s.name);
                assert!(seen.insert(*f), "{}: {f} is in two roles", s.name);
            }
        }
        for role in ["warm_start", "rl", "held_out"] {
            assert!(s.role(role).is_some(), "{}: no role {role}", s.name);
        }
        // Every registered family is either in a role or reported as unassigned.
        let unassigned: BTreeSet<&str> = s.unassigned().into_iter().collect();
        for f in families::registry() {
            assert!(
                seen.contains(f.name()) != unassigned.contains(f.name()),
                "{}: {}",
                s.name,
                f.name()
            );
        }
    }
}

#[test]
fn paper_like_has_the_published_shape() {
    let s = splits::load("paper-like").unwrap();
    let held = s.families("held_out").unwrap();
    let n = families::registry().len();
    assert_eq!(s.families("rl").unwrap().len(), 5);
    assert!(held.len() >= 21, "{} held out", held.len());
    // 21 warm-start families once the registry has room for 21 + 5 + 21.
    let warm = s.families("warm_start").unwrap().len();
    if n >= 47 {
        assert_eq!(warm, 21);
    } else {
        assert_eq!(warm, n - 5 - held.len(), "{n} families: use them all");
    }
    for f in ["largest_island", "count_primes", "maze", "mini_sudoku"] {
        assert!(held.contains(&f), "{f} is not held out");
    }
    let held_cats: BTreeSet<Category> = held.iter().map(|f| category_of(f)).collect();
    let all_cats: BTreeSet<Category> = families::registry().iter().map(|f| f.category()).collect();
    assert_eq!(held_cats, all_cats, "the held-out set misses a category");
    // Near-twins stay on one side.
    for pair in [("gcd", "lcm"), ("maze", "shortest_path")] {
        assert_eq!(
            s.role_of(pair.0).map(|r| &r.name),
            s.role_of(pair.1).map(|r| &r.name),
            "{pair:?}"
        );
    }
}

#[test]
fn category_holdout_holds_out_whole_categories() {
    let s = splits::load("category-holdout").unwrap();
    let held = s.role("held_out").unwrap();
    assert!(held.categories.len() >= 2, "{:?}", held.categories);
    for f in families::registry() {
        let in_held = held.families.contains(&f.name());
        assert_eq!(
            held.categories.contains(&f.category()),
            in_held,
            "{} ({})",
            f.name(),
            f.category()
        );
    }
    for role in ["warm_start", "rl"] {
        for f in s.families(role).unwrap() {
            assert!(!held.categories.contains(&category_of(f)), "{role}: {f}");
        }
    }
}
