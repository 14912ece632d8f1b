//! Writes the generated present-day release set as a Graph API document.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use release_set_generator::{Settings, apply_graph_data, channel_versions, generate, testdata_graph_data};

/// Generate a present-day-sized OpenShift update graph (Graph API JSON, as a
/// graph-builder serves it before graph-data is applied).
#[derive(Parser)]
struct Arguments {
    /// Graph-data whose channel versions become releases (default: the repository's testdata/graph-data).
    #[arg(long)]
    graph_data: Option<PathBuf>,
    /// Seed for digests and the number of updates into each release.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Typical number of updates into each release.
    #[arg(long, default_value_t = 18)]
    previous_per_release: usize,
    /// Apply the graph-data too, as the graph-builder does: the graph the
    /// demo graph-builder serves (with the defaults).
    #[arg(long)]
    apply_graph_data: bool,
    /// Where to write the graph (default: standard output).
    #[arg(long, short)]
    output: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let arguments = Arguments::parse();
    let graph_data = arguments.graph_data.unwrap_or_else(testdata_graph_data);
    let versions = channel_versions(&graph_data)?;
    let settings = Settings {
        seed: arguments.seed,
        previous_per_release: arguments.previous_per_release,
    };
    let mut assembled = graph_builder::assemble::assemble(generate(&versions, &settings));
    anyhow::ensure!(
        assembled.dropped.is_empty(),
        "releases left out: {:?}",
        assembled.dropped
    );
    if arguments.apply_graph_data {
        apply_graph_data(&mut assembled.graph, &graph_data)?;
    }
    let json = cincinnati_core::wire::serialize(&assembled.graph, None);
    match arguments.output {
        Some(path) => std::fs::write(&path, json).with_context(|| format!("writing {}", path.display()))?,
        None => std::io::stdout()
            .lock()
            .write_all(&json)
            .context("writing to standard output")?,
    }
    eprintln!(
        "{} releases, {} edges",
        assembled.graph.release_count(),
        assembled.graph.edge_count()
    );
    Ok(())
}
