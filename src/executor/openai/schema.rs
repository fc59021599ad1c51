//! The OpenAI `chat/completions` and `completions` wire schema, in both directions: the
//! client ([`super::OpenAiExecutor`]) writes requests and reads responses with it, and
//! `hrl serve` reads requests and writes responses with it, so the two sides cannot
//! drift apart (`decode_request(encode_request(r)) == r` and
//! `decode_response(encode_response(c)) == c` are tested below).
//!
//! Requests: the standard fields, OpenAI's defaults where it defines them (`temperature`
//! 1, `top_p` 1, `n` 1, `stream` false), plus the extensions llama-server understands
//! (`top_k`, `min_p`, `grammar`). Every nullable field accepts `null` as "use the
//! default". Standard fields this implementation does not support (penalties, logprobs,
//! tools, streaming, `n > 1`, ...) are accepted when null or at the value that means
//! "off", and refused with a message naming the field otherwise, so a request is never
//! silently answered as if it had asked for something else. Sampling ranges are
//! [`Sampling::validate`]'s.
//!
//! Responses: the standard shape, plus llama-server style `timings` (`prompt_ms`,
//! `predicted_ms`) and `hrl_cached` on each choice (true when `hrl serve` answered from
//! its completion cache). `GET /v1/models` entries carry `hrl_model_id`, the served
//! model's identity (a GGUF's sha256), so clients key caches on the model file.

use serde_json::{Map, Value, json};

use crate::executor::{
    Completion, ExecutorError, FinishReason, Message, Prompt, Request, Sampling, Timings, Usage,
};

/// The two completion endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `/chat/completions`: a list of messages.
    Chat,
    /// `/completions`: a raw prompt (or several).
    Completions,
}

impl Endpoint {
    /// The endpoint a prompt goes to.
    pub fn of(prompt: &Prompt) -> Endpoint {
        match prompt {
            Prompt::Chat(_) => Endpoint::Chat,
            Prompt::Raw(_) => Endpoint::Completions,
        }
    }

    /// Path below the `/v1` base.
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::Chat => "/chat/completions",
            Endpoint::Completions => "/completions",
        }
    }
}

// ---------------------------------------------------------------------------------
// Requests.

/// The JSON body a client sends for `request` to a server that serves `model`.
/// Greedy requests send `temperature: 0` and none of the sampler knobs greedy decoding
/// ignores. Fails (without sending anything) on a chat prompt without messages or an
/// out-of-range [`Sampling`].
pub fn encode_request(model: &str, request: &Request) -> Result<(Endpoint, Value), ExecutorError> {
    request.sampling.validate()?;
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    let endpoint = Endpoint::of(&request.prompt);
    match &request.prompt {
        Prompt::Chat(messages) => {
            if messages.is_empty() {
                return Err(ExecutorError::InvalidRequest(
                    "chat prompt has no messages".into(),
                ));
            }
            body.insert(
                "messages".into(),
                Value::Array(
                    messages
                        .iter()
                        .map(|m| json!({"role": m.role, "content": m.content}))
                        .collect(),
                ),
            );
        }
        Prompt::Raw(text) => {
            body.insert("prompt".into(), json!(text));
        }
    }
    encode_sampling(&mut body, &request.sampling);
    Ok((endpoint, Value::Object(body)))
}

/// Write the sampling settings in OpenAI field names.
fn encode_sampling(body: &mut Map<String, Value>, s: &Sampling) {
    body.insert("max_tokens".into(), json!(s.max_tokens));
    body.insert("n".into(), json!(1));
    body.insert("stream".into(), json!(false));
    if s.is_greedy() {
        body.insert("temperature".into(), json!(0.0));
    } else {
        body.insert("temperature".into(), json!(s.temperature));
        body.insert("top_p".into(), json!(s.top_p));
        if s.top_k > 0 {
            body.insert("top_k".into(), json!(s.top_k));
        }
        if s.min_p > 0.0 {
            body.insert("min_p".into(), json!(s.min_p));
        }
    }
    body.insert("seed".into(), json!(s.seed));
    if !s.stop.is_empty() {
        body.insert("stop".into(), json!(s.stop));
    }
    if let Some(g) = &s.grammar {
        body.insert("grammar".into(), json!(g));
    }
    if let Some(schema) = &s.json_schema {
        body.insert(
            "response_format".into(),
            json!({
                "type": "json_schema",
                "json_schema": {"name": RESPONSE_SCHEMA_NAME, "strict": true, "schema": schema},
            }),
        );
    }
}

