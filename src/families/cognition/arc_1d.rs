//! `arc_1d`: infer a transformation of one-dimensional colour sequences from worked
//! examples (in the style of the 1-D ARC tasks) and apply it to a test input.
//!
//! Sequences hold digits: 0 is the background, 1-9 are colours. Rules (parameters fixed
//! for the whole instance):
//! - `shift` (k, direction): the single block moves k cells;
//! - `reverse`: the sequence is reversed;
//! - `recolor` (from, to): every cell of one colour takes another colour;
//! - `fill_gap`: the cells between two pixels of one colour take that colour;
//! - `gravity` (direction): every non-background cell slides to one end, in order;
//! - `extend` (direction): the single block grows to the edge;
//! - `denoise`: runs of length 1 disappear, longer runs stay;
//! - `move_to_marker`: a block moves towards a one-cell marker of colour 9 until it
//!   touches it.
//!
//! Levels (rules drawn from, sequence length, examples):
//! 1: `shift` (k = 1), `reverse`, `recolor`; 8..=10; 3 ·
//! 2: + `fill_gap`, `gravity`, `extend` (shift k 1..=2); 10..=14; 3 ·
//! 3: + `denoise`, `move_to_marker` (shift k 1..=3); 12..=18; 3 ·
//! 4: all, shift k 1..=4; 15..=24; 3 ·
//! 5: a one-colour rule (`shift`, `fill_gap`, `extend`, `denoise`, `move_to_marker`)
//! followed by `reverse` or by `recolor` of that colour; 18..=30; 4.
//! Every example input shows the rule's colours, so the rule's parameters can be read
//! off the examples; the two pixels of `fill_gap` are never on an edge, so `extend`
//! cannot explain its examples too. The examples determine the answer: the generator
//! redraws an example set when some other rule it knows (any level's rule with any
//! parameters, or a one-colour rule followed by `reverse` or any recolouring) reproduces
//! every example but gives another test output (version 1 did not; about 1 in 4,000 sets,
//! e.g. `fill_gap` examples whose outputs are all palindromes). The tests search the same
//! space with their own implementation of each rule.
//!
//! Gold: the rule applied to the test input, digits separated by spaces. Verifier: the
//! same sequence, digit by digit (separated by whitespace and/or commas, one `[...]`
//! allowed). The format example is shorter than any sequence, so it is never accepted.
//! Metadata: `rules` (objects with `rule` and its parameters), `examples` (objects with
//! `input` and `output`), `test_input`.

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::fields;
use crate::families::kit::question::{AnswerFormat, Body, Wording};
use crate::families::kit::template::{Piece, Template};
use crate::families::kit::text::grid;
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct Arc1d;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Shift,
    Reverse,
    Recolor,
    FillGap,
    Gravity,
    Extend,
    Denoise,
    MoveToMarker,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Shift => "shift",
            Kind::Reverse => "reverse",
            Kind::Recolor => "recolor",
            Kind::FillGap => "fill_gap",
            Kind::Gravity => "gravity",
            Kind::Extend => "extend",
            Kind::Denoise => "denoise",
            Kind::MoveToMarker => "move_to_marker",
        }
    }
}

const L1: &[Kind] = &[Kind::Shift, Kind::Reverse, Kind::Recolor];
const L2: &[Kind] = &[
    Kind::Shift,
    Kind::Reverse,
    Kind::Recolor,
    Kind::FillGap,
    Kind::Gravity,
    Kind::Extend,
];
const ALL: &[Kind] = &[
    Kind::Shift,
    Kind::Reverse,
    Kind::Recolor,
    Kind::FillGap,
    Kind::Gravity,
    Kind::Extend,
    Kind::Denoise,
    Kind::MoveToMarker,
];

/// Rules whose inputs show one colour: the first rule of a level-5 composite.
const SINGLE_COLOUR: &[Kind] = &[
    Kind::Shift,
    Kind::FillGap,
    Kind::Extend,
    Kind::Denoise,
    Kind::MoveToMarker,
];

struct Params {
    kinds: &'static [Kind],
    shift_max: usize,
    len: (usize, usize),
    examples: usize,
    composite: bool,
}

