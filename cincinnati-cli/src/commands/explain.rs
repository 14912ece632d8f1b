//! `cincinnati explain`: why an update is or is not offered.

use cincinnati_client::cluster_policy::{ClusterPolicy, explain_url_of};
use cincinnati_client::explain::{ExplainQuery, Explanation, Verdict, explain};
use cincinnati_client::fetch::cluster_policy;
use cincinnati_client::json::ExplanationJson;
use cincinnati_client::reasons::{Layer, Reason};
use cincinnati_client::{Query, Source, Tier, UpdateGraph};
use cincinnati_core::Version;

use super::unique;
use crate::cli::{ExplainArgs, Format};
use crate::input::Input;
use crate::outcome::{Answer, Failure};
use crate::output::{self, BAD, DIM, GOOD, HEADING, RISK, Text, rules_text, styled};

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
    let (graph, full) = read_graph(input, &asked, &query).await?;
    let graph_data = match graph_data {
        Some(reading) => Some(reading.await?),
        None => None,
    };
    let cluster_policy = match &args.id {
        Some(_) => Some(ask_cluster_policy(input, args, &asked).await?),
        None => None,
    };
    let explanation = explain(&graph, &query, graph_data.as_ref());
    let explanation = match &cluster_policy {
        Some(policy) => explanation.with_cluster_policy(policy),
        None if full => explanation.from_a_full_graph(),
        None => explanation,
    };
    let document = ExplanationJson::new(&explanation).with_cluster_policy(cluster_policy.as_ref());
    output::print(format, &document, |text| table(text, &explanation))?;
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
/// The graph the question is answered from, and whether it is a full graph
/// (a graph-builder's, or a file), which no per-cluster policy shaped.
async fn read_graph(
    input: &Input,
    asked: &Query<'_>,
    query: &ExplainQuery,
) -> Result<(UpdateGraph, bool), Failure> {
    let fetcher = &input.fetcher;
    let per_channel_service = matches!(fetcher.source(), Source::Url(_));
    let mut channels = vec![query.channel.clone()];
    if per_channel_service {
        channels.extend(candidate_channels(&[&query.from, &query.to]));
    }
    let mut documents = fetcher.channels(asked, &unique(channels)).await?;
    let full = !per_channel_service || documents.iter().any(|document| document.is_full());
    // The candidate channels' answers say where releases are, not which
    // updates the channel asked offers.
    let build = if full {
        UpdateGraph::build
    } else {
        UpdateGraph::build_with_updates_of_first
    };
    let graph = build(&input.arch, &documents);
    let missing: Vec<&Version> = [&query.from, &query.to]
        .into_iter()
        .filter(|version| graph.find(version).is_none())
        .collect();
    if full || missing.is_empty() {
        return Ok((graph, full));
    }
    let candidates = candidate_channels(&missing);
    for arch in ARCHITECTURES.into_iter().filter(|arch| *arch != input.arch) {
        documents.extend(fetcher.channels(&Query::arch(arch), &candidates).await?);
    }
    Ok((build(&input.arch, &documents), full))
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

fn candidate_channels(versions: &[&Version]) -> Vec<String> {
    let channels = versions
        .iter()
        .map(|version| Tier::Candidate.channel_into(version.major, version.minor));
    unique(channels)
}

fn table(text: &mut Text, explanation: &Explanation) {
    let verdict = match &explanation.verdict {
        Verdict::Recommended => styled(GOOD, "recommended"),
        // As the CVO reports it: Recommended=False where a risk applies.
        Verdict::Conditional { .. } => styled(RISK, "not recommended where its risks apply (conditional)"),
        Verdict::Dropped(_) => styled(BAD, "dropped by clusters"),
        _ => styled(BAD, "not offered"),
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
    if explanation.policy.is_none() && explanation.policy_possible {
        text.line(styled(
            DIM,
            "  Asked without a cluster id: an engine's per-cluster policy (phased rollouts, deferrals, pins, \
             its groups' blocked edges) may answer a cluster otherwise; --id asks as that cluster.",
        ));
    }
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
        text.line("Risks (`oc adm upgrade --include-not-recommended` lists the update with them):");
        for risk in *risks {
            text.line(format!("  {}: {}", styled(RISK, &risk.name), risk.message));
            text.line(format!("    {}", risk.url));
            text.line(format!("    when: {}", rules_text(&risk.matching_rules)));
        }
    }
    reasons(text, explanation);
}

/// The reasons by layer, first what decides, each once with its details.
fn reasons(text: &mut Text, explanation: &Explanation) {
    let reasons = explanation.reasons();
    if reasons.is_empty() {
        return;
    }
    text.blank();
    text.line(styled(HEADING, "Why, first what decides:"));
    for layer in [Layer::ClusterPolicy, Layer::GraphData, Layer::ReleaseMetadata] {
        let in_layer: Vec<&Reason> = reasons.iter().filter(|reason| reason.layer == layer).collect();
        if in_layer.is_empty() {
            continue;
        }
        text.line(format!("  {}", layer_heading(layer, explanation)));
        for reason in in_layer {
            // Engines before the policy file's name was sent name only lines.
            let place = match (&reason.file, reason.line) {
                (Some(file), Some(line)) => format!("{file}:{line}: "),
                (Some(file), None) => format!("{file}: "),
                (None, Some(line)) => format!("policy file line {line}: "),
                (None, None) => String::new(),
            };
            let sentence = if reason.decides {
                styled(BAD, &reason.sentence)
            } else {
                reason.sentence.clone()
            };
            text.line(format!("    {place}{sentence}"));
            for detail in &reason.details {
                text.line(format!("      {detail}"));
            }
        }
    }
}

fn layer_heading(layer: Layer, explanation: &Explanation) -> String {
    match layer {
        Layer::ClusterPolicy => {
            let Some(policy) = &explanation.policy else {
                return "Per-cluster policy:".to_owned();
            };
            let id = policy.id.as_deref().unwrap_or("(no valid id: the default rules)");
            let groups = match policy.groups.as_slice() {
                [] => "none, the default rules".to_owned(),
                groups => groups.join(", "),
            };
            let place = policy
                .place_percent
                .map(|place| format!("; place in rollouts {place:.2}%"))
                .unwrap_or_default();
            format!("Per-cluster policy of cluster {id} (groups: {groups}{place}):")
        }
        Layer::GraphData => "Graph-data:".to_owned(),
        Layer::ReleaseMetadata => "Release metadata:".to_owned(),
    }
}
