//! Independent re-solvers for the algorithmic families, and focused verifier tests.
//!
//! Each re-solver reads only `metadata` and uses a different method from the
//! generator (e.g. char-level work instead of byte tables, brute force instead of BFS,
//! direct index formulas instead of repeated quarter turns).

use harness_rl::families::kit::lexicon::WORDS;
use harness_rl::families::{self, Instance, Level};
use serde_json::{Value, json};

use crate::Resolver;

fn s<'a>(inst: &'a Instance, key: &str) -> &'a str {
    inst.metadata[key]
        .as_str()
        .unwrap_or_else(|| panic!("{}: metadata.{key}", inst.id))
}

fn strs<'a>(inst: &'a Instance, key: &str) -> Vec<&'a str> {
    inst.metadata[key]
        .as_array()
        .unwrap_or_else(|| panic!("{}: metadata.{key}", inst.id))
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

fn matrix(inst: &Instance) -> Vec<Vec<i64>> {
    serde_json::from_value(inst.metadata["matrix"].clone()).unwrap()
}

fn grid_string(m: &[Vec<i64>]) -> String {
    m.iter()
        .map(|r| {
            r.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Char by char, lower-casing full Unicode chars.
fn letter_counting(inst: &Instance) -> String {
    let letter = s(inst, "letter")
        .chars()
        .next()
        .unwrap()
        .to_lowercase()
        .next()
        .unwrap();
    s(inst, "text")
        .chars()
        .flat_map(char::to_lowercase)
        .filter(|&c| c == letter)
        .count()
        .to_string()
}

/// Insertion sort on code-point vectors.
fn word_sorting(inst: &Instance) -> String {
    let mut w: Vec<Vec<u32>> = strs(inst, "words")
        .iter()
        .map(|x| x.chars().map(u32::from).collect())
        .collect();
    for i in 1..w.len() {
        let mut j = i;
        while j > 0 && w[j - 1] > w[j] {
            w.swap(j - 1, j);
            j -= 1;
        }
    }
    if s(inst, "order") == "descending" {
        w.reverse();
    }
    w.iter()
        .map(|x| {
            x.iter()
                .map(|&c| char::from_u32(c).unwrap())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Index from the end.
fn spell_backward(inst: &Instance) -> String {
    let w = s(inst, "word").as_bytes();
    (0..w.len()).map(|i| w[w.len() - 1 - i] as char).collect()
}

/// Fixed point with 10 decimals built from the digit strings, selection sort.
fn number_sorting(inst: &Instance) -> String {
    let key = |x: &str| -> i128 {
        let (neg, body) = x.strip_prefix('-').map_or((false, x), |b| (true, b));
        let (ip, fp) = body.split_once('.').unwrap_or((body, ""));
        let frac = format!("{fp:0<10}");
        let v: i128 = format!("{ip}{frac}").parse().unwrap();
        if neg { -v } else { v }
    };
    let mut v: Vec<&str> = strs(inst, "numbers");
    let desc = s(inst, "order") == "descending";
    for i in 0..v.len() {
        let mut best = i;
        for j in i + 1..v.len() {
            let better = if desc {
                key(v[j]) > key(v[best])
            } else {
                key(v[j]) < key(v[best])
            };
            if better {
                best = j;
            }
        }
        v.swap(i, best);
    }
    v.join(", ")
}

/// Decrypt as a reader of the question would, never looking at the generator's key or
/// plaintext: a stated key ("shifted forward by N positions") is read from the question
/// text; otherwise every shift is tried against the word list and exactly one must
/// turn every word into a list word.
fn caesar_cipher(inst: &Instance) -> String {
    let cipher = inst
        .question
        .lines()
        .find_map(|l| l.strip_prefix("Ciphertext: "))
        .expect("the question shows the ciphertext");
    assert_eq!(cipher, s(inst, "ciphertext"), "{}", inst.id);
    let decode = |k: u8| -> String {
        cipher
            .chars()
            .map(|c| {
                if c.is_ascii_uppercase() {
                    (((c as u8 - b'A' + 26 - k) % 26) + b'A') as char
                } else {
                    c
                }
            })
            .collect()
    };
    let fits: Vec<String> = (0..26u8)
        .map(decode)
        .filter(|p| {
            p.split(' ')
                .all(|w| WORDS.iter().any(|x| x.eq_ignore_ascii_case(w)))
        })
        .collect();
    let stated = inst
        .question
        .split_once("shifted forward by ")
        .and_then(|(_, rest)| rest.split_once(" positions"))
        .map(|(k, _)| k.parse::<u8>().expect("a stated key is a number"));
    match stated {
        Some(k) => {
            assert!(
                inst.level <= 2,
                "{}: key stated at level {}",
                inst.id,
                inst.level
            );
            decode(k)
        }
        None => {
            assert!(
                inst.level >= 3,
                "{}: no key stated at level {}",
                inst.id,
                inst.level
            );
            assert_eq!(fits.len(), 1, "{}: ambiguous decryptions {fits:?}", inst.id);
            fits.into_iter().next().unwrap()
        }
    }
}

/// Direct index formulas for each angle.
fn rotate_matrix(inst: &Instance) -> String {
    let m = matrix(inst);
    let n = m.len();
    let deg = inst.metadata["degrees"].as_u64().unwrap();
    let out: Vec<Vec<i64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| match deg {
                    90 => m[n - 1 - j][i],
                    180 => m[n - 1 - i][n - 1 - j],
                    270 => m[j][n - 1 - i],
                    _ => panic!("angle {deg}"),
                })
                .collect()
        })
        .collect();
    grid_string(&out)
}

/// Walk with a direction that turns right on hitting a wall or a visited cell.
fn spiral_matrix(inst: &Instance) -> String {
    let m = matrix(inst);
    let (rows, cols) = (m.len() as i64, m[0].len() as i64);
    let mut seen = vec![vec![false; cols as usize]; rows as usize];
    let dirs = [(0, 1), (1, 0), (0, -1), (-1, 0)];
    let (mut r, mut c, mut d) = (0i64, 0i64, 0usize);
    let mut out = Vec::new();
    for _ in 0..rows * cols {
        out.push(m[r as usize][c as usize].to_string());
        seen[r as usize][c as usize] = true;
        let ok = |r: i64, c: i64| {
            r >= 0 && c >= 0 && r < rows && c < cols && !seen[r as usize][c as usize]
        };
        if !ok(r + dirs[d].0, c + dirs[d].1) {
            d = (d + 1) % 4;
        }
        r += dirs[d].0;
        c += dirs[d].1;
    }
    out.join(" ")
}

/// Brute force: Manhattan distance to every zero.
fn binary_matrix(inst: &Instance) -> String {
    let m = matrix(inst);
    let zeros: Vec<(i64, i64)> = m
        .iter()
        .enumerate()
        .flat_map(|(r, row)| {
            row.iter()
                .enumerate()
                .filter(|(_, v)| **v == 0)
                .map(move |(c, _)| (r as i64, c as i64))
        })
        .collect();
    let out: Vec<Vec<i64>> = (0..m.len() as i64)
        .map(|r| {
            (0..m[0].len() as i64)
                .map(|c| {
                    zeros
                        .iter()
                        .map(|&(zr, zc)| (zr - r).abs() + (zc - c).abs())
                        .min()
                        .unwrap()
                })
                .collect()
        })
        .collect();
    grid_string(&out)
}

/// Same first-occurrence pattern in both strings.
fn isomorphic_strings(inst: &Instance) -> String {
    let pattern = |x: &str| -> Vec<usize> {
        let cs: Vec<char> = x.chars().collect();
        cs.iter()
            .map(|c| cs.iter().position(|d| d == c).unwrap())
            .collect()
    };
    (pattern(s(inst, "s")) == pattern(s(inst, "t"))).to_string()
}

pub fn resolvers() -> Vec<Resolver> {
    vec![
        Resolver {
            family: "letter_counting",
            unique: true,
            solve: letter_counting,
        },
        Resolver {
            family: "word_sorting",
            unique: true,
            solve: word_sorting,
        },
        Resolver {
            family: "spell_backward",
            unique: true,
            solve: spell_backward,
        },
        Resolver {
            family: "number_sorting",
            unique: true,
            solve: number_sorting,
        },
        Resolver {
            family: "caesar_cipher",
            unique: true,
            solve: caesar_cipher,
        },
        Resolver {
            family: "rotate_matrix",
            unique: true,
            solve: rotate_matrix,
        },
        Resolver {
            family: "spiral_matrix",
            unique: true,
            solve: spiral_matrix,
        },
        Resolver {
            family: "binary_matrix",
            unique: true,
            solve: binary_matrix,
        },
        Resolver {
            family: "isomorphic_strings",
            unique: true,
            solve: isomorphic_strings,
        },
        Resolver {
            family: "letter_jumble",
            unique: true,
            solve: letter_jumble,
        },
        Resolver {
            family: "palindrome_generation",
            unique: false,
            solve: palindrome_generation,
        },
        Resolver {
            family: "group_anagrams",
            unique: true,
            solve: group_anagrams,
        },
        Resolver {
            family: "pool_matrix",
            unique: true,
            solve: pool_matrix,
        },
        Resolver {
            family: "manipulate_matrix",
            unique: true,
            solve: manipulate_matrix,
        },
    ]
}

// ---- focused verifier tests -------------------------------------------------------

fn inst(family: &str, metadata: Value, answer: &str) -> Instance {
    Instance {
        id: format!("{family}/test"),
        family: family.into(),
        level: 1,
        seed: 0,
        index: 0,
        question: String::new(),
        answer: answer.into(),
        metadata,
    }
}

fn verify(family: &str, i: &Instance, answer: &str) -> f64 {
    families::get(family).unwrap().verify(i, answer)
}

#[test]
fn number_sorting_compares_exact_decimals() {
    let i = inst(
        "number_sorting",
        json!({"numbers": ["2.5", "-0.07", "10", "2.5"], "order": "ascending"}),
        "-0.07, 2.5, 2.5, 10",
    );
    for ok in [
        "-0.07, 2.5, 2.5, 10",
        "[-0.070, 2.50, 2.5, 10.0]",
        "-.07 2.5 +2.5 10",
        "-0.07,2.5,2.5,10",
    ] {
        assert_eq!(verify("number_sorting", &i, ok), 1.0, "{ok}");
    }
    for bad in [
        "-0.07, 2.5, 10",             // lost a repeat
        "-0.07, 2.5, 2.5, 11",        // off by one (reasoning-gym accepts this)
        "-0.07, 2.5, 2.5, 9.9999999", // float-ish rounding
        "-0.07, 2.4999999, 2.5, 10",
        "10, 2.5, 2.5, -0.07", // wrong direction
        "-0.07, 2.5, 2.5, 10, 10",
        "-0.07, 2.5, 2.5, 1e1",
        "-0.07, 2.5, 2.5, 10 done",
    ] {
        assert_eq!(verify("number_sorting", &i, bad), 0.0, "{bad}");
    }
}

#[test]
fn spell_backward_is_case_insensitive_but_rejects_junk() {
    let i = inst("spell_backward", json!({"word": "garden"}), "nedrag");
    assert_eq!(verify("spell_backward", &i, " NEDRAG "), 1.0);
    assert_eq!(verify("spell_backward", &i, "NeDrAg"), 1.0);
    for bad in [
        "nedrag junk",
        "nedrag.",
        "n e d r a g",
        "garden",
        "nedra",
        "nedragg",
        "\"nedrag\"",
    ] {
        assert_eq!(verify("spell_backward", &i, bad), 0.0, "{bad}");
    }
}

#[test]
fn word_sorting_is_exact_about_order_and_case() {
    let i = inst(
        "word_sorting",
        json!({"words": ["pear", "Apple", "fig", "APPLE"], "order": "ascending"}),
        "",
    );
    assert_eq!(verify("word_sorting", &i, "APPLE, Apple, fig, pear"), 1.0);
    assert_eq!(verify("word_sorting", &i, "[APPLE Apple fig pear]"), 1.0);
    for bad in [
        "Apple, APPLE, fig, pear",
        "apple, apple, fig, pear",
        "APPLE, Apple, fig",
        "APPLE, Apple, fig, pear, pear",
        "pear, fig, Apple, APPLE",
    ] {
        assert_eq!(verify("word_sorting", &i, bad), 0.0, "{bad}");
    }
    let d = inst(
        "word_sorting",
        json!({"words": ["pear", "Apple", "fig"], "order": "descending"}),
        "",
    );
    assert_eq!(verify("word_sorting", &d, "pear, fig, Apple"), 1.0);
}

#[test]
fn letter_counting_counts_both_cases() {
    let i = inst(
        "letter_counting",
        json!({"text": "Eel eats Every evening", "letter": "e"}),
        "7",
    );
    assert_eq!(verify("letter_counting", &i, "7"), 1.0);
    assert_eq!(verify("letter_counting", &i, "+7"), 1.0);
    for bad in ["5", "7 times", "seven", "7.0", "7, 8"] {
        assert_eq!(verify("letter_counting", &i, bad), 0.0, "{bad}");
    }
}

#[test]
fn caesar_and_isomorphic_tolerate_case_and_spacing_only() {
    let i = inst(
        "caesar_cipher",
        json!({"ciphertext": "KHOOR ZRUOG", "key": 3}),
        "HELLO WORLD",
    );
    assert_eq!(verify("caesar_cipher", &i, "hello   world"), 1.0);
    for bad in [
        "hello world.",
        "helloworld",
        "hello world again",
        "KHOOR ZRUOG",
    ] {
        assert_eq!(verify("caesar_cipher", &i, bad), 0.0, "{bad}");
    }
    let j = inst(
        "isomorphic_strings",
        json!({"s": "paper", "t": "title"}),
        "true",
    );
    assert_eq!(verify("isomorphic_strings", &j, "TRUE"), 1.0);
    for bad in ["false", "yes", "true.", "true false", "1"] {
        assert_eq!(verify("isomorphic_strings", &j, bad), 0.0, "{bad}");
    }
}

#[test]
fn matrix_families_check_every_cell() {
    let r = inst(
        "rotate_matrix",
        json!({"matrix": [[1, 2], [3, 4]], "degrees": 90}),
        "3 1\n4 2",
    );
    // The documented grid forms: rows on lines with cells separated by spaces and/or
    // commas, each row optionally in brackets, or the nested (numpy-style) form.
    for ok in [
        "[[3, 1], [4, 2]]",
        "3, 1\n4, 2",
        "3,1\n4,2",
        "[3, 1]\n[4, 2]",
        "[[3 1]\n [4 2]]",
        "03 1\n4 +2",
    ] {
        assert_eq!(verify("rotate_matrix", &r, ok), 1.0, "{ok:?}");
    }
    for bad in [
        "[[3, 1], [4, 2]",
        "3; 1\n4; 2",
        "[3, 1]]\n[4, 2]",
        "3 1, 4 2",
    ] {
        assert_eq!(verify("rotate_matrix", &r, bad), 0.0, "{bad:?}");
    }
    for bad in ["3 1 4 2", "2 4\n1 3", "3 1\n4 2\n0 0", "3 1\n4"] {
        assert_eq!(verify("rotate_matrix", &r, bad), 0.0, "{bad}");
    }
    let s = inst(
        "spiral_matrix",
        json!({"matrix": [[1, 2, 3], [4, 5, 6]]}),
        "1 2 3 6 5 4",
    );
    assert_eq!(verify("spiral_matrix", &s, "[1, 2, 3, 6, 5, 4]"), 1.0);
    assert_eq!(verify("spiral_matrix", &s, "1 2 3 4 5 6"), 0.0);
    let b = inst(
        "binary_matrix",
        json!({"matrix": [[1, 1, 1], [1, 1, 0]]}),
        "3 2 1\n2 1 0",
    );
    assert_eq!(verify("binary_matrix", &b, "3 2 1\n2 1 0"), 1.0);
    assert_eq!(verify("binary_matrix", &b, "3, 2, 1\n2, 1, 0"), 1.0);
    assert_eq!(verify("binary_matrix", &b, "3 2 1\n2 1 1"), 0.0);
    // A matrix without zeros is corrupted: nothing scores.
    let z = inst("binary_matrix", json!({"matrix": [[1, 1]]}), "0 0");
    assert_eq!(verify("binary_matrix", &z, "0 0"), 0.0);
}

// ---------------------------------------------------------------------------------
// Families added for issue 8: letter_jumble, palindrome_generation, group_anagrams,
// pool_matrix, manipulate_matrix.
// ---------------------------------------------------------------------------------

fn letter_counts(w: &str) -> [u8; 26] {
    let mut c = [0u8; 26];
    for b in w.bytes() {
        c[usize::from(b - b'a')] += 1;
    }
    c
}

/// Search the whole word list for words with the same letter counts as each jumbled
/// word; there must be exactly one (the generator only draws anagram-free words).
fn letter_jumble(inst: &Instance) -> String {
    strs(inst, "jumbled")
        .iter()
        .map(|j| {
            let want = letter_counts(j);
            let hits: Vec<&str> = WORDS
                .iter()
                .copied()
                .filter(|w| letter_counts(w) == want)
                .collect();
            assert_eq!(hits.len(), 1, "{}: {j} -> {hits:?}", inst.id);
            assert_ne!(hits[0], *j, "{}: {j} was not shuffled", inst.id);
            hits[0]
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Counts per letter; each letter contributes half its count to the left half in
/// alphabetical order, the odd one (if any) goes in the middle.
fn palindrome_generation(inst: &Instance) -> String {
    let letters = strs(inst, "letters").concat();
    let counts = letter_counts(&letters);
    let odd: Vec<usize> = (0..26).filter(|&i| counts[i] % 2 == 1).collect();
    assert!(odd.len() <= 1, "{}: no palindrome exists", inst.id);
    let half: String = (0..26)
        .flat_map(|i| std::iter::repeat_n(char::from(b'a' + i as u8), usize::from(counts[i] / 2)))
        .collect();
    let mid: String = odd.iter().map(|&i| char::from(b'a' + i as u8)).collect();
    format!("{half}{mid}{}", half.chars().rev().collect::<String>())
}

/// Canonical form of a palindrome: its left half's letters sorted, then the middle.
fn palindrome_canon(p: &str) -> String {
    let b = p.as_bytes();
    let mut half = b[..b.len() / 2].to_vec();
    half.sort_unstable();
    let mid = if b.len() % 2 == 1 {
        vec![b[b.len() / 2]]
    } else {
        vec![]
    };
    String::from_utf8([half, mid].concat()).unwrap()
}

/// Group by letter-count arrays in a hash map (the verifier sorts letters).
fn group_anagrams(inst: &Instance) -> String {
    let mut groups: std::collections::HashMap<[u8; 26], Vec<&str>> = Default::default();
    let words = strs(inst, "words");
    let mut order: Vec<[u8; 26]> = Vec::new();
    for w in &words {
        let k = letter_counts(w);
        if !groups.contains_key(&k) {
            order.push(k);
        }
        groups.entry(k).or_default().push(w);
    }
    // Emit groups in reverse order with reversed members: a different but equal answer.
    order
        .iter()
        .rev()
        .map(|k| {
            let mut g = groups[k].clone();
            g.reverse();
            g.join(", ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Canonical partition: members sorted within groups, groups sorted.
fn groups_canon(a: &str) -> Vec<Vec<String>> {
    let mut g: Vec<Vec<String>> = a
        .lines()
        .map(|l| {
            let mut v: Vec<String> = l
                .split([',', ' '])
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect();
            v.sort();
            v
        })
        .collect();
    g.sort();
    g
}

/// Averages from a summed-area table; maxima by a separable two-pass window maximum.
fn pool_matrix(inst: &Instance) -> String {
    let m = matrix(inst);
    let k = inst.metadata["kernel"].as_u64().unwrap() as usize;
    let s = inst.metadata["stride"].as_u64().unwrap() as usize;
    let (rows, cols) = (m.len(), m[0].len());
    let (out_r, out_c) = ((rows - k) / s + 1, (cols - k) / s + 1);
    let cells: Vec<Vec<String>> = if inst.metadata["mode"] == "average" {
        let mut sat = vec![vec![0i64; cols + 1]; rows + 1];
        for r in 0..rows {
            for c in 0..cols {
                sat[r + 1][c + 1] = m[r][c] + sat[r][c + 1] + sat[r + 1][c] - sat[r][c];
            }
        }
        (0..out_r)
            .map(|i| {
                (0..out_c)
                    .map(|j| {
                        let (r0, c0) = (i * s, j * s);
                        let sum =
                            sat[r0 + k][c0 + k] - sat[r0][c0 + k] - sat[r0 + k][c0] + sat[r0][c0];
                        // sum / k² as a decimal with 4 places, trailing zeros removed.
                        let scaled = sum * 10_000 / (k * k) as i64;
                        assert_eq!(sum * 10_000 % (k * k) as i64, 0);
                        let sign = if scaled < 0 { "-" } else { "" };
                        let a = scaled.abs();
                        let frac = format!("{:04}", a % 10_000);
                        let frac = frac.trim_end_matches('0');
                        if frac.is_empty() {
                            format!("{sign}{}", a / 10_000)
                        } else {
                            format!("{sign}{}.{frac}", a / 10_000)
                        }
                    })
                    .collect()
            })
            .collect()
    } else {
        // Horizontal window maxima, then vertical maxima of those.
        let horiz: Vec<Vec<i64>> = m
            .iter()
            .map(|row| {
                (0..out_c)
                    .map(|j| *row[j * s..j * s + k].iter().max().unwrap())
                    .collect()
            })
            .collect();
        (0..out_r)
            .map(|i| {
                (0..out_c)
                    .map(|j| {
                        (i * s..i * s + k)
                            .map(|r| horiz[r][j])
                            .max()
                            .unwrap()
                            .to_string()
                    })
                    .collect()
            })
            .collect()
    };
    cells
        .iter()
        .map(|r| r.join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Track, for every cell of the current matrix, which original cell it shows (a grid
/// of coordinates, rotated with direct index formulas), and compose value replacements
/// into one map applied at the end (replacements commute with moving cells).
fn manipulate_matrix(inst: &Instance) -> String {
    let m = matrix(inst);
    let mut pos: Vec<Vec<(usize, usize)>> = (0..m.len())
        .map(|r| (0..m[0].len()).map(|c| (r, c)).collect())
        .collect();
    let mut value_map: std::collections::BTreeMap<i64, i64> = Default::default();
    for op in inst.metadata["operations"].as_array().unwrap() {
        let (h, w) = (pos.len(), pos[0].len());
        let idx = || op["index"].as_u64().unwrap() as usize - 1;
        pos = match op["op"].as_str().unwrap() {
            "rotate" => match op["degrees"].as_u64().unwrap() {
                90 => (0..w)
                    .map(|i| (0..h).map(|j| pos[h - 1 - j][i]).collect())
                    .collect(),
                180 => (0..h)
                    .map(|i| (0..w).map(|j| pos[h - 1 - i][w - 1 - j]).collect())
                    .collect(),
                270 => (0..w)
                    .map(|i| (0..h).map(|j| pos[j][w - 1 - i]).collect())
                    .collect(),
                d => panic!("angle {d}"),
            },
            "transpose" => (0..w)
                .map(|i| (0..h).map(|j| pos[j][i]).collect())
                .collect(),
            "mirror" if op["axis"] == "left_right" => (0..h)
                .map(|i| (0..w).map(|j| pos[i][w - 1 - j]).collect())
                .collect(),
            "mirror" => (0..h).map(|i| pos[h - 1 - i].clone()).collect(),
            "remove_row" => {
                let k = idx();
                (0..h).filter(|&i| i != k).map(|i| pos[i].clone()).collect()
            }
            "remove_col" => {
                let k = idx();
                pos.iter()
                    .map(|r| (0..w).filter(|&j| j != k).map(|j| r[j]).collect())
                    .collect()
            }
            "crop" => {
                let rr = &op["rows"];
                let cc = &op["cols"];
                let (r0, r1) = (
                    rr[0].as_u64().unwrap() as usize,
                    rr[1].as_u64().unwrap() as usize,
                );
                let (c0, c1) = (
                    cc[0].as_u64().unwrap() as usize,
                    cc[1].as_u64().unwrap() as usize,
                );
                (r0 - 1..r1)
                    .map(|i| (c0 - 1..c1).map(|j| pos[i][j]).collect())
                    .collect()
            }
            "replace" => {
                let (from, to) = (op["from"].as_i64().unwrap(), op["to"].as_i64().unwrap());
                // Compose: every original value currently showing `from` now shows `to`.
                let keys: Vec<i64> = m.iter().flatten().copied().collect();
                for v in keys {
                    let cur = *value_map.get(&v).unwrap_or(&v);
                    if cur == from {
                        value_map.insert(v, to);
                    }
                }
                pos
            }
            o => panic!("unknown op {o}"),
        };
    }
    pos.iter()
        .map(|r| {
            r.iter()
                .map(|&(i, j)| {
                    let v = m[i][j];
                    value_map.get(&v).unwrap_or(&v).to_string()
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const NEW: [&str; 5] = [
    "letter_jumble",
    "palindrome_generation",
    "group_anagrams",
    "pool_matrix",
    "manipulate_matrix",
];

/// The re-solvers' answers, canonicalised, equal the canonicalised gold: the text
/// itself for the unique-answer families, the sorted half of a palindrome, the sorted
/// partition of the anagram groups.
#[test]
fn new_algorithmic_resolvers_match_the_gold() {
    for name in NEW {
        let f = families::get(name).unwrap();
        for level in Level::all() {
            for i in 0..40 {
                let x = families::generate(f, level, 17, i);
                let (mine, canon_mine, canon_gold) = match name {
                    "letter_jumble" => {
                        let a = letter_jumble(&x);
                        (a.clone(), a, x.answer.clone())
                    }
                    "palindrome_generation" => {
                        let a = palindrome_generation(&x);
                        (a.clone(), palindrome_canon(&a), palindrome_canon(&x.answer))
                    }
                    "group_anagrams" => {
                        let a = group_anagrams(&x);
                        let (cm, cg) = (groups_canon(&a), groups_canon(&x.answer));
                        (a, format!("{cm:?}"), format!("{cg:?}"))
                    }
                    "pool_matrix" => {
                        let a = pool_matrix(&x);
                        (a.clone(), a, x.answer.clone())
                    }
                    _ => {
                        let a = manipulate_matrix(&x);
                        (a.clone(), a, x.answer.clone())
                    }
                };
                assert_eq!(canon_mine, canon_gold, "{}", x.id);
                assert_eq!(f.verify(&x, &mine), 1.0, "{}: {mine:?}", x.id);
            }
        }
    }
}

#[test]
fn new_algorithmic_corrupted_metadata_scores_zero() {
    for name in NEW {
        let fam = families::get(name).unwrap();
        for level in Level::all() {
            let good = families::generate(fam, level, 3, 9);
            for bad in [
                json!(null),
                json!({}),
                json!({"words": [1, 2], "letters": "ab", "jumbled": null, "matrix": [[1, 2], [3]],
                       "kernel": 0, "stride": 0, "mode": "median", "operations": 7}),
                json!({"matrix": [[1]], "kernel": 5, "stride": 1, "mode": "max"}),
            ] {
                let mut b = good.clone();
                b.metadata = bad.clone();
                b.answer = String::new();
                assert_eq!(fam.verify(&b, &good.answer), 0.0, "{name} with {bad}");
            }
        }
    }
}

#[test]
fn letter_families_fold_ascii_case_only() {
    let i = inst(
        "letter_jumble",
        json!({"jumbled": ["arzeb", "ekit"], "words": ["zebra", "kite"]}),
        "zebra kite",
    );
    assert_eq!(verify("letter_jumble", &i, "ZEBRA, Kite"), 1.0);
    assert_eq!(verify("letter_jumble", &i, "[zebra kite]"), 1.0);
    for bad in [
        "zebra \u{212a}ite",
        "zebra",
        "zebra kite kite",
        "kite zebra",
        "zebra kite.",
        "zebr\u{430} kite",
    ] {
        assert_eq!(verify("letter_jumble", &i, bad), 0.0, "{bad}");
    }
    let p = inst(
        "palindrome_generation",
        json!({"letters": ["k", "a", "k"]}),
        "kak",
    );
    assert_eq!(verify("palindrome_generation", &p, "KAK"), 1.0);
    for bad in ["\u{212a}a\u{212a}", "kk a", "akk", "kakk", "k a k", "kak!"] {
        assert_eq!(verify("palindrome_generation", &p, bad), 0.0, "{bad}");
    }
    let g = inst(
        "group_anagrams",
        json!({"words": ["kit", "tik", "abc"]}),
        "kit tik\nabc",
    );
    assert_eq!(verify("group_anagrams", &g, "TIK KIT\nabc"), 1.0);
    assert_eq!(verify("group_anagrams", &g, "\u{212a}it tik\nabc"), 0.0);
}

#[test]
fn palindromes_and_pooling_accept_every_valid_form() {
    let p = inst(
        "palindrome_generation",
        json!({"letters": ["a", "b", "a", "b", "c"]}),
        "abcba",
    );
    for ok in ["abcba", "bacab", " BACAB "] {
        assert_eq!(verify("palindrome_generation", &p, ok), 1.0, "{ok}");
    }
    for bad in ["abcab", "abba", "abcbaa", "ab cba"] {
        assert_eq!(verify("palindrome_generation", &p, bad), 0.0, "{bad}");
    }
    let m = inst(
        "pool_matrix",
        json!({"matrix": [[1, 2, 3, 4], [5, 6, 7, 9], [0, 0, 1, 1], [0, 1, 1, 1]],
               "kernel": 2, "stride": 2, "mode": "average"}),
        "3.5 5.75\n0.25 1",
    );
    for ok in [
        "3.5 5.75\n0.25 1",
        "3.50, 5.750\n.25, 1.0",
        "[[3.5, 5.75], [0.25, 1]]",
    ] {
        assert_eq!(verify("pool_matrix", &m, ok), 1.0, "{ok}");
    }
    for bad in [
        "3.5 5.8\n0.25 1",
        "3.5 5.75\n0.3 1",
        "7/2 23/4\n1/4 1",
        "3.5 5.75 0.25 1",
    ] {
        assert_eq!(verify("pool_matrix", &m, bad), 0.0, "{bad}");
    }
}
