//! Tests of the constrained reply forms: random walks over the GBNF grammar that the
//! executor decodes under (parsed here from its text, not from the schema), every
//! walk read by the proposer's own parser.

use std::collections::HashMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::executor::json_schema::to_gbnf;
use crate::families::{self, Level, generate};
use crate::harness::declarative::{Example, SamplingOverrides, Strategy};
use crate::harness::edit::FeedbackExample;
use crate::proposer::parse;
use crate::task::Item;

/// A GBNF expression of the subset [`to_gbnf`] writes.
#[derive(Debug, Clone)]
enum G {
    Lit(String),
    /// A negated class: the excluded characters (and ranges as pairs).
    NotIn(Vec<(char, char)>),
    Ref(String),
    Seq(Vec<G>),
    Alt(Vec<G>),
    Rep(Box<G>, u32, Option<u32>),
}

struct P<'a> {
    s: &'a [char],
    i: usize,
}

impl P<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i] == ' ' {
            self.i += 1;
        }
    }
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }
    fn next(&mut self) -> char {
        self.i += 1;
        self.s[self.i - 1]
    }
    fn escaped(&mut self) -> char {
        match self.next() {
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'x' => {
                let h: String = [self.next(), self.next()].iter().collect();
                char::from_u32(u32::from_str_radix(&h, 16).unwrap()).unwrap()
            }
            c => c,
        }
    }
    fn alt(&mut self) -> G {
        let mut alts = vec![self.seq()];
        self.ws();
        while self.peek() == Some('|') {
            self.next();
            alts.push(self.seq());
            self.ws();
        }
        if alts.len() == 1 {
            alts.pop().unwrap()
        } else {
            G::Alt(alts)
        }
    }
    fn seq(&mut self) -> G {
        let mut items = Vec::new();
        loop {
            self.ws();
            match self.peek() {
                None | Some('|') | Some(')') => break,
                _ => {
                    let atom = self.atom();
                    items.push(self.suffix(atom));
                }
            }
        }
        G::Seq(items)
    }
    fn atom(&mut self) -> G {
        match self.next() {
            '"' => {
                let mut out = String::new();
                loop {
                    match self.next() {
                        '"' => break,
                        '\\' => out.push(self.escaped()),
                        c => out.push(c),
                    }
                }
                G::Lit(out)
            }
            '[' => {
                assert_eq!(self.next(), '^', "only negated classes are written");
                let mut set = Vec::new();
                loop {
                    let c = match self.next() {
                        ']' => break,
                        '\\' => self.escaped(),
                        c => c,
                    };
                    if self.peek() == Some('-') && self.s.get(self.i + 1) != Some(&']') {
                        self.next();
                        let hi = match self.next() {
                            '\\' => self.escaped(),
                            c => c,
                        };
                        set.push((c, hi));
                    } else {
                        set.push((c, c));
                    }
                }
                G::NotIn(set)
            }
            '(' => {
                let inner = self.alt();
                assert_eq!(self.next(), ')');
                inner
            }
            c if c.is_ascii_alphanumeric() => {
                let mut name = c.to_string();
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
                {
                    name.push(self.next());
                }
                G::Ref(name)
            }
            c => panic!("unexpected {c:?} at {}", self.i),
        }
    }
    fn num(&mut self) -> u32 {
        let mut n = String::new();
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            n.push(self.next());
        }
        n.parse().unwrap()
    }
    fn suffix(&mut self, atom: G) -> G {
        match self.peek() {
            Some('*') => {
                self.next();
                G::Rep(Box::new(atom), 0, None)
            }
            Some('+') => {
                self.next();
                G::Rep(Box::new(atom), 1, None)
            }
            Some('?') => {
                self.next();
                G::Rep(Box::new(atom), 0, Some(1))
            }
            Some('{') => {
                self.next();
                let lo = self.num();
                let hi = match self.next() {
                    '}' => return G::Rep(Box::new(atom), lo, Some(lo)),
                    ',' if self.peek() == Some('}') => None,
                    ',' => Some(self.num()),
                    c => panic!("bad repetition {c:?}"),
                };
                assert_eq!(self.next(), '}');
                G::Rep(Box::new(atom), lo, hi)
            }
            _ => atom,
        }
    }
}

