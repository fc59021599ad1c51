//! The JSON the reward server speaks: requests become rows to score (a context and a
//! completion, or the reason a row cannot be scored), and scored rows become the
//! response. Pure functions over [`Built`]; the HTTP layer is in [`super::server`].
//!
//! **OpenRLHF remote reward** (`POST /get_reward`, also `/reward`), the shape of its
//! `--remote_rm_url`: `{"query": [TEXT...], "prompts": [TEXT...], "labels": [LABEL...]}`
//! → `{"rewards": [R...], "scores": [S...], "extra_logs": {NAME: [X...]}}`, one entry
//! per query. `query[i]` is the prompt followed by the completion (OpenRLHF decodes
//! both together). The context of row `i`:
//! 1. `labels[i]`, the dataset's `label` column: a context id, or a JSON object text
//!    with a `context_id` field. A label that names no context makes the row
//!    unscorable (it is not guessed from the text).
//! 2. Without a label: recovered from the prompt text: the context whose user message
//!    occurs verbatim in `prompts[i]` (else in `query[i]`); a chat template only adds
//!    markers around it. Prompts of an export made with another executor differ (the
//!    report), so for those use labels.
//!
//! The completion is `query[i]` without the `prompts[i]` prefix; if the query does not
//! start with the prompt, the text after the context's user message, past a chat
//! template's assistant header. `rewards` are the rewards, `scores` the dev scores
//! (0..1, what OpenRLHF's dynamic filtering reads), `extra_logs` holds numeric lists
//! (`valid`, `executes`, `unchanged`, `dev_score`, `executor_free_rate`, `tokens`,
//! `memo`), and two extra keys carry text: `invalid_reasons` and `context_ids`. An
//! unscorable row gets the invalid reward and its reason; it never fails the request.
//!
//! **Native** (`POST /score`): `{"items": [{"context_id": ID, "completion": TEXT}, ...]}`
//! (or one such object alone; `prompt` may stand in for `context_id`) →
//! `{"results": [PARTS | {"context_id": ID, "error": REASON, "reward": null}]}` where
//! PARTS are all of [`RewardParts`](super::score::RewardParts).

use serde_json::{Value, json};

use super::context::Built;
use super::score::RewardParts;

/// One row of a request: what to score, or why it cannot be.
#[derive(Debug, Clone, PartialEq)]
pub enum Row {
    Score {
        context: usize,
        completion: String,
    },
    Unscorable {
        context_id: Option<String>,
        reason: String,
    },
}

/// The request shape, for the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    OpenRlhf,
    Native,
}

/// Chat-template headers after which an assistant's text starts.
const ASSISTANT_HEADERS: &[&str] = &[
    "<|im_start|>assistant\n",
    "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "<|assistant|>\n",
    "<|assistant|>",
];

fn after_assistant_header(text: &str) -> &str {
    let mut best: Option<usize> = None;
    for h in ASSISTANT_HEADERS {
        if let Some(at) = text.rfind(h) {
            let end = at + h.len();
            if best.is_none_or(|b| end > b) {
                best = Some(end);
            }
        }
    }
    match best {
        Some(end) => &text[end..],
        None => text,
    }
}

/// A label: a context id, or JSON with `context_id`.
fn label_id(label: &Value) -> Option<String> {
    match label {
        Value::String(s) => {
            let t = s.trim();
            if t.starts_with('{') {
                serde_json::from_str::<Value>(t)
                    .ok()
                    .and_then(|v| {
                        v.get("context_id")
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    })
                    .or_else(|| Some(t.to_string()))
            } else if t.is_empty() {
                None
            } else {
                Some(t.to_string())
            }
        }
        Value::Object(o) => o
            .get("context_id")
            .and_then(Value::as_str)
            .map(str::to_string),
        _ => None,
    }
}

fn strings(body: &Value, key: &str) -> Result<Option<Vec<Option<String>>>, String> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => Ok(Some(
            a.iter().map(|v| v.as_str().map(str::to_string)).collect(),
        )),
        Some(Value::String(s)) => Ok(Some(vec![Some(s.clone())])),
        Some(_) => Err(format!("`{key}` must be an array of strings")),
    }
}

