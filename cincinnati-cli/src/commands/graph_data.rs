//! `cincinnati graph-data check` and `preview`: graph-data validated as a
//! change must be before it merges (what graph-data's own CI refuses, and
//! more), and applied as the graph-builder applies it.

use std::path::Path;

use anyhow::{Context as _, anyhow};
use cincinnati_client::diff::diff;
use cincinnati_client::json::{DiffJson, SCHEMA_VERSION};
use cincinnati_client::{Document, Query, UpdateGraph};
use cincinnati_core::release::arch_of;
use jiff::Timestamp;
use openshift_graph_data::apply::{apply_with_defaults_to, unmatched};
use openshift_graph_data::phased::moved_rollouts;
use openshift_graph_data::{
    Diagnostic, GraphData, GraphDataFiles, Loaded, Location, Refused, Severity, Strictness,
};
use serde::Serialize;

use cincinnati_client::diff::ChannelDiff;

use super::diff::{holds_channels, only, table as diff_table, verdict};
use super::phased_updates::{self, Phased, PhasedUpdateJson, in_channel, phased_in};
use crate::cli::{CheckArgs, Format, PreviewArgs};
use crate::input::{Input, joined};
use crate::outcome::{Answer, Failure};
use crate::output::{self, BAD, Cell, GOOD, HEADING, RISK, Text, styled};

/// `cincinnati graph-data check -o json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CheckJson<'a> {
    kind: &'static str,
    schema_version: u32,
    directory: String,
    valid: bool,
    /// The content revision (`sha256:…`), when valid.
    revision: Option<String>,
    errors: Vec<DiagnosticJson<'a>>,
    warnings: Vec<DiagnosticJson<'a>>,
}

/// One problem, where it is.
#[derive(Serialize)]
struct DiagnosticJson<'a> {
    /// Relative to the graph-data directory; `null` for the graph-data as a
    /// whole.
    file: Option<&'a str>,
    line: Option<u64>,
    kind: &'static str,
    message: &'a str,
}

impl<'a> From<&'a Diagnostic> for DiagnosticJson<'a> {
    fn from(diagnostic: &'a Diagnostic) -> Self {
        let (file, line) = match &diagnostic.location {
            Location::File { path, line } => (Some(path.as_str()), *line),
            Location::GraphData | Location::Release(_) => (None, None),
        };
        Self {
            file,
            line,
            kind: diagnostic.kind.as_str(),
            message: &diagnostic.message,
        }
    }
}

/// `input`: where `--releases` is read from, when given.
pub async fn check(input: Option<&Input>, args: &CheckArgs, format: Format) -> Result<Answer, Failure> {
    let strictness = Strictness::pre_merge();
    let dir = args.dir.clone();
    let loading = tokio::task::spawn_blocking(move || load(&dir, &Strictness::pre_merge()));
    // As the graph-builder loaded it: the graph-data served until the change.
    let previous = args.against.clone().map(|dir| {
        tokio::task::spawn_blocking(move || load(&dir, &Strictness::default()).map(|loaded| (dir, loaded)))
    });
    let releases = match (input, &args.releases) {
        (Some(input), Some(releases)) => {
            let query = Query::arch(&input.arch);
            Some(input.fetcher_for(releases)?.document(&query).await?.graph)
        }
        _ => None,
    };
    let loaded = joined(loading.await)?;
    let previous = match previous {
        Some(previous) => Some(graph_data_to_compare("previous", joined(previous.await))?),
        None => None,
    };
    let now = args.at.unwrap_or_else(Timestamp::now);
    let (errors, warnings, revision) = match loaded {
        Ok(Loaded { graph_data, warnings }) => {
            let revision = Some(graph_data.revision().to_string());
            let mut errors: Vec<Diagnostic> = previous
                .iter()
                .flat_map(|previous| moved_rollouts(previous, &graph_data, now))
                .collect();
            let mut warnings = warnings;
            // What names no release, checked only on graph-data that loads.
            for diagnostic in releases
                .iter()
                .flat_map(|releases| unmatched(releases, &graph_data, &strictness))
            {
                match diagnostic.severity {
                    Severity::Error => errors.push(diagnostic),
                    Severity::Warning => warnings.push(diagnostic),
                }
            }
            (errors, warnings, revision)
        }
        Err(Refused { errors, warnings }) => (errors, warnings, None),
    };
    // Content that does not pass has no revision to name.
    let revision = revision.filter(|_| errors.is_empty());
    let (errors, warnings) = (&errors, &warnings);
    let document = CheckJson {
        kind: "GraphDataCheck",
        schema_version: SCHEMA_VERSION,
        directory: args.dir.display().to_string(),
        valid: errors.is_empty(),
        revision,
        errors: errors.iter().map(DiagnosticJson::from).collect(),
        warnings: warnings.iter().map(DiagnosticJson::from).collect(),
    };
    output::print(format, &document, |text| {
        for diagnostic in errors.iter().chain(warnings) {
            text.line(in_dir(&args.dir, diagnostic));
        }
        let summary = format!("{} error(s), {} warning(s)", errors.len(), warnings.len());
        text.line(if errors.is_empty() {
            styled(GOOD, format!("graph-data is valid: {summary}"))
        } else {
            styled(BAD, format!("graph-data is refused: {summary}"))
        });
    })?;
    Ok(if errors.is_empty() {
        Answer::Yes
    } else {
        Answer::No(format!(
            "graph-data in {} is refused: {} error(s)",
            args.dir.display(),
            errors.len()
        ))
    })
}

