//! Answer-format promises checked over the whole registry: an echoed question and the
//! format example never score, lookalike characters never stand in for ASCII ones, and
//! the documented tolerance (whitespace, `+`, leading zeros) holds for every family
//! it applies to.

use harness_rl::families::{self, Family, Instance, Level, ScoreMode};

use crate::{score, tagged};

/// Every `<answer>...</answer>` span of a text, in order (the format example of a
/// question is one of them).
fn tagged_spans(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("<answer>") {
        let after = &rest[i + "<answer>".len()..];
        let Some(j) = after.find("</answer>") else {
            break;
        };
        out.push(&after[..j]);
        rest = &after[j + "</answer>".len()..];
    }
    out
}

fn echo_scores_nothing(f: &dyn Family, inst: &Instance) -> Result<(), String> {
    for mode in [ScoreMode::Strict, ScoreMode::Lenient] {
        let s = families::score_response(f, inst, &inst.question, mode);
        if s.score != 0.0 {
            return Err(format!(
                "{}: the echoed question scores {} ({mode:?}, extracted {:?})",
                inst.id, s.score, s.extracted
            ));
        }
        let twice = format!("{}\n{}", inst.question, inst.question);
        if families::score_response(f, inst, &twice, mode).score != 0.0 {
            return Err(format!("{}: the question twice scores ({mode:?})", inst.id));
        }
    }
    let spans = tagged_spans(&inst.question);
    // The recorded example is the tagged span the instruction shows (if any).
    match inst.answer_example() {
        Some(e) => {
            if spans.last() != Some(&e) {
                return Err(format!("{}: example {e:?} is not the last span", inst.id));
            }
        }
        None => {
            if spans != [""] {
                return Err(format!("{}: spans {spans:?} without an example", inst.id));
            }
        }
    }
    for span in spans {
        if f.verify(inst, span) != 0.0 || score(f, inst, &tagged(span)) != 0.0 {
            return Err(format!(
                "{}: the example {span:?} in the question is a right answer (gold {:?})",
                inst.id, inst.answer
            ));
        }
    }
    Ok(())
}

