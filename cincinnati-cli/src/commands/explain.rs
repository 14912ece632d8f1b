//! `cincinnati explain`: why an update is or is not offered.

use cincinnati_client::cluster_policy::{ClusterPolicy, explain_url_of};
use cincinnati_client::explain::{DeclarationKind, ExplainQuery, Explanation, Verdict, explain};
use cincinnati_client::fetch::cluster_policy;
use cincinnati_client::json::ExplanationJson;
use cincinnati_client::{Query, Source, Tier, UpdateGraph};
use cincinnati_core::Version;

use super::unique;
use crate::cli::{ExplainArgs, Format};
use crate::input::Input;
use crate::outcome::{Answer, Failure};
use crate::output::{self, BAD, GOOD, HEADING, RISK, Text, rules_text, styled};

/// The architectures OpenShift ships, to tell where else a release exists.
const ARCHITECTURES: [&str; 5] = ["amd64", "arm64", "ppc64le", "s390x", "multi"];

pub async fn run(input: &Input, args: &ExplainArgs, format: Format) -> Result<Answer, Failure> {
    let query = ExplainQuery {
        channel: args.channel.clone(),
        from: args.from.clone(),
        to: args.to.clone(),
    };
    let graph_data = args
        .graph_data
        .as_deref()
        .map(|location| input.graph_data_in_background(location));
    // Asked as the cluster asks: with its id, an engine with a per-cluster
    // policy answers that cluster's view.
    let asked = Query {
        id: args.id.as_deref(),
        ..input.query()
    };
    let graph = read_graph(input, &asked, &query).await?;
    let graph_data = match graph_data {
        Some(reading) => Some(reading.await?),
        None => None,
    };
    let cluster_policy = match &args.id {
        Some(_) => Some(ask_cluster_policy(input, args, &asked).await?),
        None => None,
    };
    let explanation = explain(&graph, &query, graph_data.as_ref());
    let document = ExplanationJson::new(&explanation).with_cluster_policy(cluster_policy.as_ref());
    output::print(format, &document, |text| {
        table(text, &explanation);
        if let Some(policy) = &cluster_policy {
            policy_table(text, policy, &explanation.to.version.to_string());
        }
    })?;
    Ok(if explanation.verdict.offered() {
        Answer::Yes
    } else {
        Answer::No(explanation.summary())
    })
}

/// The channel, and, from a service answering one channel at a time, the
/// candidate channels of both releases (every release of a minor is in its
/// candidate channel, and names all its channels), and the same for other
/// architectures when a release is not of this one.
async fn read_graph(input: &Input, asked: &Query<'_>, query: &ExplainQuery) -> Result<UpdateGraph, Failure> {
    let fetcher = &input.fetcher;
    let per_channel_service = matches!(fetcher.source(), Source::Url(_));
    let mut channels = vec![query.channel.clone()];
    if per_channel_service {
        channels.extend(candidate_channels(&[&query.from, &query.to]));
    }
    let mut documents = fetcher.channels(asked, &unique(channels)).await?;
    let graph = UpdateGraph::build(&input.arch, &documents);
    let missing: Vec<&Version> = [&query.from, &query.to]
        .into_iter()
        .filter(|version| graph.find(version).is_none())
        .collect();
    if !per_channel_service || missing.is_empty() || documents.iter().any(|document| document.is_full()) {
        return Ok(graph);
    }
    let candidates = candidate_channels(&missing);
    for arch in ARCHITECTURES.into_iter().filter(|arch| *arch != input.arch) {
        documents.extend(fetcher.channels(&Query::arch(arch), &candidates).await?);
    }
    Ok(UpdateGraph::build(&input.arch, &documents))
}

