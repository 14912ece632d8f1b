//! `cincinnati channels`: the channels a graph holds, or those holding a version.

use anyhow::anyhow;
use cincinnati_client::fetch::{ChannelList, ListedChannel};
use cincinnati_client::json::{ChannelJson, ChannelsJson};
use cincinnati_client::{ChannelView, FetchError, Source, Tier, UpdateGraph};
use cincinnati_core::Version;

use super::unique;
use crate::cli::{ChannelsArgs, Format};
use crate::input::Input;
use crate::outcome::{Answer, Failure};
use crate::output::{self, Cell, DIM, Text};

pub async fn run(input: &Input, args: &ChannelsArgs, format: Format) -> Result<Answer, Failure> {
    let graph = match read_graph(input, args.version.as_ref()).await? {
        Read::Graph(graph) => *graph,
        Read::List(list) => {
            let mut document = ChannelsJson::new(&input.arch, None, &[]);
            document.channels = list.channels.iter().map(listed).collect();
            output::print(format, &document, |text| table(text, &document))?;
            return Ok(Answer::Yes);
        }
    };
    let listed: Vec<ChannelView> = graph
        .channels()
        .filter(|view| match &args.version {
            Some(version) => graph.find(version).is_some_and(|release| view.contains(release)),
            None => true,
        })
        .collect();
    let document = ChannelsJson::new(
        &input.arch,
        args.version.as_ref().map(Version::to_string),
        &listed,
    );
    output::print(format, &document, |text| table(text, &document))?;
    Ok(match (&args.version, listed.is_empty()) {
        (Some(version), true) => Answer::No(format!("{version} is in no channel")),
        _ => Answer::Yes,
    })
}

/// What the channels are read from.
enum Read {
    /// A graph holding them.
    Graph(Box<UpdateGraph>),
    /// A policy-engine's list of its channels.
    List(ChannelList),
}

/// The full graph; from a service answering one channel at a time, the
/// channels of `version`'s minor and the next (every release names all its
/// channels), or without `version` the list of channels a policy-engine
/// serves beside its graph.
async fn read_graph(input: &Input, version: Option<&Version>) -> Result<Read, Failure> {
    let fetcher = &input.fetcher;
    let saved = matches!(fetcher.source(), Source::File(_));
    match fetcher.channels(&input.query(), &[]).await {
        Ok(documents) if saved || documents.iter().any(|document| document.is_full()) => {
            return Ok(Read::Graph(Box::new(UpdateGraph::build(&input.arch, &documents))));
        }
        // A policy-engine wants a channel.
        Ok(_) | Err(FetchError::Status { status: 400, .. }) => {}
        Err(error) => return Err(error.into()),
    }
    let Some(version) = version else {
        return match fetcher.channel_list(&input.arch).await? {
            Some(list) => Ok(Read::List(list)),
            None => Err(Failure::input(anyhow!(
                "{} answers one channel at a time and lists no channels: give --version to list the channels holding a version",
                fetcher.source()
            ))),
        };
    };
    let channels = unique(
        [version.minor, version.minor + 1]
            .into_iter()
            .flat_map(|minor| Tier::ALL.map(|tier| tier.channel_into(version.major, minor))),
    );
    Ok(Read::Graph(Box::new(
        input.graph(fetcher, &input.query(), &channels).await?,
    )))
}

fn listed(channel: &ListedChannel) -> ChannelJson<'_> {
    ChannelJson {
        name: &channel.name,
        releases: channel.releases,
        oldest: channel.oldest.clone(),
        newest: channel.newest.clone(),
    }
}

fn table(text: &mut Text, document: &ChannelsJson) {
    let unknown = || Cell::styled(DIM, "?");
    let rows = document
        .channels
        .iter()
        .map(|channel| {
            vec![
                Cell::plain(channel.name),
                channel.releases.map_or_else(unknown, Cell::plain),
                channel.oldest.as_ref().map_or_else(unknown, Cell::plain),
                channel.newest.as_ref().map_or_else(unknown, Cell::plain),
            ]
        })
        .collect();
    text.table(&["CHANNEL", "RELEASES", "OLDEST", "NEWEST"], rows);
}
