//! `hrl lcb info|split|grade|prompt`: LiveCodeBench files, temporal splits and grading.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::{Args, Subcommand};
use harness_rl::lcb::grader::{self, Semantics, Summary, TimeoutClock};
use harness_rl::lcb::loader::{self, LoadOptions};
use harness_rl::lcb::split::{self, SideCounts, SplitSpec};
use harness_rl::lcb::{
    DateBound, DateWindow, GradeConfig, Grader, Problem, ReleaseTag, SampleResult, prompt,
};
use harness_rl::sandbox::SandboxConfig;
use serde_json::json;

use super::{UsageError, grading};
use harness_rl::grading::solutions;

#[derive(Subcommand)]
pub enum LcbCmd {
    /// Counts by file, release, platform, difficulty and date range.
    Info(InfoArgs),
    /// Temporal split: --preset v5-to-v6 or --cutoff DATE.
    Split(SplitArgs),
    /// Grade solutions (`{question_id, code}` lines) in the sandbox: per-problem
    /// results and pass@k, as JSON and a table.
    Grade(Box<GradeArgs>),
    /// Print LiveCodeBench's prompt for one problem (JSON messages).
    Prompt(PromptArgs),
}

#[derive(Args)]
pub struct LoadArgs {
    /// Directory holding test.jsonl, test2.jsonl, ...
    pub dir: PathBuf,
    /// release_vN, release_latest, vN or vA_vB.
    #[arg(long, default_value = "release_latest")]
    pub release: String,
    /// Report bad rows and skip them instead of stopping at the first one.
    #[arg(long)]
    pub skip_bad: bool,
    /// Cap on one row's decompressed private tests, in MiB.
    #[arg(long, default_value_t = 1024)]
    pub max_test_mib: usize,
}

#[derive(Args)]
pub struct WindowArgs {
    /// Keep problems with contest_date on or after this (YYYY-MM-DD[THH:MM:SS]).
    #[arg(long)]
    pub from: Option<String>,
    /// Keep problems with contest_date on or before this (a bare date covers the day).
    #[arg(long)]
    pub to: Option<String>,
}

