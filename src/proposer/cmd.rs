//! The `cmd:PROGRAM [ARGS...]` proposer: any external program speaking a JSON-lines
//! protocol on its standard input and output, so a Python proposer (a GEPA-style
//! reflective optimiser, a TRL checkpoint in transformers) plugs in without Rust.
//! `examples/proposer.py` is a complete example.
//!
//! # Protocol `hrl-proposer/1`
//!
//! The program is started once per run (arguments split on whitespace, no shell) and
//! gets one request per line on stdin; it answers each with one line on stdout, in
//! order. Requests are sent one at a time. Its stderr goes to `proposer.stderr.log`
//! in the run directory. It must exit when its stdin closes (it is also killed when
//! `hrl` exits). Request:
//!
//! ```json
//! {"protocol": "hrl-proposer/1", "id": 3,
//!  "task": {"id": "gcd/L1", "key": "gcd", "kind": "answer", "description": "..."},
//!  "harness": {"kind": "declarative", "hash": "...", "text": "<canonical TOML or Python>"},
//!  "report": {...} | null, "report_text": "..." | null,
//!  "history": [{"round": 1, "parent": "...", "candidates": [...], "selected": "...", "accepted": false, ...}],
//!  "feedback_items": ["gcd/L1/s0/i0", ...],
//!  "candidates": 4, "seed": 123, "candidate_seeds": [..4 seeds..], "sample": 0, "round": 1}
//! ```
//!
//! `report` is the execution report as JSON (the harness runtime's
//! `ExecutionReport`), `report_text` the same rendered for a prompt. Response:
//!
//! ```json
//! {"id": 3, "candidates": [C, ...], "tokens": {"prompt": 0, "completion": 0}}
//! ```
//!
//! where each `C` is one of `{"harness": "<text>", "kind": "declarative"|"program"}`
//! (a complete harness; `kind` defaults to the parent's), `{"edits": [...]}` (typed
//! edits), `{"diff": "<unified diff>"}`, `{"text": "<raw model reply>"}` (parsed as
//! an `llm` proposer's reply would be), or `{"invalid": "<reason>"}`. A candidate may
//! add `"raw": "..."` to be logged with it. `tokens` is optional. At most `candidates`
//! are read. A response line that is not JSON, names another id, or has no
//! `candidates` list makes every candidate of the round invalid (the line is logged);
//! a program that exits or stays silent past the timeout stops the run.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use serde_json::{Value, json};

use super::{
    Candidate, Proposal, ProposalRequest, Proposer, ProposerError, ProposerIdentity, ProposerSpec,
    Revision, RevisionForm, TokenUse, candidate_seed, parse,
};
use crate::harness::edit;
use crate::harness::{Harness, HarnessKind, TextFormat};

/// The protocol name sent with every request.
pub const PROTOCOL: &str = "hrl-proposer/1";

/// How long one answer may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

struct Io {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<std::io::Result<String>>,
    next_id: u64,
}

/// See the module doc.
pub struct CmdProposer {
    argv: Vec<String>,
    files: Vec<(String, String)>,
    io: Mutex<Io>,
    timeout: Duration,
    /// Where the program's stderr goes (named, with its last lines, when it fails).
    stderr_log: Option<PathBuf>,
}

/// How many of the stderr log's last lines a failure message quotes.
const STDERR_TAIL_LINES: usize = 10;

/// The last `n` lines of the file at `path` (empty when it cannot be read).
fn tail_lines(path: &Path, n: usize) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

impl Drop for CmdProposer {
    fn drop(&mut self) {
        let io = self.io.get_mut().unwrap_or_else(|e| e.into_inner());
        let _ = io.child.kill();
        let _ = io.child.wait();
    }
}