/// The `json_schema.name` a client sends with a request's JSON schema.
pub const RESPONSE_SCHEMA_NAME: &str = "hrl_reply";

/// What a request body asks for, as the server reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiRequest {
    /// The `model` field, when given and not null.
    pub model: Option<String>,
    /// One prompt for chat; one or more for `/completions` (a string or an array).
    pub prompts: Vec<Prompt>,
    pub sampling: Sampling,
}

impl ApiRequest {
    /// One [`Request`] per prompt, each with the request's sampling.
    pub fn requests(&self) -> Vec<Request> {
        self.prompts
            .iter()
            .map(|p| Request {
                prompt: p.clone(),
                sampling: self.sampling.clone(),
            })
            .collect()
    }
}

/// Standard OpenAI request fields that `hrl serve` does not implement, with the values
/// that mean "off" (accepted, like `null`). Any other value is refused by name.
/// Fields that do not influence the output (`user`, `metadata`, `store`,
/// `service_tier`, `parallel_tool_calls`, ...) are simply ignored.
fn neutral(field: &str, v: &Value) -> Option<Result<(), String>> {
    let ok = |cond: bool, accepted: &str| {
        if v.is_null() || cond {
            Ok(())
        } else {
            Err(format!(
                "`{field}` = {v} is not supported by this server (accepted: null or {accepted})"
            ))
        }
    };
    let num_is = |x: f64| v.as_f64() == Some(x);
    Some(match field {
        "n" => {
            if v.is_null() || num_is(1.0) {
                Ok(())
            } else {
                Err(format!("only n = 1 is supported (got `n` = {v})"))
            }
        }
        "stream" => {
            if v.is_null() || v == &Value::Bool(false) {
                Ok(())
            } else {
                Err(format!(
                    "streaming is not supported (`stream` = {v}; send false or null)"
                ))
            }
        }
        "best_of" => ok(num_is(1.0), "1"),
        "echo" => ok(v == &Value::Bool(false), "false"),
        "logprobs" => ok(v == &Value::Bool(false), "false"),
        "top_logprobs" => ok(num_is(0.0), "0"),
        "frequency_penalty" | "presence_penalty" => ok(num_is(0.0), "0"),
        "repetition_penalty" | "repeat_penalty" | "typical_p" => ok(num_is(1.0), "1"),
        "min_tokens" => ok(num_is(0.0), "0"),
        "ignore_eos" => ok(v == &Value::Bool(false), "false"),
        "logit_bias" => ok(v.as_object().is_some_and(Map::is_empty), "{}"),
        "suffix" => ok(v.as_str() == Some(""), "\"\""),
        "tools" | "functions" => ok(v.as_array().is_some_and(Vec::is_empty), "[]"),
        "tool_choice" | "function_call" => ok(
            matches!(v.as_str(), Some("none" | "auto")),
            "\"none\" or \"auto\" without tools",
        ),
        // `json_schema` is read by `decode_sampling`.
        "response_format" => ok(
            matches!(
                v.get("type").and_then(Value::as_str),
                Some("text" | "json_schema")
            ),
            "{\"type\": \"text\"} or {\"type\": \"json_schema\", \"json_schema\": {\"schema\": ...}}",
        ),
        "modalities" => ok(v == &json!(["text"]), "[\"text\"]"),
        "stream_options" | "audio" | "prediction" | "reasoning_effort" | "web_search_options" => {
            ok(false, "nothing else")
        }
        _ => return None,
    })
}