/// The rows of an OpenRLHF request. `Err` for a body that is not that shape at all.
pub fn openrlhf_rows(body: &Value, built: &Built) -> Result<Vec<Row>, String> {
    let query = strings(body, "query")?.ok_or("the body has no `query` array")?;
    let prompts = strings(body, "prompts")?;
    let labels: Option<Vec<Value>> = match body.get("labels") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => Some(a.clone()),
        Some(v @ Value::String(_)) => Some(vec![v.clone()]),
        Some(_) => return Err("`labels` must be an array".into()),
    };
    for (name, n) in [
        ("prompts", prompts.as_ref().map(Vec::len)),
        ("labels", labels.as_ref().map(Vec::len)),
    ] {
        if let Some(n) = n
            && n != query.len()
        {
            return Err(format!(
                "`{name}` has {n} entries for {} queries",
                query.len()
            ));
        }
    }
    let mut rows = Vec::with_capacity(query.len());
    for (i, q) in query.iter().enumerate() {
        let Some(q) = q else {
            rows.push(Row::Unscorable {
                context_id: None,
                reason: format!("query[{i}] is not a string"),
            });
            continue;
        };
        let prompt = prompts.as_ref().and_then(|p| p[i].as_deref());
        let label = labels.as_ref().and_then(|l| label_id(&l[i]));
        rows.push(row(built, label, prompt, q, true));
    }
    Ok(rows)
}

/// One row: find the context (label, else recovered from the prompt or the text), then
/// the completion (`text` minus the prompt when `text_has_prompt`).
fn row(
    built: &Built,
    label: Option<String>,
    prompt: Option<&str>,
    text: &str,
    text_has_prompt: bool,
) -> Row {
    let context = match &label {
        Some(id) => match built.find(id) {
            Some(c) => c,
            None => {
                return Row::Unscorable {
                    context_id: Some(id.clone()),
                    reason: format!(
                        "unknown context id `{id}` (this server's contexts: GET /contexts)"
                    ),
                };
            }
        },
        None => {
            let found = prompt
                .and_then(|p| built.recover(p))
                .or_else(|| built.recover(text));
            match found {
                Some((c, _)) => c,
                None => {
                    return Row::Unscorable {
                        context_id: None,
                        reason:
                            "no context: no label, and the prompt holds no context's prompt text"
                                .into(),
                    };
                }
            }
        }
    };
    let completion = if !text_has_prompt {
        text.to_string()
    } else if let Some(rest) = prompt.and_then(|p| text.strip_prefix(p)) {
        rest.to_string()
    } else {
        let u = built.contexts[context].user_message();
        match text.rfind(u).filter(|_| !u.is_empty()) {
            Some(at) => after_assistant_header(&text[at + u.len()..]).to_string(),
            None => text.to_string(),
        }
    };
    Row::Score {
        context,
        completion,
    }
}

/// The rows of a native request.
pub fn native_rows(body: &Value, built: &Built) -> Result<Vec<Row>, String> {
    let items: Vec<&Value> = match body.get("items") {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(_) => return Err("`items` must be an array".into()),
        None if body.get("completion").is_some() => vec![body],
        None => return Err("the body has no `items` array (or `completion`)".into()),
    };
    let mut rows = Vec::with_capacity(items.len());
    for (i, it) in items.into_iter().enumerate() {
        let Some(completion) = it.get("completion").and_then(Value::as_str) else {
            rows.push(Row::Unscorable {
                context_id: it
                    .get("context_id")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                reason: format!("items[{i}].completion is missing or not a string"),
            });
            continue;
        };
        let label = it.get("context_id").and_then(label_id);
        let prompt = it.get("prompt").and_then(Value::as_str);
        if label.is_none() && prompt.is_none() {
            rows.push(Row::Unscorable {
                context_id: None,
                reason: format!("items[{i}] has neither `context_id` nor `prompt`"),
            });
            continue;
        }
        rows.push(row(built, label, prompt, completion, false));
    }
    Ok(rows)
}