const PARAMS: [Params; 5] = [
    Params {
        kinds: L1,
        shift_max: 1,
        len: (8, 10),
        examples: 3,
        composite: false,
    },
    Params {
        kinds: L2,
        shift_max: 2,
        len: (10, 14),
        examples: 3,
        composite: false,
    },
    Params {
        kinds: ALL,
        shift_max: 3,
        len: (12, 18),
        examples: 3,
        composite: false,
    },
    Params {
        kinds: ALL,
        shift_max: 4,
        len: (15, 24),
        examples: 3,
        composite: false,
    },
    Params {
        kinds: ALL,
        shift_max: 4,
        len: (18, 30),
        examples: 4,
        composite: true,
    },
];

/// The marker colour of `move_to_marker`.
const MARKER: u8 = 9;

/// A rule with its parameters.
#[derive(Clone, Copy, Debug)]
struct Rule {
    kind: Kind,
    /// Main colour (block colour, recolour source).
    color: u8,
    /// Recolour target.
    to: u8,
    /// Shift distance.
    k: usize,
    /// Direction: `true` = right / towards the end.
    right: bool,
}

impl Rule {
    fn json(&self) -> Value {
        let dir = if self.right { "right" } else { "left" };
        match self.kind {
            Kind::Shift => {
                json!({"rule": "shift", "color": self.color, "k": self.k, "direction": dir})
            }
            Kind::Reverse => json!({"rule": "reverse"}),
            Kind::Recolor => json!({"rule": "recolor", "from": self.color, "to": self.to}),
            Kind::FillGap => json!({"rule": "fill_gap", "color": self.color}),
            Kind::Gravity => json!({"rule": "gravity", "direction": dir}),
            Kind::Extend => json!({"rule": "extend", "color": self.color, "direction": dir}),
            Kind::Denoise => json!({"rule": "denoise", "color": self.color}),
            Kind::MoveToMarker => {
                json!({"rule": "move_to_marker", "color": self.color, "marker": MARKER})
            }
        }
    }

    /// The rule applied to `s`, as the module doc defines it on any sequence (not only
    /// on the inputs this rule generates); `None` where it does not apply.
    fn try_apply(&self, s: &[u8]) -> Option<Vec<u8>> {
        let n = s.len();
        let c = self.color;
        let first = |c: u8| s.iter().position(|&x| x == c);
        let last = |c: u8| s.iter().rposition(|&x| x == c);
        Some(match self.kind {
            Kind::Shift => {
                let mut out = vec![0; n];
                for (i, &x) in s.iter().enumerate().filter(|(_, x)| **x != 0) {
                    let j = if self.right {
                        Some(i + self.k).filter(|&j| j < n)
                    } else {
                        i.checked_sub(self.k)
                    };
                    out[j?] = x;
                }
                out
            }
            Kind::Reverse => s.iter().rev().copied().collect(),
            Kind::Recolor => s
                .iter()
                .map(|&x| if x == c { self.to } else { x })
                .collect(),
            Kind::FillGap => {
                let (a, b) = (first(c)?, last(c)?);
                if a == b {
                    return None;
                }
                let mut out = s.to_vec();
                out[a..=b].fill(c);
                out
            }
            Kind::Gravity => {
                let cells: Vec<u8> = s.iter().copied().filter(|&x| x != 0).collect();
                let pad = vec![0; n - cells.len()];
                if self.right {
                    [pad, cells].concat()
                } else {
                    [cells, pad].concat()
                }
            }
            Kind::Extend => {
                // The colour's cells grow to the edge; every other cell is background.
                let mut out = vec![0; n];
                if self.right {
                    out[first(c)?..].fill(c);
                } else {
                    out[..=last(c)?].fill(c);
                }
                out
            }
            Kind::Denoise => {
                let mut out = s.to_vec();
                let mut i = 0;
                while i < n {
                    let mut j = i;
                    while j < n && s[j] == s[i] {
                        j += 1;
                    }
                    if s[i] != 0 && j - i == 1 {
                        out[i] = 0;
                    }
                    i = j;
                }
                out
            }
            Kind::MoveToMarker => {
                // The colour's cells, as one block on the side where the first of them
                // lies, move until they touch the first marker (cut at the edge); the
                // rest is background.
                let m = first(MARKER)?;
                let len = s.iter().filter(|&&x| x == c).count();
                if len == 0 {
                    return None;
                }
                let mut out = vec![0; n];
                out[m] = MARKER;
                if s[..m].contains(&c) {
                    out[m.saturating_sub(len)..m].fill(c);
                } else {
                    out[m + 1..(m + 1 + len).min(n)].fill(c);
                }
                out
            }
        })
    }

