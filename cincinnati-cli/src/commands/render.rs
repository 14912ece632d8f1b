//! `cincinnati render`: a channel as a drawing.

use cincinnati_client::Query;

use crate::cli::{Drawing as Format, RenderArgs};
use crate::input::Input;
use crate::outcome::{Answer, Failure};
use crate::output::write_stdout;
use crate::render::Drawing;

pub async fn run(input: &Input, args: &RenderArgs) -> Result<Answer, Failure> {
    let query = Query {
        channel: Some(&args.channel),
        ..input.query()
    };
    let graph = input
        .graph(&input.fetcher, &query, std::slice::from_ref(&args.channel))
        .await?;
    let Some(view) = graph.channel(&args.channel) else {
        return Ok(Answer::No(format!("no release is in channel {}", args.channel)));
    };
    let releases = match &args.from {
        None => view.releases().to_vec(),
        Some(version) => match graph.find(version).filter(|&release| view.contains(release)) {
            Some(start) => view.reachable_from(start),
            None => {
                return Ok(Answer::No(format!(
                    "{version} is not in channel {}",
                    args.channel
                )));
            }
        },
    };
    let drawing = Drawing::new(view, releases);
    write_stdout(&match args.format {
        Format::Dot => drawing.dot(),
        Format::Mermaid => drawing.mermaid(),
    })?;
    Ok(Answer::Yes)
}
