//! `hrl run`: run one harness on a task set with an executor. The flags become a
//! `harness::job::JobSettings` in one place ([`settings`]); the library does the
//! rest. This file only draws the progress bar and prints the table.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::{Args, ValueEnum};
use harness_rl::executor::spec::ExecutorSpec;
use harness_rl::harness::dispatch::DispatchConfig;
use harness_rl::harness::job::{JobSettings, JobSummary, execute};
use harness_rl::harness::runtime::{ProgramLimits, RunConfig};
use harness_rl::harness::tools::ToolLimits;
use harness_rl::lcb::{GradeConfig, TimeoutClock};
use harness_rl::sandbox::SandboxConfig;
use indicatif::{ProgressBar, ProgressStyle};

use super::UsageError;

#[derive(Clone, Copy, ValueEnum)]
pub enum Clock {
    Wall,
    Cpu,
}

#[derive(Args)]
pub struct RunArgs {
    /// The harness: a .toml/.json declarative harness or a .py program harness.
    #[arg(long)]
    pub harness: PathBuf,
    /// Task SPEC (repeatable): families:NAMES|ROLE@SPLIT[:level=L][:n=N][:seed=S][:start=I][:variant=V][:distinct=true],
    /// jsonl:PATH, lcb:DIR[:release=TAG][:from=DATE][:to=DATE][:platform=P]
    /// [:difficulty=D][:n=N][:start=I], humaneval[:PATH][:n=N][:start=I].
    #[arg(long, required = true)]
    pub tasks: Vec<String>,
    /// Executor SPEC: llama:NAME|PATH[,n_parallel=N,ctx=N,threads=N,lora=PATH,...] or
    /// openai:URL#MODEL[,max_connections=N].
    #[arg(long, default_value = "llama:smollm2-135m")]
    pub executor: String,
    /// Run directory [default: runs/<harness name>-<hash prefix>]; a rerun into the
    /// same directory resumes.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print summary.json instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Rollouts in flight [default: 2 x the executor's parallelism, at least 4].
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Rollouts per item.
    #[arg(long, default_value_t = 1)]
    pub samples: u32,
    /// Base seed of sampled decoding.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Reproducible batching: rollouts run in wave groups of N consecutive (item,
    /// sample) pairs whose executor calls are decoded in barrier-synchronous waves in
    /// canonical order, so a rerun (or a resume) gives the same rollouts whatever the
    /// timing [default: the concurrency].
    #[arg(long, value_name = "N")]
    pub waves: Option<usize>,
    /// Form executor batches by timing (the batch window) instead of waves: no
    /// barrier, but the batch schedule (and so greedy text) depends on timing.
    #[arg(long, conflicts_with = "waves")]
    pub no_waves: bool,
    /// Milliseconds to wait for more executor calls before sending a batch
    /// (with --no-waves).
    #[arg(long, default_value_t = 20)]
    pub batch_window_ms: u64,
    /// Program harnesses: most llm calls per item.
    #[arg(long, default_value_t = 32)]
    pub max_llm_calls: u32,
    /// Program harnesses: most prompt + completion tokens per item.
    #[arg(long, default_value_t = 65536)]
    pub max_item_tokens: u64,
    /// Program harnesses: most python() calls per item.
    #[arg(long, default_value_t = 32)]
    pub max_tool_calls: u32,
    /// Program harnesses: seconds per item, not counting executor waits.
    #[arg(long, default_value_t = 60.0)]
    pub harness_timeout: f64,
    /// Seconds per Python tool or program run.
    #[arg(long, default_value_t = 10.0)]
    pub tool_timeout: f64,
    /// Memory per Python tool or program run, in MB.
    #[arg(long, default_value_t = 512)]
    pub tool_memory: u64,
    /// Code items: seconds per test.
    #[arg(long, default_value_t = 6.0)]
    pub grade_timeout: f64,
    /// Code items: what the per-test limit measures.
    #[arg(long, value_enum, default_value = "wall")]
    pub timeout_clock: Clock,
    /// Run only shard I of N of the items (1-based, round-robin over the task set's
    /// items, each with all its samples; combine the shards' directories with
    /// `hrl merge`).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Do not draw a progress bar.
    #[arg(long)]
    pub no_progress: bool,
    /// Run sandboxed code without the isolation layers that are missing (trusted code
    /// only).
    #[arg(long)]
    pub unsafe_no_isolation: bool,
    /// The sandbox's Python interpreter (a path, or a name looked up on PATH); its
    /// version and installed packages are part of the results' identity
    /// (`sandbox_python` in summary.json).
    #[arg(long, value_name = "PYTHON", default_value = "python3")]
    pub python: PathBuf,
    #[command(flatten)]
    pub cache: super::cache::CacheArgs,
}

fn positive(name: &str, v: f64) -> Result<Duration> {
    if !(v.is_finite() && v > 0.0) {
        return Err(UsageError(format!("--{name} must be a positive number of seconds")).into());
    }
    Ok(Duration::from_secs_f64(v))
}

