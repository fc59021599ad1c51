//! Every bad harness file gives an error naming the file, the line (TOML) and the
//! field, through the library and through `hrl harness show` (exit code 2).

use assert_cmd::Command;
use harness_rl::harness::Harness;

/// (file name, content, expected `file:line: field` prefix after the directory, and a
/// word the message must contain).
const BAD: &[(&str, &str, &str, &str)] = &[
    (
        "unknown-top.toml",
        "name = \"x\"\ncolour = \"red\"\n",
        "unknown-top.toml:2: colour:",
        "unknown field",
    ),
    (
        "unknown-in-strategy.toml",
        "[strategy]\nkind = \"direct\"\n\nmax_calls = 3\n",
        "unknown-in-strategy.toml:4: strategy.max_calls:",
        "unknown field",
    ),
    (
        "unknown-kind.toml",
        "[verification]\nkind = \"majority\"\n",
        "unknown-kind.toml:2: verification.kind:",
        "unknown variant",
    ),
    (
        "wrong-type.toml",
        "system = 3\n",
        "wrong-type.toml:1: system:",
        "invalid type",
    ),
    (
        "out-of-range.toml",
        "[strategy]\nkind = \"python-tool\"\nmax_calls = 0\n",
        "out-of-range.toml:3: strategy.max_calls:",
        "outside 1..=16",
    ),
    (
        "bad-template.toml",
        "[format]\nrule = \"Answer {answer} now\"\n",
        "bad-template.toml:2: format.rule:",
        "unknown placeholder",
    ),
    (
        "greedy-vote.toml",
        "[verification]\nkind = \"self-consistency\"\nn = 5\n",
        "greedy-vote.toml:3: verification.n:",
        "temperature",
    ),
    (
        "bad-sampling.toml",
        "[sampling]\ntemperature = 9.5\n",
        "bad-sampling.toml:2: sampling.temperature:",
        "outside 0..=2",
    ),
    (
        "empty-instruction.toml",
        "instructions = [\n  \"fine\",\n  \"   \",\n]\n",
        "empty-instruction.toml:3: instructions[1]:",
        "empty",
    ),
    (
        "example-field.toml",
        "[[examples]]\nquestion = \"q\"\nresponse = \"r\"\n\n[[examples]]\nquestion = \"q\"\nanswer = \"r\"\n",
        "example-field.toml:7: examples[1].answer:",
        "unknown field",
    ),
    (
        "missing-example-part.toml",
        "[[examples]]\nquestion = \"q\"\n",
        "missing-example-part.toml:1: examples[0]:",
        "missing field `response`",
    ),
    ("syntax.toml", "name = \"unclosed\n", "syntax.toml:1:", ""),
    (
        "no-solve.py",
        "def answer(question):\n    return '1'\n",
        "no-solve.py: solve:",
        "def solve",
    ),
    (
        "bad.json",
        "{\"system\": \"x\",\n \"stratgy\": {}}",
        "bad.json:2:",
        "unknown field `stratgy`",
    ),
    (
        "range.json",
        "{\"strategy\": {\"kind\": \"python-tool\", \"max_calls\": 99}}",
        "range.json: strategy.max_calls:",
        "outside",
    ),
    (
        "harness.yaml",
        "system: x\n",
        "harness.yaml:",
        "unknown harness file type",
    ),
];

#[test]
fn every_bad_harness_file_names_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    for (name, content, prefix, word) in BAD {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        let err = Harness::load(&path).expect_err(name).to_string();
        let shown = err
            .strip_prefix(&format!("{}/", dir.path().display()))
            .unwrap_or_else(|| panic!("{name}: error does not start with the path: {err}"));
        assert!(shown.starts_with(prefix), "{name}: {shown}");
        assert!(shown.contains(word), "{name}: {shown}");
        let o = Command::cargo_bin("hrl")
            .unwrap()
            .args(["harness", "show", path.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{name}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stderr.contains(prefix), "{name}: {stderr}");
    }
}

#[test]
fn a_program_harness_with_a_syntax_error_fails_the_run_with_its_line() {
    let _g = super::util::heavy();
    let p = super::util::program("def solve(question, llm, python):\n    x = (1,\n    return x\n");
    let dir = tempfile::tempdir().unwrap();
    let exec = super::util::open_smol(1, dir.path());
    let ctx = harness_rl::harness::runtime::RunContext {
        harness: &p,
        origin: "broken.py",
        executor: exec.executor.clone(),
        executor_ref: harness_rl::executor::ExecutorRef {
            hash: String::new(),
            model_id: String::new(),
            backend: String::new(),
            build: String::new(),
            device: None,
        },
        sandbox: super::util::sandbox(),
        config: &Default::default(),
    };
    let items = super::util::items(&["families:gcd:n=1"]).items;
    let err = harness_rl::harness::runtime::run(
        &ctx,
        &items,
        &Default::default(),
        &mut |_| Ok(()),
        &|_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("broken.py:2:") || err.starts_with("broken.py:3:"),
        "{err}"
    );
    assert!(err.contains("SyntaxError"), "{err}");
}
