//! `zebra_puzzles`: a logic-grid puzzle ("Einstein's riddle"): people in a row of
//! houses, each with one value of every attribute; clues pin down a unique arrangement;
//! the question asks who has a given value.
//!
//! Generation: a random arrangement (one permutation per attribute); then true clues
//! are drawn at random until a solution counter finds exactly one arrangement, and
//! finally every clue whose removal keeps the solution unique is removed (in random
//! order), so no clue is redundant. The question asks about a value no single clue
//! pairs with a name (version 2; in version 1 one `same` clue answered 22 % of the
//! questions at level 1 and 4-10 % at levels 2-5: read off, not deduced). The counter
//! keeps, for every value, the set of houses still possible, narrows the sets by the
//! clues and by "one value of each attribute per house" until nothing changes,
//! branches on the smallest open set, and stops at two solutions.
//!
//! Clue kinds: `at` (X lives in house k), `not_at` (X does not live in house k),
//! `same` (X and Y live in the same house), `left_of` (X lives directly left of Y),
//! `next_to` (X and Y are neighbours), `before` (X lives somewhere left of Y).
//!
//! Levels (houses, attributes including the name, clue kinds):
//! 1: 3, 2, `at same` · 2: 3, 3, `at same left_of next_to` · 3: 4, 3, all but
//! `not_at` and `before` · 4: 4, 4, all · 5: 5, 4..=5, all.
//!
//! Gold: the name of the person asked about. Verifier: one of the puzzle's names,
//! ASCII case ignored (the question lists the names instead of showing a tagged
//! example, since any name could be the answer). The solution is unique, so only the
//! gold scores. Metadata: `houses`, `attributes` (name and values of each, the names
//! first), `clues` (objects with `kind` and `a`/`b`: `[attribute, value]` pairs, `house`
//! for `at`/`not_at`), `question` (`[attribute, value]` asked about).

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::lexicon::{FEMALE, MALE};
use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::{AnswerFormat, Body, Wording};
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct ZebraPuzzles;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    At,
    NotAt,
    Same,
    LeftOf,
    NextTo,
    Before,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::At => "at",
            Kind::NotAt => "not_at",
            Kind::Same => "same",
            Kind::LeftOf => "left_of",
            Kind::NextTo => "next_to",
            Kind::Before => "before",
        }
    }
}

struct Params {
    houses: usize,
    attributes: (usize, usize),
    kinds: &'static [Kind],
}

const PARAMS: [Params; 5] = [
    Params {
        houses: 3,
        attributes: (2, 2),
        kinds: &[Kind::At, Kind::Same],
    },
    Params {
        houses: 3,
        attributes: (3, 3),
        kinds: &[Kind::At, Kind::Same, Kind::LeftOf, Kind::NextTo],
    },
    Params {
        houses: 4,
        attributes: (3, 3),
        kinds: &[Kind::At, Kind::Same, Kind::LeftOf, Kind::NextTo],
    },
    Params {
        houses: 4,
        attributes: (4, 4),
        kinds: &[
            Kind::At,
            Kind::NotAt,
            Kind::Same,
            Kind::LeftOf,
            Kind::NextTo,
            Kind::Before,
        ],
    },
    Params {
        houses: 5,
        attributes: (4, 5),
        kinds: &[
            Kind::At,
            Kind::NotAt,
            Kind::Same,
            Kind::LeftOf,
            Kind::NextTo,
            Kind::Before,
        ],
    },
];

/// The attributes besides the name: (attribute, phrase template, values). In the
/// template `{}` is the value.
const ATTRIBUTES: [(&str, &str, &[&str]); 5] = [
    (
        "colour",
        "the person in the {} house",
        &["red", "green", "blue", "yellow", "white"],
    ),
    (
        "pet",
        "the person who keeps a {}",
        &["cat", "dog", "parrot", "hamster", "tortoise"],
    ),
    (
        "drink",
        "the person who drinks {}",
        &["tea", "coffee", "milk", "water", "lemonade"],
    ),
    (
        "hobby",
        "the person who enjoys {}",
        &["chess", "painting", "cycling", "gardening", "baking"],
    ),
    (
        "instrument",
        "the person who plays the {}",
        &["piano", "violin", "flute", "drums", "harp"],
    ),
];

