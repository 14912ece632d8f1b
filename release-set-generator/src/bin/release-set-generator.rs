//! Writes the generated present-day release set as a Graph API document,
//! and the demo's release signatures with their public key.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Parser;
use image_signature::TrustedKeys;
use release_images::signature::SigningKey;
use release_set_generator::scale::write_scaled_graph_data;
use release_set_generator::signatures::{demo_key, demo_signatures, write_tree};
use release_set_generator::{
    Settings, apply_graph_data, assembled, channel_versions, generate, testdata_graph_data,
};

/// Generate a present-day-sized OpenShift update graph (Graph API JSON, as a
/// graph-builder serves it before graph-data is applied).
#[derive(Parser)]
struct Arguments {
    /// Graph-data whose channel versions become releases (default: the repository's testdata/graph-data).
    #[arg(long)]
    graph_data: Option<PathBuf>,
    /// Scale the graph-data first: write graph-data this many times
    /// --graph-data's to --scaled-graph-data (see the `scale` module), and
    /// generate the releases of that.
    #[arg(long, requires = "scaled_graph_data", value_parser = clap::value_parser!(u64).range(1..))]
    scale: Option<u64>,
    /// Where --scale writes its graph-data (a directory it creates).
    #[arg(long, requires = "scale")]
    scaled_graph_data: Option<PathBuf>,
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
    /// Also write the demo's release signatures as a signature tree here
    /// (replacing the tree there), e.g. testdata/demo/signatures.
    #[arg(long, requires = "public_key")]
    signatures: Option<PathBuf>,
    /// The demo key's public half, written unless the file already holds
    /// that key, e.g. testdata/demo/signing-key.asc.
    #[arg(long, requires = "signatures")]
    public_key: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let arguments = Arguments::parse();
    let mut graph_data = arguments.graph_data.unwrap_or_else(testdata_graph_data);
    if let (Some(scale), Some(target)) = (arguments.scale, arguments.scaled_graph_data) {
        write_scaled_graph_data(&graph_data, scale, &target)
            .with_context(|| format!("writing {}", target.display()))?;
        graph_data = target;
    }
    let versions = channel_versions(&graph_data)?;
    let settings = Settings {
        seed: arguments.seed,
        previous_per_release: arguments.previous_per_release,
    };
    let releases = generate(&versions, &settings);
    if let (Some(dir), Some(public_key)) = (&arguments.signatures, &arguments.public_key) {
        let key = demo_key();
        let signatures = demo_signatures(&releases, &key);
        write_tree(dir, &signatures).with_context(|| format!("writing {}", dir.display()))?;
        write_public_key(public_key, &key)?;
        eprintln!("{} signatures in {}", signatures.len(), dir.display());
    }
    let mut graph = assembled(releases)?;
    if arguments.apply_graph_data {
        apply_graph_data(&mut graph, &graph_data, jiff::Timestamp::now())?;
    }
    let json = cincinnati_core::wire::serialize(&graph, None);
    match arguments.output {
        Some(path) => std::fs::write(&path, json).with_context(|| format!("writing {}", path.display()))?,
        None => std::io::stdout()
            .lock()
            .write_all(&json)
            .context("writing to standard output")?,
    }
    eprintln!("{} releases, {} edges", graph.release_count(), graph.edge_count());
    Ok(())
}

/// Writes `key`'s public half to `path`, unless it holds that key already:
/// the armored text carries the time it was made, the key does not.
fn write_public_key(path: &Path, key: &SigningKey) -> anyhow::Result<()> {
    let unchanged = std::fs::read_to_string(path)
        .ok()
        .and_then(|text| TrustedKeys::from_armored(&text).ok())
        .is_some_and(|keys| keys.fingerprints() == [key.fingerprint()]);
    if !unchanged {
        std::fs::write(path, key.public_key_armored())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