/// Read a request body for `endpoint` (the server side). Errors name the field.
pub fn decode_request(body: &Value, endpoint: Endpoint) -> Result<ApiRequest, String> {
    let obj = body
        .as_object()
        .ok_or_else(|| "body must be a JSON object".to_string())?;
    let model = match obj.get("model") {
        None | Some(Value::Null) => None,
        Some(Value::String(m)) => Some(m.clone()),
        Some(_) => return Err("`model` must be a string".into()),
    };
    for (name, v) in obj {
        if let Some(Err(e)) = neutral(name, v) {
            return Err(e);
        }
    }
    let sampling = decode_sampling(obj)?;
    let prompts = match endpoint {
        Endpoint::Chat => vec![Prompt::Chat(decode_messages(obj.get("messages"))?)],
        Endpoint::Completions => match obj.get("prompt") {
            Some(Value::String(s)) => vec![Prompt::Raw(s.clone())],
            Some(Value::Array(items)) if !items.is_empty() => items
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    p.as_str()
                        .map(|s| Prompt::Raw(s.to_string()))
                        .ok_or_else(|| {
                            format!("prompt[{i}] must be a string (token arrays are not supported)")
                        })
                })
                .collect::<Result<_, _>>()?,
            None | Some(Value::Null) => return Err("missing `prompt`".into()),
            Some(_) => {
                return Err("`prompt` must be a string or a non-empty array of strings".into());
            }
        },
    };
    Ok(ApiRequest {
        model,
        prompts,
        sampling,
    })
}

fn decode_messages(v: Option<&Value>) -> Result<Vec<Message>, String> {
    let items = v
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| "`messages` must be a non-empty array".to_string())?;
    items
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let role = m
                .get("role")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("messages[{i}].role must be a string"))?;
            if !matches!(role, "system" | "user" | "assistant" | "developer") {
                return Err(format!(
                    "messages[{i}].role {role:?} is not supported (system, developer, user, assistant)"
                ));
            }
            let role = if role == "developer" { "system" } else { role };
            let content = match m.get("content") {
                Some(Value::String(s)) => s.clone(),
                // OpenAI allows a null content on assistant turns (e.g. with tool calls).
                Some(Value::Null) if role == "assistant" => String::new(),
                Some(Value::Array(parts)) => {
                    let mut text = String::new();
                    for (j, p) in parts.iter().enumerate() {
                        match (
                            p.get("type").and_then(Value::as_str),
                            p.get("text").and_then(Value::as_str),
                        ) {
                            (Some("text"), Some(t)) => text.push_str(t),
                            _ => {
                                return Err(format!(
                                    "messages[{i}].content[{j}] is not a text part"
                                ));
                            }
                        }
                    }
                    text
                }
                _ => {
                    return Err(format!(
                        "messages[{i}].content must be a string or an array of text parts"
                    ));
                }
            };
            Ok(Message::new(role, content))
        })
        .collect()
}

fn decode_sampling(obj: &Map<String, Value>) -> Result<Sampling, String> {
    let num = |name: &str| -> Result<Option<f64>, String> {
        match obj.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|x| x.is_finite())
                .map(Some)
                .ok_or_else(|| format!("`{name}` must be a number")),
        }
    };
    let uint = |name: &str| -> Result<Option<u64>, String> {
        match obj.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| format!("`{name}` must be a non-negative integer")),
        }
    };
    // OpenAI's defaults: temperature 1, top_p 1.
    let mut s = Sampling {
        temperature: 1.0,
        ..Sampling::default()
    };
    // Out-of-range values stay out of range through the f32 conversion (and are named
    // by `validate`); huge ones become infinite, which `validate` refuses too.
    if let Some(t) = num("temperature")? {
        s.temperature = t as f32;
    }
    if let Some(p) = num("top_p")? {
        s.top_p = p as f32;
    }
    if let Some(p) = num("min_p")? {
        s.min_p = p as f32;
    }
    if let Some(k) = uint("top_k")? {
        s.top_k = u32::try_from(k).map_err(|_| format!("`top_k` = {k} is too large"))?;
    }
    if let Some(seed) = uint("seed")? {
        s.seed = seed;
    }
    for name in ["max_completion_tokens", "max_tokens"] {
        if let Some(m) = uint(name)? {
            if m == 0 {
                return Err(format!("{name} = 0 is out of range: must be at least 1"));
            }
            s.max_tokens = u32::try_from(m).map_err(|_| format!("`{name}` = {m} is too large"))?;
            break;
        }
    }
    s.stop = match obj.get("stop") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(x)) => vec![x.clone()],
        Some(Value::Array(xs)) => xs
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| "`stop` entries must be strings".to_string())
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("`stop` must be a string or an array of strings".into()),
    };
    s.grammar = match obj.get("grammar") {
        None | Some(Value::Null) => None,
        Some(Value::String(g)) => Some(g.clone()),
        Some(_) => return Err("`grammar` must be a GBNF string".into()),
    };
    if let Some(rf) = obj.get("response_format")
        && rf.get("type").and_then(Value::as_str) == Some("json_schema")
    {
        match rf.get("json_schema").and_then(|j| j.get("schema")) {
            Some(schema @ Value::Object(_)) => s.json_schema = Some(schema.clone()),
            _ => {
                return Err(
                    "`response_format.json_schema.schema` must be a JSON schema object".into(),
                );
            }
        }
    }
    s.validate().map_err(|e| match e {
        ExecutorError::InvalidRequest(m) => m,
        other => other.to_string(),
    })?;
    Ok(s)
}