    /// [`Rule::try_apply`] on an input the rule was drawn for.
    fn apply(&self, s: &[u8]) -> Vec<u8> {
        self.try_apply(s)
            .unwrap_or_else(|| panic!("{self:?} does not apply to {s:?}"))
    }

    /// A random input this rule applies to (and that shows the rule's colours).
    fn input(&self, rng: &mut ChaCha20Rng, n: usize) -> Vec<u8> {
        let mut s = vec![0u8; n];
        let other = |rng: &mut ChaCha20Rng, not: &[u8]| loop {
            let c = rng.random_range(1..=8u8);
            if !not.contains(&c) {
                break c;
            }
        };
        match self.kind {
            Kind::Shift | Kind::Extend => {
                let room = if self.kind == Kind::Shift { self.k } else { 1 };
                let len = rng.random_range(1..=(n / 3).max(1));
                // The block starts and ends at least `room` cells from the edge it moves to.
                let (lo, hi) = if self.right {
                    (0, n - len - room)
                } else {
                    (room, n - len)
                };
                let start = rng.random_range(lo..=hi);
                s[start..start + len].fill(self.color);
            }
            Kind::Reverse | Kind::Gravity => {
                // Several cells of several colours, not already in order at the end.
                loop {
                    for c in s.iter_mut() {
                        *c = if rng.random_bool(0.35) {
                            rng.random_range(1..=8)
                        } else {
                            0
                        };
                    }
                    if self.apply(&s) != s && s.iter().filter(|&&c| c != 0).count() >= 2 {
                        break;
                    }
                }
            }
            Kind::Recolor => {
                for c in s.iter_mut() {
                    if rng.random_bool(0.4) {
                        *c = other(rng, &[self.color, self.to]);
                    }
                }
                let hits = rng.random_range(1..=(n / 3).max(1));
                for _ in 0..hits {
                    let i = rng.random_range(0..n);
                    s[i] = self.color;
                }
            }
            Kind::FillGap => {
                // Neither pixel on an edge, so growing a block to the edge (`extend`)
                // never explains the examples as well.
                let i = rng.random_range(1..n - 3);
                let j = rng.random_range(i + 2..n - 1);
                s[i] = self.color;
                s[j] = self.color;
            }
            Kind::Denoise => {
                // One long run, and isolated single cells of the same colour.
                let len = rng.random_range(3..=(n / 3).max(3));
                let start = rng.random_range(0..=n - len);
                s[start..start + len].fill(self.color);
                let noise = rng.random_range(1..=(n / 5).max(1));
                for _ in 0..noise {
                    let i = rng.random_range(0..n);
                    let free = |j: usize| j >= n || s[j] == 0;
                    if s[i] == 0 && (i == 0 || free(i - 1)) && free(i + 1) {
                        s[i] = self.color;
                    }
                }
                // At least one noise cell must exist for the rule to show.
                if !(0..n).any(|i| {
                    s[i] != 0 && (i == 0 || s[i - 1] == 0) && (i + 1 >= n || s[i + 1] == 0)
                }) {
                    let spot = (0..n).find(|&i| {
                        s[i] == 0 && (i == 0 || s[i - 1] == 0) && (i + 1 >= n || s[i + 1] == 0)
                    });
                    if let Some(i) = spot {
                        s[i] = self.color;
                    }
                }
            }
            Kind::MoveToMarker => {
                let len = rng.random_range(1..=(n / 4).max(1));
                // Marker, a gap of at least one cell, then the block (either side).
                let m = rng.random_range(0..n);
                let left_room = m; // cells left of the marker
                let right_room = n - m - 1;
                let can_left = left_room > len;
                let can_right = right_room > len;
                let block_left = match (can_left, can_right) {
                    (true, true) => rng.random_bool(0.5),
                    (true, false) => true,
                    (false, true) => false,
                    (false, false) => {
                        return self.input(rng, n);
                    }
                };
                s[m] = MARKER;
                let start = if block_left {
                    rng.random_range(0..=m - len - 1)
                } else {
                    rng.random_range(m + 2..=n - len)
                };
                s[start..start + len].fill(self.color);
            }
        }
        s
    }
}

