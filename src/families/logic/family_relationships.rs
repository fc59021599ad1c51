//! `family_relationships`: a family tree told in sentences; name how one person is
//! related to another.
//!
//! The tree: a founding couple; each couple has children; some children marry a
//! spouse from outside the family (no one marries a relative) and, when a generation
//! follows, have children of their own. Every person's gender is stated by the
//! sentences (husband/wife, son/daughter).
//!
//! Kinship table ("A is B's ___"; every rule names the path from A to B):
//! - husband / wife: A is B's spouse;
//! - father / mother: A is a parent of B; son / daughter: B is a parent of A;
//! - brother / sister: A and B have the same two parents;
//! - grandfather / grandmother: A is a parent of a parent of B; grandson /
//!   granddaughter: the converse; great-grandfather / great-grandmother: a parent of a
//!   parent of a parent; great-grandson / great-granddaughter: the converse;
//! - uncle / aunt: A is a sibling of a parent of B, or the spouse of such a sibling;
//!   nephew / niece: B is A's uncle or aunt (so A is a child of a sibling of B or of a
//!   sibling of B's spouse);
//! - cousin: a parent of A and a parent of B are siblings (first cousins);
//! - father-in-law / mother-in-law: A is a parent of B's spouse;
//! - son-in-law / daughter-in-law: A is the spouse of a child of B;
//! - brother-in-law / sister-in-law: A is a sibling of B's spouse, or the spouse of a
//!   sibling of B.
//!
//! A pair is asked about only when exactly one rule applies (pairs no rule names, such
//! as the spouses of two siblings, are never asked). The label is derived from the tree
//! by this table; the word's gender is A's.
//!
//! Levels (generations, children per couple, marriage probability, relations asked):
//! 1: 2, 2-3, -, spouse/parent/child/sibling ·
//! 2: 3, 2, 0.8, parent/child/sibling/grandparent/grandchild/uncle-aunt/nephew-niece ·
//! 3: 3, 2-3, 0.7, every relation of the table except great-* ·
//! 4: 3, 2-3, 0.8, uncle-aunt, nephew-niece, cousin and the in-laws ·
//! 5: 4, 2, 0.7, great-*, cousin, uncle-aunt, nephew-niece and the in-laws.
//! The relation kind is drawn uniformly among the level's kinds present in the tree,
//! then the pair uniformly among pairs of that kind. From level 3 the sentences are
//! shuffled and people of the last generation may also marry.
//!
//! Gold: the relation word, e.g. `sister-in-law`. Verifier: the same word, case
//! ignored, hyphens or spaces between the parts (`father in law`). Metadata: `params`,
//! `people` (columns of equal length: `name`, `male` (bool), and `father`, `mother`,
//! `spouse` as indices into the columns or null),
//! `query` (`{"a", "b"}`: A is B's what), `kind` (the table row).

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha20Rng;
use serde_json::json;

use super::answers::norm_words;
use crate::families::kit::lexicon::{FEMALE, MALE};
use crate::families::kit::meta::object;
use crate::families::kit::question::Wording;
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::kit::sample::pick;
use crate::families::kit::template::{Piece, Template};
use crate::families::{Category, Family, Generated, Instance, Level};

pub struct FamilyRelationships;

/// Table rows: (kind, word if A is male, word if A is female).
const KINDS: [(&str, &str, &str); 14] = [
    ("spouse", "husband", "wife"),
    ("parent", "father", "mother"),
    ("child", "son", "daughter"),
    ("sibling", "brother", "sister"),
    ("grandparent", "grandfather", "grandmother"),
    ("grandchild", "grandson", "granddaughter"),
    (
        "great_grandparent",
        "great-grandfather",
        "great-grandmother",
    ),
    ("great_grandchild", "great-grandson", "great-granddaughter"),
    ("uncle_aunt", "uncle", "aunt"),
    ("nephew_niece", "nephew", "niece"),
    ("cousin", "cousin", "cousin"),
    ("parent_in_law", "father-in-law", "mother-in-law"),
    ("child_in_law", "son-in-law", "daughter-in-law"),
    ("sibling_in_law", "brother-in-law", "sister-in-law"),
];

/// Per level: (generations, min children, max children, marriage probability, kinds).
struct LevelSpec {
    gens: usize,
    kids: (usize, usize),
    marry: f64,
    kinds: &'static [usize],
}

