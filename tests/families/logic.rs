//! Independent re-solvers for the logic families, and focused verifier tests.
//!
//! Each solver reads only `metadata`: circuits are evaluated by memoised recursion
//! from the outputs; kinship is derived from generation distances to the nearest
//! common ancestor (plus one marriage step), not from the generator's rule table;
//! knights and knaves by a recursive search over assignments with a JSON interpreter;
//! propositional entailment row by row from the formula trees; syllogisms by the
//! "largest model" argument (a set of emptiness constraints and existence claims is
//! satisfiable iff every existence claim has a region no universal statement empties),
//! instead of enumerating every model.

use std::collections::HashMap;

use harness_rl::families::{self, Instance, Level};
use serde_json::Value;

use crate::Resolver;

fn s(v: &Value) -> &str {
    v.as_str().unwrap()
}

/// Memoised evaluation from each output back to the inputs.
fn circuit_logic(inst: &Instance) -> String {
    let m = &inst.metadata;
    let gates: HashMap<&str, &Value> = m["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (s(&g["name"]), g))
        .collect();
    fn val<'a>(
        n: &'a str,
        m: &'a Value,
        gates: &HashMap<&'a str, &'a Value>,
        memo: &mut HashMap<&'a str, bool>,
    ) -> bool {
        if let Some(&v) = memo.get(n) {
            return v;
        }
        let v = if let Some(x) = m["inputs"].get(n) {
            x.as_u64().unwrap() == 1
        } else {
            let g = gates[n];
            let args: Vec<bool> = g["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| val(s(a), m, gates, memo))
                .collect();
            match s(&g["op"]) {
                "NOT" => !args[0],
                "AND" => !args.contains(&false),
                "OR" => args.contains(&true),
                "XOR" => args.iter().fold(false, |acc, &b| acc ^ b),
                op => panic!("unknown gate {op}"),
            }
        };
        memo.insert(n, v);
        v
    }
    let mut memo = HashMap::new();
    m["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            if val(s(o), m, &gates, &mut memo) {
                "1"
            } else {
                "0"
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Generation distances to the nearest common ancestor, then at most one marriage.
fn family_relationships(inst: &Instance) -> String {
    let m = &inst.metadata;
    let people = &m["people"];
    let idx: HashMap<&str, usize> = people["name"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, p)| (s(p), i))
        .collect();
    let get = |i: usize, k: &str| people[k][i].as_u64().map(|x| x as usize);
    let male = |i: usize| people["male"][i].as_bool().unwrap();
    // Ancestors of x (x itself at distance 0) with their generation distance.
    let ancestors = |x: usize| {
        let mut out = vec![(x, 0u32)];
        let mut i = 0;
        while i < out.len() {
            let (p, d) = out[i];
            for k in ["father", "mother"] {
                if let Some(q) = get(p, k) {
                    out.push((q, d + 1));
                }
            }
            i += 1;
        }
        out
    };
    // Blood relation of a to b as (up from a, up from b) to the nearest common ancestor.
    let blood = |a: usize, b: usize| -> Option<(u32, u32)> {
        let (aa, bb) = (ancestors(a), ancestors(b));
        aa.iter()
            .flat_map(|&(x, da)| {
                bb.iter()
                    .filter(move |&&(y, _)| y == x)
                    .map(move |&(_, db)| (da, db))
            })
            .min_by_key(|&(da, db)| da + db)
    };
    let (a, b) = (idx[s(&m["query"]["a"])], idx[s(&m["query"]["b"])]);
    let w = |mw: &str, fw: &str| {
        if male(a) {
            mw.to_string()
        } else {
            fw.to_string()
        }
    };
    match blood(a, b) {
        Some((0, 1)) => w("father", "mother"),
        Some((1, 0)) => w("son", "daughter"),
        Some((1, 1)) => w("brother", "sister"),
        Some((0, 2)) => w("grandfather", "grandmother"),
        Some((2, 0)) => w("grandson", "granddaughter"),
        Some((0, 3)) => w("great-grandfather", "great-grandmother"),
        Some((3, 0)) => w("great-grandson", "great-granddaughter"),
        Some((1, 2)) => w("uncle", "aunt"),
        Some((2, 1)) => w("nephew", "niece"),
        Some((2, 2)) => "cousin".to_string(),
        Some(other) => panic!("{}: unlabelled blood relation {other:?}", inst.id),
        None => {
            let (sa, sb) = (get(a, "spouse"), get(b, "spouse"));
            if sa == Some(b) {
                w("husband", "wife")
            } else if sb.and_then(|x| blood(a, x)) == Some((0, 1)) {
                w("father-in-law", "mother-in-law")
            } else if sa.and_then(|x| blood(x, b)) == Some((1, 0)) {
                w("son-in-law", "daughter-in-law")
            } else if sb.and_then(|x| blood(a, x)) == Some((1, 1))
                || sa.and_then(|x| blood(x, b)) == Some((1, 1))
            {
                w("brother-in-law", "sister-in-law")
            } else if sa.and_then(|x| blood(x, b)) == Some((1, 2)) {
                w("uncle", "aunt")
            } else if sb.and_then(|x| blood(a, x)) == Some((2, 1)) {
                w("nephew", "niece")
            } else {
                panic!("{}: no relation between {a} and {b}", inst.id)
            }
        }
    }
}

fn kk_eval(c: &Value, k: &HashMap<&str, bool>) -> bool {
    let a = c.as_array().unwrap();
    match s(&a[0]) {
        "is" => k[s(&a[1])] == (s(&a[2]) == "knight"),
        "same" => k[s(&a[1])] == k[s(&a[2])],
        "different" => k[s(&a[1])] != k[s(&a[2])],
        "and" => kk_eval(&a[1], k) && kk_eval(&a[2], k),
        "or" => kk_eval(&a[1], k) || kk_eval(&a[2], k),
        "implies" => !kk_eval(&a[1], k) || kk_eval(&a[2], k),
        "exactly" => k.values().filter(|&&v| v).count() as u64 == a[1].as_u64().unwrap(),
        other => panic!("unknown claim {other}"),
    }
}

/// Recursive search over assignments, interpreting the claim trees.
fn knights_knaves(inst: &Instance) -> String {
    let m = &inst.metadata;
    let people: Vec<&str> = m["people"].as_array().unwrap().iter().map(s).collect();
    let stmts = m["statements"].as_array().unwrap();
    fn go<'a>(
        i: usize,
        people: &[&'a str],
        stmts: &[Value],
        k: &mut HashMap<&'a str, bool>,
        out: &mut Vec<HashMap<&'a str, bool>>,
    ) {
        if i == people.len() {
            if stmts
                .iter()
                .all(|st| kk_eval(&st["claim"], k) == k[s(&st["speaker"])])
            {
                out.push(k.clone());
            }
            return;
        }
        for v in [true, false] {
            k.insert(people[i], v);
            go(i + 1, people, stmts, k, out);
        }
    }
    let mut sols = Vec::new();
    go(0, &people, stmts, &mut HashMap::new(), &mut sols);
    assert_eq!(
        sols.len(),
        1,
        "{}: {} consistent assignments",
        inst.id,
        sols.len()
    );
    // Reverse order and the long form, to exercise the verifier's tolerance.
    people
        .iter()
        .rev()
        .map(|p| format!("{p} is a {}", if sols[0][p] { "knight" } else { "knave" }))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Evaluate a prefix-notation formula, consuming its tokens.
fn formula<'a>(t: &mut impl Iterator<Item = &'a str>, env: &HashMap<&str, bool>) -> bool {
    match t.next().expect("truncated formula") {
        "not" => !formula(t, env),
        op @ ("and" | "or" | "implies" | "iff") => {
            let (a, b) = (formula(t, env), formula(t, env));
            match op {
                "and" => a && b,
                "or" => a || b,
                "implies" => !a || b,
                _ => a == b,
            }
        }
        var => env[var],
    }
}

fn eval_prefix(f: &str, env: &HashMap<&str, bool>) -> bool {
    let mut t = f.split(' ');
    let v = formula(&mut t, env);
    assert!(t.next().is_none(), "trailing tokens in {f}");
    v
}

/// Row by row over the truth table, from the prefix forms.
fn propositional_logic(inst: &Instance) -> String {
    let m = &inst.metadata;
    let vars: Vec<&str> = m["variables"].as_array().unwrap().iter().map(s).collect();
    let premises: Vec<&str> = m["premises"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| s(&p["prefix"]))
        .collect();
    let options: Vec<&str> = m["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| s(&p["prefix"]))
        .collect();
    let mut entailed = vec![true; options.len()];
    let mut satisfiable = false;
    for row in 0..1u32 << vars.len() {
        let env: HashMap<&str, bool> = vars
            .iter()
            .enumerate()
            .map(|(i, &v)| (v, row >> i & 1 == 1))
            .collect();
        if premises.iter().all(|p| eval_prefix(p, &env)) {
            satisfiable = true;
            for (e, o) in entailed.iter_mut().zip(&options) {
                *e &= eval_prefix(o, &env);
            }
        }
    }
    assert!(satisfiable, "{}: contradictory premises", inst.id);
    let hits: Vec<usize> = (0..options.len()).filter(|&i| entailed[i]).collect();
    assert_eq!(
        hits.len(),
        1,
        "{}: {} options entailed",
        inst.id,
        hits.len()
    );
    ((b'a' + hits[0] as u8) as char).to_string()
}

/// Satisfiability of emptiness constraints plus existence claims: take every region
/// that no universal statement empties; each existence claim needs one of those.
fn syllogism(inst: &Instance) -> String {
    let m = &inst.metadata;
    let terms: Vec<&str> = m["terms"].as_array().unwrap().iter().map(s).collect();
    let t = |v: &Value| terms.iter().position(|&x| x == s(v)).unwrap();
    let n = terms.len();
    // A statement as (regions it talks about, true = "those are all empty").
    let constraint = |st: &Value, negate: bool| -> (Vec<u32>, bool) {
        let (x, y) = (t(&st["subject"]), t(&st["predicate"]));
        let inside = |r: u32, want_y: bool| r >> x & 1 == 1 && (r >> y & 1 == 1) == want_y;
        let (want_y, empty) = match s(&st["form"]) {
            "all" => (false, true),
            "no" => (true, true),
            "some" => (true, false),
            "some_not" => (false, false),
            f => panic!("unknown form {f}"),
        };
        (
            (0..1u32 << n).filter(|&r| inside(r, want_y)).collect(),
            empty != negate,
        )
    };
    let mut cons: Vec<(Vec<u32>, bool)> = m["premises"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| constraint(p, false))
        .collect();
    for i in 0..n {
        cons.push(((0..1u32 << n).filter(|&r| r >> i & 1 == 1).collect(), false));
    }
    let sat = |cons: &[(Vec<u32>, bool)]| {
        let emptied: Vec<u32> = cons
            .iter()
            .filter(|c| c.1)
            .flat_map(|c| c.0.clone())
            .collect();
        cons.iter()
            .filter(|c| !c.1)
            .all(|c| c.0.iter().any(|r| !emptied.contains(r)))
    };
    assert!(sat(&cons), "{}: premises have no model", inst.id);
    cons.push(constraint(&m["conclusion"], true));
    if sat(&cons) { "No" } else { "YES" }.to_string()
}

pub fn resolvers() -> Vec<Resolver> {
    vec![
        Resolver {
            family: "circuit_logic",
            unique: true,
            solve: circuit_logic,
        },
        Resolver {
            family: "family_relationships",
            unique: true,
            solve: family_relationships,
        },
        Resolver {
            family: "knights_knaves",
            unique: true,
            solve: knights_knaves,
        },
        Resolver {
            family: "propositional_logic",
            unique: true,
            solve: propositional_logic,
        },
        Resolver {
            family: "syllogism",
            unique: true,
            solve: syllogism,
        },
        Resolver {
            family: "cryptarithm",
            unique: false,
            solve: cryptarithm,
        },
        Resolver {
            family: "zebra_puzzles",
            unique: true,
            solve: zebra_puzzles,
        },
    ]
}

fn many(name: &str, n: u64, check: impl Fn(&Instance)) {
    let f = families::get(name).unwrap();
    for level in Level::all() {
        for i in 0..n {
            check(&families::generate(f, level, 99, i));
        }
    }
}

/// More instances than the property test draws, for the families whose ground truth
/// reasoning-gym got wrong.
#[test]
fn logic_ground_truth_agrees_with_the_resolvers_on_many_instances() {
    for (name, solve) in [
        (
            "family_relationships",
            family_relationships as fn(&Instance) -> String,
        ),
        ("syllogism", syllogism),
        ("propositional_logic", propositional_logic),
        ("knights_knaves", knights_knaves),
    ] {
        let f = families::get(name).unwrap();
        many(name, 150, |inst| {
            assert_eq!(f.verify(inst, &solve(inst)), 1.0, "{name}: {}", inst.id)
        });
    }
}

#[test]
fn syllogism_answers_are_balanced_and_reject_the_undistributed_middle() {
    let f = families::get("syllogism").unwrap();
    let mut yes = 0;
    for level in Level::all() {
        for i in 0..200 {
            yes += usize::from(families::generate(f, level, 3, i).answer == "yes");
        }
    }
    assert!((400..=600).contains(&yes), "{yes} of 1000 are yes");
    // All P are M, all S are M, so all S are P: reasoning-gym calls it valid; it is not.
    let mut found = 0;
    for i in 0..20_000 {
        let inst = families::generate(f, Level::new(2).unwrap(), 17, i);
        let (p, c, t) = (
            inst.metadata["premises"].as_array().unwrap(),
            &inst.metadata["conclusion"],
            &inst.metadata["terms"],
        );
        if p.iter()
            .all(|x| x["form"] == "all" && x["predicate"] == t[1])
            && c["form"] == "all"
        {
            assert_eq!(inst.answer, "no", "{}", inst.id);
            found += 1;
        }
    }
    assert!(found > 0, "no undistributed-middle instance drawn");
    let inst = families::generate(f, Level::new(1).unwrap(), 0, 0);
    let other = if inst.answer == "yes" { "no" } else { "yes" };
    assert_eq!(f.verify(&inst, &inst.answer.to_uppercase()), 1.0);
    assert_eq!(f.verify(&inst, other), 0.0);
    assert_eq!(f.verify(&inst, "yes no"), 0.0);
}

#[test]
fn family_relationships_accepts_spacing_variants_only() {
    let f = families::get("family_relationships").unwrap();
    let mut seen_in_law = false;
    for i in 0..100 {
        let inst = families::generate(f, Level::new(4).unwrap(), 1, i);
        let g = inst.answer.clone();
        assert_eq!(f.verify(&inst, &g.to_uppercase()), 1.0);
        if g.contains("-in-law") {
            seen_in_law = true;
            assert_eq!(f.verify(&inst, &g.replace('-', " ")), 1.0);
            assert_eq!(
                f.verify(&inst, g.split('-').next().unwrap()),
                0.0,
                "{g} without in-law"
            );
        }
        let swapped = match g.as_str() {
            "uncle" => "aunt",
            "aunt" => "uncle",
            "nephew" => "niece",
            "niece" => "nephew",
            other if other.starts_with("brother") => "sister-in-law",
            other if other.starts_with("sister") => "brother-in-law",
            _ => "husband",
        };
        assert_eq!(f.verify(&inst, swapped), 0.0, "{swapped} for {g}");
        assert_eq!(f.verify(&inst, &format!("{g} or cousin")), 0.0);
    }
    assert!(seen_in_law);
}

#[test]
fn knights_knaves_reads_both_answer_forms() {
    let f = families::get("knights_knaves").unwrap();
    let inst = families::generate(f, Level::new(3).unwrap(), 2, 0);
    let gold = inst.answer.clone();
    assert_eq!(
        f.verify(&inst, &gold.replace(", ", "\n").to_lowercase()),
        1.0
    );
    let items: Vec<&str> = gold.split(", ").collect();
    assert_eq!(
        f.verify(&inst, &items[1..].join(", ")),
        0.0,
        "a missing islander"
    );
    let flipped = if gold.ends_with("knight") {
        format!("{}knave", &gold[..gold.len() - 6])
    } else {
        format!("{}knight", &gold[..gold.len() - 5])
    };
    assert_eq!(f.verify(&inst, &flipped), 0.0);
    let dup = format!("{gold}, {}", items[0]);
    assert_eq!(f.verify(&inst, &dup), 0.0, "an islander twice");
}

#[test]
fn circuit_logic_needs_every_output_in_order() {
    let f = families::get("circuit_logic").unwrap();
    for i in 0..30 {
        let inst = families::generate(f, Level::new(5).unwrap(), 8, i);
        let bits: Vec<&str> = inst.answer.split(", ").collect();
        assert_eq!(f.verify(&inst, &format!("[{}]", bits.join(" "))), 1.0);
        assert_eq!(
            f.verify(&inst, &bits.concat()),
            0.0,
            "digits run together are one number"
        );
        assert_eq!(f.verify(&inst, &bits[..bits.len() - 1].join(", ")), 0.0);
        let mut rev = bits.clone();
        rev.reverse();
        if rev != bits {
            assert_eq!(f.verify(&inst, &rev.join(", ")), 0.0);
        }
    }
}

#[test]
fn propositional_logic_letters() {
    let f = families::get("propositional_logic").unwrap();
    let inst = families::generate(f, Level::new(2).unwrap(), 4, 4);
    let g = inst.answer.clone();
    assert_eq!(f.verify(&inst, &format!("({g})")), 1.0);
    assert_eq!(f.verify(&inst, &format!("{g})")), 1.0);
    assert_eq!(f.verify(&inst, &format!("( {g} )")), 1.0);
    assert_eq!(f.verify(&inst, &g.to_lowercase()), 1.0);
    assert_eq!(f.verify(&inst, "A, B, C, D"), 0.0);
    assert_eq!(f.verify(&inst, &format!("{g}. because")), 0.0);
    // Only the ways options are labelled: `B`, `(B)`, `B)`.
    for bad in [
        format!("({g}"),
        format!("{g}."),
        format!("[{g}]"),
        format!("(({g}))"),
        format!("{g}{g}"),
        "E".to_string(),
    ] {
        assert_eq!(f.verify(&inst, &bad), 0.0, "{bad}");
    }
}

// ---------------------------------------------------------------------------------
// Family added for issue 8: cryptarithm.
// ---------------------------------------------------------------------------------

/// Every assignment satisfying a cryptarithm (up to `cap`), found column by column
/// from the units with the carry (the generator never solves: it builds the puzzle
/// from the digits).
fn cryptarithm_solutions(inst: &Instance, cap: usize) -> Vec<[Option<u8>; 26]> {
    let addends: Vec<Vec<u8>> = inst.metadata["addends"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| s(w).bytes().rev().map(|b| b - b'A').collect())
        .collect();
    let sum: Vec<u8> = s(&inst.metadata["sum"])
        .bytes()
        .rev()
        .map(|b| b - b'A')
        .collect();
    let mut fixed: [Option<u8>; 26] = [None; 26];
    for (l, d) in inst.metadata["given"].as_object().unwrap() {
        fixed[usize::from(l.as_bytes()[0] - b'A')] = Some(d.as_u64().unwrap() as u8);
    }
    let leading: Vec<u8> = addends
        .iter()
        .chain([&sum])
        .map(|w| *w.last().unwrap())
        .collect();
    struct Search<'a> {
        addends: &'a [Vec<u8>],
        sum: &'a [u8],
        leading: &'a [u8],
        digit: [Option<u8>; 26],
        used: [bool; 10],
        out: Vec<[Option<u8>; 26]>,
        cap: usize,
    }
    impl Search<'_> {
        /// Assign the letters of column `col` still open in `pending`, then check it.
        fn column(&mut self, col: usize, carry: u32) {
            if self.out.len() >= self.cap {
                return;
            }
            if col == self.sum.len() {
                if carry == 0 && self.addends.iter().all(|a| a.len() <= col) {
                    self.out.push(self.digit);
                }
                return;
            }
            let mut letters: Vec<u8> = self
                .addends
                .iter()
                .filter_map(|a| a.get(col).copied())
                .chain([self.sum[col]])
                .filter(|&l| self.digit[usize::from(l)].is_none())
                .collect();
            letters.dedup();
            self.assign(col, carry, &letters);
        }
        fn assign(&mut self, col: usize, carry: u32, open: &[u8]) {
            if let Some((&l, rest)) = open.split_first() {
                if self.digit[usize::from(l)].is_some() {
                    return self.assign(col, carry, rest);
                }
                for d in 0..10u8 {
                    if self.used[usize::from(d)] || (d == 0 && self.leading.contains(&l)) {
                        continue;
                    }
                    self.digit[usize::from(l)] = Some(d);
                    self.used[usize::from(d)] = true;
                    self.assign(col, carry, rest);
                    self.digit[usize::from(l)] = None;
                    self.used[usize::from(d)] = false;
                }
                return;
            }
            let total: u32 = carry
                + self
                    .addends
                    .iter()
                    .filter_map(|a| a.get(col))
                    .map(|&l| u32::from(self.digit[usize::from(l)].unwrap()))
                    .sum::<u32>();
            if total % 10 == u32::from(self.digit[usize::from(self.sum[col])].unwrap()) {
                self.column(col + 1, total / 10);
            }
        }
    }
    let mut used = [false; 10];
    for d in fixed.iter().flatten() {
        used[usize::from(*d)] = true;
    }
    let mut search = Search {
        addends: &addends,
        sum: &sum,
        leading: &leading,
        digit: fixed,
        used,
        out: Vec::new(),
        cap,
    };
    search.column(0, 0);
    search.out
}

fn assignment_text(digit: &[Option<u8>; 26]) -> String {
    (0..26)
        .filter_map(|i| digit[i].map(|d| format!("{}={d}", char::from(b'A' + i as u8))))
        .collect::<Vec<_>>()
        .join(", ")
}

fn cryptarithm(inst: &Instance) -> String {
    let sols = cryptarithm_solutions(inst, 1);
    assert!(!sols.is_empty(), "{}: no solution", inst.id);
    assignment_text(&sols[0])
}

/// The gold assignment is one of the re-solver's solutions (all of them are listed when
/// there are fewer than the cap), and the verifier accepts every listed solution.
#[test]
fn cryptarithm_resolver_lists_the_gold_among_all_solutions() {
    let f = families::get("cryptarithm").unwrap();
    let mut several = 0;
    for level in Level::all() {
        for i in 0..30 {
            let x = families::generate(f, level, 17, i);
            let sols = cryptarithm_solutions(&x, 200);
            let texts: Vec<String> = sols.iter().map(assignment_text).collect();
            if sols.len() < 200 {
                assert!(
                    texts.contains(&x.answer),
                    "{}: gold {} not found",
                    x.id,
                    x.answer
                );
            }
            for t in texts.iter().take(20) {
                assert_eq!(f.verify(&x, t), 1.0, "{}: {t}", x.id);
            }
            if sols.len() > 1 {
                several += 1;
            }
        }
    }
    // Alternative solutions exist and are accepted (not string comparison with gold).
    assert!(several > 0);
}

#[test]
fn cryptarithm_rejects_broken_assignments() {
    let f = families::get("cryptarithm").unwrap();
    let x = families::generate(f, Level::new(2).unwrap(), 3, 0);
    assert_eq!(f.verify(&x, &x.answer), 1.0);
    assert_eq!(f.verify(&x, &x.answer.to_lowercase()), 1.0, "letter case");
    assert_eq!(f.verify(&x, &x.answer.replace(", ", "\n")), 1.0, "newlines");
    let pairs: Vec<&str> = x.answer.split(", ").collect();
    // Dropping a pair, duplicating one, or swapping two digits breaks it.
    assert_eq!(f.verify(&x, &pairs[1..].join(", ")), 0.0);
    assert_eq!(f.verify(&x, &format!("{}, {}", x.answer, pairs[0])), 0.0);
    let (a, b) = (pairs[0], pairs[1]);
    let swapped = x
        .answer
        .replacen(a, &format!("{}{}", &a[..2], &b[2..]), 1)
        .replacen(b, &format!("{}{}", &b[..2], &a[2..]), 1);
    if cryptarithm_solutions(&x, 1000)
        .iter()
        .all(|s| assignment_text(s) != swapped)
    {
        assert_eq!(f.verify(&x, &swapped), 0.0, "{swapped}");
    }
    let kelvin = x.answer.replacen(&x.answer[..1], "\u{212a}", 1);
    assert_eq!(f.verify(&x, &kelvin), 0.0);
}

// ---------------------------------------------------------------------------------
// Family added for issue 8: zebra_puzzles.
// ---------------------------------------------------------------------------------

/// Every arrangement satisfying the clues (up to `cap`): for each attribute, the
/// permutations of houses that satisfy its own clues (those naming only that
/// attribute); then a backtracking search over attributes, most constrained first,
/// checking each clue between two attributes once both are placed. (The generator
/// narrows per-value house sets by propagation instead.)
fn zebra_solutions(inst: &Instance, cap: usize) -> Vec<Vec<Vec<usize>>> {
    type C = (String, (usize, usize), (usize, usize), usize);
    let m = &inst.metadata;
    let n = m["houses"].as_u64().unwrap() as usize;
    let k = m["attributes"].as_array().unwrap().len();
    let pair = |v: &Value| -> (usize, usize) {
        let a = v.as_array().unwrap();
        (
            a[0].as_u64().unwrap() as usize,
            a[1].as_u64().unwrap() as usize,
        )
    };
    let clues: Vec<C> = m["clues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let kind = s(&c["kind"]).to_string();
            let a = pair(&c["a"]);
            let b = if c.get("b").is_some() {
                pair(&c["b"])
            } else {
                a
            };
            let house = c.get("house").map_or(0, |h| h.as_u64().unwrap() as usize);
            (kind, a, b, house)
        })
        .collect();
    // `place[attr]` = house of each value, when the attribute is placed.
    fn holds(c: &C, place: &[Option<Vec<usize>>]) -> bool {
        let (kind, a, b, house) = c;
        let (Some(pa), Some(pb)) = (&place[a.0], &place[b.0]) else {
            return true;
        };
        let (x, y) = (pa[a.1], pb[b.1]);
        match kind.as_str() {
            "at" => x + 1 == *house,
            "not_at" => x + 1 != *house,
            "same" => x == y,
            "left_of" => x + 1 == y,
            "next_to" => x.abs_diff(y) == 1,
            "before" => x < y,
            other => panic!("unknown clue {other}"),
        }
    }
    // All permutations of 0..n, lexicographic.
    let mut perms: Vec<Vec<usize>> = vec![(0..n).collect()];
    loop {
        let mut p = perms.last().unwrap().clone();
        let Some(i) = (0..n.saturating_sub(1)).rev().find(|&i| p[i] < p[i + 1]) else {
            break;
        };
        let j = (i + 1..n).rev().find(|&j| p[j] > p[i]).unwrap();
        p.swap(i, j);
        p[i + 1..].reverse();
        perms.push(p);
    }
    let own: Vec<Vec<Vec<usize>>> = (0..k)
        .map(|attr| {
            perms
                .iter()
                .filter(|p| {
                    let mut place: Vec<Option<Vec<usize>>> = vec![None; k];
                    place[attr] = Some((*p).clone());
                    clues
                        .iter()
                        .filter(|c| c.1.0 == attr && c.2.0 == attr)
                        .all(|c| holds(c, &place))
                })
                .cloned()
                .collect()
        })
        .collect();
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by_key(|&a| own[a].len());
    fn go(
        i: usize,
        order: &[usize],
        own: &[Vec<Vec<usize>>],
        clues: &[C],
        place: &mut Vec<Option<Vec<usize>>>,
        out: &mut Vec<Vec<Vec<usize>>>,
        cap: usize,
    ) {
        if out.len() >= cap {
            return;
        }
        if i == order.len() {
            out.push(place.iter().map(|p| p.clone().unwrap()).collect());
            return;
        }
        let attr = order[i];
        for p in &own[attr] {
            place[attr] = Some(p.clone());
            if clues
                .iter()
                .filter(|c| c.1.0 == attr || c.2.0 == attr)
                .all(|c| holds(c, place))
            {
                go(i + 1, order, own, clues, place, out, cap);
            }
            place[attr] = None;
        }
    }
    let mut place = vec![None; k];
    let mut out = Vec::new();
    go(0, &order, &own, &clues, &mut place, &mut out, cap);
    out
}

