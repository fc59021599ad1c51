//! `hrl merge DIR... --out DIR`: combine shard run directories; the library
//! (`eval::merge`) checks and joins them, this file prints what was written.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use harness_rl::eval::merge::{self, Merged};
use harness_rl::eval::summary;
use harness_rl::report::export::summary_table;

#[derive(Args)]
pub struct MergeArgs {
    /// The shard directories (every shard I/N of one run, in any order): `hrl eval`
    /// or `hrl transfer` output directories, or `hrl run` directories.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// The merged directory (must not hold a run yet).
    #[arg(long)]
    pub out: PathBuf,
    /// Print the merged summaries as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: MergeArgs) -> Result<()> {
    match merge::merge(&a.dirs, &a.out)? {
        Merged::Eval(arms) => {
            // The documents beside the merged records, as after any run.
            harness_rl::report::outputs::write_any(&a.out)?;
            if a.json {
                let v: Vec<&summary::Summary> = arms.iter().map(|o| &o.summary).collect();
                println!("{}", serde_json::to_string_pretty(&v)?);
                return Ok(());
            }
            for o in &arms {
                println!("\nproposer {} — merged into {}", o.label, o.dir.display());
                print!("{}", summary_table(&o.summary));
            }
        }
        Merged::Run(s) => {
            if a.json {
                println!("{}", serde_json::to_string_pretty(&s)?);
                return Ok(());
            }
            print!("{}", s.aggregates.table());
            println!(
                "{} items x {} samples merged from {} shards into {}",
                s.items,
                s.samples,
                a.dirs.len(),
                a.out.display()
            );
        }
    }
    Ok(())
}