const LEVELS: [LevelSpec; 5] = [
    LevelSpec {
        gens: 2,
        kids: (2, 3),
        marry: 0.0,
        kinds: &[0, 1, 2, 3],
    },
    LevelSpec {
        gens: 3,
        kids: (2, 2),
        marry: 0.8,
        kinds: &[1, 2, 3, 4, 5, 8, 9],
    },
    LevelSpec {
        gens: 3,
        kids: (2, 3),
        marry: 0.7,
        kinds: &[0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13],
    },
    LevelSpec {
        gens: 3,
        kids: (2, 3),
        marry: 0.8,
        kinds: &[8, 9, 10, 11, 12, 13],
    },
    LevelSpec {
        gens: 4,
        kids: (2, 2),
        marry: 0.7,
        kinds: &[6, 7, 8, 9, 10, 11, 12, 13],
    },
];

struct Person {
    name: &'static str,
    male: bool,
    father: Option<usize>,
    mother: Option<usize>,
    spouse: Option<usize>,
}

struct Tree {
    people: Vec<Person>,
}

impl Tree {
    fn parents(&self, x: usize) -> impl Iterator<Item = usize> + '_ {
        self.people[x]
            .father
            .into_iter()
            .chain(self.people[x].mother)
    }
    #[cfg(test)]
    fn is_parent(&self, a: usize, b: usize) -> bool {
        self.parents(b).any(|p| p == a)
    }
    #[cfg(test)]
    fn siblings(&self, a: usize, b: usize) -> bool {
        let (pa, pb) = (&self.people[a], &self.people[b]);
        a != b && pa.father.is_some() && pa.father == pb.father && pa.mother == pb.mother
    }
    #[cfg(test)]
    fn grandparent(&self, a: usize, b: usize) -> bool {
        self.parents(b).any(|p| self.is_parent(a, p))
    }
    #[cfg(test)]
    fn great_grandparent(&self, a: usize, b: usize) -> bool {
        self.parents(b).any(|p| self.grandparent(a, p))
    }
    #[cfg(test)]
    fn uncle_aunt(&self, a: usize, b: usize) -> bool {
        let sp = self.people[a].spouse;
        self.parents(b)
            .any(|p| self.siblings(a, p) || sp.is_some_and(|s| self.siblings(s, p)))
    }
    #[cfg(test)]
    fn cousin(&self, a: usize, b: usize) -> bool {
        self.parents(a)
            .any(|x| self.parents(b).any(|y| self.siblings(x, y)))
    }
    /// For every person b and table row k, the set (bitmask over people, at most 64)
    /// of the people a with "a is b's k": the table above, computed with set algebra.
    fn relation_masks(&self) -> Vec<[u64; 14]> {
        let n = self.people.len();
        let bit = |x: usize| 1u64 << x;
        let each = |mask: u64, f: &dyn Fn(usize) -> u64| {
            let mut out = 0u64;
            let mut m = mask;
            while m != 0 {
                out |= f(m.trailing_zeros() as usize);
                m &= m - 1;
            }
            out
        };
        let par: Vec<u64> = (0..n)
            .map(|x| self.parents(x).fold(0, |m, p| m | bit(p)))
            .collect();
        let sp: Vec<u64> = (0..n)
            .map(|x| self.people[x].spouse.map_or(0, bit))
            .collect();
        let mut chi = vec![0u64; n];
        for x in 0..n {
            for p in self.parents(x) {
                chi[p] |= bit(x);
            }
        }
        let sib: Vec<u64> = (0..n)
            .map(|x| match (self.people[x].father, self.people[x].mother) {
                (Some(f), Some(m)) => chi[f] & chi[m] & !bit(x),
                _ => 0,
            })
            .collect();
        let spouses = |mask: u64| each(mask, &|x| sp[x]);
        let gp: Vec<u64> = (0..n).map(|b| each(par[b], &|p| par[p])).collect();
        let gc: Vec<u64> = (0..n).map(|b| each(chi[b], &|c| chi[c])).collect();
        let ua: Vec<u64> = (0..n)
            .map(|b| each(par[b], &|p| sib[p] | spouses(sib[p])))
            .collect();
        let mut nn = vec![0u64; n];
        for (a, &u) in ua.iter().enumerate() {
            let mut m = u;
            while m != 0 {
                nn[m.trailing_zeros() as usize] |= bit(a);
                m &= m - 1;
            }
        }
        (0..n)
            .map(|b| {
                let spouse_of_b = self.people[b].spouse;
                [
                    sp[b],
                    par[b],
                    chi[b],
                    sib[b],
                    gp[b],
                    gc[b],
                    each(par[b], &|p| gp[p]),
                    each(chi[b], &|c| gc[c]),
                    ua[b],
                    nn[b],
                    each(par[b], &|p| each(sib[p], &|s| chi[s])),
                    spouse_of_b.map_or(0, |s| par[s]),
                    spouses(chi[b]),
                    spouse_of_b.map_or(0, |s| sib[s]) | spouses(sib[b]),
                ]
            })
            .collect()
    }
    /// Every table row that applies to "a is b's ___", rule by rule (the reference the
    /// set algebra of [`Tree::relation_masks`] is tested against).
    #[cfg(test)]
    fn kinds(&self, a: usize, b: usize) -> Vec<usize> {
        let (sa, sb) = (self.people[a].spouse, self.people[b].spouse);
        let rules = [
            sa == Some(b),
            self.is_parent(a, b),
            self.is_parent(b, a),
            self.siblings(a, b),
            self.grandparent(a, b),
            self.grandparent(b, a),
            self.great_grandparent(a, b),
            self.great_grandparent(b, a),
            self.uncle_aunt(a, b),
            self.uncle_aunt(b, a),
            self.cousin(a, b),
            sb.is_some_and(|s| self.is_parent(a, s)),
            sa.is_some_and(|s| self.is_parent(b, s)),
            sb.is_some_and(|s| self.siblings(a, s)) || sa.is_some_and(|s| self.siblings(s, b)),
        ];
        rules
            .iter()
            .enumerate()
            .filter(|&(_, &r)| r)
            .map(|(i, _)| i)
            .collect()
    }
}

