//! Prompt files for `hrl generate --prompts FILE.jsonl`: one JSON object per line with
//! either `prompt` (a string: a user message, or raw text in raw mode) or `messages`
//! (an array of `{role, content}`), an optional `system` string and an optional `id`
//! (echoed in the output). Blank lines are skipped; any other malformed line —
//! including one that is not valid UTF-8 — is an error naming its line number, raised
//! before any inference runs.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Message, Prompt};

/// One prompt of a prompt file.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptRow {
    /// 1-based line number in the file.
    pub line: usize,
    pub id: Option<Value>,
    pub prompt: Prompt,
}

#[derive(Debug, thiserror::Error)]
pub enum PromptFileError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {detail}")]
    Malformed {
        path: PathBuf,
        line: usize,
        detail: String,
    },
    #[error("{path}: no prompts")]
    Empty { path: PathBuf },
}

impl crate::error::Classify for PromptFileError {
    fn kind(&self) -> crate::error::ErrorKind {
        match self {
            PromptFileError::Io { source, .. } => {
                if source.kind() == std::io::ErrorKind::NotFound {
                    crate::error::ErrorKind::Usage
                } else {
                    crate::error::ErrorKind::Runtime
                }
            }
            PromptFileError::Malformed { .. } | PromptFileError::Empty { .. } => {
                crate::error::ErrorKind::Usage
            }
        }
    }
}

/// Build a prompt from a user text: chat (with an optional system message) or raw.
pub fn make_prompt(text: &str, system: Option<&str>, raw: bool) -> Prompt {
    if raw {
        return Prompt::Raw(text.to_string());
    }
    let mut msgs = Vec::new();
    if let Some(s) = system {
        msgs.push(Message::system(s));
    }
    msgs.push(Message::user(text));
    Prompt::Chat(msgs)
}

/// Parse a prompt file's bytes. `system` applies to rows without their own; `raw`
/// makes `prompt` strings raw completions (rows with `messages` stay chat).
pub fn parse(
    path: &Path,
    bytes: &[u8],
    system: Option<&str>,
    raw: bool,
) -> Result<Vec<PromptRow>, PromptFileError> {
    let mut rows = Vec::new();
    for line in crate::jsonl::lines(bytes) {
        let line = line.map_err(|source| PromptFileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if line.is_blank() {
            continue;
        }
        let line_no = line.number;
        let bad = |detail: String| PromptFileError::Malformed {
            path: path.to_path_buf(),
            line: line_no,
            detail,
        };
        let line = line.text.into_result().map_err(bad)?;
        let line = line.as_str();
        let v: Value =
            serde_json::from_str(line).map_err(|e| bad(format!("not valid JSON: {e}")))?;
        let Value::Object(obj) = v else {
            return Err(bad("expected a JSON object".into()));
        };
        let row_system = match obj.get("system") {
            None | Some(Value::Null) => system.map(str::to_string),
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(bad("`system` must be a string".into())),
        };
        let prompt = match (obj.get("prompt"), obj.get("messages")) {
            (Some(_), Some(_)) => return Err(bad("give `prompt` or `messages`, not both".into())),
            (Some(Value::String(p)), None) => make_prompt(p, row_system.as_deref(), raw),
            (Some(_), None) => return Err(bad("`prompt` must be a string".into())),
            (None, Some(Value::Array(items))) => {
                let mut msgs = Vec::new();
                if let Some(s) = &row_system {
                    msgs.push(Message::system(s.clone()));
                }
                for (k, item) in items.iter().enumerate() {
                    let role = item.get("role").and_then(Value::as_str);
                    let content = item.get("content").and_then(Value::as_str);
                    match (role, content) {
                        (Some(r), Some(c)) => msgs.push(Message::new(r, c)),
                        _ => {
                            return Err(bad(format!(
                                "messages[{k}] needs string `role` and `content`"
                            )));
                        }
                    }
                }
                if msgs.is_empty() {
                    return Err(bad("`messages` is empty".into()));
                }
                Prompt::Chat(msgs)
            }
            (None, Some(_)) => return Err(bad("`messages` must be an array".into())),
            (None, None) => return Err(bad("missing `prompt` or `messages`".into())),
        };
        rows.push(PromptRow {
            line: line_no,
            id: obj.get("id").cloned(),
            prompt,
        });
    }
    if rows.is_empty() {
        return Err(PromptFileError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(rows)
}

/// Read and parse a prompt file.
pub fn read(
    path: &Path,
    system: Option<&str>,
    raw: bool,
) -> Result<Vec<PromptRow>, PromptFileError> {
    let bytes = std::fs::read(path).map_err(|source| PromptFileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, &bytes, system, raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_errors() {
        let p = Path::new("p.jsonl");
        let rows = parse(p, b"{\"prompt\":\"hi\",\"id\":3}\n\n{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"system\":\"S\"}\n",
            Some("D"),
            false,
        )
        .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].line, 1);
        assert_eq!(rows[0].id, Some(serde_json::json!(3)));
        assert_eq!(
            rows[0].prompt,
            Prompt::Chat(vec![Message::system("D"), Message::user("hi")])
        );
        assert_eq!(rows[1].line, 3);
        assert_eq!(
            rows[1].prompt,
            Prompt::Chat(vec![Message::system("S"), Message::user("x")])
        );
        let raw = parse(p, b"{\"prompt\":\"abc\"}", None, true).unwrap();
        assert_eq!(raw[0].prompt, Prompt::Raw("abc".into()));
        let err = parse(p, b"{\"prompt\":\"a\"}\n{\"prompt\":1}\n", None, false).unwrap_err();
        assert_eq!(err.to_string(), "p.jsonl:2: `prompt` must be a string");
        let err = parse(p, b"{\"prompt\":\"a\"}\nnot json\n", None, false).unwrap_err();
        assert!(
            err.to_string().starts_with("p.jsonl:2: not valid JSON"),
            "{err}"
        );
        let err = parse(p, b"{\"messages\":[{\"role\":\"user\"}]}", None, false).unwrap_err();
        assert!(err.to_string().contains("messages[0]"), "{err}");
        assert!(matches!(
            parse(p, b"\n\n", None, false),
            Err(PromptFileError::Empty { .. })
        ));
        // A line that is not UTF-8 is malformed, named by its line number.
        let err = parse(
            p,
            b"{\"prompt\":\"a\"}\n{\"prompt\":\"\xff\"}\n",
            None,
            false,
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "p.jsonl:2: invalid UTF-8 at byte 11");
    }
}
