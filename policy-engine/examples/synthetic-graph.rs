//! Writes a deterministic, present-day-sized graph-builder graph (Graph API
//! JSON with `+arch` versions, arch keys, channels and conditional edges),
//! for load benchmarks until the real release-set generator and
//! graph-builder serve one.
//!
//! ```sh
//! cargo run --release -p policy-engine --example synthetic-graph -- graph.json
//! ```
//!
//! Shape: minors 4.1 to 4.20; each (minor, arch) has five `-ec` and five `-rc`
//! candidates and `28 + 3 × minor` patch releases; amd64 from 4.1, s390x and
//! ppc64le from 4.2, arm64 from 4.9, multi from 4.11 (about 5,900 releases).
//! A patch release is in candidate, fast and stable of its minor and the next
//! one (eus of even minors too). Each release updates from the ten patches
//! before it and the last six of the previous minor; updates that skip more
//! than five patches, and cross-minor updates into the first 20 patches,
//! carry risks. stable-4.18/amd64 then has about 160 releases, 1,200 edges and
//! 900 conditional edges.

use std::collections::BTreeMap;

use anyhow::Context as _;
use cincinnati_core::release::keys;
use cincinnati_core::{
    ConditionalEdge, EdgeEndpoints, Graph, MatchingRule, Metadata, Release, Risk, Version,
};

const MINORS: std::ops::RangeInclusive<u64> = 1..=20;
const ARCHES: [(&str, u64); 5] = [
    ("amd64", 1),
    ("s390x", 2),
    ("ppc64le", 2),
    ("arm64", 9),
    ("multi", 11),
];

fn main() -> anyhow::Result<()> {
    let output = std::env::args()
        .nth(1)
        .context("usage: synthetic-graph OUTPUT.json")?;
    let graph = synthetic_graph()?;
    std::fs::write(&output, cincinnati_core::wire::serialize(&graph, None))
        .with_context(|| format!("writing {output}"))?;
    eprintln!(
        "{output}: {} releases, {} edges, {} conditional edges",
        graph.release_count(),
        graph.edge_count(),
        graph
            .conditional_edges()
            .iter()
            .map(|group| group.edges.len())
            .sum::<usize>()
    );
    Ok(())
}

fn synthetic_graph() -> anyhow::Result<Graph> {
    let mut graph = Graph::new();
    let mut risks: BTreeMap<String, Vec<EdgeEndpoints>> = BTreeMap::new();
    for (arch, first_minor) in ARCHES {
        for minor in MINORS.filter(|minor| *minor >= first_minor) {
            for pre in ["ec", "rc"] {
                for number in 0..5 {
                    let version = Version::parse(&format!("4.{minor}.0-{pre}.{number}+{arch}"))?;
                    graph.add_release(release(version, arch, &[format!("candidate-4.{minor}")]))?;
                }
            }
            for patch in 0..patches(minor) {
                let mut channels = Vec::new();
                for channel_minor in [minor, minor + 1] {
                    for kind in ["candidate", "fast", "stable"] {
                        channels.push(format!("{kind}-4.{channel_minor}"));
                    }
                    if channel_minor % 2 == 0 {
                        channels.push(format!("eus-4.{channel_minor}"));
                    }
                }
                graph.add_release(release(patch_version(minor, patch, arch)?, arch, &channels))?;
                add_updates(&mut graph, &mut risks, minor, patch, arch)?;
            }
        }
    }
    *graph.conditional_edges_mut() = risks
        .into_iter()
        .map(|(name, edges)| ConditionalEdge {
            edges,
            risks: vec![Risk {
                url: format!("https://issues.example/{name}"),
                message: format!(
                    "Clusters updating along these edges may hit {name}: components can become \
                     unavailable during the update until the affected operator is restarted."
                ),
                matching_rules: vec![MatchingRule::PromQl {
                    promql: format!("group(cluster_operator_conditions{{name=\"{name}\"}})"),
                }],
                name,
            }],
        })
        .collect();
    Ok(graph)
}

fn patches(minor: u64) -> u64 {
    28 + 3 * minor
}

fn patch_version(minor: u64, patch: u64, arch: &str) -> anyhow::Result<Version> {
    Ok(Version::parse(&format!("4.{minor}.{patch}+{arch}"))?)
}

/// Edges into `4.{minor}.{patch}`; risky ones go to `risks` instead.
fn add_updates(
    graph: &mut Graph,
    risks: &mut BTreeMap<String, Vec<EdgeEndpoints>>,
    minor: u64,
    patch: u64,
    arch: &str,
) -> anyhow::Result<()> {
    let to = patch_version(minor, patch, arch)?;
    let same_minor = (patch.saturating_sub(10)..patch).map(|from| (minor, from, patch - from > 5));
    let previous_minor = (minor > 1 && graph.find(&patch_version(minor - 1, 0, arch)?).is_some())
        .then(|| {
            let last = patches(minor - 1);
            (last - 6..last).map(|from| (minor - 1, from, patch < 20))
        })
        .into_iter()
        .flatten();
    for (from_minor, from_patch, risky) in same_minor.chain(previous_minor) {
        let from = patch_version(from_minor, from_patch, arch)?;
        if risky {
            let name = format!("SyntheticRisk4{minor}x{}", from_patch / 10);
            risks
                .entry(name)
                .or_default()
                .push(EdgeEndpoints::new(from, to.clone()));
        } else {
            graph.add_edge_by_version(&from, &to)?;
        }
    }
    Ok(())
}

fn release(version: Version, arch: &str, channels: &[String]) -> Release {
    let digest = format!("sha256:{:064x}", fnv(version.to_string().as_bytes()));
    // Served graphs keep graph-data's blocking regexes, often long ones.
    let remove_regex = (0..10)
        .map(|step| {
            format!(
                "^4[.]{}[.]({step}|1{step}|2{step}|3{step})[+].*$",
                version.minor.saturating_sub(1)
            )
        })
        .collect::<Vec<_>>()
        .join("|");
    let metadata = Metadata::from_iter([
        (format!("{}.previous.remove_regex", keys::PREFIX), remove_regex),
        (keys::ARCH.to_owned(), arch.to_owned()),
        (keys::CHANNELS.to_owned(), channels.join(",")),
        (keys::MANIFESTREF.to_owned(), digest.clone()),
        (
            "url".to_owned(),
            format!(
                "https://access.redhat.com/errata/RHSA-2025:{:05}",
                fnv(digest.as_bytes()) % 100_000
            ),
        ),
    ]);
    Release::concrete(
        version,
        format!("quay.io/openshift-release-dev/ocp-release@{digest}"),
        metadata,
    )
}

/// A stable stand-in for a digest (64-bit FNV-1a, widened).
fn fnv(bytes: &[u8]) -> u128 {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3)
    });
    u128::from(hash) << 64 | u128::from(hash.rotate_left(17))
}