fn build(rng: &mut ChaCha20Rng, spec: &LevelSpec, late_marriages: bool) -> Tree {
    let mut males = pick(rng, MALE, 40).into_iter();
    let mut females = pick(rng, FEMALE, 40).into_iter();
    let mut people: Vec<Person> = Vec::new();
    let mut new = |people: &mut Vec<Person>, male: bool, father, mother| {
        let name = if male { males.next() } else { females.next() }.unwrap_or("Nobody");
        people.push(Person {
            name,
            male,
            father,
            mother,
            spouse: None,
        });
        people.len() - 1
    };
    let h = new(&mut people, true, None, None);
    let w = new(&mut people, false, None, None);
    people[h].spouse = Some(w);
    people[w].spouse = Some(h);
    let mut couples = vec![(h, w, 0usize)];
    let mut i = 0;
    while i < couples.len() {
        let (h, w, g) = couples[i];
        i += 1;
        if g + 1 >= spec.gens {
            continue;
        }
        let k = rng.random_range(spec.kids.0..=spec.kids.1);
        for _ in 0..k {
            let male = rng.random_bool(0.5);
            let c = new(&mut people, male, Some(h), Some(w));
            let has_children = g + 2 < spec.gens;
            let p = if has_children {
                spec.marry
            } else if late_marriages {
                0.3
            } else {
                0.0
            };
            if p > 0.0 && rng.random_bool(p) {
                let s = new(&mut people, !male, None, None);
                people[c].spouse = Some(s);
                people[s].spouse = Some(c);
                let (ch, cw) = if male { (c, s) } else { (s, c) };
                couples.push((ch, cw, g + 1));
            }
        }
    }
    Tree { people }
}

/// The answer vocabulary as the question lists it, for the question templates (which
/// are `const`); a unit test checks it is `vocabulary().join(", ")`.
macro_rules! vocabulary_text {
    () => {
        "husband, wife, father, mother, son, daughter, brother, sister, grandfather, \
         grandmother, grandson, granddaughter, great-grandfather, great-grandmother, \
         great-grandson, great-granddaughter, uncle, aunt, nephew, niece, cousin, \
         father-in-law, mother-in-law, son-in-law, daughter-in-law, brother-in-law, \
         sister-in-law"
    };
}

fn vocabulary() -> Vec<&'static str> {
    let mut v: Vec<&str> = KINDS.iter().flat_map(|&(_, m, f)| [m, f]).collect();
    v.dedup();
    v
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Text("Family facts:"),
            Piece::Data("{@0.sentences|bullets}"),
            Piece::Text(concat!(
                "How is {query.a} related to {query.b}? Fill the blank in \"{query.a} is {query.b}'s ___.\" with one word from this list: ",
                vocabulary_text!(),
                ". (An uncle or aunt may be related by blood or by marriage; cousin means first cousin; an in-law relation goes through exactly one marriage.)"
            )),
        ],
    ),
    Template::new(
        Wording::Respond,
        &[
            Piece::Text(concat!(
                "Complete the sentence \"{query.a} is {query.b}'s ___.\" using the facts below. Choose the word from: ",
                vocabulary_text!(),
                ". Notes: an uncle or aunt may be a blood relative or related by marriage; cousin means first cousin; an in-law relation goes through exactly one marriage."
            )),
            Piece::Data("{@0.sentences|numbered}"),
        ],
    ),
];