impl CmdProposer {
    /// Start the program.
    pub fn start(argv: &[String], stderr_log: Option<&Path>) -> Result<CmdProposer, ProposerError> {
        let Some(program) = argv.first() else {
            return Err(ProposerError::Usage("cmd proposer: no program".into()));
        };
        let stderr = match stderr_log {
            Some(p) => Stdio::from(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .map_err(|e| ProposerError::Program(format!("{}: {e}", p.display())))?,
            ),
            None => Stdio::inherit(),
        };
        let mut cmd = Command::new(program);
        cmd.args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        // The program dies with hrl (even when hrl is killed with SIGKILL).
        #[cfg(target_os = "linux")]
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|e| {
            ProposerError::Usage(format!("cmd proposer: cannot start `{program}`: {e}"))
        })?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = channel();
        std::thread::Builder::new()
            .name("hrl-cmd-proposer".into())
            .spawn(move || {
                let mut r = BufReader::new(stdout);
                loop {
                    let mut line = String::new();
                    match r.read_line(&mut line) {
                        Ok(0) => break,
                        Ok(_) => {
                            if tx.send(Ok(line)).is_err() {
                                break;
                            }
                        }
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            break;
                        }
                    }
                }
            })
            .map_err(|e| ProposerError::Program(format!("reader thread: {e}")))?;
        let files = argv
            .iter()
            .filter(|a| Path::new(a).is_file())
            .filter_map(|a| {
                std::fs::read(a)
                    .ok()
                    .map(|b| (a.clone(), super::sha256_hex(&b)))
            })
            .collect();
        Ok(CmdProposer {
            argv: argv.to_vec(),
            files,
            io: Mutex::new(Io {
                child,
                stdin,
                lines,
                next_id: 0,
            }),
            timeout: DEFAULT_TIMEOUT,
            stderr_log: stderr_log.map(Path::to_path_buf),
        })
    }

    /// A program failure: `what`, then where its stderr is and that file's last lines.
    fn failure(&self, what: String) -> ProposerError {
        let Some(log) = &self.stderr_log else {
            return ProposerError::Program(what);
        };
        let tail = tail_lines(log, STDERR_TAIL_LINES);
        ProposerError::Program(if tail.is_empty() {
            format!("{what}; its stderr ({}) is empty", log.display())
        } else {
            format!(
                "{what}; its stderr is in {}, which ends:\n{tail}",
                log.display()
            )
        })
    }

    /// Change the answer timeout.
    pub fn with_timeout(mut self, t: Duration) -> CmdProposer {
        self.timeout = t;
        self
    }

    fn request_json(request: &ProposalRequest<'_>, id: u64) -> Value {
        let h = request.harness;
        json!({
            "protocol": PROTOCOL,
            "id": id,
            "task": request.task,
            "harness": {"kind": h.kind(), "hash": h.hash(), "text": h.canonical()},
            "report": request.report,
            "report_text": request.report.map(|r| r.render_text(super::ProposerSettings::default().report_tokens)),
            "history": request.history,
            "feedback_items": request.feedback.feedback.iter().map(|f| f.item.id()).collect::<Vec<_>>(),
            "candidates": request.candidates,
            "seed": request.seed,
            "candidate_seeds": (0..request.candidates).map(|i| candidate_seed(request.seed, i)).collect::<Vec<_>>(),
            "sample": request.sample,
            "round": request.round,
        })
    }

    /// One response candidate to a revision.
    fn candidate(v: &Value, request: &ProposalRequest<'_>) -> Candidate {
        let raw = v.get("raw").and_then(Value::as_str).map(str::to_string);
        let parent = request.harness;
        let obj = match v.as_object() {
            Some(o) => o,
            None => {
                return Candidate::invalid(
                    "protocol: a candidate is not an object",
                    Some(v.to_string()),
                );
            }
        };
        let keys: Vec<&str> = ["harness", "edits", "diff", "text", "invalid"]
            .into_iter()
            .filter(|k| obj.contains_key(*k))
            .collect();
        let result: Result<(Harness, RevisionForm), String> = match keys.as_slice() {
            ["harness"] => {
                let text = obj["harness"].as_str().unwrap_or_default();
                let kind = match obj.get("kind").and_then(Value::as_str) {
                    None => parent.kind(),
                    Some("declarative") => HarnessKind::Declarative,
                    Some("program") => HarnessKind::Program,
                    Some(other) => {
                        return Candidate::invalid(
                            format!("protocol: unknown harness kind `{other}`"),
                            raw.or(Some(v.to_string())),
                        );
                    }
                };
                match kind {
                    HarnessKind::Declarative => {
                        let fmt = if text.trim_start().starts_with('{') {
                            TextFormat::Json
                        } else {
                            TextFormat::Toml
                        };
                        Harness::parse_declarative(text, fmt, parse::ORIGIN).map(|h| {
                            (
                                h,
                                if fmt == TextFormat::Json {
                                    RevisionForm::Json
                                } else {
                                    RevisionForm::Toml
                                },
                            )
                        })
                    }
                    HarnessKind::Program => {
                        Harness::parse_program(text, parse::ORIGIN, parent.name().to_string())
                            .map(|h| (h, RevisionForm::Python))
                    }
                }
                .map_err(|e| e.to_string())
            }
            ["edits"] => match parent {
                Harness::Declarative(d) => {
                    serde_json::from_value::<Vec<edit::Edit>>(obj["edits"].clone())
                        .map_err(|e| format!("edits: {e}"))
                        .and_then(|list| {
                            edit::apply(d, &list, request.feedback).map_err(|e| e.to_string())
                        })
                        .map(|h| (Harness::Declarative(h), RevisionForm::Edits))
                }
                Harness::Program(_) => Err(
                    "typed edits apply to declarative harnesses; the current harness is a program"
                        .into(),
                ),
            },
            ["diff"] => {
                let d = obj["diff"].as_str().unwrap_or_default();
                parse::revision(&format!("```diff\n{d}\n```"), parent, request.feedback)
            }
            ["text"] => parse::revision(
                obj["text"].as_str().unwrap_or_default(),
                parent,
                request.feedback,
            ),
            ["invalid"] => Err(obj["invalid"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| obj["invalid"].to_string())),
            _ => Err(format!(
                "protocol: a candidate needs exactly one of harness, edits, diff, text, invalid (has {})",
                if keys.is_empty() {
                    "none".to_string()
                } else {
                    keys.join(", ")
                }
            )),
        };
        let raw = raw.or_else(|| obj.get("text").and_then(Value::as_str).map(str::to_string));
        match result {
            Ok((harness, form)) => Candidate {
                revision: Revision::Harness { harness, form },
                raw,
                tokens: TokenUse::default(),
                cached: false,
            },
            Err(reason) => Candidate::invalid(reason, raw.or(Some(v.to_string()))),
        }
    }
}

