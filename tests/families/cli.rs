//! `hrl tasks score` on bad input: every malformed line — invalid JSON, invalid UTF-8,
//! a level outside 1..=5 — is reported with its line number and skipped, and every
//! good line around it is still scored.

use assert_cmd::Command;
use serde_json::Value;

fn hrl() -> Command {
    Command::cargo_bin("hrl").unwrap()
}

/// Two instances of a family as JSON objects carrying a correct tagged response.
fn answered(family: &str) -> Vec<serde_json::Map<String, Value>> {
    let out = hrl()
        .args([
            "tasks", "gen", family, "--n", "3", "--seed", "4", "--level", "2",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let mut m: serde_json::Map<String, Value> = serde_json::from_str(l).unwrap();
            let gold = m["answer"].as_str().unwrap().to_string();
            m.insert("response".into(), format!("<answer>{gold}</answer>").into());
            m
        })
        .collect()
}

#[test]
fn score_reports_and_skips_bad_lines_and_scores_the_rest() {
    let good = answered("gcd");
    let line = |m: &serde_json::Map<String, Value>| serde_json::to_vec(m).unwrap();
    let mut level9 = good[2].clone();
    level9.insert("level".into(), 9.into());
    let mut level0 = good[2].clone();
    level0.insert("level".into(), 0.into());
    let mut input = Vec::new();
    input.extend(line(&good[0]));
    input.extend(b"\n\xff\n"); // line 2: one byte that is not UTF-8
    input.extend(line(&good[1]));
    input.extend(b"\n");
    input.extend(line(&level9)); // line 4
    input.extend(b"\n");
    input.extend(b"{\"truncated\": \n"); // line 5
    input.extend(line(&level0)); // line 6
    input.extend(b"\nok \xc3\x28 done\n"); // line 7: a broken two-byte sequence
    input.extend(line(&good[2])); // line 8
    input.extend(b"\n");
    let out = hrl()
        .args(["tasks", "score", "-"])
        .write_stdin(input)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let scored: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = scored.iter().map(|v| v["id"].as_str().unwrap()).collect();
    let want: Vec<&str> = good.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, want, "{stderr}");
    assert!(scored.iter().all(|v| v["score"] == 1.0));
    for (n, what) in [
        (2, "invalid UTF-8 at byte 0"),
        (4, "level 9 is out of range"),
        (5, "invalid JSON"),
        (6, "level 0 is out of range"),
        (7, "invalid UTF-8 at byte 3"),
    ] {
        let needle = format!("<stdin>:{n}: skipped: ");
        let at = stderr
            .lines()
            .find(|l| l.contains(&needle))
            .unwrap_or_else(|| panic!("line {n} not reported:\n{stderr}"));
        assert!(at.contains(what), "line {n}: {at}");
    }
    assert!(
        stderr.contains("scored 3 lines") && stderr.contains("skipped 5 malformed"),
        "{stderr}"
    );
}

#[test]
fn a_file_of_only_bad_lines_is_an_input_error() {
    let out = hrl()
        .args(["tasks", "score", "-"])
        .write_stdin(b"\xff\xfe\n\x80\n".to_vec())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("<stdin>:1: skipped: invalid UTF-8"),
        "{stderr}"
    );
    assert!(
        stderr.contains("<stdin>:2: skipped: invalid UTF-8"),
        "{stderr}"
    );
}