impl Family for FamilyRelationships {
    fn name(&self) -> &'static str {
        "family_relationships"
    }
    fn category(&self) -> Category {
        Category::Logic
    }
    fn description(&self) -> &'static str {
        "Name the kinship relation between two people of a family tree told in sentences"
    }
    fn version(&self) -> u32 {
        // 2: no format example (a listed word other than the gold told which word it was not).
        2
    }
    fn level_params(&self, level: Level) -> serde_json::Value {
        let s = &LEVELS[level.idx()];
        json!({
            "generations": s.gens,
            "children_min": s.kids.0,
            "children_max": s.kids.1,
            "marriage_probability": s.marry,
            "relations": s.kinds.iter().map(|&k| KINDS[k].0).collect::<Vec<_>>(),
            "shuffled": level.get() >= 3,
        })
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let spec = &LEVELS[level.idx()];
        let late = level.get() >= 3;
        let (tree, a, b, kind) = loop {
            let tree = build(rng, spec, late);
            let mut by_kind: Vec<Vec<(usize, usize)>> = vec![Vec::new(); KINDS.len()];
            for (b, rows) in tree.relation_masks().iter().enumerate() {
                // People named by exactly one row for this b.
                let (mut ones, mut twos) = (0u64, 0u64);
                for &m in rows {
                    twos |= ones & m;
                    ones |= m;
                }
                let unique = ones & !twos & !(1u64 << b);
                for &k in spec.kinds {
                    let mut m = rows[k] & unique;
                    while m != 0 {
                        by_kind[k].push((m.trailing_zeros() as usize, b));
                        m &= m - 1;
                    }
                }
            }
            let present: Vec<usize> = (0..KINDS.len())
                .filter(|&k| !by_kind[k].is_empty())
                .collect();
            if present.is_empty() {
                continue;
            }
            let k = present[rng.random_range(0..present.len())];
            let (a, b) = by_kind[k][rng.random_range(0..by_kind[k].len())];
            break (tree, a, b, k);
        };
        let p = &tree.people;
        let mut facts: Vec<String> = Vec::new();
        for (i, x) in p.iter().enumerate() {
            if let (Some(f), Some(m)) = (x.father, x.mother) {
                let role = if x.male { "son" } else { "daughter" };
                facts.push(format!(
                    "{} is the {role} of {} and {}.",
                    x.name, p[f].name, p[m].name
                ));
            }
            if let Some(s) = x.spouse {
                // Each marriage is told once, from the side listed first.
                if s > i {
                    let (h, w) = if x.male { (i, s) } else { (s, i) };
                    facts.push(if rng.random_bool(0.5) {
                        format!("{} is the wife of {}.", p[w].name, p[h].name)
                    } else {
                        format!("{} is the husband of {}.", p[h].name, p[w].name)
                    });
                }
            }
        }
        if late {
            facts.shuffle(rng);
        }
        let vocab = vocabulary();
        let gold = if p[a].male {
            KINDS[kind].1
        } else {
            KINDS[kind].2
        };
        let body = Body::new().data(facts.join(" ")).text(format!(
            "What is {a_name} to {b_name}? Complete the sentence \"{a_name} is {b_name}'s ___.\" with one of these \
words: {}. (An uncle or aunt may be related by blood or by marriage; cousin means first cousin; an in-law relation \
goes through exactly one marriage.)",
            vocab.join(", "),
            a_name = p[a].name,
            b_name = p[b].name,
        ));
        let format = AnswerFormat::new("as one of those words");
        Generated {
            body,
            format,
            answer: gold.to_string(),
            metadata: object(json!({
                "people": {
                    "name": p.iter().map(|x| x.name).collect::<Vec<_>>(),
                    "male": p.iter().map(|x| x.male).collect::<Vec<_>>(),
                    "father": p.iter().map(|x| x.father).collect::<Vec<_>>(),
                    "mother": p.iter().map(|x| x.mother).collect::<Vec<_>>(),
                    "spouse": p.iter().map(|x| x.spouse).collect::<Vec<_>>(),
                },
                "query": {"a": p[a].name, "b": p[b].name},
                "kind": KINDS[kind].0,
            })),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let (a, g) = (norm_words(answer), norm_words(&instance.answer));
        let known = vocabulary().iter().any(|w| norm_words(w) == g);
        if known && a == g { 1.0 } else { 0.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn set_algebra_matches_the_rule_table() {
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        for (level, spec) in LEVELS.iter().enumerate() {
            for _ in 0..40 {
                let tree = build(&mut rng, spec, level >= 2);
                let n = tree.people.len();
                assert!(n <= 64);
                let masks = tree.relation_masks();
                for a in 0..n {
                    for (b, mb) in masks.iter().enumerate() {
                        if a == b {
                            continue;
                        }
                        let by_rules = tree.kinds(a, b);
                        let by_sets: Vec<usize> =
                            (0..14).filter(|&k| mb[k] >> a & 1 == 1).collect();
                        assert_eq!(by_rules, by_sets, "a={a} b={b}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_templates_list_the_vocabulary() {
        assert_eq!(vocabulary_text!(), vocabulary().join(", "));
    }
}