/// The one-colour rules with every parameter the family draws at some level (the first
/// rule of a level-5 composite).
fn one_colour_rules() -> Vec<Rule> {
    let rule = |kind, color, k, right| Rule {
        kind,
        color,
        to: 0,
        k,
        right,
    };
    let mut out = Vec::new();
    for k in 1..=4 {
        out.extend([true, false].map(|right| rule(Kind::Shift, 0, k, right)));
    }
    for c in 1..=8 {
        out.extend([
            rule(Kind::Extend, c, 0, true),
            rule(Kind::Extend, c, 0, false),
            rule(Kind::FillGap, c, 0, false),
            rule(Kind::MoveToMarker, c, 0, false),
        ]);
    }
    out.push(rule(Kind::Denoise, 0, 0, false));
    out
}

/// Every recolouring of a colour (the marker included) to another value.
fn recolourings() -> impl Iterator<Item = Rule> {
    (1..=9u8).flat_map(|from| {
        (0..=9u8).filter(move |&to| to != from).map(move |to| Rule {
            kind: Kind::Recolor,
            color: from,
            to,
            k: 0,
            right: false,
        })
    })
}

/// Whether `second` turns `mid` into `out` (`None`: nothing more is applied), without
/// building the sequence.
fn then_gives(second: Option<&Rule>, mid: &[u8], out: &[u8]) -> bool {
    match second {
        None => mid == out,
        Some(r) if r.kind == Kind::Reverse => mid.iter().rev().eq(out),
        Some(r) => {
            mid.len() == out.len()
                && mid
                    .iter()
                    .zip(out)
                    .all(|(&m, &o)| o == if m == r.color { r.to } else { m })
        }
    }
}

/// Whether the examples determine the answer: every rule the family knows (any level's
/// rules with any parameters, and every one-colour rule followed by `reverse` or by any
/// recolouring) that reproduces all the examples gives the same output on the test input.
/// The generator redraws example sets that fail this (e.g. a `fill_gap` whose outputs
/// are all palindromes, which `fill_gap` then `reverse` explains too).
fn determined(examples: &[(Vec<u8>, Vec<u8>)], test: &[u8]) -> bool {
    let mut answer: Option<Vec<u8>> = None;
    let mut agree = |out: Option<Vec<u8>>| match (out, &answer) {
        (None, _) => true,
        (Some(out), None) => {
            answer = Some(out);
            true
        }
        (Some(out), Some(a)) => *a == out,
    };
    let reverse = Rule {
        kind: Kind::Reverse,
        color: 0,
        to: 0,
        k: 0,
        right: false,
    };
    let gravity = |right| Rule {
        kind: Kind::Gravity,
        right,
        ..reverse
    };
    let seconds: Vec<Option<Rule>> = [None, Some(reverse)]
        .into_iter()
        .chain(recolourings().map(Some))
        .collect();
    for first in one_colour_rules() {
        let Some(mids) = examples
            .iter()
            .map(|(i, _)| first.try_apply(i))
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        for second in &seconds {
            let fits = mids
                .iter()
                .zip(examples)
                .all(|(mid, (_, out))| then_gives(second.as_ref(), mid, out));
            if fits {
                let out = first.try_apply(test).and_then(|mid| match second {
                    None => Some(mid),
                    Some(r) => r.try_apply(&mid),
                });
                if !agree(out) {
                    return false;
                }
            }
        }
    }
    let singles = [reverse, gravity(true), gravity(false)]
        .into_iter()
        .chain(recolourings());
    for rule in singles {
        let fits = examples
            .iter()
            .all(|(i, o)| rule.try_apply(i).as_deref() == Some(o.as_slice()));
        if fits && !agree(rule.try_apply(test)) {
            return false;
        }
    }
    true
}