fn zebra_puzzles(inst: &Instance) -> String {
    let sols = zebra_solutions(inst, 2);
    assert_eq!(sols.len(), 1, "{}: {} solutions", inst.id, sols.len());
    let q = inst.metadata["question"].as_array().unwrap();
    let (qa, qv) = (
        q[0].as_u64().unwrap() as usize,
        q[1].as_u64().unwrap() as usize,
    );
    let house = sols[0][qa][qv];
    let who = (0..sols[0][0].len())
        .find(|&v| sols[0][0][v] == house)
        .unwrap();
    s(&inst.metadata["names"][who]).to_string()
}

/// No question is answered by one clue: the value asked about is never paired with a
/// name by a `same` clue (it must be deduced, not read off).
#[test]
fn zebra_questions_are_never_stated_by_a_single_clue() {
    let f = families::get("zebra_puzzles").unwrap();
    for level in Level::all() {
        for i in 0..200 {
            let x = families::generate(f, level, 5, i);
            let q = &x.metadata["question"];
            let named = |v: &Value| v[0].as_u64() == Some(0);
            for c in x.metadata["clues"].as_array().unwrap() {
                if s(&c["kind"]) != "same" {
                    continue;
                }
                let direct = (named(&c["a"]) && &c["b"] == q) || (named(&c["b"]) && &c["a"] == q);
                assert!(!direct, "{}: the question {q} is clue {c}", x.id);
            }
        }
    }
}

