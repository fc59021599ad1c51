//! `hrl best-fixed DIR`: choose the best fixed seed harness from an `hrl eval` run of
//! `file:` arms on training families (`eval::best_fixed`), and print the choice.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use harness_rl::eval::best_fixed;

#[derive(Args)]
pub struct BestFixedArgs {
    /// An `hrl eval` output directory: identity and `file:` arms on training families,
    /// rounds = 1, select = "always".
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Print best-fixed.json instead of the table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: BestFixedArgs) -> Result<()> {
    let c = best_fixed::choose(&a.dir)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        print!("{}", best_fixed::render(&c));
        println!(
            "held-out arm: file:{} (wrote {})",
            a.dir.join(&c.file).display(),
            a.dir.join(best_fixed::CHOICE).display()
        );
    }
    Ok(())
}