fn parse_gbnf(text: &str) -> HashMap<String, G> {
    let mut rules = HashMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (name, body) = line.split_once(" ::= ").expect("a rule per line");
        let chars: Vec<char> = body.chars().collect();
        let mut p = P { s: &chars, i: 0 };
        let g = p.alt();
        assert_eq!(p.i, chars.len(), "rule {name} parsed whole");
        rules.insert(name.to_string(), g);
    }
    assert!(rules.contains_key("root"));
    rules
}

/// A random string of the grammar (unbounded repetitions stop early).
fn walk(rules: &HashMap<String, G>, g: &G, rng: &mut ChaCha8Rng, out: &mut String) {
    match g {
        G::Lit(s) => out.push_str(s),
        G::NotIn(set) => {
            const POOL: &str = "abcXYZ 019.,:;!?'-_()[]<>=+*/#éü{}\"\\\n";
            let ok: Vec<char> = POOL
                .chars()
                .filter(|c| !set.iter().any(|(lo, hi)| (lo..=hi).contains(&c)))
                .collect();
            out.push(ok[rng.random_range(0..ok.len())]);
        }
        G::Ref(name) => walk(rules, &rules[name], rng, out),
        G::Seq(items) => items.iter().for_each(|x| walk(rules, x, rng, out)),
        G::Alt(alts) => walk(rules, &alts[rng.random_range(0..alts.len())], rng, out),
        G::Rep(x, lo, hi) => {
            let hi = hi.unwrap_or(lo + 8);
            // Short and long texts both: half the walks near the bound.
            let n = if rng.random_bool(0.5) {
                rng.random_range(*lo..=(*lo + 3).min(hi))
            } else {
                rng.random_range(*lo..=hi)
            };
            for _ in 0..n {
                walk(rules, x, rng, out);
            }
        }
    }
}

fn feedback() -> EditContext {
    let fam = families::get("gcd").unwrap();
    let l1 = Level::new(1).unwrap();
    EditContext {
        feedback: (0..3)
            .map(|i| FeedbackExample {
                item: Item::answer(generate(fam, l1, 7, i)).unwrap(),
                successful_response: (i == 0).then(|| "<answer>3</answer>".to_string()),
            })
            .collect(),
    }
}

/// Parents with and without lists, examples and sampling overrides.
fn parents() -> Vec<Declarative> {
    let rich = Declarative {
        system: "You solve problems.".into(),
        instructions: vec!["Be brief.".into(), "Check.".into()],
        notes: vec!["Numbers are small.".into()],
        strategy: Strategy::Program { repl_print: true },
        sampling: SamplingOverrides {
            temperature: Some(0.5),
            ..Default::default()
        },
        examples: vec![Example {
            question: "q".into(),
            response: "<answer>1</answer>".into(),
            source: None,
        }],
        ..Default::default()
    };
    vec![Declarative::default(), rich]
}

#[test]
fn every_walk_of_the_edits_grammar_parses_and_single_edits_apply() {
    let ctx = feedback();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for d in parents() {
        let parent = Harness::Declarative(d.clone());
        let schema = reply_schema(Constrain::Edits, &parent, &ctx).unwrap();
        let gbnf = to_gbnf(&schema).unwrap();
        let rules = parse_gbnf(&gbnf);
        let (mut single, mut applied) = (0, 0);
        for _ in 0..3000 {
            let mut s = String::new();
            walk(&rules, &rules["root"], &mut rng, &mut s);
            let list = edit::parse_edits(&s, "walk").unwrap_or_else(|e| panic!("{s}: {e}"));
            assert!(!list.is_empty() && list.len() as u64 <= MAX_EDITS, "{s}");
            let result = parse::revision(&s, &parent, &ctx);
            if list.len() == 1 {
                single += 1;
                result.unwrap_or_else(|e| panic!("a single edit must apply: {s}: {e}"));
            } else if result.is_ok() {
                applied += 1;
            }
        }
        assert!(single > 500, "{single}");
        // Lists of several edits fail only in rare combinations.
        assert!(applied as f64 > 0.8 * (3000 - single) as f64, "{applied}");
    }
}