/// `cincinnati graph-data preview -o json`: a summary per channel, the
/// differences, the updates phased, and what applying the graph-data
/// reported (with `--base`, the warnings the graph-data had before the
/// change apart).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PreviewJson<'a> {
    #[serde(flatten)]
    diff: DiffJson<'a>,
    summary: Vec<ChannelSummary<'a>>,
    phased: Vec<PhasedUpdateJson>,
    warnings: Vec<DiagnosticJson<'a>>,
    /// With `--base`: the warnings the base graph-data had too (left out of
    /// `warnings`); `null` without a base.
    warnings_before: Option<Vec<DiagnosticJson<'a>>>,
}

/// How much changes on one channel (of `--arch`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ChannelSummary<'a> {
    channel: &'a str,
    releases_added: usize,
    releases_removed: usize,
    /// Updates no longer offered.
    updates_blocked: usize,
    /// Updates offered now and not before.
    updates_unblocked: usize,
    /// Updates offered before and now that gained risks.
    updates_made_conditional: usize,
    /// Updates offered before and now that lost risks.
    risks_lifted: usize,
}

impl<'a> From<&'a ChannelDiff> for ChannelSummary<'a> {
    fn from(change: &'a ChannelDiff) -> Self {
        Self {
            channel: &change.channel,
            releases_added: change.releases_added.len(),
            releases_removed: change.releases_removed.len(),
            updates_blocked: change.updates_removed.len(),
            updates_unblocked: change.updates_added.len(),
            updates_made_conditional: change.risks_added.len(),
            risks_lifted: change.risks_removed.len(),
        }
    }
}

/// The summary as a table, first: what a reviewer reads before the details.
fn summary_table(text: &mut Text, arch: &str, summary: &[ChannelSummary]) {
    if summary.is_empty() {
        return;
    }
    text.line(styled(HEADING, format!("Summary ({arch})")));
    let rows = summary
        .iter()
        .map(|channel| {
            vec![
                Cell::plain(channel.channel),
                Cell::plain(format!(
                    "+{} -{}",
                    channel.releases_added, channel.releases_removed
                )),
                Cell::plain(channel.updates_blocked),
                Cell::plain(channel.updates_unblocked),
                Cell::plain(channel.updates_made_conditional),
                Cell::plain(channel.risks_lifted),
            ]
        })
        .collect();
    text.table(
        &[
            "CHANNEL",
            "RELEASES +/-",
            "BLOCKED",
            "UNBLOCKED",
            "MADE CONDITIONAL",
            "RISKS LIFTED",
        ],
        rows,
    );
    text.blank();
}

/// `warnings` split into those `before` had too (the same kind, place and
/// message) and the others, in order.
fn split_by<'w>(
    warnings: &'w [Diagnostic],
    before: &[Diagnostic],
) -> (Vec<&'w Diagnostic>, Vec<&'w Diagnostic>) {
    warnings.iter().partition(|warning| {
        !before.iter().any(|old| {
            old.kind == warning.kind && old.location == warning.location && old.message == warning.message
        })
    })
}