fn draw_rule(rng: &mut ChaCha20Rng, kind: Kind, p: &Params, avoid: &[u8]) -> Rule {
    let pick = |rng: &mut ChaCha20Rng, not: &[u8]| loop {
        let c = rng.random_range(1..=8u8);
        if !not.contains(&c) {
            break c;
        }
    };
    let color = pick(rng, avoid);
    let to = pick(rng, &[color]);
    Rule {
        kind,
        color,
        to,
        k: rng.random_range(1..=p.shift_max),
        right: rng.random_bool(0.5),
    }
}

fn seq_text(s: &[u8]) -> String {
    grid([s])
}

/// The question templates of variants 1.. (`kit::template`): the same task, worded
/// and laid out differently.
const TEMPLATES: &[Template] = &[
    Template::new(
        Wording::Put,
        &[
            Piece::Text(
                "Find the transformation that turns each input row below into its output row (every example follows the same rule; 0 is the empty background and 1-9 are colours), then apply it to the test row.",
            ),
            Piece::Data("{#examples|\n}input {.input|space} -> output {.output|space}{/}"),
            Piece::Data("test {test_input|space} -> ?"),
            Piece::Text(
                "Answer with the {test_input|len} numbers of the test row's output, separated by spaces.",
            ),
        ],
    ),
    Template::new(
        Wording::Lead,
        &[
            Piece::Data("Test input: {test_input|json}"),
            Piece::Text("Solved examples of the same hidden rule (0 = background, 1-9 = colours):"),
            Piece::Data("{#examples|\n\n}in:  {.input|json}\nout: {.output|json}{/}"),
            Piece::Text(
                "Apply the rule to the test input and give the resulting sequence: {test_input|len} digits separated by spaces.",
            ),
        ],
    ),
];