/// The scored rows as a response. `scored` holds the parts of the `Score` rows, in
/// order; `invalid_reward` is what an unscorable row gets in the OpenRLHF shape.
pub fn response(shape: Shape, rows: &[Row], scored: &[RewardParts], invalid_reward: f64) -> Value {
    let mut it = scored.iter();
    let parts: Vec<Result<&RewardParts, (&Option<String>, &String)>> = rows
        .iter()
        .map(|r| match r {
            Row::Score { .. } => Ok(it.next().expect("one part per scored row")),
            Row::Unscorable { context_id, reason } => Err((context_id, reason)),
        })
        .collect();
    match shape {
        Shape::Native => json!({
            "results": parts.iter().map(|p| match p {
                Ok(p) => serde_json::to_value(p).expect("parts serialise"),
                Err((id, reason)) => json!({"context_id": id, "error": reason, "reward": null}),
            }).collect::<Vec<_>>(),
        }),
        Shape::OpenRlhf => {
            let num = |f: &dyn Fn(&RewardParts) -> f64, missing: f64| -> Vec<f64> {
                parts
                    .iter()
                    .map(|p| p.as_ref().map(|p| f(p)).unwrap_or(missing))
                    .collect()
            };
            let b = |x: bool| if x { 1.0 } else { 0.0 };
            json!({
                "rewards": num(&|p| p.reward, invalid_reward),
                "scores": num(&|p| p.score, 0.0),
                "extra_logs": {
                    "valid": num(&|p| b(p.valid), 0.0),
                    "executes": num(&|p| b(p.executes), 0.0),
                    "unchanged": num(&|p| b(p.unchanged), 0.0),
                    "dev_score": num(&|p| p.score, 0.0),
                    "executor_free_rate": num(&|p| p.executor_free_rate, 0.0),
                    "tokens": num(&|p| p.tokens as f64, 0.0),
                    "memo": num(&|p| b(p.memo), 0.0),
                },
                "invalid_reasons": parts.iter().map(|p| match p {
                    Ok(p) => p.invalid_reason.clone(),
                    Err((_, r)) => Some((*r).clone()),
                }).collect::<Vec<_>>(),
                "context_ids": parts.iter().map(|p| match p {
                    Ok(p) => Some(p.context_id.clone()),
                    Err((id, _)) => (*id).clone(),
                }).collect::<Vec<_>>(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executor::Message;
    use crate::harness::HarnessKind;
    use crate::reward::context::Context;

    fn built() -> Built {
        let ctx = |id: &str, user: &str| Context {
            id: id.into(),
            index: 0,
            task: "t".into(),
            task_key: "t".into(),
            parent_hash: "h".into(),
            harness_kind: HarnessKind::Declarative,
            feedback_items: vec![],
            dev_items: vec![],
            feedback_score: 0.0,
            messages: vec![Message::system("SYS"), Message::user(user)],
            reply_schema: None,
        };
        Built {
            contexts: vec![ctx("ctx-a", "USER A"), ctx("ctx-b", "USER B")],
            parents: vec![],
            feedback: vec![],
        }
    }

    #[test]
    fn openrlhf_rows_find_contexts_by_label_then_by_prompt() {
        let b = built();
        let body = json!({
            "query": ["P1 USER A done", "<|im_start|>user\nUSER B<|im_end|>\n<|im_start|>assistant\nX", "zzz", "USER A q"],
            "prompts": ["P1 USER A", "not a prefix", "zzz", "USER A "],
            "labels": ["", null, "", "{\"context_id\": \"ctx-b\"}"],
        });
        let rows = openrlhf_rows(&body, &b).unwrap();
        assert_eq!(
            rows[0],
            Row::Score {
                context: 0,
                completion: " done".into()
            }
        );
        assert_eq!(
            rows[1],
            Row::Score {
                context: 1,
                completion: "X".into()
            }
        );
        assert!(matches!(rows[2], Row::Unscorable { .. }));
        // The label wins over the prompt text.
        assert_eq!(
            rows[3],
            Row::Score {
                context: 1,
                completion: "q".into()
            }
        );
        let bad = json!({"query": ["a"], "labels": ["ctx-zz"]});
        let rows = openrlhf_rows(&bad, &b).unwrap();
        assert!(
            matches!(&rows[0], Row::Unscorable { reason, .. } if reason.contains("unknown context id"))
        );
        assert!(openrlhf_rows(&json!({"query": ["a"], "prompts": []}), &b).is_err());
        assert!(openrlhf_rows(&json!({"x": 1}), &b).is_err());
    }

    #[test]
    fn unscorable_rows_keep_their_place_in_the_response() {
        let rows = vec![
            Row::Unscorable {
                context_id: None,
                reason: "r".into(),
            },
            Row::Score {
                context: 0,
                completion: String::new(),
            },
        ];
        let p = RewardParts {
            context_id: "ctx-a".into(),
            reward: 0.5,
            score: 0.5,
            valid: true,
            executes: true,
            unchanged: false,
            invalid_reason: None,
            form: None,
            harness_hash: None,
            harness_kind: None,
            executor_free_rate: 0.0,
            tokens: 3,
            item_scores: vec![],
            memo: false,
        };
        let v = response(Shape::OpenRlhf, &rows, std::slice::from_ref(&p), -1.0);
        assert_eq!(v["rewards"], json!([-1.0, 0.5]));
        assert_eq!(v["extra_logs"]["valid"], json!([0.0, 1.0]));
        assert_eq!(v["invalid_reasons"], json!(["r", null]));
        let v = response(Shape::Native, &rows, &[p], 0.0);
        assert_eq!(v["results"][0]["reward"], Value::Null);
        assert_eq!(v["results"][1]["reward"], json!(0.5));
    }
}
