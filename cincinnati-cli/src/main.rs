//! `cincinnati`: what a Cincinnati update service offers clusters, from the
//! command line. A thin layer over `cincinnati-client`: `cli` reads the
//! arguments, `commands` asks the library and prints the answer.

mod cli;
mod commands;
mod input;
mod outcome;
mod output;
mod render;

use std::process::ExitCode;

/// A command is mostly parsing: hundreds of thousands of small strings and
/// maps made and dropped. mimalloc makes and frees them in a third less time
/// than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse_noting_defaults() {
        Ok(cli) => cli,
        Err(error) if !error.use_stderr() => {
            // --help and --version.
            let _ = error.print();
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            return outcome::exit(Err(outcome::Failure::input(anyhow::anyhow!(
                "{} (--help shows the usage)",
                cli::first_paragraph(&error.to_string())
            ))));
        }
    };
    // Several threads: some commands parse two graphs, or a graph and
    // graph-data, side by side.
    let result = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(outcome::Failure::from)
        .and_then(|runtime| runtime.block_on(commands::run(cli)));
    outcome::exit(result)
}