/// Most names (houses) accepted from metadata.
const MAX_HOUSES: usize = 8;

/// A clue over (attribute, value) pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Clue {
    kind: Kind,
    a: (usize, usize),
    b: (usize, usize),
    house: usize,
}

impl Clue {
    /// Does the clue hold for domains that are all single houses?
    fn holds_in(&self, dom: &[Vec<u8>]) -> bool {
        let pos: Vec<Vec<usize>> = dom
            .iter()
            .map(|r| r.iter().map(|d| d.trailing_zeros() as usize).collect())
            .collect();
        self.holds(&pos)
    }

    /// Does the clue hold when `pos[attr][value]` is the house of each value?
    fn holds(&self, pos: &[Vec<usize>]) -> bool {
        let pa = pos[self.a.0][self.a.1];
        match self.kind {
            Kind::At => pa == self.house,
            Kind::NotAt => pa != self.house,
            _ => {
                let pb = pos[self.b.0][self.b.1];
                match self.kind {
                    Kind::Same => pa == pb,
                    Kind::LeftOf => pa + 1 == pb,
                    Kind::NextTo => pa.abs_diff(pb) == 1,
                    _ => pa < pb,
                }
            }
        }
    }
}

/// Count arrangements satisfying `clues`, stopping at `limit`: domains of houses per
/// (attribute, value) as bit masks, narrowed by the clues and by "each house holds one
/// value of every attribute" until nothing changes, then a branch on the smallest open
/// domain.
fn count(houses: usize, attrs: usize, clues: &[Clue], limit: usize) -> usize {
    let full: u8 = ((1u16 << houses) - 1) as u8;
    let mut dom = vec![vec![full; houses]; attrs];
    search(&mut dom, houses, clues, limit)
}

/// Narrow the domains to a fixed point; `false` when one becomes empty.
fn propagate(dom: &mut [Vec<u8>], houses: usize, clues: &[Clue]) -> bool {
    let full: u8 = ((1u16 << houses) - 1) as u8;
    loop {
        let before: Vec<Vec<u8>> = dom.to_vec();
        for c in clues {
            let (a, b) = (c.a, c.b);
            match c.kind {
                Kind::At => dom[a.0][a.1] &= 1 << c.house,
                Kind::NotAt => dom[a.0][a.1] &= !(1u8 << c.house),
                Kind::Same => {
                    let m = dom[a.0][a.1] & dom[b.0][b.1];
                    dom[a.0][a.1] = m;
                    dom[b.0][b.1] = m;
                }
                Kind::LeftOf => {
                    // a = b - 1
                    dom[a.0][a.1] &= dom[b.0][b.1] >> 1;
                    dom[b.0][b.1] &= (dom[a.0][a.1] << 1) & full;
                }
                Kind::NextTo => {
                    let (da, db) = (dom[a.0][a.1], dom[b.0][b.1]);
                    dom[a.0][a.1] &= ((db << 1) | (db >> 1)) & full;
                    dom[b.0][b.1] &= ((da << 1) | (da >> 1)) & full;
                }
                Kind::Before => {
                    let (da, db) = (dom[a.0][a.1], dom[b.0][b.1]);
                    if da == 0 || db == 0 {
                        return false;
                    }
                    // a < b: a below b's highest house, b above a's lowest house.
                    let b_max = 7 - db.leading_zeros() as usize;
                    let a_min = da.trailing_zeros() as usize;
                    dom[a.0][a.1] &= ((1u16 << b_max) - 1) as u8;
                    dom[b.0][b.1] &= full & !(((2u16 << a_min) - 1) as u8);
                }
            }
        }
        for row in dom.iter_mut() {
            // A value fixed to one house takes that house from the others.
            for v in 0..houses {
                if row[v].count_ones() == 1 {
                    let m = row[v];
                    for (w, d) in row.iter_mut().enumerate() {
                        if w != v {
                            *d &= !m;
                        }
                    }
                }
            }
            // A house only one value can take goes to that value.
            for h in 0..houses {
                let bit = 1u8 << h;
                let holders: Vec<usize> = (0..houses).filter(|&v| row[v] & bit != 0).collect();
                match holders.as_slice() {
                    [] => return false,
                    [v] => row[*v] = bit,
                    _ => {}
                }
            }
        }
        if dom.iter().flatten().any(|&d| d == 0) {
            return false;
        }
        if dom == before.as_slice() {
            return true;
        }
    }
}