/// The engine's explanation of what the cluster sees from `--from`, from its
/// explain endpoint (`--explain-url`, or the conventional one of `--url`).
async fn ask_cluster_policy(
    input: &Input,
    args: &ExplainArgs,
    asked: &Query<'_>,
) -> Result<ClusterPolicy, Failure> {
    let url = match (&args.explain_url, input.fetcher.source()) {
        (Some(url), _) => url
            .parse()
            .map_err(|error| Failure::input(anyhow::anyhow!("--explain-url {url:?}: {error}")))?,
        (None, Source::Url(graph_url)) => explain_url_of(graph_url).ok_or_else(|| {
            Failure::input(anyhow::anyhow!(
                "cannot tell the explain endpoint of {graph_url}; give --explain-url"
            ))
        })?,
        (None, Source::File(_)) => {
            return Err(Failure::input(anyhow::anyhow!(
                "--id asks a policy-engine: give --url (or --explain-url)"
            )));
        }
    };
    let query = Query {
        channel: Some(&args.channel),
        version: Some(&args.from),
        ..*asked
    };
    Ok(cluster_policy(&input.http(), &url, &query).await?)
}

fn policy_table(text: &mut Text, policy: &ClusterPolicy, to: &str) {
    text.blank();
    let id = policy.id.as_deref().unwrap_or("(not a UUID: the default policy)");
    text.line(format!("{} {id}", styled(HEADING, "Cluster policy for")));
    let groups = match policy.groups.as_slice() {
        [] => "none (the default rules)".to_owned(),
        groups => groups.join(", "),
    };
    text.line(format!("  groups: {groups}"));
    if let Some(place) = policy.place_percent {
        text.line(format!("  place in rollouts: {place:.2}%"));
    }
    for rollout in &policy.rollouts {
        let offered = if rollout.offered {
            styled(GOOD, "offered")
        } else {
            styled(BAD, "not yet")
        };
        text.line(format!(
            "  rollout of {} at {:.2}%: {offered}",
            rollout.target, rollout.progress_percent
        ));
    }
    match policy.removal_of(to) {
        Some(removal) => text.line(format!(
            "  {} {to}: {} ({})",
            styled(BAD, "the policy removes the update to"),
            removal.rule,
            removal.details_text()
        )),
        None => text.line(format!("  the policy does not remove the update to {to}")),
    }
}

fn candidate_channels(versions: &[&Version]) -> Vec<String> {
    let channels = versions
        .iter()
        .map(|version| Tier::Candidate.channel_into(version.major, version.minor));
    unique(channels)
}

fn table(text: &mut Text, explanation: &Explanation) {
    let verdict = if explanation.verdict.offered() {
        styled(GOOD, "offered")
    } else {
        styled(BAD, "not offered")
    };
    text.line(format!(
        "{} {} → {} on {} ({}): {verdict}",
        styled(HEADING, "Update"),
        explanation.from.version,
        explanation.to.version,
        explanation.channel,
        explanation.arch
    ));
    text.line(format!("  {}", explanation.summary()));
    text.blank();
    for facts in [&explanation.from, &explanation.to] {
        let channels = match facts.channels.as_slice() {
            [] if facts.release.is_none() => "not a release of this architecture".to_owned(),
            [] => "in no channel".to_owned(),
            channels => channels.join(", "),
        };
        text.line(format!("  {}  {channels}", styled(HEADING, &facts.version)));
    }
    if let Verdict::Conditional { risks } = &explanation.verdict {
        text.blank();
        for risk in *risks {
            text.line(format!("  {}: {}", styled(RISK, &risk.name), risk.message));
            text.line(format!("    {}", risk.url));
            text.line(format!("    when: {}", rules_text(&risk.matching_rules)));
        }
    }
    if explanation.declarations.is_empty() {
        return;
    }
    text.blank();
    text.line("Graph-data:");
    for declaration in &explanation.declarations {
        let what = match declaration.kind {
            DeclarationKind::Block { .. } => styled(BAD, "blocks updates"),
            DeclarationKind::Risk(risk) => styled(RISK, format!("risk {} on updates", risk.name)),
        };
        text.line(format!(
            "  {}:{}  {what} from {}",
            declaration.file, declaration.line, declaration.from
        ));
        match &declaration.kind {
            DeclarationKind::Block { reason, .. } => {
                if let Some(reason) = reason {
                    text.line(format!("    {reason}"));
                }
            }
            DeclarationKind::Risk(risk) => {
                text.line(format!("    {}", risk.message));
                text.line(format!("    {}", risk.url));
            }
        }
    }
}
