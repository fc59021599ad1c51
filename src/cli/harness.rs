//! `hrl harness show|hash|diff|apply-edit|snippets`: inspect and edit harness files.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Subcommand;
use harness_rl::harness::edit::{self, EditContext, FeedbackExample};
use harness_rl::harness::{Harness, diff, job as hrun, render, snippets};
use harness_rl::task::TaskSet;
use harness_rl::task::spec::GradingSetup;

use super::UsageError;

#[derive(Subcommand)]
pub enum HarnessCmd {
    /// Print a harness's canonical form, kind and hash (optionally the prompt it
    /// gives the first item of a task SPEC).
    Show {
        file: PathBuf,
        /// Print the messages of the first executor call for the first item of SPEC
        /// (declarative harnesses).
        #[arg(long, value_name = "SPEC")]
        render: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Print the content hash of each file.
    Hash { files: Vec<PathBuf> },
    /// A unified diff of two harnesses' canonical forms (exit 0 either way).
    Diff { a: PathBuf, b: PathBuf },
    /// Apply typed edits to a declarative harness and print the result.
    ApplyEdit {
        file: PathBuf,
        /// A file of edits: a JSON array, JSON lines, or TOML `[[edit]]` tables.
        #[arg(long, required_unless_present = "edit")]
        edits: Option<PathBuf>,
        /// One edit as JSON, e.g. '{"op": "add_note", "snippet": "tags-required"}'
        /// (repeatable; applied after --edits).
        #[arg(long)]
        edit: Vec<String>,
        /// The feedback set `add_example` may draw on (a task SPEC, repeatable).
        #[arg(long, value_name = "SPEC")]
        feedback: Vec<String>,
        /// A rollouts.jsonl whose solved rollouts supply example responses.
        #[arg(long)]
        rollouts: Option<PathBuf>,
        /// Write the result here instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The built-in snippets edits can name, and the edit ops.
    Snippets {
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: HarnessCmd) -> Result<()> {
    match cmd {
        HarnessCmd::Show { file, render, json } => {
            let h = Harness::load(&file)?;
            if json {
                let v = serde_json::json!({
                    "kind": h.kind().as_str(),
                    "name": h.name(),
                    "hash": h.hash(),
                    "canonical": h.canonical(),
                });
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                println!("# kind: {}", h.kind().as_str());
                println!("# hash: {}", h.hash());
                print!("{}", h.canonical());
            }
            if let Some(spec) = render {
                let Harness::Declarative(d) = &h else {
                    return Err(UsageError(
                        "--render shows declarative harnesses (a program builds its prompts at run time)"
                            .into(),
                    )
                    .into());
                };
                let tasks = TaskSet::load(std::slice::from_ref(&spec), &GradingSetup::default())?;
                let item = tasks.items.first().context("the task SPEC names no item")?;
                println!("\n# messages for {}:", item.id());
                for m in render::messages(d, item) {
                    println!("--- {} ---\n{}", m.role, m.content);
                }
            }
        }
        HarnessCmd::Hash { files } => {
            if files.is_empty() {
                return Err(UsageError("name at least one harness file".into()).into());
            }
            for f in files {
                let h = Harness::load(&f)?;
                println!("{}  {}", h.hash(), f.display());
            }
        }
        HarnessCmd::Diff { a, b } => {
            let ha = Harness::load(&a)?;
            let hb = Harness::load(&b)?;
            let d = diff::harnesses(&ha, &hb, &a.display().to_string(), &b.display().to_string());
            if d.is_empty() {
                println!("same content (hash {})", ha.hash());
            } else {
                print!("{d}");
            }
        }
        HarnessCmd::ApplyEdit {
            file,
            edits,
            edit: inline,
            feedback,
            rollouts,
            out,
        } => {
            let h = Harness::load(&file)?;
            let Harness::Declarative(d) = &h else {
                return Err(UsageError(
                    "typed edits apply to declarative harnesses; a program harness is revised as a whole file"
                        .into(),
                )
                .into());
            };
            let mut list = Vec::new();
            if let Some(p) = &edits {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| UsageError(format!("{}: {e}", p.display())))?;
                list.extend(edit::parse_edits(&text, &p.display().to_string())?);
            }
            for (i, e) in inline.iter().enumerate() {
                list.extend(edit::parse_edits(e, &format!("--edit #{}", i + 1))?);
            }
            let mut ctx = EditContext::default();
            if !feedback.is_empty() {
                let tasks = TaskSet::load(&feedback, &GradingSetup::default())?;
                let solved = match &rollouts {
                    Some(p) => hrun::read_log(p)?,
                    None => Default::default(),
                };
                for item in tasks.items {
                    let id = item.id();
                    let successful_response = solved
                        .values()
                        .filter(|r| r.item_id == id && r.score >= 1.0)
                        .min_by_key(|r| r.sample)
                        .map(|r| r.response.clone());
                    ctx.feedback.push(FeedbackExample {
                        item,
                        successful_response,
                    });
                }
            }
            let edited = Harness::Declarative(edit::apply(d, &list, &ctx)?);
            let text = edited.canonical();
            match out {
                Some(p) => {
                    std::fs::write(&p, &text).with_context(|| format!("writing {}", p.display()))?
                }
                None => print!("{text}"),
            }
            eprintln!("hrl: {} -> {}", &h.hash()[..12], &edited.hash()[..12]);
        }
        HarnessCmd::Snippets { json } => {
            if json {
                println!("{}", serde_json::to_string_pretty(snippets::SNIPPETS)?);
            } else {
                for s in snippets::SNIPPETS {
                    println!("{:<18} {:<12} {}", s.id, format!("{:?}", s.kind), s.text);
                }
                println!(
                    "\nedit ops: set_system, add_instruction, remove_instruction, add_note, remove_note, add_example, remove_example, set_strategy, set_verification, set_format_rule, set_sampling, reset_sampling (see docs/HARNESS.md)"
                );
            }
        }
    }
    Ok(())
}