fn search(dom: &mut [Vec<u8>], houses: usize, clues: &[Clue], limit: usize) -> usize {
    if !propagate(dom, houses, clues) {
        return 0;
    }
    let open = dom
        .iter()
        .enumerate()
        .flat_map(|(a, row)| row.iter().enumerate().map(move |(v, d)| (a, v, *d)))
        .filter(|(_, _, d)| d.count_ones() > 1)
        .min_by_key(|(_, _, d)| d.count_ones());
    let Some((a, v, d)) = open else {
        // Every domain is a single house, and every house holds one value per
        // attribute; the clues were applied to exactly these singletons.
        return usize::from(clues.iter().all(|c| c.holds_in(dom)));
    };
    let mut found = 0;
    for h in 0..houses {
        if d & (1 << h) != 0 {
            let mut next = dom.to_vec();
            next[a][v] = 1 << h;
            found += search(&mut next, houses, clues, limit - found);
            if found >= limit {
                break;
            }
        }
    }
    found
}

/// The phrase for a value: names as themselves, others by their attribute's template.
fn describe(attrs: &[(&str, &str, Vec<&str>)], (a, v): (usize, usize)) -> String {
    let (_, template, values) = &attrs[a];
    template.replace("{}", values[v])
}

fn ordinal(h: usize) -> &'static str {
    [
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
    ][h]
}

fn clue_text(attrs: &[(&str, &str, Vec<&str>)], c: &Clue) -> String {
    let a = describe(attrs, c.a);
    let cap = |s: String| {
        let mut ch = s.chars();
        ch.next()
            .map(|f| f.to_uppercase().collect::<String>() + ch.as_str())
            .unwrap_or_default()
    };
    match c.kind {
        Kind::At => cap(format!("{a} lives in the {} house.", ordinal(c.house))),
        Kind::NotAt => cap(format!(
            "{a} does not live in the {} house.",
            ordinal(c.house)
        )),
        _ => {
            let b = describe(attrs, c.b);
            cap(match c.kind {
                Kind::Same => format!("{a} is {b}."),
                Kind::LeftOf => format!("{a} lives directly left of {b}."),
                Kind::NextTo => format!("{a} and {b} live next to each other."),
                _ => format!("{a} lives somewhere to the left of {b}."),
            })
        }
    }
}

fn draw_clue(rng: &mut ChaCha20Rng, p: &Params, attrs: usize, pos: &[Vec<usize>]) -> Clue {
    let n = p.houses;
    loop {
        let kind = p.kinds[rng.random_range(0..p.kinds.len())];
        let a = (rng.random_range(0..attrs), rng.random_range(0..n));
        let b = (rng.random_range(0..attrs), rng.random_range(0..n));
        let house = match kind {
            Kind::At => pos[a.0][a.1],
            Kind::NotAt => {
                let h = rng.random_range(0..n);
                if h == pos[a.0][a.1] {
                    continue;
                }
                h
            }
            _ => 0,
        };
        // `same` relates two attributes; the other relations two different values.
        if (kind == Kind::Same && a.0 == b.0) || (!matches!(kind, Kind::At | Kind::NotAt) && a == b)
        {
            continue;
        }
        let c = Clue { kind, a, b, house };
        if c.holds(pos) {
            return c;
        }
    }
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Respond,
        &[
            Piece::Text(
                "There is a row of {houses} houses, numbered 1 to {houses} from left to right (house 1 is the leftmost), with one person living in each. No two people share a value of any attribute:",
            ),
            Piece::Data("{#attributes|\n}- {.attribute}: {.values|comma}{/}"),
            Piece::Data("{@1}"),
            Piece::Text("Using the clues, answer: {@2}"),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Text("Question: {@2}"),
            Piece::Data("{@1}"),
            Piece::Text(
                "Setting: {houses} houses in a row, house 1 leftmost and house {houses} rightmost, one person per house. Each person has a different value of every attribute: {#attributes|; }{.attribute} ({.values|comma}){/}.",
            ),
        ],
    ),
];

