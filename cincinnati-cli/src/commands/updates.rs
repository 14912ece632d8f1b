//! `cincinnati updates`: what the CVO offers a cluster.

use cincinnati_client::json::UpdatesJson;
use cincinnati_client::{Cluster, Query, Updates};
use cincinnati_core::Release;

use crate::cli::{Format, UpdatesArgs};
use crate::input::Input;
use crate::outcome::{Answer, Failure};
use crate::output::{self, Cell, GOOD, HEADING, RISK, Text, rules_text, styled};

pub async fn run(input: &Input, args: &UpdatesArgs, format: Format) -> Result<Answer, Failure> {
    // Exactly what the CVO sends.
    let query = Query {
        arch: &input.arch,
        channel: Some(&args.channel),
        id: args.id.as_deref(),
        version: Some(&args.version),
    };
    let graph = input
        .graph(&input.fetcher, &query, std::slice::from_ref(&args.channel))
        .await?;
    let cluster = Cluster {
        version: args.version.clone(),
        arch: args.cluster_arch.clone().unwrap_or_else(|| input.arch.clone()),
    };
    let not_found = || format!("version {} is not in channel {}", args.version, args.channel);
    let Some(updates) = graph
        .channel(&args.channel)
        .and_then(|channel| channel.updates_for(&cluster).ok())
    else {
        return Ok(Answer::No(not_found()));
    };
    let document = UpdatesJson::new(&args.channel, &input.arch, &updates, args.include_not_recommended);
    output::print(format, &document, |text| table(text, args, &input.arch, &updates))?;

    let shown_conditional = if args.include_not_recommended {
        updates.conditional.len()
    } else {
        0
    };
    Ok(if updates.recommended.len() + shown_conditional > 0 {
        Answer::Yes
    } else if updates.conditional.is_empty() {
        Answer::No(format!("no updates from {} on {}", args.version, args.channel))
    } else {
        Answer::No(format!(
            "no recommended updates from {} on {} ({} not recommended: --include-not-recommended lists them)",
            args.version,
            args.channel,
            updates.conditional.len()
        ))
    })
}

fn table(text: &mut Text, args: &UpdatesArgs, arch: &str, updates: &Updates) {
    text.line(styled(
        HEADING,
        format!("Cluster version {} on {} ({arch})", args.version, args.channel),
    ));
    text.blank();
    if updates.recommended.is_empty() {
        text.line("No recommended updates.");
    } else {
        text.line("Recommended updates:");
        text.blank();
        let rows = updates
            .recommended
            .iter()
            .map(|release| vec![Cell::styled(GOOD, &release.version), Cell::plain(errata(release))])
            .collect();
        text.table(&["VERSION", "ERRATA"], rows);
    }
    if updates.conditional.is_empty() {
        return;
    }
    text.blank();
    if !args.include_not_recommended {
        text.line(format!(
            "{} updates with known risks are not recommended; --include-not-recommended lists them.",
            updates.conditional.len()
        ));
        return;
    }
    text.line("Updates with known risks:");
    for update in &updates.conditional {
        text.blank();
        text.line(format!(
            "  {}  {}",
            styled(RISK, &update.release.version),
            errata(&update.release)
        ));
        for risk in &update.risks {
            text.line(format!("    {}: {}", styled(RISK, &risk.name), risk.message));
            text.line(format!("      {}", risk.url));
            text.line(format!("      when: {}", rules_text(&risk.matching_rules)));
        }
    }
}

fn errata(release: &Release) -> &str {
    release.metadata.get("url").unwrap_or_default()
}