/// The flags as a library config.
pub fn settings(a: &RunArgs) -> Result<JobSettings> {
    let executor = ExecutorSpec::parse(&a.executor).map_err(|e| UsageError(e.to_string()))?;
    if a.samples == 0 {
        return Err(UsageError("--samples must be >= 1".into()).into());
    }
    let concurrency = a
        .concurrency
        .unwrap_or_else(|| (2 * executor.parallelism()).max(4));
    if concurrency == 0 {
        return Err(UsageError("--concurrency must be >= 1".into()).into());
    }
    let out = match &a.out {
        Some(o) => o.clone(),
        None => {
            let h = harness_rl::harness::Harness::load(&a.harness)?;
            let stem = a
                .harness
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "harness".into());
            PathBuf::from("runs").join(format!("{stem}-{}", &h.hash()[..8]))
        }
    };
    let cache = a.cache.setting();
    Ok(JobSettings {
        harness: a.harness.clone(),
        tasks: a.tasks.clone(),
        executor,
        cache,
        out,
        config: RunConfig {
            concurrency,
            dispatch: DispatchConfig {
                window: Duration::from_millis(a.batch_window_ms),
                ..DispatchConfig::default()
            },
            program: ProgramLimits {
                max_llm_calls: a.max_llm_calls,
                max_tokens: a.max_item_tokens,
                max_tool_calls: a.max_tool_calls,
                wall: positive("harness-timeout", a.harness_timeout)?,
                ..ProgramLimits::default()
            },
            tool: ToolLimits {
                timeout: positive("tool-timeout", a.tool_timeout)?,
                memory_mb: a.tool_memory.max(32),
                ..ToolLimits::default()
            },
            seed: a.seed,
            samples: a.samples,
            waves: if a.no_waves {
                None
            } else {
                match a.waves {
                    Some(0) => return Err(UsageError("--waves must be >= 1".into()).into()),
                    Some(n) => Some(n),
                    None => Some(concurrency),
                }
            },
        },
        sandbox: SandboxConfig {
            unsafe_no_isolation: a.unsafe_no_isolation,
            python: a.python.clone(),
        },
        grade: GradeConfig {
            timeout: positive("grade-timeout", a.grade_timeout)?,
            clock: match a.timeout_clock {
                Clock::Wall => TimeoutClock::Wall,
                Clock::Cpu => TimeoutClock::Cpu,
            },
            ..GradeConfig::default()
        },
        shard: a
            .shard
            .as_deref()
            .map(str::parse::<harness_rl::shard::Shard>)
            .transpose()?,
    })
}

fn print_table(s: &JobSummary, out: &std::path::Path) {
    print!("{}", s.aggregates.table());
    println!(
        "harness {} ({}, {}), executor {} [{}], {} items x {} samples",
        &s.harness.hash[..12],
        s.harness.kind.as_str(),
        s.harness.name,
        s.executor.model,
        s.executor.build.short(),
        s.items,
        s.samples
    );
    let fails: Vec<String> = s
        .aggregates
        .failures
        .iter()
        .filter(|(_, v)| **v > 0)
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    println!(
        "failures: {}; executor-free rollouts: {} ({:.1}%)",
        if fails.is_empty() {
            "none".into()
        } else {
            fails.join(", ")
        },
        s.aggregates.executor_free,
        100.0 * s.aggregates.executor_free_rate
    );
    println!(
        "executor batches: {} (mean {:.1} requests, max {}); calls {} ({} from cache); tokens: {} prompt, {} completion",
        s.batching.batches,
        s.batching.mean_size(),
        s.batching.max_size,
        s.aggregates.executor_calls,
        s.aggregates.cached_calls,
        s.aggregates.tokens.prompt,
        s.aggregates.tokens.completion
    );
    println!(
        "wall {:.1} s, {:.2} items/s ({} reused from an earlier run; {:.1} s over {} invocations); written to {}",
        s.wall_s,
        s.items_per_s,
        s.reused,
        s.wall_s_total,
        s.invocations,
        out.display()
    );
}

pub fn run(a: RunArgs) -> Result<()> {
    let settings = settings(&a)?;
    let bar = if a.no_progress || a.json {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(0);
        b.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30}] {pos}/{len} ETA {eta} score {msg}",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        b
    };
    let progress = |p: harness_rl::harness::runtime::RunProgress| {
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
        bar.set_message(format!("{:.3}", p.mean_score));
    };
    let result = execute(&settings, &progress);
    bar.finish_and_clear();
    let (summary, _) = result?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print_table(&summary, &settings.out);
    }
    if summary.cache.as_ref().is_some_and(|c| c.errors > 0) {
        eprintln!(
            "hrl: warning: the completion cache failed on some requests (results were still computed)"
        );
    }
    Ok(())
}