impl Family for Arc1d {
    fn name(&self) -> &'static str {
        "arc_1d"
    }
    fn category(&self) -> Category {
        Category::Cognition
    }
    fn description(&self) -> &'static str {
        "Infer a 1-D sequence transformation from examples and apply it"
    }
    fn version(&self) -> u32 {
        2
    }
    fn level_params(&self, level: Level) -> Value {
        let p = &PARAMS[level.idx()];
        let kinds: Vec<&str> = p.kinds.iter().map(|k| k.name()).collect();
        json!({
            "rules": kinds, "shift_max": p.shift_max, "length_min": p.len.0,
            "length_max": p.len.1, "examples": p.examples,
            "composite": p.composite,
        })
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let p = &PARAMS[level.idx()];
        let n = rng.random_range(p.len.0..=p.len.1);
        let kinds: &[Kind] = if p.composite { SINGLE_COLOUR } else { p.kinds };
        let kind = kinds[rng.random_range(0..kinds.len())];
        let first = draw_rule(rng, kind, p, &[]);
        let mut rules = vec![first];
        if p.composite {
            let second = if rng.random_bool(0.5) {
                Kind::Reverse
            } else {
                Kind::Recolor
            };
            let mut r = draw_rule(rng, second, p, &[]);
            // Recolour the first rule's colour so every example shows it.
            r.color = first.color;
            if r.to == r.color {
                r.to = if r.color == 8 { 1 } else { r.color + 1 };
            }
            rules.push(r);
        }
        let run = |s: &[u8]| rules.iter().fold(s.to_vec(), |acc, r| r.apply(&acc));
        // Draw example sets until the examples determine the answer (about 1 in 4,000
        // is redrawn).
        let (inputs, test) = loop {
            let mut inputs: Vec<Vec<u8>> = Vec::with_capacity(p.examples + 1);
            while inputs.len() < p.examples + 1 {
                let s = first.input(rng, n);
                if !inputs.contains(&s) {
                    inputs.push(s);
                }
            }
            let test = inputs.pop().expect("examples + 1 inputs");
            let shown: Vec<(Vec<u8>, Vec<u8>)> =
                inputs.iter().map(|s| (s.clone(), run(s))).collect();
            if determined(&shown, &test) {
                break (inputs, test);
            }
        };
        let mut body = Body::new().text(
            "Each example below maps an input sequence to an output sequence by the same rule \
             (0 is the background, 1-9 are colours). Find the rule and apply it to the test \
             input.",
        );
        let mut examples = Vec::with_capacity(inputs.len());
        for (i, s) in inputs.iter().enumerate() {
            let out = run(s);
            body = body.data(format!(
                "Example {}:\nInput:  {}\nOutput: {}",
                i + 1,
                seq_text(s),
                seq_text(&out)
            ));
            examples.push(json!({"input": s, "output": out}));
        }
        let gold = run(&test);
        Generated {
            body: body
                .data(format!("Test input: {}", seq_text(&test)))
                .text(format!(
                    "Write the output sequence: {n} digits separated by spaces."
                )),
            format: AnswerFormat::with_example("as the output sequence", "1 2 3"),
            answer: seq_text(&gold),
            metadata: fields([
                (
                    "rules",
                    Value::Array(rules.iter().map(Rule::json).collect()),
                ),
                ("examples", Value::Array(examples)),
                ("test_input", json!(test)),
            ]),
        }
    }
    fn templates(&self) -> &'static [Template] {
        TEMPLATES
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        match (parse::int_list(answer), parse::int_list(&instance.answer)) {
            (Some(a), Some(g)) if a == g => 1.0,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(kind: Kind, color: u8, to: u8, k: usize, right: bool) -> Rule {
        Rule {
            kind,
            color,
            to,
            k,
            right,
        }
    }

    #[test]
    fn determined_sees_a_second_rule() {
        let fill = rule(Kind::FillGap, 4, 0, 0, false);
        let shown = |inputs: &[&[u8]]| -> Vec<(Vec<u8>, Vec<u8>)> {
            inputs.iter().map(|s| (s.to_vec(), fill.apply(s))).collect()
        };
        let test = [0, 0, 0, 4, 0, 0, 0, 4, 0, 0];
        // Every output a palindrome: `fill_gap` then `reverse` fits and moves the answer.
        let palindromes = shown(&[&[0, 4, 0, 0, 4, 0], &[0, 0, 4, 0, 0, 0, 4, 0, 0]]);
        assert!(!determined(&palindromes, &test));
        // One output that is not a palindrome rules it out.
        let told = shown(&[&[0, 4, 0, 0, 4, 0], &[0, 4, 0, 0, 4, 0, 0, 0]]);
        assert!(determined(&told, &test));
        // A test input on which both agree is determined even by palindromes.
        assert!(determined(&palindromes, &[0, 4, 0, 4, 0]));
    }

    #[test]
    fn rules_by_hand() {
        let s = [0, 3, 3, 0, 0, 0];
        assert_eq!(
            rule(Kind::Shift, 3, 0, 2, true).apply(&s),
            [0, 0, 0, 3, 3, 0]
        );
        assert_eq!(
            rule(Kind::Extend, 3, 0, 0, false).apply(&s),
            [3, 3, 3, 0, 0, 0]
        );
        assert_eq!(
            rule(Kind::FillGap, 4, 0, 0, true).apply(&[0, 4, 0, 0, 4, 0]),
            [0, 4, 4, 4, 4, 0]
        );
        assert_eq!(
            rule(Kind::Gravity, 0, 0, 0, true).apply(&[1, 0, 2, 0]),
            [0, 0, 1, 2]
        );
        assert_eq!(
            rule(Kind::Denoise, 5, 0, 0, true).apply(&[5, 0, 5, 5, 5, 0, 5]),
            [0, 0, 5, 5, 5, 0, 0]
        );
        assert_eq!(
            rule(Kind::MoveToMarker, 2, 0, 0, true).apply(&[2, 2, 0, 0, 9, 0]),
            [0, 0, 2, 2, 9, 0]
        );
        assert_eq!(
            rule(Kind::MoveToMarker, 2, 0, 0, true).apply(&[0, 9, 0, 0, 2, 0]),
            [0, 9, 2, 0, 0, 0]
        );
    }
}