// ---------------------------------------------------------------------------------
// Responses.

/// The identity fields of a response.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseMeta<'a> {
    pub id: &'a str,
    /// Unix seconds.
    pub created: u64,
    /// The model name clients asked for.
    pub model: &'a str,
}

/// The 200 body for `completions` (one choice each, in order), with usage and timings
/// summed over the choices.
pub fn encode_response(
    endpoint: Endpoint,
    meta: &ResponseMeta<'_>,
    completions: &[Completion],
) -> Value {
    let mut choices = Vec::with_capacity(completions.len());
    let (mut prompt_tokens, mut completion_tokens, mut cached_tokens) = (0u64, 0u64, 0u64);
    let (mut prompt_ms, mut predicted_ms) = (0f64, 0f64);
    for (index, c) in completions.iter().enumerate() {
        prompt_tokens += u64::from(c.usage.prompt_tokens);
        completion_tokens += u64::from(c.usage.completion_tokens);
        cached_tokens += u64::from(c.usage.cached_prompt_tokens);
        prompt_ms += c.timings.prompt_ms;
        predicted_ms += c.timings.generation_ms;
        let finish = match c.finish_reason {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
        };
        choices.push(match endpoint {
            Endpoint::Chat => json!({
                "index": index,
                "message": {"role": "assistant", "content": c.text},
                "finish_reason": finish,
                "hrl_cached": c.cached,
            }),
            Endpoint::Completions => json!({
                "index": index,
                "text": c.text,
                "finish_reason": finish,
                "hrl_cached": c.cached,
            }),
        });
    }
    json!({
        "id": meta.id,
        "object": match endpoint {
            Endpoint::Chat => "chat.completion",
            Endpoint::Completions => "text_completion",
        },
        "created": meta.created,
        "model": meta.model,
        "choices": choices,
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        },
        "timings": {"prompt_ms": prompt_ms, "predicted_ms": predicted_ms},
    })
}