pub async fn preview(input: &Input, args: &PreviewArgs, format: Format) -> Result<Answer, Failure> {
    // What the graph-builder would serve at the preview's moment: releases
    // enter phased channels at their `start`.
    let now = args.at.unwrap_or_else(Timestamp::now);
    // Three reads side by side (the graph-data, the releases, what is
    // served), and the graph-data applied to the releases as soon as both
    // are in, while the served graph may still be read.
    let dir = args.dir.clone();
    // As the graph-builder loads it: a preview shows what it would serve.
    let graph_data = tokio::task::spawn_blocking(move || load(&dir, &Strictness::default()));
    let releases = input.fetcher_for(&args.releases)?;
    let arch = input.arch.clone();
    let releases = tokio::spawn(async move {
        let query = Query::arch(&arch);
        releases.document(&query).await
    });
    let channels: Vec<String> = args.channel.iter().cloned().collect();
    let served = input.graph_in_background(input.fetcher.clone(), channels);
    let base = args.base.clone().map(|dir| {
        tokio::task::spawn_blocking(move || load(&dir, &Strictness::default()).map(|loaded| (dir, loaded)))
    });
    let arch = input.arch.clone();
    let built = async {
        let graph_data = joined(graph_data.await)?.map_err(|refused| {
            let first = refused.errors.first().map(|error| in_dir(&args.dir, error));
            Failure::input(anyhow!(
                "graph-data in {} is refused with {} error(s), first: {}",
                args.dir.display(),
                refused.errors.len(),
                first.unwrap_or_default()
            ))
        })?;
        let releases = joined(releases.await)?.graph;
        let base = match base {
            Some(base) => Some(graph_data_to_compare("base", joined(base.await))?),
            None => None,
        };
        joined(
            tokio::task::spawn_blocking(move || {
                let built = build(releases.clone(), &graph_data.graph_data, &arch, now)?;
                // The base's warnings and phased updates, from applying it
                // to the same releases.
                let before = base.map(|base| build(releases, &base, &arch, now)).transpose()?;
                Ok::<_, Failure>((built, before))
            })
            .await,
        )
    };
    let (served, built) = tokio::join!(served, built);
    let served = served?;
    holds_channels(&served, &input.fetcher)?;
    let (built, before) = built?;
    let changes = only(diff(&served, &built.graph), args.channel.as_deref());
    let summary: Vec<ChannelSummary> = changes.channels.iter().map(ChannelSummary::from).collect();
    let phased = phased_updates::shown(
        &in_channel(built.phased, args.channel.as_deref()),
        before.as_ref().map(|before| before.phased.as_slice()),
        now,
    );
    let (new, old) = split_by(
        &built.warnings,
        before
            .as_ref()
            .map(|before| before.warnings.as_slice())
            .unwrap_or_default(),
    );
    let document = PreviewJson {
        diff: DiffJson::new(
            "Preview",
            &input.arch,
            input.fetcher.source().to_string(),
            args.dir.display().to_string(),
            &changes,
        ),
        summary,
        phased,
        warnings: new.iter().copied().map(DiagnosticJson::from).collect(),
        warnings_before: before
            .is_some()
            .then(|| old.iter().copied().map(DiagnosticJson::from).collect()),
    };
    output::print(format, &document, |text| {
        summary_table(text, &input.arch, &document.summary);
        diff_table(text, &changes);
        phased_updates::table(text, &document.phased, now, before.is_some());
        if !new.is_empty() {
            text.blank();
            text.line(styled(HEADING, "Warnings from applying the graph-data"));
        }
        for warning in &new {
            text.line(styled(RISK, in_dir(&args.dir, warning)));
        }
        if !old.is_empty() {
            text.blank();
            text.line(styled(
                HEADING,
                format!("Warnings the base graph-data had already ({})", old.len()),
            ));
            for warning in &old {
                text.line(in_dir(&args.dir, warning));
            }
        }
    })?;
    Ok(match verdict(&changes) {
        Answer::Yes if phased_updates::changes_any(&document.phased) => {
            Answer::No("the change phases updates anew or moves their windows".to_owned())
        }
        answer => answer,
    })
}

/// Graph-data loaded to compare with (`--base`, `--against`), called
/// `what`; refused is an input error.
fn graph_data_to_compare(
    what: &str,
    loaded: Result<(std::path::PathBuf, Result<Loaded, Refused>), Failure>,
) -> Result<GraphData, Failure> {
    let (dir, loaded) = loaded?;
    loaded.map(|loaded| loaded.graph_data).map_err(|refused| {
        Failure::input(anyhow!(
            "the {what} graph-data in {} is refused with {} error(s)",
            dir.display(),
            refused.errors.len()
        ))
    })
}

/// What the graph-builder builds from one graph-data, for one architecture.
struct Built {
    graph: UpdateGraph,
    /// What applying the graph-data reported.
    warnings: Vec<Diagnostic>,
    /// The updates it phases, whatever their windows' standing.
    phased: Vec<Phased>,
}

/// What the graph-builder builds from `releases` and `graph_data` at `now`,
/// for `arch` (its releases only: the others are never compared).
fn build(
    releases: cincinnati_core::Graph,
    graph_data: &GraphData,
    arch: &str,
    now: Timestamp,
) -> Result<Built, Failure> {
    // Classified before the other architectures' releases go: releases
    // naming their architectures are a full graph even when none is `arch`'s.
    let mut document = Document::classify(releases, arch, None);
    let of_arch = |release: &cincinnati_core::Release| arch_of(release).is_none_or(|named| named == arch);
    let warnings = apply_with_defaults_to(&mut document.graph, graph_data, now, of_arch)
        .context("applying the graph-data's edge instructions")
        .map_err(Failure::input)?;
    // The whole graph is kept when applying to `arch`'s releases alone
    // would change the outcome: the other architectures' updates go here.
    let phased = phased_in(graph_data, &document.graph, of_arch);
    Ok(Built {
        graph: UpdateGraph::build(arch, &[document]),
        warnings,
        phased,
    })
}

fn load(dir: &Path, strictness: &Strictness) -> Result<Result<Loaded, Refused>, Failure> {
    let files = GraphDataFiles::from_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))
        .map_err(Failure::input)?;
    Ok(GraphData::load(&files, strictness))
}

/// The diagnostic with its file named from the working directory, so that
/// editors and terminals can open it.
fn in_dir(dir: &Path, diagnostic: &Diagnostic) -> String {
    let mut shown = diagnostic.clone();
    if let Location::File { path, .. } = &mut shown.location {
        *path = dir.join(&*path).display().to_string();
    }
    shown.to_string()
}
