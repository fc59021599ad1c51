//! LiveCodeBench module: loader (every field checked against Python's own decoding),
//! release tags, date windows, splits (counts recomputed here from the raw rows),
//! hostile rows, the pickle reader, pass@k against brute-force enumeration, grader
//! semantics, and `hrl lcb` end to end. Grading uses the real isolated sandbox.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use assert_cmd::Command as Cmd;
use harness_rl::lcb::grader::parse_report;
use harness_rl::lcb::loader::{self, LoadOptions, decode_private_tests};
use harness_rl::lcb::pickle::{PickleError, unpickle_string};
use harness_rl::lcb::split::{self, SplitSpec};
use harness_rl::lcb::{
    ContestDate, DateBound, DateWindow, GradeConfig, Grader, LcbError, Problem, ReleaseTag,
    Semantics, Source, TestCase, TestCode, TestType, TimeoutClock,
};
use harness_rl::sandbox::SandboxConfig;
use harness_rl::stats::pass_at_k;
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/lcb")
}

fn file_path(n: u32) -> PathBuf {
    fixtures().join(if n == 1 {
        "test.jsonl".to_string()
    } else {
        format!("test{n}.jsonl")
    })
}

/// Rows of fixture file `n` decoded by Python's own json/base64/zlib/pickle.
fn python_rows(n: u32) -> Vec<Value> {
    let script = r#"
import base64, json, pickle, sys, zlib
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    p = r["private_test_cases"]
    try:
        t = json.loads(p)
    except ValueError:
        t = json.loads(pickle.loads(zlib.decompress(base64.b64decode(p))))
    r["private_test_cases"] = t
    r["public_test_cases"] = json.loads(r["public_test_cases"])
    r["metadata"] = json.loads(r["metadata"])
    print(json.dumps(r))
"#;
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(file_path(n))
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn all_python_rows() -> Vec<(u32, Value)> {
    (1..=6)
        .flat_map(|n| python_rows(n).into_iter().map(move |r| (n, r)))
        .collect()
}

fn load(tag: &str) -> harness_rl::lcb::Dataset {
    let opts = LoadOptions {
        release: tag.parse().unwrap(),
        ..LoadOptions::default()
    };
    loader::load_dir(&fixtures(), &opts).unwrap()
}

fn tests_json(t: &[TestCase]) -> Value {
    serde_json::to_value(t).unwrap()
}

#[test]
fn loader_decodes_every_field_like_python() {
    let ds = load("release_latest");
    let rows = all_python_rows();
    assert!(rows.len() >= 24);
    assert_eq!(ds.problems.len(), rows.len());
    assert!(ds.bad_rows.is_empty());
    for (p, (file, r)) in ds.problems.iter().zip(&rows) {
        assert_eq!(p.source.file, *file);
        assert_eq!(p.question_title, r["question_title"].as_str().unwrap());
        assert_eq!(p.question_content, r["question_content"].as_str().unwrap());
        assert_eq!(p.platform.as_str(), r["platform"].as_str().unwrap());
        assert_eq!(p.question_id, r["question_id"].as_str().unwrap());
        assert_eq!(p.contest_id, r["contest_id"].as_str().unwrap());
        assert_eq!(
            p.contest_date.to_string(),
            r["contest_date"].as_str().unwrap()
        );
        assert_eq!(p.starter_code, r["starter_code"].as_str().unwrap());
        assert_eq!(p.difficulty.as_str(), r["difficulty"].as_str().unwrap());
        assert_eq!(tests_json(&p.public_test_cases), r["public_test_cases"]);
        assert_eq!(tests_json(&p.private_test_cases), r["private_test_cases"]);
        assert_eq!(p.private_test_count, p.private_test_cases.len());
        assert_eq!(Value::Object(p.metadata.clone()), r["metadata"]);
        assert_eq!(p.func_name(), r["metadata"]["func_name"].as_str());
        let functional = r["public_test_cases"][0]["testtype"] == "functional";
        assert_eq!(p.is_functional(), functional);
        assert_eq!(!p.starter_code.is_empty(), functional);
    }
    // The fixtures cover the three platforms, the three difficulties, both test types
    // and both encodings of private tests.
    for key in ["leetcode", "codeforces", "atcoder"] {
        assert!(ds.problems.iter().any(|p| p.platform.as_str() == key));
    }
    for key in ["easy", "medium", "hard"] {
        assert!(ds.problems.iter().any(|p| p.difficulty.as_str() == key));
    }
    let raw = std::fs::read_to_string(file_path(1)).unwrap();
    assert!(
        raw.contains("\"private_test_cases\": \"[{"),
        "a plain-JSON private row"
    );
    assert!(
        raw.contains("\"private_test_cases\": \"eJ"),
        "a zlib/base64 row"
    );
}

#[test]
fn decoding_does_not_depend_on_the_thread_count() {
    let with = |threads: usize, dir: &Path| {
        let opts = LoadOptions {
            threads,
            skip_bad: true,
            max_decompressed_bytes: 8 << 20,
            ..LoadOptions::default()
        };
        let ds = loader::load_dir(dir, &opts).unwrap();
        (ds.problems, ds.bad_rows)
    };
    for dir in [fixtures(), fixtures().join("hostile")] {
        let one = with(1, &dir);
        assert_eq!(one, with(3, &dir));
        assert_eq!(one, with(0, &dir));
    }
}

#[test]
fn fixtures_regenerate_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let st = Command::new("python3")
        .arg(fixtures().join("make_fixtures.py"))
        .arg("--out")
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let mut files: Vec<String> = (1..=6)
        .map(|n| {
            file_path(n)
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    files.extend(
        [
            "solutions/reference.jsonl",
            "solutions/wrong.jsonl",
            "hostile/test.jsonl",
        ]
        .map(String::from),
    );
    for f in files {
        let want = std::fs::read(fixtures().join(&f)).unwrap();
        let got = std::fs::read(tmp.path().join(&f)).unwrap();
        assert!(want == got, "{f} differs from its generator's output");
    }
}

#[test]
fn release_tags_select_files() {
    let counts: Vec<usize> = (1..=6).map(|n| python_rows(n).len()).collect();
    let sum = |a: usize, b: usize| counts[a - 1..b].iter().sum::<usize>();
    assert_eq!(load("release_v1").problems.len(), sum(1, 1));
    assert_eq!(load("release_v2").problems.len(), sum(1, 2));
    assert_eq!(load("release_v5").problems.len(), sum(1, 5));
    assert_eq!(load("release_latest").problems.len(), sum(1, 6));
    assert_eq!(load("release_v6").problems.len(), sum(1, 6));
    let rel = load("release_latest").release_counts();
    assert_eq!(rel.len(), 6);
    for (n, (tag, count)) in rel.iter().enumerate() {
        assert_eq!(tag, &format!("release_v{}", n + 1));
        assert_eq!(*count, sum(1, n + 1));
    }
    assert!(load("v2_v4").release_counts().is_empty());
    assert_eq!(load("v3").problems.len(), sum(3, 3));
    assert_eq!(load("v2_v4").problems.len(), sum(2, 4));
    let v3 = load("v3");
    assert!(v3.problems.iter().all(|p| p.source.file == 3));
    assert_eq!(v3.files.len(), 1);
    assert_eq!(
        "v2_v4".parse::<ReleaseTag>().unwrap(),
        ReleaseTag::Range(2, 4)
    );
    for bad in [
        "v0",
        "release_v",
        "v4_v2",
        "latest",
        "release_vx",
        "v1_v2_v3",
        "",
    ] {
        assert!(
            matches!(bad.parse::<ReleaseTag>(), Err(LcbError::BadTag(_))),
            "{bad}"
        );
    }
    let opts = LoadOptions {
        release: ReleaseTag::Release(7),
        ..LoadOptions::default()
    };
    match loader::load_dir(&fixtures(), &opts) {
        Err(LcbError::MissingFile { file, .. }) => assert_eq!(file, "test7.jsonl"),
        other => panic!("expected MissingFile, got {other:?}"),
    }
}

#[test]
fn later_files_are_discovered() {
    let dir = tempfile::tempdir().unwrap();
    for n in 1..=6u32 {
        std::fs::copy(
            file_path(n),
            dir.path().join(file_path(n).file_name().unwrap()),
        )
        .unwrap();
    }
    // A test7.jsonl holding one problem of test6 under a new id.
    let row = std::fs::read_to_string(file_path(6)).unwrap();
    let mut v: Value = serde_json::from_str(row.lines().next().unwrap()).unwrap();
    v["question_id"] = "new-in-v7".into();
    std::fs::write(dir.path().join("test7.jsonl"), v.to_string() + "\n").unwrap();
    std::fs::write(dir.path().join("test07.jsonl"), "ignored").unwrap();
    assert_eq!(
        loader::discover(dir.path()).unwrap(),
        vec![1, 2, 3, 4, 5, 6, 7]
    );
    let latest = loader::load_dir(dir.path(), &LoadOptions::default()).unwrap();
    assert_eq!(latest.problems.last().unwrap().question_id, "new-in-v7");
}

#[test]
fn date_windows_are_inclusive_and_by_date_not_file() {
    let rows = all_python_rows();
    let dates: Vec<String> = rows
        .iter()
        .map(|(_, r)| r["contest_date"].as_str().unwrap().to_string())
        .collect();
    let check = |from: Option<&str>, to: Option<&str>| {
        let opts = LoadOptions {
            window: DateWindow {
                from: from.map(|s| DateBound::parse(s).unwrap()),
                to: to.map(|s| DateBound::parse(s).unwrap()),
            },
            ..LoadOptions::default()
        };
        let got = loader::load_dir(&fixtures(), &opts).unwrap().problems.len();
        // Independent: ISO strings order like dates; a bare-date bound covers its day.
        let want = dates
            .iter()
            .filter(|d| from.is_none_or(|f| d.as_str() >= f))
            .filter(|d| {
                to.is_none_or(|t| {
                    if t.len() == 10 {
                        &d[..10] <= t
                    } else {
                        d.as_str() <= t
                    }
                })
            })
            .count();
        assert_eq!(got, want, "window {from:?}..{to:?}");
        got
    };
    // Bounds equal to a problem's date include it (both ends).
    assert_eq!(
        check(Some("2024-03-23T00:00:00"), Some("2024-03-23T00:00:00")),
        1
    );
    // A bare date covers the whole day: 2024-06-01T14:35 is inside `..2024-06-01`.
    assert_eq!(check(Some("2024-06-01"), Some("2024-06-01")), 1);
    assert_eq!(
        check(Some("2024-06-01T14:35:01"), Some("2024-06-01T23:59:59")),
        0
    );
    check(Some("2023-11-20"), Some("2023-12-31"));
    check(None, Some("2024-01-31"));
    check(Some("2025-01-01"), None);
    // Files overlap in dates: this window takes problems from test.jsonl and test2.jsonl.
    let opts = LoadOptions {
        window: DateWindow {
            from: Some(DateBound::parse("2023-11-20").unwrap()),
            to: Some(DateBound::parse("2023-12-31").unwrap()),
        },
        ..LoadOptions::default()
    };
    let ds = loader::load_dir(&fixtures(), &opts).unwrap();
    let files: std::collections::BTreeSet<u32> =
        ds.problems.iter().map(|p| p.source.file).collect();
    assert_eq!(files.into_iter().collect::<Vec<_>>(), vec![1, 2]);
    for bad in [
        "2024-02-30",
        "2024-13-01",
        "24-01-01",
        "2024-01-01T25:00:00",
        "2023-02-29",
        "yesterday",
    ] {
        assert!(ContestDate::parse(bad).is_err(), "{bad}");
    }
    assert!(ContestDate::parse("2024-02-29T23:59:59").is_ok());
}

/// Counts per side recomputed from Python's view of the raw rows.
fn side_counts(rows: &[&Value]) -> (usize, BTreeMap<String, usize>, BTreeMap<String, usize>) {
    let mut plat = BTreeMap::new();
    let mut diff = BTreeMap::new();
    for r in rows {
        *plat
            .entry(r["platform"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
        *diff
            .entry(r["difficulty"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
    }
    (rows.len(), plat, diff)
}

#[test]
fn v5_to_v6_split_counts() {
    let rows = all_python_rows();
    let train: Vec<&Value> = rows
        .iter()
        .filter(|(f, _)| *f <= 5)
        .map(|(_, r)| r)
        .collect();
    let last = train
        .iter()
        .map(|r| r["contest_date"].as_str().unwrap())
        .max()
        .unwrap();
    let test: Vec<&Value> = rows
        .iter()
        .filter(|(f, r)| *f == 6 && r["contest_date"].as_str().unwrap() > last)
        .map(|(_, r)| r)
        .collect();
    // Both sides populated, and test6 holds a problem dated before `last` (overlap).
    assert!(!train.is_empty() && !test.is_empty());
    assert!(
        rows.iter()
            .any(|(f, r)| *f == 6 && r["contest_date"].as_str().unwrap() <= last)
    );
    let s = split::split(&fixtures(), SplitSpec::V5ToV6, &LoadOptions::default()).unwrap();
    for (got, want) in [
        (s.train_counts(), side_counts(&train)),
        (s.test_counts(), side_counts(&test)),
    ] {
        assert_eq!(got.total, want.0);
        assert_eq!(got.by_platform, want.1);
        assert_eq!(got.by_difficulty, want.2);
    }
    let max_train = s.train.iter().map(|p| p.contest_date).max().unwrap();
    assert!(
        s.test
            .iter()
            .all(|p| p.contest_date > max_train && p.source.file == 6)
    );
}

#[test]
fn cutoff_split_counts_and_files() {
    let rows = all_python_rows();
    let cutoff = "2024-06-01";
    let train: Vec<&Value> = rows
        .iter()
        .filter(|(_, r)| &r["contest_date"].as_str().unwrap()[..10] <= cutoff)
        .map(|(_, r)| r)
        .collect();
    let test: Vec<&Value> = rows
        .iter()
        .filter(|(_, r)| &r["contest_date"].as_str().unwrap()[..10] > cutoff)
        .map(|(_, r)| r)
        .collect();
    let spec = SplitSpec::Cutoff(DateBound::parse(cutoff).unwrap());
    let s = split::split(&fixtures(), spec, &LoadOptions::default()).unwrap();
    assert_eq!(s.train_counts().by_platform, side_counts(&train).1);
    assert_eq!(s.test_counts().by_difficulty, side_counts(&test).2);
    assert_eq!(s.train.len() + s.test.len(), rows.len());
    let out = tempfile::tempdir().unwrap();
    split::write_split(&fixtures(), &s, out.path()).unwrap();
    let read_ids = |name: &str| -> Vec<String> {
        std::fs::read_to_string(out.path().join(name))
            .unwrap()
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["question_id"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    let ids = |v: &[Problem]| v.iter().map(|p| p.question_id.clone()).collect::<Vec<_>>();
    assert_eq!(read_ids("train.jsonl"), ids(&s.train));
    assert_eq!(read_ids("test.jsonl"), ids(&s.test));
    // Writing a split over its own input is refused before anything is written.
    let before = std::fs::read(file_path(1)).unwrap();
    assert!(matches!(
        split::write_split(&fixtures(), &s, &fixtures()),
        Err(LcbError::BadSplit(_))
    ));
    assert_eq!(std::fs::read(file_path(1)).unwrap(), before);
    // The written test side is itself a loadable LiveCodeBench file.
    let again = loader::load_dir(out.path(), &LoadOptions::default()).unwrap();
    assert_eq!(again.problems.len(), s.test.len());
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("split.json")).unwrap())
            .unwrap();
    assert_eq!(summary["train"]["total"], s.train.len());
}

#[test]
fn hostile_rows_are_reported_with_file_and_line() {
    let dir = fixtures().join("hostile");
    let strict = LoadOptions {
        max_decompressed_bytes: 8 << 20,
        ..LoadOptions::default()
    };
    match loader::load_dir(&dir, &strict) {
        Err(LcbError::BadRow(b)) => {
            assert_eq!(b.line, 2);
            assert!(b.file.ends_with("hostile/test.jsonl"));
            assert!(b.to_string().contains("test.jsonl:2:"), "{b}");
        }
        other => panic!("expected a bad row, got {other:?}"),
    }
    let lenient = LoadOptions {
        skip_bad: true,
        ..strict
    };
    let ds = loader::load_dir(&dir, &lenient).unwrap();
    let ids: Vec<&str> = ds.problems.iter().map(|p| p.question_id.as_str()).collect();
    assert_eq!(ids, ["hrc001_a", "ok-second"]);
    let expect = [
        (2, "EOF while parsing"),
        (3, "nor base64"),
        (4, "GLOBAL (0x63) at offset 2"),
        (5, "STACK_GLOBAL"),
        (6, "exceeds the cap of 8388608 bytes"),
        (7, "missing field `difficulty`"),
        (8, "invalid date `2024-02-30T00:00:00`"),
        (9, "unknown variant `interactive`"),
        (10, "EMPTY_LIST"),
        (11, "unknown platform `topcoder`"),
    ];
    assert_eq!(ds.bad_rows.len(), expect.len());
    for (b, (line, needle)) in ds.bad_rows.iter().zip(expect) {
        assert_eq!(b.line, line);
        assert!(b.reason.contains(needle), "line {line}: {}", b.reason);
    }
    assert_eq!(ds.files[0].bad_rows, expect.len());
}

#[test]
fn duplicate_ids_across_files_are_bad_rows() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(file_path(1), dir.path().join("test.jsonl")).unwrap();
    std::fs::copy(file_path(1), dir.path().join("test2.jsonl")).unwrap();
    match loader::load_dir(dir.path(), &LoadOptions::default()) {
        Err(LcbError::BadRow(b)) => {
            assert!(b.file.ends_with("test2.jsonl"));
            assert_eq!(b.line, 1);
            assert!(b.reason.contains("duplicate question_id"));
        }
        other => panic!("{other:?}"),
    }
}

/// `pickle.dumps(s, protocol=p)` written by Python, for every protocol 0..=5.
fn python_pickles(s: &str) -> Vec<Vec<u8>> {
    let script = "import pickle,sys\ns=sys.stdin.read()\nfor p in range(6):\n    sys.stdout.write(pickle.dumps(s, protocol=p).hex()+'\\n')";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|h| {
            (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                .collect()
        })
        .collect()
}

#[test]
fn pickle_reads_python_strings_of_every_protocol() {
    let long = "x\\y\u{e9}\u{1f600}\n".repeat(20_000); // > 64 KiB: BINUNICODE, FRAME
    for s in [
        "",
        "short [{\"input\": \"1\\n\"}]",
        "back\\slash \\u0041 \u{e9}\u{20ac}\n\r\ttabs",
        long.as_str(),
    ] {
        let pickles = python_pickles(s);
        assert_eq!(pickles.len(), 6);
        for (proto, data) in pickles.iter().enumerate() {
            assert_eq!(unpickle_string(data).as_deref(), Ok(s), "protocol {proto}");
        }
    }
}

#[test]
fn pickle_refuses_everything_but_a_string() {
    let script = r#"
import os, pickle
class E:
    def __reduce__(self):
        return (os.system, ("true",))
for obj, p in [(E(), 0), (E(), 2), (E(), 4), (1, 2), ([1], 4), (b"by", 3), (("t",), 4), ({"a": 1}, 4), (None, 2)]:
    print(pickle.dumps(obj, protocol=p).hex())
"#;
    let out = Command::new("python3")
        .args(["-c", script])
        .output()
        .unwrap();
    let hex: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let want = [
        "GLOBAL",
        "GLOBAL",
        "STACK_GLOBAL",
        "BININT1",
        "EMPTY_LIST",
        "SHORT_BINBYTES",
        "SHORT_BINUNICODE",
        "EMPTY_DICT",
        "NONE",
    ];
    assert_eq!(hex.len(), want.len());
    for (h, name) in hex.iter().zip(want) {
        let data: Vec<u8> = (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
            .collect();
        let err = unpickle_string(&data).unwrap_err();
        match (&err, name) {
            // ("t",) pickles as a string then TUPLE1: refused at the tuple opcode.
            (
                PickleError::Forbidden {
                    name: got, offset, ..
                },
                "SHORT_BINUNICODE",
            ) => {
                assert_eq!(*got, "TUPLE1");
                assert!(*offset > 2);
            }
            (
                PickleError::Forbidden {
                    name: got,
                    offset,
                    byte,
                },
                _,
            ) => {
                assert_eq!(*got, name);
                assert_eq!(data[*offset], *byte);
            }
            other => panic!("{other:?}"),
        }
        assert!(err.to_string().contains("at offset"), "{err}");
    }
    // REDUCE itself is named when it is the first refused opcode.
    let e = unpickle_string(b"\x80\x02X\x01\x00\x00\x00aR.").unwrap_err();
    assert_eq!(
        e,
        PickleError::Forbidden {
            name: "REDUCE",
            byte: b'R',
            offset: 8
        }
    );
    assert_eq!(
        unpickle_string(b"X\x05\x00\x00\x00ab"),
        Err(PickleError::Truncated(7))
    );
    assert_eq!(unpickle_string(b"\x8c\x01a"), Err(PickleError::NoStop));
    assert!(matches!(
        unpickle_string(b"\xff"),
        Err(PickleError::Unknown {
            byte: 0xff,
            offset: 0
        })
    ));
    assert!(matches!(
        unpickle_string(b"\x80\x06."),
        Err(PickleError::Protocol { protocol: 6, .. })
    ));
    assert!(matches!(
        unpickle_string(b"X\x01\x00\x00\x00\xff."),
        Err(PickleError::Utf8(0))
    ));
    assert_eq!(
        unpickle_string(b"\x8c\x01a\x8c\x01b."),
        Err(PickleError::Stack(2))
    );
}

#[test]
fn private_tests_zlib_cap() {
    use base64::Engine;
    use std::io::Write;
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&vec![b'a'; 4 << 20]).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(enc.finish().unwrap());
    let err = decode_private_tests(&b64, 1 << 20).unwrap_err();
    assert!(err.to_string().contains("exceeds the cap"), "{err}");
    // Under a larger cap the same data decompresses and then fails as a pickle.
    let err = decode_private_tests(&b64, 8 << 20).unwrap_err();
    assert!(err.to_string().contains("pickle"), "{err}");
    // Exactly `cap` bytes pass the cap; one byte fewer allowed does not.
    let err = decode_private_tests(&b64, 4 << 20).unwrap_err();
    assert!(err.to_string().contains("pickle"), "{err}");
    let err = decode_private_tests(&b64, (4 << 20) - 1).unwrap_err();
    assert!(err.to_string().contains("exceeds the cap"), "{err}");
    // A truncated stream is a zlib error, not a hang or a partial result.
    let raw = base64::engine::general_purpose::STANDARD
        .decode(&b64)
        .unwrap();
    let cut = base64::engine::general_purpose::STANDARD.encode(&raw[..raw.len() / 2]);
    let err = decode_private_tests(&cut, 8 << 20).unwrap_err();
    assert!(err.to_string().contains("zlib"), "{err}");
    // A real pickled test list round-trips through the same path.
    let tests = r#"[{"input": "1\n", "output": "2", "testtype": "stdin"}]"#;
    let mut pk = vec![0x80, 4, 0x8c, tests.len() as u8];
    pk.extend_from_slice(tests.as_bytes());
    pk.extend_from_slice(b"\x94.");
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&pk).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(enc.finish().unwrap());
    let got = decode_private_tests(&b64, 1 << 20).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].input, "1\n");
}

/// Exact pass@k by enumerating every k-subset of n samples (c correct ones first).
fn brute_pass_at_k(n: u32, c: u32, k: u32) -> f64 {
    let (mut hit, mut total) = (0u64, 0u64);
    for mask in 0u32..(1 << n) {
        if mask.count_ones() != k {
            continue;
        }
        total += 1;
        if mask & ((1u32 << c) - 1) != 0 {
            hit += 1;
        }
    }
    hit as f64 / total as f64
}

#[test]
fn pass_at_k_matches_enumeration() {
    for n in 1..=12u32 {
        for c in 0..=n {
            for k in 1..=n {
                let got = pass_at_k(n as u64, c as u64, k as u64).unwrap();
                let want = brute_pass_at_k(n, c, k);
                assert!(
                    (got - want).abs() < 1e-12,
                    "n={n} c={c} k={k}: {got} vs {want}"
                );
            }
            assert_eq!(
                pass_at_k(n as u64, c as u64, 1).unwrap(),
                c as f64 / n as f64
            );
        }
        assert_eq!(pass_at_k(n as u64, 0, n as u64 + 1), None);
    }
    assert_eq!(pass_at_k(3, 4, 1), None);
    assert_eq!(pass_at_k(3, 1, 0), None);
}

// ---------------------------------------------------------------- grader semantics

fn problem(tests: Vec<(&str, &str)>, func: Option<&str>) -> Problem {
    let testtype = if func.is_some() {
        TestType::Functional
    } else {
        TestType::Stdin
    };
    let mut metadata = serde_json::Map::new();
    if let Some(f) = func {
        metadata.insert("func_name".into(), f.into());
    }
    let cases: Vec<TestCase> = tests
        .into_iter()
        .map(|(i, o)| TestCase {
            input: i.into(),
            output: o.into(),
            testtype,
        })
        .collect();
    Problem {
        question_title: "t".into(),
        question_content: "q".into(),
        platform: harness_rl::lcb::Platform::Atcoder,
        question_id: "synthetic".into(),
        contest_id: "c".into(),
        contest_date: ContestDate::parse("2024-01-01").unwrap(),
        starter_code: String::new(),
        difficulty: harness_rl::lcb::Difficulty::Easy,
        public_test_cases: cases[..1].to_vec(),
        private_test_count: cases.len() - 1,
        private_test_cases: cases[1..].to_vec(),
        metadata,
        source: Source { file: 1, line: 1 },
    }
}

/// A judge-semantics grader whose per-test limit is CPU time (6 s unless the test sets
/// another): on a loaded machine waiting for a core does not turn a correct solution into
/// a time-limit failure, and a spinning one still hits the limit.
fn grader_with(f: impl FnOnce(&mut GradeConfig)) -> Grader {
    let mut cfg = GradeConfig {
        timeout: Duration::from_secs(6),
        clock: TimeoutClock::Cpu,
        ..GradeConfig::default()
    };
    f(&mut cfg);
    Grader::new(SandboxConfig::default(), cfg).expect("the isolated sandbox is available")
}

/// A reference-semantics grader (LiveCodeBench's runner: the per-test limit is wall time,
/// so correct solutions get a generous one).
fn reference_grader(f: impl FnOnce(&mut GradeConfig)) -> Grader {
    grader_with(|c| {
        c.semantics = Semantics::Reference;
        c.clock = TimeoutClock::Wall;
        f(c)
    })
}

fn codes(g: &Grader, p: &Problem, code: &str) -> Vec<i32> {
    g.grade(p, code, 0)
        .unwrap()
        .results
        .iter()
        .map(|r| r.code.code())
        .collect()
}

#[test]
fn stdin_comparison_semantics() {
    let g = grader_with(|_| {});
    let echo = "import sys\nsys.stdout.write(sys.stdin.read())";
    let cases: &[(&str, &str, i32)] = &[
        ("1.0 2\n", "1 2.00", 1), // tokens equal as exact decimals
        ("  7 \n\n", "7", 1),     // whole output and each line stripped
        ("a b\nc\n", "a b\nc", 1),
        ("1  2", "1 2", 1),        // whitespace-split tokens
        ("1e2", "100", 1),         // Decimal("1e2") == Decimal("100")
        ("0.1", "0.10000001", -2), // no float tolerance by default
        ("a  b", "a b", -2),       // non-numeric tokens: exact line only
        ("ABC", "abc", -2),
        ("1\n2", "1", -2), // line counts must match
        ("1 2 3", "1 2", -2),
        ("nan", "nan", 1), // identical lines are equal
    ];
    for (out, want, code) in cases {
        let p = problem(vec![(out, want)], None);
        assert_eq!(codes(&g, &p, echo), vec![*code], "{out:?} vs {want:?}");
    }
    let tol = grader_with(|c| c.float_tolerance = Some(1e-6));
    let p = problem(vec![("0.1", "0.10000001")], None);
    assert_eq!(codes(&tol, &p, echo), vec![1]);
    let p = problem(vec![("0.2", "0.1")], None);
    assert_eq!(codes(&tol, &p, echo), vec![-2]);
}

#[test]
fn stdin_programs_run_as_on_a_judge() {
    let g = grader_with(|_| {});
    let p = problem(vec![("3 4\n", "7"), ("10 -2\n", "8")], None);
    for code in [
        "a, b = map(int, input().split())\nprint(a + b)",
        "import sys\na, b = map(int, sys.stdin.buffer.read().split())\nsys.stdout.buffer.write(b'%d\\n' % (a + b))",
        "a, b = map(int, open(0).read().split())\nprint(a + b)\nexit()",
        "import os\na, b = map(int, input().split())\nos.write(1, str(a + b).encode())\nos._exit(0)",
        "def main():\n    global t\n    t = sum(map(int, input().split()))\n    print(t)\nif __name__ == '__main__':\n    main()",
        "import sys\nprint(sum(map(int, input().split())))\nsys.exit(0)",
    ] {
        assert_eq!(codes(&g, &p, code), vec![1, 1], "{code}");
    }
}

#[test]
fn functional_semantics() {
    let g = grader_with(|_| {});
    let p = problem(
        vec![("[1, 2]\n3", "[4, 5]"), ("[]\n0", "[]")],
        Some("addAll"),
    );
    // A tuple is compared as a list; `List` comes from the standard import header.
    let ok = "class Solution:\n    def addAll(self, xs: List[int], k: int) -> List[int]:\n        return tuple(x + k for x in xs)";
    assert_eq!(codes(&g, &p, ok), vec![1, 1]);
    let as_set =
        "class Solution:\n    def addAll(self, xs, k):\n        return {x + k for x in xs}";
    assert_eq!(codes(&g, &p, as_set), vec![-2]);
    let wrong_second =
        "class Solution:\n    def addAll(self, xs, k):\n        return [x + k for x in xs] or [0]";
    assert_eq!(codes(&g, &p, wrong_second), vec![1, -2]);
    let response = format!("Sure.\n```python\n{ok}\n```\n");
    assert!(g.grade_response(&p, &response, 0).unwrap().passed);
    assert!(!g.grade_response(&p, "no code at all", 0).unwrap().passed);
    let raises = "class Solution:\n    def addAll(self, xs, k):\n        return xs[10]";
    let r = g.grade(&p, raises, 0).unwrap();
    assert_eq!(r.results[0].code, TestCode::RuntimeError);
    assert!(
        r.results[0].message.contains("IndexError"),
        "{}",
        r.results[0].message
    );
    // Numbers compare as Python ==: 2 == 2.0, True == 1.
    let p = problem(vec![("1", "2.0"), ("0", "true")], Some("f"));
    let loose = "class Solution:\n    def f(self, x):\n        return 2 if x else 1";
    assert_eq!(codes(&g, &p, loose), vec![1, 1]);
    // A module-level function when there is no class Solution.
    let p = problem(vec![("\"ab\"", "\"ba\"")], Some("rev"));
    assert_eq!(codes(&g, &p, "def rev(s):\n    return s[::-1]"), vec![1]);
}

#[test]
fn failures_timeouts_and_stop_at_first_failure() {
    let g = grader_with(|c| c.timeout = Duration::from_millis(1500));
    let p = problem(vec![("1", "1"), ("2", "2"), ("3", "3"), ("4", "4")], None);
    let spin_on_2 = "x = input()\nif x == '2':\n    while True: pass\nprint(x)";
    let r = g.grade(&p, spin_on_2, 0).unwrap();
    assert_eq!(
        r.results.iter().map(|t| t.code.code()).collect::<Vec<_>>(),
        vec![1, -3]
    );
    assert!(!r.passed);
    assert_eq!(r.n_tests, 4);
    // A program that catches the timeout signal cannot escape the per-test kill.
    let stubborn = "import signal\nfor s in (signal.SIGALRM, signal.SIGTERM, signal.SIGINT):\n    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    try:\n        pass\n    except BaseException:\n        pass";
    assert_eq!(codes(&g, &p, stubborn), vec![-3]);
    assert_eq!(
        codes(&g, &p, "x = input()\nprint(1 // (int(x) - 3))"),
        vec![-2]
    );
    assert_eq!(
        codes(&g, &p, "x = input()\nprint(x if x != '3' else 1 // 0)"),
        vec![1, 1, -4]
    );
    let r = g.grade(&p, "print(", 0).unwrap();
    assert_eq!(r.results.len(), 1);
    assert_eq!(r.results[0].code, TestCode::RuntimeError);
    assert!(r.results[0].message.starts_with("Compilation Error"));
    assert_eq!(
        codes(&g, &p, "import os\nos.kill(os.getpid(), 9)"),
        vec![-4]
    );
    // sys.exit with any status after printing is not an error (as LiveCodeBench).
    assert_eq!(
        codes(&g, &p, "import sys\nprint(input())\nsys.exit(3)"),
        vec![1, 1, 1, 1]
    );
}

#[test]
fn hostile_solutions_fail_cleanly() {
    let g = grader_with(|c| c.memory_mb = 512);
    let p = problem(vec![("1", "1"), ("2", "2")], None);
    // Memory bomb: MemoryError (address-space limit) or a kill; a runtime error either way.
    assert_eq!(
        codes(&g, &p, "x = bytearray(8 << 30)\nprint(input())"),
        vec![-4]
    );
    // Killing the driver ends the run early: the test in progress is a runtime error.
    let r = g
        .grade(
            &p,
            "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
            0,
        )
        .unwrap();
    assert_eq!(r.results.len(), 1);
    assert_eq!(r.results[0].code, TestCode::RuntimeError);
    // A fork bomb is contained by the sandbox and the solution fails.
    let bomb =
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass";
    let r = g.grade(&p, bomb, 0).unwrap();
    assert!(!r.passed);
    // The grader still works afterwards.
    assert_eq!(codes(&g, &p, "print(input())"), vec![1, 1]);
}

#[test]
fn cpu_clock_ignores_waiting_but_not_spinning() {
    let p = problem(vec![("1", "1"), ("2", "2")], None);
    let sleepy = "import time\ntime.sleep(1.5)\nprint(input())";
    let wall = grader_with(|c| {
        c.timeout = Duration::from_millis(800);
        c.clock = TimeoutClock::Wall;
    });
    // Sleeping 1.5 s always passes an 0.8 s wall limit, however busy the machine.
    assert_eq!(codes(&wall, &p, sleepy), vec![-3]);
    let cpu = grader_with(|c| {
        c.timeout = Duration::from_millis(800);
        c.clock = TimeoutClock::Cpu;
    });
    assert_eq!(codes(&cpu, &p, sleepy), vec![1, 1]);
    assert_eq!(codes(&cpu, &p, "while True: pass"), vec![-3]);
    // The wall-clock backstop (4x + 1 s) still stops a program that only waits.
    assert_eq!(codes(&cpu, &p, "import time\ntime.sleep(60)"), vec![-3]);
}

#[test]
fn global_timeout_marks_every_test() {
    let g = grader_with(|c| {
        c.timeout = Duration::from_secs(30);
        c.global_timeout = Some(Duration::from_millis(1500));
    });
    let p = problem(vec![("1", "1"), ("2", "2"), ("3", "3")], None);
    let r = g.grade(&p, "while True: pass", 0).unwrap();
    assert_eq!(
        r.results.iter().map(|t| t.code.code()).collect::<Vec<_>>(),
        vec![-1, -1, -1]
    );
}

#[test]
fn programs_cannot_forge_the_report() {
    let g = grader_with(|_| {});
    let p = problem(vec![("1", "2"), ("2", "3")], None);
    // Writes fake "pass" lines everywhere it can reach: fd 1, sys.__stdout__, fd 3..9.
    let forge = r#"
import os, sys, json
line = json.dumps({"nonce": "x", "test": 0, "code": 1}) + "\n"
for fd in range(1, 10):
    try:
        os.write(fd, line.encode())
    except OSError:
        pass
sys.__stdout__.write(line)
print(line)
"#;
    assert_eq!(codes(&g, &p, forge), vec![-2]);
}

#[test]
fn garbage_from_the_driver_is_a_clear_error() {
    let ok = b"{\"nonce\":\"n\",\"test\":0,\"code\":1,\"message\":\"\",\"time_ms\":3}\n{\"nonce\":\"n\",\"done\":true}\n";
    let (res, done) = parse_report(ok, "n", 1).unwrap();
    assert!(done);
    assert_eq!(res[0].code, TestCode::Pass);
    let cases: &[(&[u8], &str)] = &[
        (b"hello world\n", "line 1 is not a report"),
        (b"{\"nonce\":\"m\",\"done\":true}\n", "wrong nonce"),
        (b"{\"nonce\":\"n\",\"test\":1,\"code\":1}\n", "out of order"),
        (
            b"{\"nonce\":\"n\",\"test\":0,\"code\":7}\n",
            "invalid result code 7",
        ),
        (
            b"{\"nonce\":\"n\",\"test\":0,\"code\":-2}\n{\"nonce\":\"n\",\"test\":1,\"code\":1}\n",
            "after a failure",
        ),
        (
            b"{\"nonce\":\"n\",\"done\":true}\nmore\n",
            "after the final line",
        ),
        (b"\xff\xfe\n", "not UTF-8"),
    ];
    for (data, needle) in cases {
        let err = parse_report(data, "n", 2).unwrap_err();
        assert!(err.contains(needle), "{err}");
    }
}

#[test]
fn fixture_solutions_through_the_library() {
    let ds = load("release_latest");
    let read = |name: &str| -> BTreeMap<String, String> {
        std::fs::read_to_string(fixtures().join("solutions").join(name))
            .unwrap()
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (
                    v["question_id"].as_str().unwrap().to_string(),
                    v["code"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let (good, bad) = (read("reference.jsonl"), read("wrong.jsonl"));
    assert_eq!(good.len(), ds.problems.len());
    assert_eq!(bad.len(), ds.problems.len());
    let g = grader_with(|_| {});
    let items: Vec<(&Problem, &str, usize)> = ds
        .problems
        .iter()
        .flat_map(|p| {
            [
                (p, good[&p.question_id].as_str(), 0),
                (p, bad[&p.question_id].as_str(), 1),
            ]
        })
        .collect();
    let results = g.grade_many(&items, &|_| {});
    let mut seen_codes = std::collections::BTreeSet::new();
    for (r, (p, _, sample)) in results.into_iter().zip(&items) {
        let r = r.unwrap();
        assert_eq!(r.question_id, p.question_id);
        if *sample == 0 {
            assert!(
                r.passed,
                "reference of {} failed: {:?}",
                p.question_id,
                r.failure()
            );
            assert_eq!(
                r.results.len(),
                p.public_test_cases.len() + p.private_test_cases.len()
            );
        } else {
            let f = r
                .failure()
                .unwrap_or_else(|| panic!("wrong solution of {} passed", p.question_id));
            seen_codes.insert(f.code.code());
        }
    }
    // The wrong solutions exercise wrong answers, time limits and runtime/compile errors.
    assert_eq!(seen_codes.into_iter().collect::<Vec<_>>(), vec![-4, -3, -2]);
}

// ------------------------------------------- fidelity to LiveCodeBench's evaluation

/// Both semantics must give these codes (the reference runner's verdicts, measured with
/// scripts/lcb_differential.sh).
fn both_semantics() -> [(&'static str, Grader); 2] {
    [
        ("judge", grader_with(|_| {})),
        ("reference", reference_grader(|_| {})),
    ]
}

#[test]
fn int_str_limit_is_fifty_thousand_digits_as_in_livecodebench() {
    // LiveCodeBench raises Python's int/str limit (4,300 digits by default) to 50,000 for
    // its whole evaluation; printing a 6,021-digit power or adding 5,000-digit inputs works.
    let a = "7".repeat(5000);
    let b = "3".repeat(4990);
    // The expected sum by schoolbook addition on the digit strings.
    let sum = {
        let (x, y) = (a.as_bytes(), b.as_bytes());
        let (mut out, mut carry) = (Vec::new(), 0u8);
        for i in 0..x.len() {
            let d = (x[x.len() - 1 - i] - b'0')
                + if i < y.len() {
                    y[y.len() - 1 - i] - b'0'
                } else {
                    0
                }
                + carry;
            out.push(b'0' + d % 10);
            carry = d / 10;
        }
        if carry > 0 {
            out.push(b'0' + carry);
        }
        out.reverse();
        String::from_utf8(out).unwrap()
    };
    let p = problem(vec![(&format!("{a}\n{b}\n"), &sum)], None);
    let pow = problem(vec![("20000\n", "")], None);
    for (name, g) in both_semantics() {
        assert_eq!(
            codes(&g, &p, "print(int(input()) + int(input()))"),
            vec![1],
            "{name}"
        );
        // 2**20000 has 6,021 digits: it converts (the output is then simply wrong here).
        let r = g.grade(&pow, "print(2 ** int(input()))", 0).unwrap();
        assert_eq!(r.results[0].code, TestCode::WrongAnswer, "{name}");
        // 10**60000 has 60,001 digits: over the limit in both.
        let r = g.grade(&pow, "print(10 ** 60000)", 0).unwrap();
        assert_eq!(r.results[0].code, TestCode::RuntimeError, "{name}");
        assert!(
            r.results[0].message.contains("ValueError") || r.results[0].message.contains("Exceeds"),
            "{name}: {}",
            r.results[0].message
        );
    }
    // Functional: a big integer argument and return value.
    let f = problem(
        vec![(&"9".repeat(6000), &format!("1{}", "0".repeat(6000)))],
        Some("inc"),
    );
    for (name, g) in both_semantics() {
        assert_eq!(
            codes(&g, &f, "def inc(x):\n    return x + 1"),
            vec![1],
            "{name}"
        );
    }
}

#[test]
fn only_a_top_level_tuple_becomes_a_list() {
    let p = problem(
        vec![
            ("[[1, 2], [3, 4]]", "[[1, 3], [2, 4]]"),
            ("[[5, 6]]", "[[5], [6]]"),
        ],
        Some("transpose"),
    );
    let zip = "class Solution:\n    def transpose(self, m):\n        return list(zip(*m))";
    let tuple_of_lists = "class Solution:\n    def transpose(self, m):\n        return tuple(list(r) for r in zip(*m))";
    let lists =
        "class Solution:\n    def transpose(self, m):\n        return [list(r) for r in zip(*m)]";
    let d = problem(vec![("1", "{\"a\": [1, 2]}")], Some("f"));
    let dict_tuple = "class Solution:\n    def f(self, x):\n        return {'a': (1, 2)}";
    let dict_list = "class Solution:\n    def f(self, x):\n        return {'a': [1, 2]}";
    for (name, g) in both_semantics() {
        assert_eq!(
            codes(&g, &p, zip),
            vec![-2],
            "{name}: a list of tuples is wrong"
        );
        assert_eq!(codes(&g, &p, tuple_of_lists), vec![1, 1], "{name}");
        assert_eq!(codes(&g, &p, lists), vec![1, 1], "{name}");
        assert_eq!(codes(&g, &d, dict_tuple), vec![-2], "{name}");
        assert_eq!(codes(&g, &d, dict_list), vec![1], "{name}");
    }
}

#[test]
fn stderr_is_not_capped_and_stdout_is_capped_per_test() {
    // 3 MiB of standard error in each of 8 tests (24 MiB in all) is not an output limit:
    // standard error is drained per test and not compared.
    let tests: Vec<(String, String)> = (1..=8)
        .map(|k| (format!("{k}\n"), format!("{}", 2 * k)))
        .collect();
    let p = problem(
        tests
            .iter()
            .map(|(i, o)| (i.as_str(), o.as_str()))
            .collect(),
        None,
    );
    let noisy =
        "import sys\nn = int(input())\nsys.stderr.write(('x' * 1023 + '\\n') * 3072)\nprint(2 * n)";
    for (name, g) in both_semantics() {
        assert_eq!(codes(&g, &p, noisy), vec![1; 8], "{name}");
    }
    // Standard output is capped per test (judge semantics): 70 MiB of trailing blanks in
    // one test is an output-limit runtime error; the reference runner keeps it in memory.
    let blanks = "import sys\nprint(2 * int(input()))\nsys.stdout.write(' ' * (70 << 20))";
    let q = problem(vec![("1\n", "2")], None);
    let r = grader_with(|_| {}).grade(&q, blanks, 0).unwrap();
    assert_eq!(r.results[0].code, TestCode::RuntimeError);
    assert!(
        r.results[0].message.contains("Output Limit Exceeded"),
        "{}",
        r.results[0].message
    );
    assert_eq!(codes(&reference_grader(|_| {}), &q, blanks), vec![1]);
    // A background process that keeps writing to standard error after the test's
    // process ended does not hold the test open (it is killed with the test's group).
    let background = "import os, sys\nif os.fork() == 0:\n    while True:\n        sys.stderr.write('x' * 4096)\nprint(2 * int(input()))";
    assert_eq!(codes(&grader_with(|_| {}), &q, background), vec![1]);
    // Just under the cap is fine.
    let under = "import sys\nprint(2 * int(input()))\nsys.stdout.write(' ' * (60 << 20))";
    assert_eq!(codes(&grader_with(|_| {}), &q, under), vec![1]);
}

#[test]
fn exact_numbers_and_signalling_nans() {
    // Python's ==: Fraction(15, 4) == 3.75 and Decimal("3.75") == 3.75, but
    // Fraction(1, 3) != 1/3 as a float; a returned signalling NaN cannot be compared.
    let p = problem(
        vec![("[3, 4, 4, 4]", "3.75"), ("[1, 2]", "1.5")],
        Some("mean"),
    );
    let third = problem(vec![("1", "0.3333333333333333")], Some("third"));
    for (name, g) in both_semantics() {
        for ok in [
            "from fractions import Fraction\nclass Solution:\n    def mean(self, r):\n        return Fraction(sum(r), len(r))",
            "from decimal import Decimal\nclass Solution:\n    def mean(self, r):\n        return Decimal(sum(r)) / len(r)",
            "class Solution:\n    def mean(self, r):\n        return sum(r) / len(r)",
        ] {
            assert_eq!(codes(&g, &p, ok), vec![1, 1], "{name}: {ok}");
        }
        assert_eq!(
            codes(
                &g,
                &third,
                "from fractions import Fraction\ndef third(n):\n    return Fraction(n, 3)"
            ),
            vec![-2],
            "{name}"
        );
        let snan = "from decimal import Decimal\nclass Solution:\n    def mean(self, r):\n        return Decimal('sNaN')";
        assert_eq!(codes(&g, &p, snan), vec![-4], "{name}");
        let nan = "from decimal import Decimal\nclass Solution:\n    def mean(self, r):\n        return Decimal('NaN')";
        assert_eq!(codes(&g, &p, nan), vec![-2], "{name}");
    }
    // Printed: "sNaN" reached in the token comparison is a runtime error (LiveCodeBench's
    // comparison raises InvalidOperation there), "NaN" a wrong answer.
    let s = problem(vec![("1\n", "0.5"), ("2\n", "1")], None);
    let judge = grader_with(|_| {});
    let r = judge.grade(&s, "input()\nprint('sNaN')", 0).unwrap();
    assert_eq!(r.results[0].code, TestCode::RuntimeError);
    assert!(
        r.results[0].message.contains("signalling NaN"),
        "{}",
        r.results[0].message
    );
    assert_eq!(codes(&judge, &s, "input()\nprint('NaN')"), vec![-2]);
    // A different token count is a wrong answer before any token is compared.
    assert_eq!(codes(&judge, &s, "input()\nprint('sNaN 1')"), vec![-2]);
    // The reference runner's error escapes its test loop: one -4 for the whole solution.
    let late = "n = int(input())\nprint(n / 2 if n == 1 else 'sNaN')";
    assert_eq!(codes(&judge, &s, late), vec![1, -4]);
    assert_eq!(codes(&reference_grader(|_| {}), &s, late), vec![-4]);
}

#[test]
fn fixture_problems_of_the_fidelity_defects() {
    // One fixture problem per defect fixed in issue 14, each with a reference solution
    // that needs the fix and a wrong one: hrc026_b (4,300+ digit integers), 9111 (nested
    // tuples), 9010C (3 MiB of stderr in each of 9 tests), 9112 (a Fraction answer).
    let ds = load("release_latest");
    let sols = |name: &str| -> BTreeMap<String, String> {
        std::fs::read_to_string(fixtures().join("solutions").join(name))
            .unwrap()
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (
                    v["question_id"].as_str().unwrap().into(),
                    v["code"].as_str().unwrap().into(),
                )
            })
            .collect()
    };
    let (good, bad) = (sols("reference.jsonl"), sols("wrong.jsonl"));
    let expect_wrong: [(&str, Vec<i32>); 4] = [
        ("hrc026_b", vec![1, -4]), // float() of a 4,301-digit number overflows
        ("9111", vec![-2]),        // a list of tuples
        ("9010C", vec![-2]),       // debugging output on stdout
        ("9112", vec![-2]),        // rounded to one decimal
    ];
    for (name, g) in both_semantics() {
        for (id, wrong) in &expect_wrong {
            let p = ds.get(id).unwrap_or_else(|| panic!("fixture {id}"));
            let n = p.public_test_cases.len() + p.private_test_cases.len();
            assert!(n >= 6, "{id} has {n} tests");
            assert_eq!(
                codes(&g, p, &good[*id]),
                vec![1; n],
                "{name}: reference of {id}"
            );
            assert_eq!(
                &codes(&g, p, &bad[*id]),
                wrong,
                "{name}: wrong solution of {id}"
            );
        }
    }
    let p = ds.get("9010C").unwrap();
    assert!(p.public_test_cases.len() + p.private_test_cases.len() >= 6);
    assert!(good["9010C"].contains("3 * 1024") && good["9010C"].contains("sys.stderr"));
}

#[test]
fn reference_semantics_reproduce_the_runner_and_judge_semantics_differ_as_declared() {
    // Each row: a declared difference (docs/LIVECODEBENCH.md, "Judge and reference semantics"), a
    // program, the judge codes and the codes LiveCodeBench's runner gives (checked against
    // the runner itself by scripts/lcb_differential.sh).
    let sum = problem(vec![("3 4\n", "7"), ("10 -2\n", "8")], None);
    let f = problem(vec![("1", "1"), ("2", "2")], Some("f"));
    // (difference, problem, program, judge codes, reference codes)
    type Row<'a> = (&'a str, &'a Problem, &'a str, &'a [i32], &'a [i32]);
    let rows: &[Row] = &[
        (
            "wrapped-globals",
            &sum,
            "total = 0\ndef add(x):\n    global total\n    total += x\nfor t in input().split():\n    add(int(t))\nprint(total)",
            &[1, 1],
            &[-4],
        ),
        (
            "main-guard",
            &sum,
            "def main():\n    print(sum(map(int, input().split())))\nif __name__ == '__main__':\n    main()\ndone = 1",
            &[1, 1],
            &[-2],
        ),
        (
            "main-guard",
            &sum,
            "def main():\n    print(sum(map(int, input().split())))\nif '__main__' == __name__:\n    main()",
            &[1, 1],
            &[-2],
        ),
        (
            "main-guard (last: unwrapped)",
            &sum,
            "def main():\n    print(sum(map(int, input().split())))\nif __name__ == '__main__':\n    main()",
            &[1, 1],
            &[1, 1],
        ),
        (
            "module-return",
            &sum,
            "print(sum(map(int, input().split())))\nreturn",
            &[-4],
            &[1, 1],
        ),
        (
            "future-import",
            &sum,
            "from __future__ import annotations\nprint(sum(map(int, input().split())))",
            &[1, 1],
            &[-4],
        ),
        (
            "quit",
            &sum,
            "print(sum(map(int, input().split())))\nquit()",
            &[1, 1],
            &[-4],
        ),
        (
            "quit (exit works)",
            &sum,
            "print(sum(map(int, input().split())))\nexit()",
            &[1, 1],
            &[1, 1],
        ),
        (
            "stdio-buffer",
            &sum,
            "import sys\nprint(sum(map(int, sys.stdin.buffer.read().split())))",
            &[1, 1],
            &[-4],
        ),
        (
            "stdio-buffer",
            &sum,
            "import sys\nsys.stdout.buffer.write(b'%d\\n' % sum(map(int, input().split())))",
            &[1, 1],
            &[-4],
        ),
        (
            "open-fd0",
            &sum,
            "print(sum(map(int, open(0).read().split())))",
            &[1, 1],
            &[-2],
        ),
        (
            "header-names",
            &sum,
            "stdout.write(str(sum(map(int, input().split()))) + '\\n')",
            &[1, 1],
            &[-2],
        ),
        (
            "header-names",
            &sum,
            "for line in stdin:\n    print(sum(map(int, line.split())))",
            &[1, 1],
            &[-2],
        ),
        (
            "header-names (readline)",
            &sum,
            "print(sum(map(int, stdin.readline().split())))",
            &[1, 1],
            &[1, 1],
        ),
        (
            "fd-output",
            &sum,
            "import os\nos.write(1, b'%d\\n' % sum(map(int, input().split())))",
            &[1, 1],
            &[-2],
        ),
        (
            "stdout-close",
            &sum,
            "import sys\nprint(sum(map(int, input().split())))\nsys.stdout.close()",
            &[1, 1],
            &[-4],
        ),
        (
            "shared-state",
            &sum,
            "import collections\ncollections.runs = getattr(collections, 'runs', 0) + 1\nprint(sum(map(int, input().split())) + collections.runs - 1)",
            &[1, 1],
            &[1, -2],
        ),
        (
            "shared-state",
            &f,
            "class Solution:\n    calls = 0\n    def f(self, x):\n        self.calls += 1\n        return x + self.calls - 1",
            &[1, 1],
            &[1, -2],
        ),
        (
            "lost-result",
            &sum,
            "import os, sys\nprint(sum(map(int, input().split())))\nsys.stdout.flush()\nos._exit(0)",
            &[1, 1],
            &[-2],
        ),
        (
            "lost-result",
            &f,
            "import sys\nclass Solution:\n    def f(self, x):\n        sys.exit(0)",
            &[-4],
            &[-2],
        ),
        (
            "guarded-functions",
            &sum,
            "import os\nos.getcwd()\nprint(sum(map(int, input().split())))",
            &[1, 1],
            &[-4],
        ),
        (
            "guarded-functions",
            &sum,
            "import resource\nprint(sum(map(int, input().split())))",
            &[1, 1],
            &[-4],
        ),
        (
            "stdin-class-solution",
            &sum,
            "class Solution:\n    pass\nprint(sum(map(int, input().split())))",
            &[1, 1],
            &[-4],
        ),
        (
            "timeout-repr",
            &sum,
            "raise ValueError('TimeoutException')",
            &[-4],
            &[-3],
        ),
        (
            "return-values",
            &f,
            "class A:\n    def __eq__(self, o):\n        return True\nclass Solution:\n    def f(self, x):\n        return A()",
            &[-2],
            &[1, 1],
        ),
        (
            "single-error-result",
            &sum,
            "a, b = map(int, input().split())\nprint(a + b if a != 10 else 'sNaN')",
            &[1, -4],
            &[-4],
        ),
    ];
    let judge = grader_with(|_| {});
    let reference = reference_grader(|_| {});
    for (what, p, code, want_judge, want_ref) in rows {
        assert_eq!(
            codes(&judge, p, code),
            want_judge.to_vec(),
            "judge, {what}: {code}"
        );
        assert_eq!(
            codes(&reference, p, code),
            want_ref.to_vec(),
            "reference, {what}: {code}"
        );
    }
    // Time limits. Judge: a CPU-time limit and a hard kill per test. Reference: SIGALRM
    // raises an exception the program can swallow (the alarm prints a line into the
    // captured output), the limit covers loading the module, and a program that never
    // returns loses the whole result at the global limit.
    let judge = grader_with(|c| c.timeout = Duration::from_millis(1500));
    let reference = reference_grader(|c| c.timeout = Duration::from_secs(2));
    let swallow = "n = sum(map(int, input().split()))\ntry:\n    while n == 8:\n        pass\nexcept BaseException:\n    pass\nprint(n)";
    assert_eq!(codes(&judge, &sum, swallow), vec![1, -3]);
    assert_eq!(codes(&reference, &sum, swallow), vec![1, -2]);
    let slow_load =
        "import time\ntime.sleep(60)\nclass Solution:\n    def f(self, x):\n        return x";
    assert_eq!(codes(&judge, &f, slow_load), vec![-3]);
    assert_eq!(codes(&reference, &f, slow_load), vec![-4]);
    let forever = "n = sum(map(int, input().split()))\nwhile n == 8:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass\nprint(n)";
    assert_eq!(codes(&judge, &sum, forever), vec![1, -3]);
    let reference = reference_grader(|c| {
        c.timeout = Duration::from_secs(2);
        c.global_timeout = Some(Duration::from_secs(4));
    });
    let r = reference.grade(&sum, forever, 0).unwrap();
    assert_eq!(
        r.results.iter().map(|t| t.code.code()).collect::<Vec<_>>(),
        vec![-2]
    );
    assert!(
        r.results[0].message.contains("global limit"),
        "{}",
        r.results[0].message
    );
}

#[test]
fn reference_semantics_refuse_judge_only_options() {
    for f in [
        (|c: &mut GradeConfig| c.clock = TimeoutClock::Cpu) as fn(&mut GradeConfig),
        |c: &mut GradeConfig| {
            c.clock = TimeoutClock::Wall;
            c.float_tolerance = Some(1e-6)
        },
    ] {
        let mut cfg = GradeConfig {
            semantics: Semantics::Reference,
            ..GradeConfig::default()
        };
        f(&mut cfg);
        let err = Grader::new(SandboxConfig::default(), cfg).unwrap_err();
        assert_eq!(
            harness_rl::error::Classify::kind(&err),
            harness_rl::error::ErrorKind::Usage,
            "{err}"
        );
        assert!(err.to_string().contains("--semantics judge"), "{err}");
    }
    assert_eq!(
        "reference".parse::<Semantics>().unwrap(),
        Semantics::Reference
    );
    assert!("lcb".parse::<Semantics>().is_err());
}

// ---------------------------------------------------------------- CLI

fn hrl() -> Cmd {
    Cmd::cargo_bin("hrl").unwrap()
}

#[test]
fn cli_grade_reference_and_wrong_solutions() {
    let dir = fixtures();
    let run = |file: &str| -> Value {
        let out = hrl()
            .args(["lcb", "grade"])
            .arg(&dir)
            .arg("--solutions")
            .arg(dir.join("solutions").join(file))
            .args(["--json", "--quiet", "--timeout-clock", "cpu", "--k", "1"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let good = run("reference.jsonl");
    let bad = run("wrong.jsonl");
    let n = all_python_rows().len();
    for (v, passed) in [(&good, true), (&bad, false)] {
        let samples = v["samples"].as_array().unwrap();
        assert_eq!(samples.len(), n);
        assert!(samples.iter().all(|s| s["passed"] == passed));
        assert_eq!(
            v["summary"]["pass_at"]["pass@1"],
            if passed { 1.0 } else { 0.0 }
        );
        assert_eq!(v["isolation"], true);
    }
    // Several samples per problem: pass@k over (reference, wrong) pairs = 1/2 and 1.
    let tmp = tempfile::tempdir().unwrap();
    let both = tmp.path().join("both.jsonl");
    let text = std::fs::read_to_string(dir.join("solutions/reference.jsonl")).unwrap()
        + &std::fs::read_to_string(dir.join("solutions/wrong.jsonl")).unwrap();
    let two: String = text
        .lines()
        .filter(|l| l.contains("\"9101\"") || l.contains("\"hrc001_a\""))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&both, two).unwrap();
    let out = hrl()
        .args(["lcb", "grade"])
        .arg(&dir)
        .arg("--solutions")
        .arg(&both)
        .args([
            "--json",
            "--quiet",
            "--timeout-clock",
            "cpu",
            "--k",
            "1,2,5",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["problems"], 2);
    let log = tmp.path().join("log.jsonl");
    hrl()
        .args(["lcb", "grade"])
        .arg(&dir)
        .arg("--solutions")
        .arg(&both)
        .arg("--log")
        .arg(&log)
        .args(["--quiet", "--timeout-clock", "cpu", "--jobs", "1"])
        .assert()
        .success();
    let logged: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(logged.len(), 4);
    // --all-problems: the other problems count as 0.
    let out = hrl()
        .args(["lcb", "grade"])
        .arg(&dir)
        .arg("--solutions")
        .arg(&both)
        .args([
            "--json",
            "--quiet",
            "--timeout-clock",
            "cpu",
            "--k",
            "1",
            "--all-problems",
        ])
        .output()
        .unwrap();
    let all: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(all["summary"]["problems"], n);
    let p1 = all["summary"]["pass_at"]["pass@1"].as_f64().unwrap();
    assert!((p1 - 1.0 / n as f64).abs() < 1e-12, "{p1}");
    assert_eq!(logged.iter().filter(|s| s["passed"] == true).count(), 2);
    assert_eq!(v["summary"]["pass_at"]["pass@1"], 0.5);
    assert_eq!(v["summary"]["pass_at"]["pass@2"], 1.0);
    assert!(v["summary"]["pass_at"].get("pass@5").is_none());
}

#[test]
fn cli_info_split_and_errors() {
    let dir = fixtures();
    let out = hrl()
        .args(["lcb", "info"])
        .arg(&dir)
        .args(["--release", "release_v5", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = all_python_rows();
    assert_eq!(
        v["counts"]["total"],
        rows.iter().filter(|(f, _)| *f <= 5).count()
    );
    assert_eq!(v["files"].as_array().unwrap().len(), 5);
    let out = hrl()
        .args(["lcb", "split"])
        .arg(&dir)
        .args(["--preset", "v5-to-v6", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["train"]["total"].as_u64().unwrap() > 0 && v["test"]["total"].as_u64().unwrap() > 0);
    // Bad input: exit 2 with the place named.
    hrl()
        .args(["lcb", "info", "/nonexistent/lcb-data"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("/nonexistent/lcb-data"));
    hrl()
        .args(["lcb", "info"])
        .arg(dir.join("solutions"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no LiveCodeBench files"));
    hrl()
        .args(["lcb", "info"])
        .arg(&dir)
        .args(["--release", "v9x"])
        .assert()
        .code(2);
    hrl()
        .args(["lcb", "split"])
        .arg(&dir)
        .args(["--cutoff", "2024-02-30"])
        .assert()
        .code(2);
    hrl()
        .args(["lcb", "split"])
        .arg(&dir)
        .args(["--preset", "v1-to-v2"])
        .assert()
        .code(2);
    let hostile = dir.join("hostile");
    hrl()
        .args(["lcb", "info"])
        .arg(&hostile)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("test.jsonl:2:"));
    let out = hrl()
        .args(["lcb", "info"])
        .arg(&hostile)
        .args(["--skip-bad", "--max-test-mib", "8", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["bad_rows"].as_array().unwrap().len(), 10);
    let tmp = tempfile::tempdir().unwrap();
    let sols = tmp.path().join("s.jsonl");
    std::fs::write(&sols, "{\"question_id\": \"nope\", \"code\": \"\"}\n").unwrap();
    hrl()
        .args(["lcb", "grade"])
        .arg(&dir)
        .arg("--solutions")
        .arg(&sols)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("s.jsonl:1"));
    std::fs::write(&sols, "{\"question_id\": \"9101\"\n").unwrap();
    hrl()
        .args(["lcb", "grade"])
        .arg(&dir)
        .arg("--solutions")
        .arg(&sols)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("s.jsonl:1"));
    // The prompt has LiveCodeBench's sections; starter code only for LeetCode rows.
    let out = hrl()
        .args(["lcb", "prompt"])
        .arg(&dir)
        .args(["--question-id", "9101"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let user = v[1]["content"].as_str().unwrap();
    assert!(
        user.starts_with("### Question:\n")
            && user.contains("### Format:")
            && user.contains("class Solution:")
            && user.contains("### Answer:")
    );
    assert!(
        v[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You are an expert Python programmer.")
    );
}

#[test]
fn model_responses_are_extracted_before_grading() {
    let dir = fixtures();
    let tmp = tempfile::tempdir().unwrap();
    let sols = tmp.path().join("r.jsonl");
    let code = "for _ in range(int(input())):\n    print(max(map(int, input().split())))";
    let response = format!(
        "Here is a draft:\n```python\nprint(0)\n```\nFinal:\n```python\n{code}\n```\nDone."
    );
    std::fs::write(
        &sols,
        serde_json::json!({"question_id": "9005A", "code": response}).to_string() + "\n",
    )
    .unwrap();
    let out = hrl()
        .args(["lcb", "grade"])
        .arg(&dir)
        .arg("--solutions")
        .arg(&sols)
        .args(["--extract", "--json", "--quiet", "--timeout-clock", "cpu"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["samples"][0]["passed"], true);
}

/// A LiveCodeBench directory in `dir` holding one stdin problem `q1` (atcoder, easy) whose
/// tests are `(input, output)` pairs.
fn one_problem_dir(dir: &Path, tests: &[(&str, &str)]) {
    let cases: Vec<Value> = tests
        .iter()
        .map(|(i, o)| serde_json::json!({"input": i, "output": o, "testtype": "stdin"}))
        .collect();
    let row = serde_json::json!({
        "question_title": "t", "question_content": "q", "platform": "atcoder",
        "question_id": "q1", "contest_id": "c", "contest_date": "2024-01-01T00:00:00",
        "starter_code": "", "difficulty": "easy",
        "public_test_cases": serde_json::to_string(&cases[..1]).unwrap(),
        "private_test_cases": serde_json::to_string(&cases[1..]).unwrap(),
        "metadata": "{}",
    });
    std::fs::write(dir.join("test.jsonl"), row.to_string() + "\n").unwrap();
}

fn solutions_file(path: &Path, items: &[(&str, &str)]) {
    let text: String = items
        .iter()
        .map(|(q, c)| serde_json::json!({"question_id": q, "code": c}).to_string() + "\n")
        .collect();
    std::fs::write(path, text).unwrap();
}

#[test]
fn cli_grade_exits_1_when_a_solution_cannot_be_graded_and_reports_the_rest() {
    // A hostile solution writes garbage into every descriptor of the driver, which
    // corrupts its report: that solution cannot be graded (never a pass); the other is.
    let tmp = tempfile::tempdir().unwrap();
    let sols = tmp.path().join("s.jsonl");
    let corrupt = "import os\nppid = os.getppid()\nfor fd in os.listdir(f'/proc/{ppid}/fd'):\n    try:\n        with open(f'/proc/{ppid}/fd/{fd}', 'wb') as f:\n            f.write(b'\\xff not a report\\n')\n    except OSError:\n        pass\nprint(input())";
    let good = "s = input().strip()\nprint('Even' if sum(map(int, s)) % 2 == 0 else 'Odd')";
    solutions_file(
        &sols,
        &[
            ("hrc001_a", corrupt),
            (
                "9101",
                "class Solution:\n    def countPairs(self, nums, target):\n        return sum(1 for i in range(len(nums)) for j in range(i + 1, len(nums)) if nums[i] + nums[j] == target)",
            ),
            ("hrc001_a", good),
        ],
    );
    let out_file = tmp.path().join("out.json");
    let out = hrl()
        .args(["lcb", "grade"])
        .arg(fixtures())
        .arg("--solutions")
        .arg(&sols)
        .arg("--out")
        .arg(&out_file)
        .args(["--json", "--quiet", "--timeout-clock", "cpu", "--k", "1"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("1 of 3 solutions could not be graded"),
        "{stderr}"
    );
    assert!(stderr.contains("grading hrc001_a"), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let samples = v["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 2);
    assert!(samples.iter().all(|s| s["passed"] == true));
    assert_eq!(v["errors"].as_array().unwrap().len(), 1);
    assert!(v["errors"][0].as_str().unwrap().contains("hrc001_a"));
    // The problem with an ungradable sample is scored on its graded one.
    assert_eq!(v["summary"]["samples"], 2);
    // --out holds the same JSON, written despite the failure.
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    assert_eq!(file, v);
}

#[test]
fn cli_grade_pass_at_k_by_platform_and_difficulty() {
    let ds = load("release_latest");
    let read = |name: &str| -> BTreeMap<String, String> {
        std::fs::read_to_string(fixtures().join("solutions").join(name))
            .unwrap()
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (
                    v["question_id"].as_str().unwrap().into(),
                    v["code"].as_str().unwrap().into(),
                )
            })
            .collect()
    };
    let (good, bad) = (read("reference.jsonl"), read("wrong.jsonl"));
    // Three samples per problem; c (passing samples) chosen per problem.
    let plan: [(&str, u32); 8] = [
        ("hrc001_a", 3), // atcoder easy
        ("9001B", 1),    // codeforces medium
        ("9101", 2),     // leetcode easy
        ("9102", 0),     // leetcode medium
        ("hrc004_f", 2), // atcoder hard
        ("9002A", 3),    // codeforces easy
        ("9103", 1),     // leetcode hard
        ("hrc007_a", 0), // atcoder easy
    ];
    let tmp = tempfile::tempdir().unwrap();
    let sols = tmp.path().join("s.jsonl");
    let mut items = Vec::new();
    for (id, c) in plan {
        for k in 0..3 {
            items.push((
                id,
                if k < c {
                    good[id].as_str()
                } else {
                    bad[id].as_str()
                },
            ));
        }
    }
    solutions_file(&sols, &items);
    let out_file = tmp.path().join("out.json");
    let out = hrl()
        .args(["lcb", "grade"])
        .arg(fixtures())
        .arg("--solutions")
        .arg(&sols)
        .arg("--out")
        .arg(&out_file)
        .args(["--quiet", "--timeout-clock", "cpu", "--k", "1,2,3"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Without --json the table goes to stdout and the JSON to --out.
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("semantics: judge") && table.contains("pass@3"),
        "{table}"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    // Expected values, recomputed here: group of each problem from Python's decoding of
    // the rows, pass@k by enumerating subsets, the mean over the group's problems.
    let rows: BTreeMap<String, Value> = all_python_rows()
        .into_iter()
        .map(|(_, r)| (r["question_id"].as_str().unwrap().to_string(), r))
        .collect();
    let mut groups: BTreeMap<(String, String), Vec<u32>> = BTreeMap::new();
    for (id, c) in plan {
        assert!(ds.get(id).is_some());
        for field in ["platform", "difficulty"] {
            let key = rows[id][field].as_str().unwrap().to_string();
            groups.entry((field.to_string(), key)).or_default().push(c);
        }
    }
    for ((field, key), cs) in &groups {
        let got = &v["summary"][if field == "platform" {
            "by_platform"
        } else {
            "by_difficulty"
        }][key];
        for k in 1..=3u32 {
            let want = cs.iter().map(|&c| brute_pass_at_k(3, c, k)).sum::<f64>() / cs.len() as f64;
            let g = got[format!("pass@{k}")].as_f64().unwrap();
            assert!(
                (g - want).abs() < 1e-12,
                "{field} {key} pass@{k}: {g} vs {want}"
            );
        }
    }
    assert_eq!(v["summary"]["by_platform"].as_object().unwrap().len(), 3);
    assert_eq!(v["summary"]["by_difficulty"].as_object().unwrap().len(), 3);
    for k in 1..=3u32 {
        let want = plan
            .iter()
            .map(|&(_, c)| brute_pass_at_k(3, c, k))
            .sum::<f64>()
            / plan.len() as f64;
        let g = v["summary"]["pass_at"][format!("pass@{k}")]
            .as_f64()
            .unwrap();
        assert!((g - want).abs() < 1e-12, "pass@{k}: {g} vs {want}");
    }
}

#[test]
fn cli_grade_records_float_tolerance_semantics_and_clock() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("lcb");
    std::fs::create_dir(&dir).unwrap();
    one_problem_dir(
        &dir,
        &[("1 3\n", "0.3333333333"), ("2 3\n", "0.6666666667")],
    );
    let sols = tmp.path().join("s.jsonl");
    let grade = |code: &str, extra: &[&str]| -> (Option<i32>, Value, String) {
        solutions_file(&sols, &[("q1", code)]);
        let out = hrl()
            .args(["lcb", "grade"])
            .arg(&dir)
            .arg("--solutions")
            .arg(&sols)
            .args(["--json", "--quiet", "--k", "1"])
            .args(extra)
            .output()
            .unwrap();
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (
            out.status.code(),
            v,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // 1/3 printed with 16 digits: wrong under exact comparison, right within 1e-6.
    let divide = "a, b = map(int, input().split())\nprint(a / b)";
    let (code, v, _) = grade(divide, &["--timeout-clock", "cpu"]);
    assert_eq!(code, Some(0));
    assert_eq!(v["samples"][0]["passed"], false);
    assert_eq!(v["float_tolerance"], Value::Null);
    assert_eq!(v["semantics"], "judge");
    let (code, v, _) = grade(divide, &["--timeout-clock", "cpu", "--float-tol", "1e-6"]);
    assert_eq!(code, Some(0));
    assert_eq!(v["samples"][0]["passed"], true);
    assert_eq!(v["float_tolerance"], 1e-6);
    // --timeout-clock cpu: a solution that sleeps 2 s per test fails a 1 s wall limit and
    // passes a 1 s CPU limit (its wall backstop is 4 x 1 + 1 = 5 s).
    let sleepy = "import time\ntime.sleep(2)\nprint(f'{eval(input().replace(\" \", \"/\")):.10f}')";
    let (_, v, _) = grade(sleepy, &["--timeout", "1"]);
    assert_eq!(v["timeout_clock"], "wall");
    assert_eq!(v["samples"][0]["results"][0]["code"], -3);
    let (_, v, _) = grade(sleepy, &["--timeout", "1", "--timeout-clock", "cpu"]);
    assert_eq!(v["timeout_clock"], "cpu");
    assert_eq!(v["samples"][0]["passed"], true, "{v}");
    // --semantics reference is recorded; its judge-only options are refused (exit 2).
    let (code, v, _) = grade(divide, &["--semantics", "reference"]);
    assert_eq!(code, Some(0));
    assert_eq!(v["semantics"], "reference");
    for extra in [
        &["--semantics", "reference", "--timeout-clock", "cpu"][..],
        &["--semantics", "reference", "--float-tol", "1e-6"],
    ] {
        let (code, _, stderr) = grade(divide, extra);
        assert_eq!(code, Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains("--semantics judge"), "{stderr}");
    }
    let (code, _, _) = grade(divide, &["--semantics", "lenient"]);
    assert_eq!(code, Some(2));
}