/// Read a 200 body from `url` (the first choice). `total_ms` is the client's wall time
/// for the attempt; without server `timings` it all counts as generation. A body that
/// is not the documented shape is [`ExecutorError::MalformedResponse`] naming the field.
pub fn decode_response(
    url: &str,
    body: &str,
    endpoint: Endpoint,
    total_ms: f64,
) -> Result<Completion, ExecutorError> {
    let bad = |detail: String| ExecutorError::MalformedResponse {
        endpoint: url.to_string(),
        detail,
    };
    let v: Value = serde_json::from_str(body)
        .map_err(|e| bad(format!("not JSON ({e}): {}", snippet(body))))?;
    if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
        return Err(ExecutorError::Http(format!(
            "{url}: server reported an error with status 200: {}",
            snippet(&err.to_string())
        )));
    }
    let choice = v
        .get("choices")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(format!("no `choices` array: {}", snippet(body))))?
        .first()
        .ok_or_else(|| bad("`choices` is empty".into()))?;
    let text = match endpoint {
        Endpoint::Chat => {
            let content = choice
                .get("message")
                .ok_or_else(|| bad("choices[0] has no `message`".into()))?
                .get("content")
                .ok_or_else(|| bad("choices[0].message has no `content`".into()))?;
            content.as_str().ok_or_else(|| {
                bad(format!(
                    "choices[0].message.content is {content}, not a string"
                ))
            })?
        }
        Endpoint::Completions => {
            let t = choice
                .get("text")
                .ok_or_else(|| bad("choices[0] has no `text`".into()))?;
            t.as_str()
                .ok_or_else(|| bad(format!("choices[0].text is {t}, not a string")))?
        }
    };
    let finish_reason = match choice.get("finish_reason").and_then(Value::as_str) {
        Some("stop") | Some("eos") => FinishReason::Stop,
        Some("length") => FinishReason::Length,
        other => {
            return Err(bad(format!(
                "choices[0].finish_reason is {}, expected \"stop\" or \"length\"",
                other.map_or("missing".to_string(), |s| format!("{s:?}"))
            )));
        }
    };
    let cached = match choice.get("hrl_cached") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(bad(format!(
                "choices[0].hrl_cached is {other}, not a boolean"
            )));
        }
    };
    let count = |v: Option<&Value>, name: &str| -> Result<u32, ExecutorError> {
        match v {
            None | Some(Value::Null) => Ok(0),
            Some(n) => n
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| bad(format!("{name} is {n}, not a token count"))),
        }
    };
    let usage = match v.get("usage") {
        None | Some(Value::Null) => Usage::default(),
        Some(u) => Usage {
            prompt_tokens: count(u.get("prompt_tokens"), "usage.prompt_tokens")?,
            completion_tokens: count(u.get("completion_tokens"), "usage.completion_tokens")?,
            cached_prompt_tokens: count(
                u.get("prompt_tokens_details")
                    .and_then(|d| d.get("cached_tokens")),
                "usage.prompt_tokens_details.cached_tokens",
            )?,
        },
    };
    let t = v.get("timings");
    let ms = |name: &str| t.and_then(|t| t.get(name)).and_then(Value::as_f64);
    let timings = match (ms("prompt_ms"), ms("predicted_ms")) {
        (Some(p), Some(g)) => Timings {
            prompt_ms: p,
            generation_ms: g,
            total_ms,
        },
        _ => Timings {
            prompt_ms: 0.0,
            generation_ms: total_ms,
            total_ms,
        },
    };
    Ok(Completion {
        text: text.to_string(),
        finish_reason,
        usage,
        timings,
        cached,
    })
}

// ---------------------------------------------------------------------------------
// Models and errors.

/// One entry of `GET /models`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServedModel {
    pub id: String,
    /// The model identity an `hrl serve` endpoint reports.
    pub hrl_model_id: Option<String>,
}

/// The `GET /models` body listing `models`.
pub fn encode_models(models: &[ServedModel]) -> Value {
    json!({
        "object": "list",
        "data": models.iter().map(|m| {
            let mut e = json!({
                "id": m.id,
                "object": "model",
                "created": 0,
                "owned_by": "harness-rl",
            });
            if let Some(h) = &m.hrl_model_id {
                e["hrl_model_id"] = json!(h);
            }
            e
        }).collect::<Vec<_>>(),
    })
}

/// Read a `GET /models` body from `url`.
pub fn decode_models(url: &str, body: &str) -> Result<Vec<ServedModel>, ExecutorError> {
    let bad = |detail: String| ExecutorError::MalformedResponse {
        endpoint: url.to_string(),
        detail,
    };
    let v: Value = serde_json::from_str(body)
        .map_err(|e| bad(format!("not JSON ({e}): {}", snippet(body))))?;
    let data = v
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(format!("no `data` array: {}", snippet(body))))?;
    data.iter()
        .enumerate()
        .map(|(i, m)| {
            let id = m
                .get("id")
                .and_then(Value::as_str)
                .ok_or_else(|| bad(format!("data[{i}].id is not a string")))?;
            Ok(ServedModel {
                id: id.to_string(),
                hrl_model_id: m
                    .get("hrl_model_id")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            })
        })
        .collect()
}

