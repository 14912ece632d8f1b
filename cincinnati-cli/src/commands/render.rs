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
    let text = match args.format {
        Format::Dot => drawing.dot(),
        Format::Mermaid => {
            let edges = drawing.edges();
            if edges > MERMAID_MAX_EDGES {
                eprintln!("cincinnati: warning: {}", too_many_edges(&args.channel, edges));
            }
            drawing.mermaid()
        }
    };
    write_stdout(&text)?;
    Ok(Answer::Yes)
}

/// Mermaid's default `maxEdges`: a flowchart with more edges is not drawn
/// ("Too many edges"). Only the page rendering it can raise the limit
/// (`mermaid.initialize`); a diagram's own configuration cannot, as
/// `maxEdges` is one of Mermaid's `secure` keys.
const MERMAID_MAX_EDGES: usize = 500;

/// Why a Mermaid drawing will not be drawn, and what to do. Warned rather
/// than split: one minor of a busy channel has more than 500 updates by
/// itself, so no split into drawings of whole minors stays under the limit,
/// and a split elsewhere would cut a minor's updates apart.
fn too_many_edges(channel: &str, edges: usize) -> String {
    format!(
        "the drawing of {channel} has {edges} updates; Mermaid draws at most {MERMAID_MAX_EDGES} unless the \
         page rendering it raises maxEdges (mermaid.initialize; a diagram cannot): draw less with --from, \
         or use --format dot"
    )
}
