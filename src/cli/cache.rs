//! `hrl cache stats|clear`, and the `--cache PATH` / `--no-cache` options shared by
//! every command that calls a model.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{ArgGroup, Args, Subcommand};
use harness_rl::executor::Executor;
use harness_rl::executor::cache::{CachedExecutor, CompletionCache, default_cache_path};

#[derive(Subcommand)]
pub enum CacheCmd {
    /// Entries per model and the size of the cache file.
    Stats {
        #[arg(long, value_name = "PATH")]
        cache: Option<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Delete the entries of one model, or all entries.
    #[command(group(ArgGroup::new("what").required(true).args(["model", "all"])))]
    Clear {
        #[arg(long, value_name = "PATH")]
        cache: Option<PathBuf>,
        /// The model id to clear (as `hrl cache stats` lists it).
        #[arg(long)]
        model: Option<String>,
        /// Clear every entry.
        #[arg(long)]
        all: bool,
    },
}

/// The cache wrapper of a run, kept for its hit/miss counters.
pub type CachedHandle = Arc<CachedExecutor>;

/// Completion-cache options for commands that call a model.
#[derive(Args, Clone, Debug)]
pub struct CacheArgs {
    /// Completion cache file [default: $HRL_HOME/cache/completions.sqlite].
    #[arg(long, value_name = "PATH")]
    pub cache: Option<PathBuf>,
    /// Call the model for every request; neither read nor write the cache.
    #[arg(long, conflicts_with = "cache")]
    pub no_cache: bool,
}

impl CacheArgs {
    /// The flags as the evaluator's cache choice (`None`: the suite's or the default).
    pub fn choice(&self) -> Option<harness_rl::eval::config::CacheChoice> {
        use harness_rl::eval::config::CacheChoice;
        if self.no_cache {
            Some(CacheChoice::Off)
        } else {
            self.cache.clone().map(CacheChoice::Path)
        }
    }
}

// Used by `generate` and `serve`, which need the `llama` feature.
#[cfg_attr(not(feature = "llama"), allow(dead_code))]
impl CacheArgs {
    /// The flags as the library's cache setting.
    pub fn setting(&self) -> harness_rl::executor::spec::CacheSetting {
        use harness_rl::executor::spec::CacheSetting;
        if self.no_cache {
            CacheSetting::Off
        } else {
            self.cache
                .clone()
                .map_or(CacheSetting::Default, CacheSetting::Path)
        }
    }

    /// Wrap `exec` in the completion cache unless `--no-cache`. Also returns the
    /// wrapper, for its hit/miss counters.
    pub fn wrap(
        &self,
        exec: Arc<dyn Executor>,
    ) -> Result<(Arc<dyn Executor>, Option<CachedHandle>)> {
        if self.no_cache {
            return Ok((exec, None));
        }
        let path = self.cache.clone().unwrap_or_else(default_cache_path);
        let cache = Arc::new(CompletionCache::open(&path)?);
        let cached = Arc::new(CachedExecutor::new(exec, cache));
        Ok((cached.clone(), Some(cached)))
    }
}

#[cfg_attr(not(feature = "llama"), allow(dead_code))]
/// One line for standard error after a run: hits, misses, and any cache failure.
pub fn report(cached: Option<&CachedExecutor>) {
    if let Some(c) = cached {
        let n = c.counters();
        eprintln!(
            "hrl: completion cache {}: {} hits, {} misses",
            c.cache().path().display(),
            n.hits(),
            n.misses()
        );
        if n.errors() > 0 {
            eprintln!(
                "hrl: warning: {} cache operations failed (results were still returned); last: {}",
                n.errors(),
                n.last_error().unwrap_or_default()
            );
        }
    }
}

pub fn run(cmd: CacheCmd) -> Result<()> {
    match cmd {
        CacheCmd::Stats { cache, json } => stats(cache, json),
        CacheCmd::Clear { cache, model, all } => clear(cache, model, all),
    }
}

fn stats(path: Option<PathBuf>, json: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let path = path.unwrap_or_else(default_cache_path);
    let Some(cache) = CompletionCache::open_existing(&path)? else {
        if json {
            writeln!(
                out,
                "{}",
                serde_json::json!({"path": path, "entries": 0, "bytes": 0, "models": []})
            )?;
        } else {
            writeln!(out, "{}: no cache yet", path.display())?;
        }
        return Ok(());
    };
    let s = cache.stats()?;
    if json {
        writeln!(out, "{}", serde_json::to_string(&s)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "{}: {} entries, {:.1} MiB",
        s.path.display(),
        s.entries,
        s.bytes as f64 / (1024.0 * 1024.0)
    )?;
    if !s.models.is_empty() {
        writeln!(
            out,
            "{:<66} {:>9} {:>14}",
            "model", "entries", "gen. tokens"
        )?;
        for m in &s.models {
            writeln!(
                out,
                "{:<66} {:>9} {:>14}",
                m.model_id, m.entries, m.completion_tokens
            )?;
        }
    }
    Ok(())
}

fn clear(path: Option<PathBuf>, model: Option<String>, all: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let path = path.unwrap_or_else(default_cache_path);
    let Some(cache) = CompletionCache::open_existing(&path)? else {
        writeln!(out, "{}: no cache, nothing to clear", path.display())?;
        return Ok(());
    };
    let model = if all { None } else { model };
    let n = cache
        .clear(model.as_deref())
        .with_context(|| format!("clearing {}", path.display()))?;
    writeln!(out, "{}: deleted {n} entries", path.display())?;
    Ok(())
}