#[test]
fn the_edits_grammar_covers_every_edit_the_parser_accepts() {
    // Every op of the edit language, by an exhaustive match: a new op fails to compile
    // here until it is placed in the grammar or named as left out.
    let name = |e: &Edit| match e {
        Edit::SetSystem { .. }
        | Edit::AddInstruction { .. }
        | Edit::RemoveInstruction { .. }
        | Edit::AddNote { .. }
        | Edit::RemoveNote { .. }
        | Edit::AddExample { .. }
        | Edit::RemoveExample { .. }
        | Edit::SetStrategy { .. }
        | Edit::SetVerification { .. }
        | Edit::SetFormatRule { .. }
        | Edit::SetSampling { .. }
        | Edit::ResetSampling => e.op(),
    };
    let ctx = feedback();
    let d = parents().pop().unwrap();
    let ids: Vec<String> = ctx.feedback.iter().map(|f| f.item.id()).collect();
    let mut space = edit::action_space(&d, &ids);
    space.extend([
        Edit::SetSystem { text: "x".into() },
        Edit::ResetSampling,
        Edit::AddInstruction {
            text: Some("x".into()),
            snippet: None,
        },
    ]);
    let schema = reply_schema(Constrain::Edits, &Harness::Declarative(d.clone()), &ctx).unwrap();
    let ops = ops_of(&schema);
    for e in &space {
        let op = name(e);
        assert!(ops.contains(&op.to_string()), "{op} missing from {ops:?}");
        // Every discrete edit that applies alone is in the schema exactly.
        if !matches!(
            e,
            Edit::SetSystem { .. } | Edit::AddInstruction { text: Some(_), .. }
        ) && edit::apply(&d, std::slice::from_ref(e), &ctx).is_ok()
        {
            assert!(schema_has(&d, &ctx, e), "{e:?} is not in the schema");
        }
    }
    // And the grammar the executor decodes under is its translation.
    parse_gbnf(&to_gbnf(&schema).unwrap());
}

/// The `op` values a schema allows.
fn ops_of(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    fn go(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(op) = m.get("properties").and_then(|p| p.get("op")) {
                    for x in op["enum"].as_array().into_iter().flatten() {
                        out.push(x.as_str().unwrap().to_string());
                    }
                }
                m.values().for_each(|x| go(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| go(x, out)),
            _ => {}
        }
    }
    go(schema, &mut out);
    out.sort();
    out.dedup();
    out
}

/// Whether the schema lists `e` as one of its exact alternatives.
fn schema_has(d: &Declarative, ctx: &EditContext, e: &Edit) -> bool {
    let schema = edits_schema(d, ctx);
    let want = exact(&edit_value(e));
    schema.to_string().contains(&want.to_string())
}

#[test]
fn every_walk_of_the_harness_grammar_is_a_valid_harness() {
    let gbnf = to_gbnf(&harness_schema()).unwrap();
    let rules = parse_gbnf(&gbnf);
    let parent = Harness::Declarative(Declarative::default());
    let ctx = EditContext::default();
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for _ in 0..500 {
        let mut s = String::new();
        walk(&rules, &rules["root"], &mut rng, &mut s);
        let (h, form) = parse::revision(&s, &parent, &ctx).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(form, crate::proposer::RevisionForm::Json);
        assert!(matches!(h, Harness::Declarative(_)));
    }
}

#[test]
fn program_parents_and_off_are_unconstrained() {
    let ctx = EditContext::default();
    let d = Harness::Declarative(Declarative::default());
    assert!(reply_schema(Constrain::Off, &d, &ctx).is_none());
    assert!(reply_form(Constrain::Off, &d).is_none());
    assert!(
        reply_form(Constrain::Edits, &d)
            .unwrap()
            .contains("JSON array")
    );
    assert_eq!(Constrain::parse("edits"), Ok(Constrain::Edits));
    assert!(
        Constrain::parse("tight")
            .unwrap_err()
            .contains("off, edits, harness")
    );
}
