//! One module per subcommand: each reads what it needs, asks the library,
//! prints the answer and says how the run ends.

mod channels;
mod diff;
mod explain;
mod fleet;
mod graph_data;
mod path;
mod phased_updates;
mod render;
mod rollout;
mod rollouts_table;
mod signatures;
mod status_port;
mod updates;

use clap::CommandFactory as _;

use crate::cli::{Cli, Command, CompletionsArgs, GraphDataCommand, SignaturesCommand};
use crate::input::{Input, extra_roots};
use crate::outcome::{Answer, Failure};

pub async fn run(cli: Cli) -> Result<Answer, Failure> {
    let format = cli.common.output;
    let input = || Input::new(&cli.common);
    match cli.command {
        Command::Updates(args) => updates::run(&input()?, &args, format).await,
        Command::Path(args) => path::run(&input()?, &args, format).await,
        Command::Explain(args) => explain::run(&input()?, &args, format).await,
        Command::Channels(args) => channels::run(&input()?, &args, format).await,
        Command::Render(args) => render::run(&input()?, &args).await,
        Command::Diff(args) => diff::run(&input()?, &args, format).await,
        Command::GraphData(GraphDataCommand::Check(args)) => {
            let input = args.releases.is_some().then(input).transpose()?;
            graph_data::check(input.as_ref(), &args, format).await
        }
        Command::GraphData(GraphDataCommand::Preview(args)) => {
            graph_data::preview(&input()?, &args, format).await
        }
        Command::Signatures(SignaturesCommand::Verify(args)) => {
            signatures::verify(&args, extra_roots(&cli.common)?, format).await
        }
        Command::Fleet(args) => fleet::run(&input()?, &cli.common, &args, format).await,
        Command::Rollout(args) => rollout::run(&input()?, &cli.common, &args, format).await,
        Command::Completions(args) => completions(&args),
    }
}

fn completions(args: &CompletionsArgs) -> Result<Answer, Failure> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "cincinnati", &mut script);
    crate::output::write_stdout(&String::from_utf8_lossy(&script))?;
    Ok(Answer::Yes)
}

/// The channels in the order given, each once.
fn unique(channels: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = Vec::new();
    for channel in channels {
        if !seen.contains(&channel) {
            seen.push(channel);
        }
    }
    seen
}
