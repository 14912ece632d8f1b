//! `cincinnati graph-data check` and `preview`: graph-data validated as the
//! graph-builder validates it, and applied as it applies it.

use std::path::Path;

use anyhow::{Context as _, anyhow};
use cincinnati_client::diff::diff;
use cincinnati_client::json::{DiffJson, SCHEMA_VERSION};
use cincinnati_client::{Document, Query, UpdateGraph};
use cincinnati_core::release::arch_of;
use openshift_graph_data::apply::apply_with_defaults_to;
use openshift_graph_data::{Diagnostic, GraphData, GraphDataFiles, Loaded, Location, Refused, Strictness};
use serde::Serialize;

use super::diff::{holds_channels, only, table as diff_table, verdict};
use crate::cli::{CheckArgs, Format, PreviewArgs};
use crate::input::{Input, joined};
use crate::outcome::{Answer, Failure};
use crate::output::{self, BAD, GOOD, RISK, styled};

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

pub fn check(args: &CheckArgs, format: Format) -> Result<Answer, Failure> {
    let loaded = load(&args.dir)?;
    let (errors, warnings, revision) = match &loaded {
        Ok(Loaded { graph_data, warnings }) => (&[][..], warnings, Some(graph_data.revision().to_string())),
        Err(Refused { errors, warnings }) => (errors.as_slice(), warnings, None),
    };
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

/// `cincinnati graph-data preview -o json`: the differences, and what
/// applying the graph-data reported.
#[derive(Serialize)]
struct PreviewJson<'a> {
    #[serde(flatten)]
    diff: DiffJson<'a>,
    warnings: Vec<DiagnosticJson<'a>>,
}

pub async fn preview(input: &Input, args: &PreviewArgs, format: Format) -> Result<Answer, Failure> {
    // Three reads side by side (the graph-data, the releases, what is
    // served), and the graph-data applied to the releases as soon as both
    // are in, while the served graph may still be read.
    let dir = args.dir.clone();
    let graph_data = tokio::task::spawn_blocking(move || load(&dir));
    let releases = input.fetcher_for(&args.releases)?;
    let arch = input.arch.clone();
    let releases = tokio::spawn(async move {
        let query = Query::arch(&arch);
        releases.document(&query).await
    });
    let channels: Vec<String> = args.channel.iter().cloned().collect();
    let served = input.graph_in_background(input.fetcher.clone(), channels);
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
        joined(tokio::task::spawn_blocking(move || build(releases, &graph_data.graph_data, &arch)).await)
    };
    let (served, built) = tokio::join!(served, built);
    let served = served?;
    holds_channels(&served, &input.fetcher)?;
    let (built, warnings) = built?;
    let changes = only(diff(&served, &built), args.channel.as_deref());
    let document = PreviewJson {
        diff: DiffJson::new(
            "Preview",
            &input.arch,
            input.fetcher.source().to_string(),
            args.dir.display().to_string(),
            &changes,
        ),
        warnings: warnings.iter().map(DiagnosticJson::from).collect(),
    };
    output::print(format, &document, |text| {
        diff_table(text, &changes);
        for warning in &warnings {
            text.line(styled(RISK, in_dir(&args.dir, warning)));
        }
    })?;
    Ok(verdict(&changes))
}

/// The graph the graph-builder builds from `releases` and `graph_data`, for
/// `arch` (its releases only: the others are never compared), with what
/// applying reported.
fn build(
    releases: cincinnati_core::Graph,
    graph_data: &GraphData,
    arch: &str,
) -> Result<(UpdateGraph, Vec<Diagnostic>), Failure> {
    // Classified before the other architectures' releases go: releases
    // naming their architectures are a full graph even when none is `arch`'s.
    let mut document = Document::classify(releases, arch, None);
    let of_arch = |release: &cincinnati_core::Release| arch_of(release).is_none_or(|named| named == arch);
    let warnings = apply_with_defaults_to(&mut document.graph, graph_data, of_arch)
        .context("applying the graph-data's edge instructions")
        .map_err(Failure::input)?;
    Ok((UpdateGraph::build(arch, &[document]), warnings))
}

fn load(dir: &Path) -> Result<Result<Loaded, Refused>, Failure> {
    let files = GraphDataFiles::from_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))
        .map_err(Failure::input)?;
    Ok(GraphData::load(&files, &Strictness::default()))
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