impl Family for ZebraPuzzles {
    fn name(&self) -> &'static str {
        "zebra_puzzles"
    }
    fn category(&self) -> Category {
        Category::Logic
    }
    fn description(&self) -> &'static str {
        "Logic-grid puzzle with a unique solution: who has a given attribute"
    }
    fn version(&self) -> u32 {
        2
    }
    fn level_params(&self, level: Level) -> Value {
        let p = &PARAMS[level.idx()];
        let kinds: Vec<&str> = p.kinds.iter().map(|k| k.name()).collect();
        json!({
            "houses": p.houses, "attributes_min": p.attributes.0,
            "attributes_max": p.attributes.1, "clue_kinds": kinds,
        })
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let p = &PARAMS[level.idx()];
        let n = p.houses;
        let k = rng.random_range(p.attributes.0..=p.attributes.1);
        // Names: half from each list, shuffled.
        let mut names: Vec<&str> = Vec::with_capacity(n);
        while names.len() < n {
            let list = if rng.random_bool(0.5) { MALE } else { FEMALE };
            let name = list[rng.random_range(0..list.len())];
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let mut others: Vec<usize> = (0..ATTRIBUTES.len()).collect();
        others.shuffle(rng);
        let mut attrs: Vec<(&str, &str, Vec<&str>)> = vec![("name", "{}", names)];
        for &i in &others[..k - 1] {
            let (attr, template, values) = ATTRIBUTES[i];
            let mut v = values.to_vec();
            v.shuffle(rng);
            v.truncate(n);
            v.sort_unstable();
            attrs.push((attr, template, v));
        }
        // The arrangement: pos[attribute][value] = house.
        let pos: Vec<Vec<usize>> = (0..k)
            .map(|_| {
                let mut h: Vec<usize> = (0..n).collect();
                h.shuffle(rng);
                h
            })
            .collect();
        let mut clues: Vec<Clue> = Vec::new();
        while count(n, k, &clues, 2) > 1 {
            let c = draw_clue(rng, p, k, &pos);
            if !clues.contains(&c) {
                clues.push(c);
            }
        }
        // Drop redundant clues, in random order.
        let mut order: Vec<usize> = (0..clues.len()).collect();
        order.shuffle(rng);
        let mut keep = vec![true; clues.len()];
        for i in order {
            keep[i] = false;
            let rest: Vec<Clue> = (0..clues.len())
                .filter(|&j| keep[j])
                .map(|j| clues[j])
                .collect();
            if count(n, k, &rest, 2) != 1 {
                keep[i] = true;
            }
        }
        let clues: Vec<Clue> = (0..clues.len())
            .filter(|&j| keep[j])
            .map(|j| clues[j])
            .collect();
        // The question: who has a value of a non-name attribute, never one that a
        // single clue pairs with a name ("Alice keeps the cat"): that answer is read
        // off, not deduced. The clues are minimal, so at most n - 1 values of an
        // attribute are stated that way (the last would follow from the others) and
        // a candidate always exists.
        let stated = |q: (usize, usize)| {
            clues.iter().any(|c| {
                c.kind == Kind::Same && ((c.a.0 == 0 && c.b == q) || (c.b.0 == 0 && c.a == q))
            })
        };
        let candidates: Vec<(usize, usize)> = (1..k)
            .flat_map(|a| (0..n).map(move |v| (a, v)))
            .filter(|&q| !stated(q))
            .collect();
        let (qa, qv) = candidates[rng.random_range(0..candidates.len())];
        let house = pos[qa][qv];
        let who = (0..n)
            .find(|&v| pos[0][v] == house)
            .expect("a name per house");
        let gold = attrs[0].2[who];
        let mut text = format!(
            "{n} people live in a row of {n} houses, numbered 1 to {n} from left to right (the \
             first house is the leftmost), one person per house. Each person has a different \
             name"
        );
        let last = attrs.len() - 1;
        for (i, (attr, _, values)) in attrs.iter().enumerate().skip(1) {
            let sep = if i == last { " and" } else { "," };
            text.push_str(&format!("{sep} a different {attr} ({})", values.join(", ")));
        }
        text.push_str(&format!(". The names are {}.", attrs[0].2.join(", ")));
        let listed: Vec<String> = clues
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{}. {}", i + 1, clue_text(&attrs, c)))
            .collect();
        let clue_json: Vec<Value> = clues
            .iter()
            .map(|c| match c.kind {
                Kind::At | Kind::NotAt => {
                    json!({"kind": c.kind.name(), "a": [c.a.0, c.a.1], "house": c.house + 1})
                }
                _ => json!({"kind": c.kind.name(), "a": [c.a.0, c.a.1], "b": [c.b.0, c.b.1]}),
            })
            .collect();
        let attr_json: Vec<Value> = attrs
            .iter()
            .map(|(a, _, v)| json!({"attribute": a, "values": v}))
            .collect();
        Generated {
            body: Body::new()
                .text(text)
                .data(format!("Clues:\n{}", listed.join("\n")))
                .text(format!(
                    "Who is {}? The clues determine the answer uniquely.",
                    describe(&attrs, (qa, qv))
                )),
            format: AnswerFormat::new(format!("as one of the names ({})", attrs[0].2.join(", "))),
            answer: gold.to_string(),
            metadata: fields([
                ("houses", Value::from(n)),
                ("attributes", Value::Array(attr_json)),
                ("clues", Value::Array(clue_json)),
                ("question", json!([qa, qv])),
                ("names", json!(attrs[0].2)),
            ]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let Some(names) = Meta::of(instance).strs("names") else {
            return 0.0;
        };
        if names.len() > MAX_HOUSES
            || !names
                .iter()
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphabetic()))
        {
            return 0.0;
        }
        let a = answer.trim();
        // The answer must be one of the puzzle's names and the gold one.
        if names.iter().any(|n| n.eq_ignore_ascii_case(a))
            && a.eq_ignore_ascii_case(instance.answer.trim())
        {
            1.0
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_counts() {
        // Two houses, one attribute besides the name: 2 * 2 arrangements, no clues.
        assert_eq!(count(2, 2, &[], 10), 4);
        let at = Clue {
            kind: Kind::At,
            a: (0, 0),
            b: (0, 0),
            house: 0,
        };
        let same = Clue {
            kind: Kind::Same,
            a: (0, 0),
            b: (1, 1),
            house: 0,
        };
        assert_eq!(count(2, 2, &[at], 10), 2);
        assert_eq!(count(2, 2, &[at, same], 10), 1);
        // No clues over 3 houses and 3 attributes: 3!^3 arrangements.
        assert_eq!(count(3, 3, &[], 1000), 216);
        let before = Clue {
            kind: Kind::Before,
            a: (1, 0),
            b: (1, 2),
            house: 0,
        };
        let left = Clue {
            kind: Kind::LeftOf,
            a: (0, 0),
            b: (0, 1),
            house: 0,
        };
        let near = Clue {
            kind: Kind::NextTo,
            a: (0, 2),
            b: (1, 1),
            house: 0,
        };
        let not = Clue {
            kind: Kind::NotAt,
            a: (0, 1),
            b: (0, 1),
            house: 2,
        };
        // Brute force over every arrangement agrees with the propagating counter.
        let perms: Vec<Vec<usize>> = {
            let mut v = Vec::new();
            for a in 0..3 {
                for b in 0..3 {
                    for c in 0..3 {
                        if a != b && b != c && a != c {
                            v.push(vec![a, b, c]);
                        }
                    }
                }
            }
            v
        };
        let clue_sets: [&[Clue]; 4] = [
            &[before],
            &[before, left],
            &[left, near],
            &[before, near, not],
        ];
        for set in clue_sets {
            let brute = perms
                .iter()
                .flat_map(|p| perms.iter().map(move |q| vec![p.clone(), q.clone()]))
                .filter(|pos| set.iter().all(|c| c.holds(pos)))
                .count();
            assert_eq!(count(3, 2, set, 1000), brute, "{set:?}");
        }
    }
}
