//! `hrl tasks list|gen|score|splits`.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use harness_rl::families::{self, Family, Level, ScoreMode};
use serde_json::Value;

use super::UsageError;

#[derive(Subcommand)]
pub enum TasksCmd {
    /// List every family: name, category, levels, question variants, description.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Generate instances as JSONL (fields: id, family, level, seed, index, question,
    /// answer, metadata).
    Gen(GenArgs),
    /// Score responses: reads JSONL instances with a `response` string, writes the same
    /// lines plus `score` and `extracted`.
    Score(ScoreArgs),
    /// List the named family splits (roles such as warm_start, rl, held_out and their
    /// families), or check and show one split file.
    Splits(SplitsArgs),
    /// Measure in-process generation throughput of one family and print JSON
    /// (used by scripts/compare_reasoning_gym.sh).
    #[command(hide = true)]
    BenchGen(BenchGenArgs),
}

#[derive(Args)]
pub struct BenchGenArgs {
    pub family: String,
    /// Instances in the timed loop.
    #[arg(long, default_value_t = 10_000)]
    pub n: u64,
    #[arg(long, default_value_t = 3)]
    pub level: u8,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

#[derive(Args)]
pub struct SplitsArgs {
    /// A built-in split name or a path to a split .toml file (default: every built-in
    /// split).
    pub split: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct GenArgs {
    /// A family name, or `all`.
    pub family: String,
    /// Instances per family.
    #[arg(long)]
    pub n: u64,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Difficulty level 1..=5.
    #[arg(long, default_value_t = 1)]
    pub level: u8,
    /// Question template: 0 (canonical), K (template K of the family, see `variants`
    /// in `hrl tasks list`), or `random` (drawn per instance). The task and the gold
    /// answer are the same in every variant.
    #[arg(long, default_value = "0")]
    pub variant: families::Variant,
    /// Write to this file instead of standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Args)]
pub struct ScoreArgs {
    /// JSONL input; `-` or nothing reads standard input.
    pub file: Option<PathBuf>,
    /// Fall back to the last non-empty line when a response has no <answer> tag.
    /// Off by default; lines scored this way carry `"score_mode": "lenient"`.
    #[arg(long)]
    pub lenient: bool,
}

pub fn run(cmd: TasksCmd) -> Result<()> {
    match cmd {
        TasksCmd::List { json } => list(json),
        TasksCmd::Gen(a) => gen_cmd(a),
        TasksCmd::Score(a) => score(a),
        TasksCmd::Splits(a) => splits(a),
        TasksCmd::BenchGen(a) => bench_gen(a),
    }
}

fn bench_gen(a: BenchGenArgs) -> Result<()> {
    let f = families::get(&a.family)?;
    let m = harness_rl::throughput::measure_generation(f, Level::new(a.level)?, a.seed, a.n)?;
    println!("{}", serde_json::to_string(&m)?);
    Ok(())
}

fn list(as_json: bool) -> Result<()> {
    let out = io::stdout();
    let mut out = BufWriter::new(out.lock());
    let reg = families::registry();
    if as_json {
        let rows: Vec<Value> = reg.iter().map(|f| families::describe(*f)).collect();
        serde_json::to_writer_pretty(&mut out, &rows)?;
        writeln!(out)?;
    } else {
        let w = reg.iter().map(|f| f.name().len()).max().unwrap_or(4);
        writeln!(
            out,
            "{:<w$}  {:<11}  levels  variants  description",
            "name", "category"
        )?;
        for f in reg {
            writeln!(
                out,
                "{:<w$}  {:<11}  {}..={}   {:<8}  {}",
                f.name(),
                f.category().as_str(),
                families::MIN_LEVEL,
                families::MAX_LEVEL,
                f.variant_count(),
                f.description()
            )?;
        }
        writeln!(out, "{} families", reg.len())?;
    }
    out.flush()?;
    Ok(())
}

fn splits(a: SplitsArgs) -> Result<()> {
    let all = match &a.split {
        Some(s) => vec![families::splits::load(s)?],
        None => families::splits::builtin()?,
    };
    let out = io::stdout();
    let mut out = BufWriter::new(out.lock());
    if a.json {
        let rows: Vec<Value> = all.iter().map(families::splits::Split::to_json).collect();
        serde_json::to_writer_pretty(&mut out, &rows)?;
        writeln!(out)?;
    } else {
        for (i, s) in all.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            writeln!(out, "{} ({}): {}", s.name, s.source, s.description)?;
            let w = s
                .roles
                .iter()
                .map(|r| r.name.len())
                .max()
                .unwrap_or(4)
                .max(10);
            for r in &s.roles {
                let cats = if r.categories.is_empty() {
                    String::new()
                } else {
                    let c: Vec<&str> = r.categories.iter().map(|c| c.as_str()).collect();
                    format!(" [whole categories: {}]", c.join(", "))
                };
                writeln!(
                    out,
                    "  {:<w$}  {:>3}{cats}  {}",
                    r.name,
                    r.families.len(),
                    r.families.join(", ")
                )?;
            }
            let un = s.unassigned();
            let listed = if un.is_empty() {
                "-".to_string()
            } else {
                un.join(", ")
            };
            writeln!(out, "  {:<w$}  {:>3}  {listed}", "unassigned", un.len())?;
        }
    }
    out.flush()?;
    Ok(())
}

fn gen_cmd(a: GenArgs) -> Result<()> {
    let level = Level::new(a.level)?;
    if a.n == 0 {
        return Err(families::FamilyError::ZeroCount.into());
    }
    let fams: Vec<&dyn Family> = if a.family == "all" {
        families::registry().to_vec()
    } else {
        vec![families::get(&a.family)?]
    };
    // Check every family's variant range before creating or writing anything.
    let streams = fams
        .into_iter()
        .map(|f| families::InstanceStream::new(f, level, a.seed).with_variant(a.variant))
        .collect::<Result<Vec<_>, _>>()?;
    let sink: Box<dyn Write> = match &a.out {
        Some(p) => {
            Box::new(File::create(p).with_context(|| format!("cannot create {}", p.display()))?)
        }
        None => Box::new(io::stdout().lock()),
    };
    let mut out = BufWriter::new(sink);
    for stream in streams {
        for i in 0..a.n {
            let inst = stream.instance(i);
            serde_json::to_writer(&mut out, &inst)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(())
}

fn score(a: ScoreArgs) -> Result<()> {
    let mode = if a.lenient {
        ScoreMode::Lenient
    } else {
        ScoreMode::Strict
    };
    let (name, input): (String, Box<dyn BufRead>) = match a.file.as_deref() {
        None => ("<stdin>".into(), Box::new(io::stdin().lock())),
        Some(p) if p.as_os_str() == "-" => ("<stdin>".into(), Box::new(io::stdin().lock())),
        Some(p) => (
            p.display().to_string(),
            Box::new(BufReader::new(
                File::open(p).with_context(|| format!("cannot open {}", p.display()))?,
            )),
        ),
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let (mut ok, mut bad, mut total) = (0u64, 0u64, 0.0f64);
    for line in harness_rl::jsonl::lines(input) {
        let line = line.with_context(|| format!("{name}: read error"))?;
        if line.is_blank() {
            continue;
        }
        let n = line.number;
        match line
            .text
            .into_result()
            .and_then(|t| families::score_line(&t, mode))
        {
            Ok(v) => {
                total += v["score"].as_f64().unwrap_or(0.0);
                ok += 1;
                serde_json::to_writer(&mut out, &v)?;
                out.write_all(b"\n")?;
            }
            Err(msg) => {
                bad += 1;
                eprintln!("hrl: warning: {name}:{n}: skipped: {msg}");
            }
        }
    }
    out.flush()?;
    let mean = if ok > 0 { total / ok as f64 } else { 0.0 };
    eprintln!("hrl: scored {ok} lines (mean score {mean:.4}), skipped {bad} malformed");
    if ok == 0 && bad > 0 {
        return Err(UsageError(format!("{name}: no line could be scored")).into());
    }
    Ok(())
}