/// The error body: `{"error": {"message", "type", "code"}}` (the code is the HTTP
/// status).
pub fn encode_error(message: &str, kind: &str, status: u16) -> Value {
    json!({"error": {"message": message, "type": kind, "code": status}})
}

/// The human-readable message of an error body: `error.message` (OpenAI), else the
/// `error` value, else FastAPI's `detail`, else the start of the body.
pub fn decode_error(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v.get("error")
                .map(|e| {
                    e.get("message")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .unwrap_or_else(|| e.to_string())
                })
                .or_else(|| v.get("detail").map(|d| d.to_string()))
        })
        .unwrap_or_else(|| snippet(body))
}

/// The first 300 characters of a body, for error messages.
pub(crate) fn snippet(body: &str) -> String {
    const MAX: usize = 300;
    let body = body.trim();
    if body.is_empty() {
        return "(empty body)".into();
    }
    match body.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &body[..i]),
        None => body.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executor::cache::CacheKey;

    fn requests() -> Vec<Request> {
        let base = Sampling::default();
        let sampled = Sampling {
            temperature: 0.7,
            top_p: 0.9,
            top_k: 40,
            min_p: 0.05,
            seed: 12345678901234,
            max_tokens: 77,
            stop: vec!["\n\n".into(), "</answer>".into()],
            grammar: Some("root ::= \"a\" | \"b\"".into()),
            json_schema: None,
        };
        vec![
            Request {
                prompt: Prompt::Chat(vec![Message::system("s"), Message::user("u é \u{0}")]),
                sampling: base.clone(),
            },
            Request {
                prompt: Prompt::Chat(vec![
                    Message::user("q"),
                    Message::new("assistant", "a"),
                    Message::user("q2"),
                ]),
                sampling: sampled.clone(),
            },
            Request {
                prompt: Prompt::Raw("once upon".into()),
                sampling: Sampling {
                    top_k: 0,
                    min_p: 0.0,
                    ..sampled
                },
            },
            Request {
                prompt: Prompt::Raw(String::new()),
                sampling: Sampling {
                    temperature: 1e-3,
                    top_p: 1.0,
                    ..base.clone()
                },
            },
            Request {
                prompt: Prompt::Chat(vec![Message::user("edits?")]),
                sampling: Sampling {
                    json_schema: Some(json!({"type": "array", "maxItems": 2,
                        "items": {"enum": ["a", "b"]}})),
                    ..base
                },
            },
        ]
    }

    #[test]
    fn a_json_schema_goes_as_response_format_and_unsupported_ones_are_refused() {
        let r = requests().pop().unwrap();
        let (_, body) = encode_request("m", &r).unwrap();
        assert_eq!(body["response_format"]["type"], "json_schema");
        assert_eq!(
            body["response_format"]["json_schema"]["schema"],
            *r.sampling.json_schema.as_ref().unwrap()
        );
        assert!(body.get("grammar").is_none());
        let e = decode_request(
            &chat_with(json!({"response_format": {"type": "json_schema",
                "json_schema": {"schema": {"type": "number"}}}})),
            Endpoint::Chat,
        )
        .unwrap_err();
        assert!(
            e.contains("JSON schema cannot be used") && e.contains("schema/type"),
            "{e}"
        );
        let e = decode_request(
            &chat_with(json!({"response_format": {"type": "json_object"}})),
            Endpoint::Chat,
        )
        .unwrap_err();
        assert!(e.contains("response_format"), "{e}");
        let e = decode_request(
            &chat_with(json!({"grammar": "root ::= \"a\"", "response_format":
                {"type": "json_schema", "json_schema": {"schema": {"const": 1}}}})),
            Endpoint::Chat,
        )
        .unwrap_err();
        assert!(e.contains("not both"), "{e}");
    }

    #[test]
    fn a_request_survives_the_round_trip_through_the_wire() {
        for r in requests() {
            let (endpoint, body) = encode_request("m", &r).unwrap();
            let back = decode_request(&body, endpoint).unwrap();
            assert_eq!(back.model.as_deref(), Some("m"));
            let back = back.requests();
            assert_eq!(back.len(), 1);
            assert_eq!(back[0].prompt, r.prompt);
            if r.sampling.is_greedy() {
                // Greedy requests do not send the knobs greedy decoding ignores; the
                // completion's identity (its cache key) is the same.
                assert_eq!(CacheKey::new("x", &back[0]), CacheKey::new("x", &r));
            } else {
                assert_eq!(back[0].sampling, r.sampling);
            }
        }
    }

    #[test]
    fn a_response_survives_the_round_trip_through_the_wire() {
        let c = Completion {
            text: "héllo <answer>4</answer>".into(),
            finish_reason: FinishReason::Length,
            usage: Usage {
                prompt_tokens: 31,
                completion_tokens: 7,
                cached_prompt_tokens: 12,
            },
            timings: Timings {
                prompt_ms: 180.87043699999998,
                generation_ms: 233.43477800000002,
                total_ms: 999.0,
            },
            cached: true,
        };
        for endpoint in [Endpoint::Chat, Endpoint::Completions] {
            let meta = ResponseMeta {
                id: "x-1",
                created: 5,
                model: "m",
            };
            let body = encode_response(endpoint, &meta, std::slice::from_ref(&c)).to_string();
            let back = decode_response("E", &body, endpoint, 999.0).unwrap();
            assert_eq!(back, c);
        }
        let models = vec![
            ServedModel {
                id: "a".into(),
                hrl_model_id: Some("sha".into()),
            },
            ServedModel {
                id: "b".into(),
                hrl_model_id: None,
            },
        ];
        let body = encode_models(&models).to_string();
        assert_eq!(decode_models("E", &body).unwrap(), models);
        let body = encode_error("bad `x`", "invalid_request_error", 400).to_string();
        assert_eq!(decode_error(&body), "bad `x`");
    }

    fn chat_with(extra: Value) -> Value {
        let mut body = json!({"messages": [{"role": "user", "content": "x"}]});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        body
    }

    #[test]
    fn every_nullable_field_accepts_null() {
        // The nullable fields of the OpenAI chat and completions requests.
        let nullable = [
            "model",
            "temperature",
            "top_p",
            "n",
            "stream",
            "stop",
            "max_tokens",
            "max_completion_tokens",
            "seed",
            "frequency_penalty",
            "presence_penalty",
            "logit_bias",
            "logprobs",
            "top_logprobs",
            "user",
            "response_format",
            "stream_options",
            "tools",
            "tool_choice",
            "parallel_tool_calls",
            "metadata",
            "store",
            "service_tier",
            "modalities",
            "audio",
            "prediction",
            "reasoning_effort",
            "web_search_options",
            "best_of",
            "echo",
            "suffix",
            "top_k",
            "min_p",
            "grammar",
        ];
        for field in nullable {
            let body = chat_with(json!({ field: null }));
            let r = decode_request(&body, Endpoint::Chat)
                .unwrap_or_else(|e| panic!("{field}: null refused: {e}"));
            assert_eq!(r.sampling.temperature, 1.0, "{field}");
            assert_eq!(r.sampling.top_p, 1.0, "{field}");
            let mut raw = body.clone();
            raw.as_object_mut().unwrap().remove("messages");
            raw["prompt"] = json!("p");
            decode_request(&raw, Endpoint::Completions)
                .unwrap_or_else(|e| panic!("{field}: null refused on /completions: {e}"));
        }
        // An assistant turn's content is nullable too.
        let body = json!({"messages": [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": null},
            {"role": "user", "content": "y"},
        ]});
        let r = decode_request(&body, Endpoint::Chat).unwrap();
        assert_eq!(
            r.prompts[0],
            Prompt::Chat(vec![
                Message::user("x"),
                Message::new("assistant", ""),
                Message::user("y")
            ])
        );
    }

    #[test]
    fn unsupported_fields_are_accepted_off_and_refused_on_by_name() {
        let off = json!({
            "n": 1, "stream": false, "frequency_penalty": 0, "presence_penalty": 0.0,
            "logit_bias": {}, "logprobs": false, "tools": [], "tool_choice": "none",
            "response_format": {"type": "text"}, "user": "u", "metadata": {"a": "b"},
            "store": false, "parallel_tool_calls": true, "echo": false, "best_of": 1,
            "repetition_penalty": 1.0,
        });
        decode_request(&chat_with(off), Endpoint::Chat).unwrap();
        for (field, value) in [
            ("n", json!(2)),
            ("stream", json!(true)),
            ("frequency_penalty", json!(0.5)),
            ("presence_penalty", json!(-1)),
            ("logit_bias", json!({"42": 100})),
            ("logprobs", json!(true)),
            ("top_logprobs", json!(3)),
            ("tools", json!([{"type": "function"}])),
            ("tool_choice", json!("required")),
            ("response_format", json!({"type": "json_object"})),
            ("best_of", json!(3)),
            ("echo", json!(true)),
            ("suffix", json!("end")),
            ("repetition_penalty", json!(1.3)),
            ("stream_options", json!({"include_usage": true})),
        ] {
            let err = decode_request(&chat_with(json!({ field: value })), Endpoint::Chat)
                .err()
                .unwrap_or_else(|| panic!("{field} = {value} accepted"));
            let name = if field == "n" { "n = 1" } else { field };
            assert!(err.contains(name), "{field}: {err}");
        }
    }

    #[test]
    fn out_of_range_sampling_names_the_field_and_the_real_range() {
        for (field, value, want) in [
            ("temperature", json!(150), "between 0 and 100"),
            ("temperature", json!(-1), "between 0 and 100"),
            ("top_p", json!(0), "(0, 1]"),
            ("top_p", json!(1.5), "(0, 1]"),
            ("min_p", json!(2), "[0, 1]"),
            ("max_tokens", json!(0), "at least 1"),
            ("max_completion_tokens", json!(0), "at least 1"),
            ("temperature", json!(1e300), "between 0 and 100"),
        ] {
            let err = decode_request(&chat_with(json!({ field: value })), Endpoint::Chat)
                .err()
                .unwrap_or_else(|| panic!("{field} = {value} accepted"));
            assert!(err.contains(field) && err.contains(want), "{field}: {err}");
        }
        let r = decode_request(&chat_with(json!({"temperature": 100})), Endpoint::Chat).unwrap();
        assert_eq!(r.sampling.temperature, 100.0);
    }

    #[test]
    fn malformed_bodies_name_the_field() {
        let cases = [
            (
                r#"{"choices":[{"message":{"content":null},"finish_reason":"stop"}]}"#,
                Endpoint::Chat,
                "choices[0].message.content is null",
            ),
            (
                r#"{"choices":[{"text":"x","finish_reason":"tool_calls"}]}"#,
                Endpoint::Completions,
                "finish_reason is \"tool_calls\"",
            ),
            (
                r#"{"choices":[{"text":"x","finish_reason":"stop"}],"usage":{"prompt_tokens":-3}}"#,
                Endpoint::Completions,
                "usage.prompt_tokens is -3",
            ),
            (
                r#"{"choices":[{"text":"x","finish_reason":"stop","hrl_cached":"yes"}]}"#,
                Endpoint::Completions,
                "choices[0].hrl_cached is \"yes\"",
            ),
        ];
        for (body, endpoint, want) in cases {
            let e = decode_response("E", body, endpoint, 1.0)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn greedy_requests_send_temperature_zero_and_no_sampler_knobs() {
        let greedy = Request {
            prompt: Prompt::Raw("p".into()),
            sampling: Sampling {
                top_k: 40,
                min_p: 0.1,
                ..Sampling::default()
            },
        };
        let (_, m) = encode_request("m", &greedy).unwrap();
        assert_eq!(m["temperature"], json!(0.0));
        assert!(m.get("top_k").is_none() && m.get("min_p").is_none());
        let mut sampled = greedy;
        sampled.sampling.temperature = 0.7;
        let (_, m) = encode_request("m", &sampled).unwrap();
        assert_eq!(m["top_k"], json!(40));
        // Out-of-range sampling never reaches the wire.
        sampled.sampling.top_p = 0.0;
        let e = encode_request("m", &sampled).unwrap_err().to_string();
        assert!(e.contains("top_p"), "{e}");
    }
}