/// The puzzle has exactly one arrangement, no clue is redundant, and the re-solver's
/// name is the gold.
#[test]
fn zebra_puzzles_are_unique_and_minimal() {
    let f = families::get("zebra_puzzles").unwrap();
    for level in Level::all() {
        for i in 0..8 {
            let x = families::generate(f, level, 17, i);
            assert_eq!(zebra_puzzles(&x), x.answer, "{}", x.id);
            // Dropping any one clue leaves more than one arrangement.
            let clues = x.metadata["clues"].as_array().unwrap().clone();
            for j in 0..clues.len() {
                let mut y = x.clone();
                let mut fewer = clues.clone();
                fewer.remove(j);
                y.metadata["clues"] = Value::Array(fewer);
                assert!(
                    zebra_solutions(&y, 2).len() > 1,
                    "{}: clue {j} is redundant",
                    x.id
                );
            }
            let other = x.metadata["names"]
                .as_array()
                .unwrap()
                .iter()
                .map(s)
                .find(|n| *n != x.answer)
                .unwrap();
            assert_eq!(f.verify(&x, other), 0.0);
            assert_eq!(f.verify(&x, &x.answer.to_uppercase()), 1.0);
            assert_eq!(f.verify(&x, &format!("{} lives there", x.answer)), 0.0);
        }
    }
}
