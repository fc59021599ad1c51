//! `--endpoint URL` and its client options: run a command against an OpenAI-compatible
//! server (vLLM, SGLang, llama-server, `hrl serve`) instead of loading a GGUF.

use anyhow::Result;
use clap::Args;
use harness_rl::executor::spec::{ExecutorSpec, OpenAiSpec};

use super::UsageError;

#[derive(Args, Clone, Debug)]
pub struct EndpointArgs {
    /// An OpenAI-compatible base URL (e.g. http://127.0.0.1:8080/v1); `--model` is then
    /// the served model's name. API key from HRL_API_KEY or OPENAI_API_KEY.
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// Most requests in flight to the endpoint.
    #[arg(long, default_value_t = 8, requires = "endpoint")]
    pub max_connections: usize,
    /// Seconds allowed for one HTTP attempt.
    #[arg(long, default_value_t = 600.0, requires = "endpoint")]
    pub timeout_s: f64,
    /// Retries on 429, 5xx, timeouts and failed connections.
    #[arg(long, default_value_t = 5, requires = "endpoint")]
    pub max_retries: u32,
}

// Used by `generate`, which needs the `llama` feature.
#[cfg_attr(not(feature = "llama"), allow(dead_code))]
impl EndpointArgs {
    /// The endpoint as an executor spec, if one was given.
    pub fn spec(&self, model: &str) -> Result<Option<ExecutorSpec>> {
        let Some(url) = &self.endpoint else {
            return Ok(None);
        };
        if self.max_connections == 0 || !(self.timeout_s > 0.0 && self.timeout_s.is_finite()) {
            return Err(
                UsageError("--max-connections must be >= 1 and --timeout-s > 0".into()).into(),
            );
        }
        Ok(Some(ExecutorSpec::Openai(OpenAiSpec {
            url: url.clone(),
            model: model.to_string(),
            max_connections: self.max_connections,
            timeout_s: self.timeout_s,
            retries: self.max_retries,
        })))
    }
}
