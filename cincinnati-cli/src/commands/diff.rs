//! `cincinnati diff`: what differs between two Graph API documents.

use anyhow::anyhow;
use cincinnati_client::diff::{ChannelDiff, GraphDiff, UpdateChange, diff};
use cincinnati_client::json::DiffJson;
use cincinnati_client::{Coverage, Fetcher, UpdateGraph};

use crate::cli::{DiffArgs, Format};
use crate::input::Input;
use crate::outcome::{Answer, Failure};
use crate::output::{self, BAD, GOOD, HEADING, RISK, Text, styled};

pub async fn run(input: &Input, args: &DiffArgs, format: Format) -> Result<Answer, Failure> {
    let channels: Vec<String> = args.channel.iter().cloned().collect();
    let (old, new) = (input.fetcher_for(&args.old)?, input.fetcher_for(&args.new)?);
    let (old_graph, new_graph) = tokio::try_join!(
        input.graph_in_background(old.clone(), channels.clone()),
        input.graph_in_background(new.clone(), channels)
    )?;
    holds_channels(&old_graph, &old)?;
    holds_channels(&new_graph, &new)?;
    let changes = only(diff(&old_graph, &new_graph), args.channel.as_deref());
    let document = DiffJson::new("Diff", &input.arch, args.old.clone(), args.new.clone(), &changes);
    output::print(format, &document, |text| table(text, &changes))?;
    Ok(verdict(&changes))
}

/// A graph to compare must know some channels whole: one channel's saved
/// answer says nothing of which.
pub fn holds_channels(graph: &UpdateGraph, fetcher: &Fetcher) -> Result<(), Failure> {
    if *graph.coverage() == Coverage::Channels(Default::default()) {
        return Err(Failure::input(anyhow!(
            "{} holds one channel's answer: say which channel with --channel",
            fetcher.source()
        )));
    }
    Ok(())
}

/// The changes on `channel` only, when one is named.
pub fn only(mut changes: GraphDiff, channel: Option<&str>) -> GraphDiff {
    if let Some(channel) = channel {
        changes.channels.retain(|change| change.channel == channel);
    }
    changes
}

/// Exit 1 when anything changed, as diff(1).
pub fn verdict(changes: &GraphDiff) -> Answer {
    match changes.channels.len() {
        0 => Answer::Yes,
        1 => Answer::No("1 channel differs".to_owned()),
        channels => Answer::No(format!("{channels} channels differ")),
    }
}

pub fn table(text: &mut Text, changes: &GraphDiff) {
    if changes.is_empty() {
        text.line("No differences.");
    }
    for (position, channel) in changes.channels.iter().enumerate() {
        if position > 0 {
            text.blank();
        }
        channel_table(text, channel);
    }
}

fn channel_table(text: &mut Text, change: &ChannelDiff) {
    text.line(styled(HEADING, &change.channel));
    let added = styled(GOOD, "+");
    let removed = styled(BAD, "-");
    for version in &change.releases_added {
        text.line(format!("  {added} release {version}"));
    }
    for version in &change.releases_removed {
        text.line(format!("  {removed} release {version}"));
    }
    for (sign, updates) in [
        (&added, &change.updates_added),
        (&removed, &change.updates_removed),
    ] {
        for update in updates {
            text.line(format!("  {sign} update {}", update_text(update)));
        }
    }
    for (sign, updates) in [(&added, &change.risks_added), (&removed, &change.risks_removed)] {
        for update in updates {
            text.line(format!(
                "  {sign} {} on {} → {}",
                styled(RISK, format!("risk {}", update.risks.join(", "))),
                update.from,
                update.to
            ));
        }
    }
}

fn update_text(update: &UpdateChange) -> String {
    let risks = if update.risks.is_empty() {
        String::new()
    } else {
        format!(
            " ({})",
            styled(RISK, format!("risks: {}", update.risks.join(", ")))
        )
    };
    format!("{} → {}{risks}", update.from, update.to)
}