#[derive(Args)]
pub struct InfoArgs {
    #[command(flatten)]
    pub load: LoadArgs,
    #[command(flatten)]
    pub window: WindowArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct SplitArgs {
    #[command(flatten)]
    pub load: LoadArgs,
    /// A named split: v5-to-v6.
    #[arg(long, conflicts_with = "cutoff", required_unless_present = "cutoff")]
    pub preset: Option<String>,
    /// Train on contest_date <= DATE, test on contest_date > DATE (over --release).
    #[arg(long)]
    pub cutoff: Option<String>,
    /// Write train.jsonl, test.jsonl (original lines) and split.json here.
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct GradeArgs {
    #[command(flatten)]
    pub load: LoadArgs,
    #[command(flatten)]
    pub window: WindowArgs,
    /// JSONL lines `{question_id, code}`; several lines per problem are samples.
    #[arg(long)]
    pub solutions: PathBuf,
    /// Treat `code` as a model response and grade its last fenced code block.
    #[arg(long)]
    pub extract: bool,
    /// k values for pass@k (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "1,5,10")]
    pub k: Vec<u64>,
    /// Per-test time limit in seconds.
    #[arg(long, default_value_t = 6.0)]
    pub timeout: f64,
    /// What --timeout measures: `wall` (LiveCodeBench) or `cpu` (the test's CPU time,
    /// robust on a busy machine; wall-clock backstop 4x + 1 s).
    #[arg(long, default_value = "wall", value_parser = ["wall", "cpu"])]
    pub timeout_clock: String,
    /// Accept numeric answers within this tolerance (off: exact, as LiveCodeBench).
    #[arg(long)]
    pub float_tol: Option<f64>,
    /// `judge`: each test in a fresh process with real stdin/stdout, as an online judge
    /// (default); `reference`: reproduce LiveCodeBench's own runner, quirks included.
    #[arg(long, default_value = "judge", value_parser = ["judge", "reference"])]
    pub semantics: String,
    /// Memory limit of each sandboxed run, in MiB.
    #[arg(long, default_value_t = 4096)]
    pub memory: u64,
    /// Solutions graded in parallel (default: number of CPUs).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Write the full JSON result here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Append each graded sample to this JSONL file as soon as it is done (kept even
    /// if the run is interrupted).
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// Print JSON to standard output instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Score every problem of the release/window; those without solutions count as
    /// 0 (default: only problems with at least one solution are scored).
    #[arg(long)]
    pub all_problems: bool,
    /// Python interpreter used inside the sandbox.
    #[arg(long, default_value = "python3")]
    pub python: PathBuf,
    /// Run model-written code WITHOUT isolation. Only for machines where the sandbox
    /// cannot isolate and the code is trusted.
    #[arg(long)]
    pub unsafe_no_isolation: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

#[derive(Args)]
pub struct PromptArgs {
    #[command(flatten)]
    pub load: LoadArgs,
    /// The problem's question_id.
    #[arg(long)]
    pub question_id: String,
}

pub fn run(cmd: LcbCmd) -> Result<()> {
    match cmd {
        LcbCmd::Info(a) => info(a),
        LcbCmd::Split(a) => split_cmd(a),
        LcbCmd::Grade(a) => grade(*a),
        LcbCmd::Prompt(a) => prompt_cmd(a),
    }
}

fn load_options(l: &LoadArgs, w: Option<&WindowArgs>, keep_private: bool) -> Result<LoadOptions> {
    let release: ReleaseTag = l.release.parse()?;
    let mut window = DateWindow::default();
    if let Some(w) = w {
        window.from = w.from.as_deref().map(DateBound::parse).transpose()?;
        window.to = w.to.as_deref().map(DateBound::parse).transpose()?;
    }
    if l.max_test_mib == 0 {
        return Err(UsageError("--max-test-mib must be at least 1".into()).into());
    }
    Ok(LoadOptions {
        release,
        window,
        skip_bad: l.skip_bad,
        keep_private_tests: keep_private,
        keep_private_ids: None,
        max_decompressed_bytes: l.max_test_mib.saturating_mul(1 << 20),
        threads: 0,
    })
}

fn report_bad(rows: &[loader::BadRow]) {
    for b in rows {
        eprintln!("hrl: skipped bad row: {b}");
    }
}

fn info(a: InfoArgs) -> Result<()> {
    let opts = load_options(&a.load, Some(&a.window), false)?;
    let ds = loader::load_dir(&a.load.dir, &opts)?;
    report_bad(&ds.bad_rows);
    let counts = split::counts(&format!("{}", ds.release), &ds.problems);
    let mut out = BufWriter::new(io::stdout().lock());
    if a.json {
        let v = json!({
            "dir": ds.dir,
            "release": ds.release.to_string(),
            "from": ds.window.from.map(|d| d.to_string()),
            "to": ds.window.to.map(|d| d.to_string()),
            "files": ds.files,
            "releases": ds.release_counts().into_iter().collect::<BTreeMap<_, _>>(),
            "counts": counts,
            "functional": ds.problems.iter().filter(|p| p.is_functional()).count(),
            "public_tests": ds.problems.iter().map(|p| p.public_test_cases.len()).sum::<usize>(),
            "private_tests": ds.problems.iter().map(|p| p.private_test_count).sum::<usize>(),
            "bad_rows": ds.bad_rows,
        });
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
    } else {
        writeln!(out, "{} in {}", ds.release, ds.dir.display())?;
        writeln!(
            out,
            "{:<14} {:>6} {:>6} {:>9}  dates",
            "file", "rows", "bad", "selected"
        )?;
        for f in &ds.files {
            let range = match (f.first_date, f.last_date) {
                (Some(a), Some(b)) => format!("{a} .. {b}"),
                _ => "-".into(),
            };
            writeln!(
                out,
                "{:<14} {:>6} {:>6} {:>9}  {range}",
                f.name, f.rows, f.bad_rows, f.selected
            )?;
        }
        let rel = ds.release_counts();
        if !rel.is_empty() {
            let rel: Vec<String> = rel.iter().map(|(k, v)| format!("{k} {v}")).collect();
            writeln!(out, "releases (cumulative): {}", rel.join(", "))?;
        }
        write_counts(&mut out, "selected", &counts)?;
    }
    out.flush()?;
    Ok(())
}

fn write_counts(out: &mut impl Write, label: &str, c: &SideCounts) -> io::Result<()> {
    let range = match (c.first_date, c.last_date) {
        (Some(a), Some(b)) => format!("{a} .. {b}"),
        _ => "-".into(),
    };
    writeln!(out, "{label}: {} problems ({})", c.total, c.rule)?;
    writeln!(out, "  dates:      {range}")?;
    let join = |m: &BTreeMap<String, usize>| {
        m.iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(out, "  platform:   {}", join(&c.by_platform))?;
    writeln!(out, "  difficulty: {}", join(&c.by_difficulty))?;
    writeln!(out, "  file:       {}", join(&c.by_file))?;
    Ok(())
}

fn split_cmd(a: SplitArgs) -> Result<()> {
    let opts = load_options(&a.load, None, false)?;
    let spec = match (&a.preset, &a.cutoff) {
        (Some(p), None) => SplitSpec::preset(p)?,
        (None, Some(c)) => SplitSpec::Cutoff(DateBound::parse(c)?),
        _ => return Err(UsageError("give exactly one of --preset and --cutoff".into()).into()),
    };
    let s = split::split(&a.load.dir, spec, &opts)?;
    report_bad(&s.bad_rows);
    if let Some(d) = &a.out_dir {
        split::write_split(&a.load.dir, &s, d)?;
    }
    let mut out = BufWriter::new(io::stdout().lock());
    if a.json {
        let v = json!({"train": s.train_counts(), "test": s.test_counts(), "bad_rows": s.bad_rows});
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
    } else {
        write_counts(&mut out, "train", &s.train_counts())?;
        write_counts(&mut out, "test", &s.test_counts())?;
        if let Some(d) = &a.out_dir {
            writeln!(
                out,
                "wrote {}/{{train,test}}.jsonl and split.json",
                d.display()
            )?;
        }
    }
    out.flush()?;
    Ok(())
}

fn grade(a: GradeArgs) -> Result<()> {
    solutions::check_options(a.timeout, &a.k, a.jobs).map_err(UsageError)?;
    let (lines, mut skipped) = harness_rl::lcb::solutions::read(&a.solutions, a.load.skip_bad)?;
    let mut opts = load_options(&a.load, Some(&a.window), true)?;
    if !a.all_problems {
        opts.keep_private_ids = Some(lines.iter().map(|(_, s)| s.question_id.clone()).collect());
    }
    let ds = loader::load_dir(&a.load.dir, &opts)?;
    report_bad(&ds.bad_rows);
    let (items, unmatched) =
        harness_rl::lcb::solutions::matched(&a.solutions, &lines, &ds, a.extract, a.load.skip_bad)?;
    skipped.extend(unmatched);
    for m in &skipped {
        eprintln!("hrl: skipped solution: {m}");
    }
    let base = GradeConfig::default();
    let config = GradeConfig {
        timeout: Duration::from_secs_f64(a.timeout),
        float_tolerance: a.float_tol,
        memory_mb: a.memory,
        jobs: a.jobs.unwrap_or(base.jobs),
        clock: if a.timeout_clock == "cpu" {
            TimeoutClock::Cpu
        } else {
            TimeoutClock::Wall
        },
        semantics: a.semantics.parse::<Semantics>()?,
        ..base
    };
    let jobs = config.jobs;
    let grader = Grader::new(
        SandboxConfig {
            python: a.python.clone(),
            unsafe_no_isolation: a.unsafe_no_isolation,
        },
        config,
    )?;
    if a.unsafe_no_isolation {
        eprintln!("hrl: warning: grading WITHOUT isolation (--unsafe-no-isolation)");
    }
    let bar = grading::bar(a.quiet, items.len(), " {msg}");
    let graded = solutions::grade_all(
        &items,
        jobs,
        |(p, code, k)| grader.grade(p, code, *k),
        a.log.as_deref(),
        || bar.inc(1),
    )?;
    bar.finish_and_clear();
    if graded.log_incomplete {
        eprintln!("hrl: warning: could not write every line of the --log file");
    }
    let problems: Vec<&Problem> = if a.all_problems {
        ds.problems.iter().collect()
    } else {
        let wanted: BTreeSet<&str> = items
            .iter()
            .map(|(p, _, _)| p.question_id.as_str())
            .collect();
        ds.problems
            .iter()
            .filter(|p| wanted.contains(p.question_id.as_str()))
            .collect()
    };
    let summary = grader::summarize(&problems, &graded.samples, &a.k);
    let header = json!({
        "dir": ds.dir,
        "release": ds.release.to_string(),
        "timeout_s": a.timeout,
        "timeout_clock": a.timeout_clock,
        "semantics": a.semantics,
        "float_tolerance": a.float_tol,
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
            writeln!(out, "semantics: {}", a.semantics)
        },
    )
}

fn write_table(out: &mut dyn Write, s: &Summary, graded: &[SampleResult]) -> io::Result<()> {
    let w = s
        .per_problem
        .iter()
        .map(|p| p.question_id.len())
        .max()
        .unwrap_or(8)
        .max(8);
    writeln!(
        out,
        "{:<w$}  {:<10}  {:<6}  {:>3}  {:>3}  {:>7}  first failure",
        "question", "platform", "diff", "n", "c", "pass@1"
    )?;
    for p in &s.per_problem {
        let fail = graded
            .iter()
            .filter(|g| g.question_id == p.question_id)
            .find_map(|g| g.failure())
            .map(|f| format!("test {}: {} {}", f.test, f.code.code(), f.message))
            .unwrap_or_default();
        let fail: String = fail.chars().take(70).collect();
        let p1 = p
            .pass_at
            .get("pass@1")
            .map_or("-".into(), |v| format!("{v:.3}"));
        writeln!(
            out,
            "{:<w$}  {:<10}  {:<6}  {:>3}  {:>3}  {:>7}  {fail}",
            p.question_id, p.platform, p.difficulty, p.n, p.c, p1
        )?;
    }
    writeln!(
        out,
        "{} problems, {} samples, {} passed",
        s.problems, s.samples, s.passed_samples
    )?;
    for (k, v) in &s.pass_at {
        writeln!(out, "{k}: {v:.4}")?;
    }
    Ok(())
}

fn prompt_cmd(a: PromptArgs) -> Result<()> {
    let opts = load_options(&a.load, None, false)?;
    let ds = loader::load_dir(&a.load.dir, &opts)?;
    let p = ds
        .get(&a.question_id)
        .ok_or_else(|| UsageError(format!("question_id `{}` not found", a.question_id)))?;
    let mut out = BufWriter::new(io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, &prompt::messages(p))?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}