impl Proposer for CmdProposer {
    fn identity(&self) -> ProposerIdentity {
        let spec = ProposerSpec::Cmd(self.argv.clone());
        ProposerIdentity {
            spec: spec.normalized(),
            kind: "cmd".into(),
            label: spec.label(),
            details: json!({
                "argv": self.argv,
                "protocol": PROTOCOL,
                "files": self.files.iter().map(|(p, h)| json!({"path": p, "sha256": h})).collect::<Vec<_>>(),
            }),
        }
    }

    fn propose(&self, request: &ProposalRequest<'_>) -> Result<Proposal, ProposerError> {
        let mut io = self.io.lock().unwrap_or_else(|e| e.into_inner());
        io.next_id += 1;
        let id = io.next_id;
        let mut line = Self::request_json(request, id).to_string();
        line.push('\n');
        if let Err(e) = io
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| io.stdin.flush())
        {
            // A broken pipe means the program is exiting: give it a moment, so its
            // status and the end of its stderr are there to report.
            let mut status = io.child.try_wait().ok().flatten();
            for _ in 0..20 {
                if status.is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
                status = io.child.try_wait().ok().flatten();
            }
            return Err(self.failure(format!(
                "writing a request failed ({e}); the program {}",
                status.map_or("is still running".to_string(), |s| format!("exited ({s})"))
            )));
        }
        let answer = match io.lines.recv_timeout(self.timeout) {
            Ok(Ok(l)) => l,
            Ok(Err(e)) => return Err(self.failure(format!("reading its answer: {e}"))),
            Err(RecvTimeoutError::Timeout) => {
                return Err(self.failure(format!("no answer within {} s", self.timeout.as_secs())));
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = io.child.wait().ok();
                return Err(self.failure(format!(
                    "the program closed its output{}",
                    status.map(|s| format!(" ({s})")).unwrap_or_default()
                )));
            }
        };
        drop(io);
        let all_invalid = |reason: String| Proposal {
            candidates: (0..request.candidates)
                .map(|_| Candidate::invalid(reason.clone(), Some(answer.trim_end().to_string())))
                .collect(),
            prompt: None,
        };
        let v: Value = match serde_json::from_str(answer.trim()) {
            Ok(v) => v,
            Err(e) => {
                return Ok(all_invalid(format!(
                    "protocol: the answer is not JSON ({e})"
                )));
            }
        };
        if v.get("id").and_then(Value::as_u64) != Some(id) {
            return Ok(all_invalid(format!(
                "protocol: the answer's id is {} (expected {id})",
                v.get("id").map_or("missing".to_string(), |x| x.to_string())
            )));
        }
        let Some(list) = v.get("candidates").and_then(Value::as_array) else {
            return Ok(all_invalid(
                "protocol: the answer has no `candidates` list".into(),
            ));
        };
        let tokens = TokenUse {
            prompt: v
                .pointer("/tokens/prompt")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            completion: v
                .pointer("/tokens/completion")
                .and_then(Value::as_u64)
                .unwrap_or(0),
        };
        let mut candidates: Vec<Candidate> = list
            .iter()
            .take(request.candidates)
            .map(|c| Self::candidate(c, request))
            .collect();
        // The round's tokens are attributed to its first candidate.
        if let Some(c) = candidates.first_mut() {
            c.tokens = tokens;
        }
        Ok(Proposal {
            candidates,
            prompt: None,
        })
    }
}