/// Issue 12: a response that repeats the question must never earn credit, and no
/// tagged text in a question (the format example) may be accepted — for every family,
/// every question variant, every level, many seeds and indices.
#[test]
fn echoed_questions_and_format_examples_never_score() {
    for f in families::registry() {
        for variant in 0..f.variant_count() as u8 {
            for level in Level::all() {
                for seed in [0u64, 7, 20240, u64::MAX] {
                    let stream = families::InstanceStream::new(*f, level, seed)
                        .with_variant(families::Variant::Fixed(variant))
                        .unwrap();
                    for index in 0..30 {
                        let inst = stream.instance(index);
                        if let Err(e) = echo_scores_nothing(*f, &inst) {
                            panic!("{e}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn tagged_spans_finds_each_pair() {
    assert_eq!(
        tagged_spans("a <answer></answer> b <answer>x\ny</answer>. <answer>z"),
        vec!["", "x\ny"]
    );
}

/// Lookalikes of one character: characters that Unicode case folding or a reader's
/// eye would take for it, but that are not it.
fn lookalikes(c: char) -> Vec<char> {
    let mut v = Vec::new();
    if c.is_ascii_lowercase() {
        v.push(char::from_u32(0xFF41 + (c as u32 - 'a' as u32)).unwrap());
    }
    if c.is_ascii_uppercase() {
        v.push(char::from_u32(0xFF21 + (c as u32 - 'A' as u32)).unwrap());
    }
    if c.is_ascii_digit() {
        let d = c as u32 - '0' as u32;
        v.push(char::from_u32(0xFF10 + d).unwrap()); // full-width digit
        v.push(char::from_u32(0x0660 + d).unwrap()); // Arabic-Indic digit
    }
    match c.to_ascii_lowercase() {
        'k' => v.push('\u{212A}'),               // KELVIN SIGN, folds to `k`
        's' => v.push('\u{17F}'),                // LONG S, upper-cases to `S`
        'i' => v.extend(['\u{130}', '\u{131}']), // dotted I, dotless i
        _ => {}
    }
    let cyrillic = match c {
        'a' => Some('\u{430}'),
        'c' => Some('\u{441}'),
        'e' => Some('\u{435}'),
        'o' => Some('\u{43E}'),
        'p' => Some('\u{440}'),
        'x' => Some('\u{445}'),
        'y' => Some('\u{443}'),
        'A' => Some('\u{410}'),
        'B' => Some('\u{412}'),
        'E' => Some('\u{415}'),
        'K' => Some('\u{41A}'),
        'M' => Some('\u{41C}'),
        'H' => Some('\u{41D}'),
        'O' => Some('\u{41E}'),
        'P' => Some('\u{420}'),
        'C' => Some('\u{421}'),
        'T' => Some('\u{422}'),
        'X' => Some('\u{425}'),
        _ => None,
    };
    v.extend(cyrillic);
    v
}

/// Families whose answers ignore (ASCII) letter case, as their docs and docs/FAMILIES.md say.
const CASE_INSENSITIVE: &[&str] = &[
    "base_conversion",
    "bitwise_arithmetic",
    "caesar_cipher",
    "calendar_arithmetic",
    "course_schedule",
    "cryptarithm",
    "family_relationships",
    "group_anagrams",
    "isomorphic_strings",
    "jugs",
    "knights_knaves",
    "letter_jumble",
    "n_queens",
    "needle_haystack",
    "palindrome_generation",
    "polynomial_multiplication",
    "propositional_logic",
    "shortest_path",
    "sokoban",
    "spell_backward",
    "syllogism",
    "tower_of_hanoi",
    "word_ladder",
    "zebra_puzzles",
];

fn swap_case(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_lowercase() {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// Issue 12: case-insensitive comparison folds ASCII case only. For every family, and
/// every letter or digit of the gold answer, the gold with that one character replaced
/// by a lookalike (KELVIN SIGN, long s, dotted/dotless i, Cyrillic, full-width, Arabic-
/// Indic digits) or followed by a zero-width space scores 0; for the case-insensitive
/// families (the list is checked: exactly those accept the gold with its ASCII case
/// swapped) this is the near-miss test that matters.
#[test]
fn lookalike_characters_never_score() {
    let mut case_insensitive = std::collections::BTreeSet::new();
    for f in families::registry() {
        for level in Level::all() {
            for index in 0..12 {
                let inst = families::generate(*f, level, 3, index);
                let gold = &inst.answer;
                assert_eq!(score(*f, &inst, &tagged(gold)), 1.0, "{}", inst.id);
                if gold.chars().any(|c| c.is_ascii_alphabetic())
                    && score(*f, &inst, &tagged(&swap_case(gold))) == 1.0
                {
                    case_insensitive.insert(f.name());
                }
                let chars: Vec<char> = gold.chars().collect();
                for (i, &c) in chars.iter().enumerate() {
                    let mut variants: Vec<String> = lookalikes(c)
                        .into_iter()
                        .map(|l| {
                            let mut v = chars.clone();
                            v[i] = l;
                            v.into_iter().collect()
                        })
                        .collect();
                    if c.is_ascii_alphanumeric() && i + 1 < chars.len() {
                        let mut v = chars.clone();
                        v.insert(i + 1, '\u{200B}');
                        variants.push(v.into_iter().collect());
                    }
                    for v in variants {
                        // Also in the case the family ignores, so ASCII folding alone
                        // cannot rescue the lookalike.
                        for cand in [v.clone(), swap_case(&v)] {
                            assert_eq!(
                                score(*f, &inst, &tagged(&cand)),
                                0.0,
                                "{}: lookalike {cand:?} scored for gold {gold:?}",
                                inst.id
                            );
                        }
                    }
                }
            }
        }
    }
    let want: std::collections::BTreeSet<&str> = CASE_INSENSITIVE.iter().copied().collect();
    assert_eq!(case_insensitive, want, "case-insensitive families");
}

/// The reported audit cases, exactly.
#[test]
fn the_audited_lookalikes_score_zero() {
    let cases = [
        ("spell_backward", 3, 7, 2, 'k'),
        ("knights_knaves", 1, 7, 0, 'k'),
        ("caesar_cipher", 1, 7, 0, 'k'),
        ("needle_haystack", 1, 7, 0, 'k'),
    ];
    for (name, level, seed, index, letter) in cases {
        let f = families::get(name).unwrap();
        // Find an instance whose gold holds the letter, starting at the audited one.
        let inst = (index..index + 400)
            .map(|i| families::generate(f, Level::new(level).unwrap(), seed, i))
            .find(|x| x.answer.to_ascii_lowercase().contains(letter))
            .unwrap_or_else(|| panic!("{name}: no gold with {letter:?}"));
        let kelvin: String = inst
            .answer
            .chars()
            .map(|c| {
                if c.eq_ignore_ascii_case(&'k') {
                    '\u{212A}'
                } else {
                    c
                }
            })
            .collect();
        assert_eq!(score(f, &inst, &tagged(&inst.answer)), 1.0);
        assert_eq!(
            score(f, &inst, &tagged(&kelvin)),
            0.0,
            "{name}: {kelvin:?} scored for {:?}",
            inst.answer
        );
    }
}

/// The whitespace tolerance: no-break spaces (and other Unicode whitespace) around the
/// answer are ignored by every family; a zero-width space is not whitespace.
#[test]
fn unicode_whitespace_around_the_answer_is_ignored() {
    for f in families::registry() {
        for level in Level::all() {
            let inst = families::generate(*f, level, 5, 1);
            for pad in ["\u{A0}", "\u{2003}", "\t\n", "\u{3000}"] {
                let r = tagged(&format!("{pad}{}{pad}", inst.answer));
                assert_eq!(score(*f, &inst, &r), 1.0, "{} with {pad:?}", inst.id);
            }
            let r = tagged(&format!("\u{200B}{}", inst.answer));
            assert_eq!(score(*f, &inst, &r), 0.0, "{} with U+200B", inst.id);
        }
    }
}

/// Families whose answer is one integer.
const INTEGER_FAMILIES: &[&str] = &[
    "basic_arithmetic",
    "chain_sum",
    "connected_components",
    "count_bits",
    "count_primes",
    "gcd",
    "largest_island",
    "lcm",
    "letter_counting",
    "maze",
    "number_sequence",
    "power_function",
    "rectangle_count",
];

/// Integer answers accept a leading `+` and leading zeros (`014` is 14), as
/// documented; a doubled sign, a decimal point, an exponent or a prefix do not.
#[test]
fn integer_answers_take_plus_and_leading_zeros() {
    for name in INTEGER_FAMILIES {
        let f = families::get(name).unwrap();
        for level in Level::all() {
            for index in 0..10 {
                let inst = families::generate(f, level, 9, index);
                let g = inst.answer.as_str();
                assert!(
                    g.parse::<i128>().is_ok(),
                    "{}: gold {g:?} is not an integer",
                    inst.id
                );
                let (sign, digits) = match g.strip_prefix('-') {
                    Some(d) => ("-", d),
                    None => ("", g),
                };
                let mut ok = vec![format!("{sign}0{digits}"), format!("{sign}00{digits}")];
                if sign.is_empty() {
                    ok.push(format!("+{g}"));
                    ok.push(format!("+0{g}"));
                }
                for a in ok {
                    assert_eq!(score(f, &inst, &tagged(&a)), 1.0, "{}: {a:?}", inst.id);
                }
                for bad in [
                    format!("++{g}"),
                    format!("{g}.0"),
                    format!("{g}e0"),
                    format!("0x{g}"),
                    format!("{g}/1"),
                ] {
                    assert_eq!(score(f, &inst, &tagged(&bad)), 0.0, "{}: {bad:?}", inst.id);
                }
            }
        }
    }
}
