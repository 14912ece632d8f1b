//! A present-day-sized OpenShift release set, generated deterministically
//! for benchmarks and end-to-end tests.
//!
//! Every version named in graph-data's channels becomes a release for each
//! architecture that shipped it: amd64, s390x and ppc64le from 4.2, arm64
//! from 4.9, multi from 4.11. With testdata/graph-data that is about 5,700
//! releases. Each release updates from about 18 earlier ones, the way real
//! releases do (see the 2021 fixture): the most recent earlier releases of
//! its own minor, and the most recent general-availability releases of the
//! previous minor. Digests are fake but well formed, derived from version,
//! architecture and seed; nothing depends on time or on file order.
//!
//! [`scale`] writes graph-data N times today's, whose release set this
//! generates too: N times as many releases.

mod demo;
pub mod scale;
pub mod signatures;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Context;
use cincinnati_core::metadata_document::ReleaseMetadataDocument;
use cincinnati_core::release::keys;
use cincinnati_core::{Graph, Metadata, Version};
use graph_builder::found::{Arch, FoundRelease, Payload};
use serde::Deserialize;
use sha2::{Digest, Sha256};

pub use demo::{apply_graph_data, demo_graph, demo_releases};

/// Architectures and the first minor of 4.x each shipped in (of
/// 14.x, 24.x... too: see [`scale`]).
pub const ARCHITECTURES: [(&str, u64); 5] = [
    ("amd64", 2),
    ("s390x", 2),
    ("ppc64le", 2),
    ("arm64", 9),
    ("multi", 11),
];

/// The repository real releases are published in.
pub const REPOSITORY: &str = "quay.io/openshift-release-dev/ocp-release";

/// How to shape the release set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Mixed into digests and into each release's number of `previous`
    /// entries; a different seed gives a different but equally shaped set.
    pub seed: u64,
    /// The typical number of `previous` entries; each release has from 3
    /// fewer to 4 more (fewer when not enough releases came before it).
    pub previous_per_release: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            seed: 0,
            previous_per_release: 18,
        }
    }
}

/// `testdata/graph-data` of this repository.
pub fn testdata_graph_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/graph-data")
}

/// Every version listed in `<graph_data>/channels/*.yaml`, build metadata removed.
pub fn channel_versions(graph_data: &Path) -> anyhow::Result<BTreeSet<Version>> {
    #[derive(Deserialize)]
    struct ChannelFile {
        #[serde(default)]
        versions: Vec<String>,
    }
    let dir = graph_data.join("channels");
    let mut versions = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let channel: ChannelFile =
            serde_saphyr::from_str(&text).map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))?;
        for listed in channel.versions {
            let mut version = Version::parse(listed.trim())
                .with_context(|| format!("{}: version {listed:?}", path.display()))?;
            version.build = semver::BuildMetadata::EMPTY;
            versions.insert(version);
        }
    }
    Ok(versions)
}

/// The releases of every architecture for `versions`.
pub fn generate(versions: &BTreeSet<Version>, settings: &Settings) -> Vec<FoundRelease> {
    ARCHITECTURES
        .iter()
        .flat_map(|&(arch, first_minor)| {
            // A scaled copy's major ships as the original's did.
            let shipped: Vec<&Version> = versions
                .iter()
                .filter(|version| (version.major % scale::MAJOR_STEP, version.minor) >= (4, first_minor))
                .collect();
            releases_of(arch, &shipped, settings)
        })
        .collect()
}

/// `releases` assembled into the update graph, every one of them kept.
pub fn assembled(releases: Vec<FoundRelease>) -> anyhow::Result<Graph> {
    let assembled = graph_builder::assemble::assemble(releases);
    anyhow::ensure!(
        assembled.dropped.is_empty(),
        "generated releases were left out: {:?}",
        assembled.dropped
    );
    Ok(assembled.graph)
}

/// [`generate`] for the channel versions of `graph_data`, assembled into
/// the update graph (graph-data not applied).
pub fn release_graph(graph_data: &Path, settings: &Settings) -> anyhow::Result<Graph> {
    assembled(generate(&channel_versions(graph_data)?, settings))
}

/// [`release_graph`] of testdata/graph-data.
pub fn present_day_graph(settings: &Settings) -> anyhow::Result<Graph> {
    release_graph(&testdata_graph_data(), settings)
}

fn releases_of(arch: &str, shipped: &[&Version], settings: &Settings) -> Vec<FoundRelease> {
    let mut by_minor: BTreeMap<(u64, u64), Vec<&Version>> = BTreeMap::new();
    for &version in shipped {
        by_minor
            .entry((version.major, version.minor))
            .or_default()
            .push(version);
    }
    let mut releases = Vec::with_capacity(shipped.len());
    let mut previous_minor: Option<&Vec<&Version>> = None;
    for (&(major, _), minor) in &by_minor {
        // The previous minor of this major, or the last of the major
        // before (4.22 → 5.0); none across a gap (5.0 → 14.2: scaled copies
        // are apart).
        previous_minor = previous_minor.filter(|older| older[0].major + 1 >= major);
        for (position, &version) in minor.iter().enumerate() {
            let wanted = previous_count(version, arch, settings);
            let same_minor = minor[..position].iter().rev();
            let older_minor = previous_minor
                .into_iter()
                .flatten()
                .rev()
                .filter(|older| older.pre.is_empty());
            let previous = interleave(same_minor, older_minor)
                .take(wanted)
                .map(|&v| v.clone())
                .collect();
            releases.push(release(version, arch, previous, settings));
        }
        previous_minor = Some(minor);
    }
    releases
}

/// Alternates between two lists, most recent first, then drains the longer
/// one: about half the updates come from each minor, as in real graphs.
fn interleave<'a, T>(
    a: impl Iterator<Item = T> + 'a,
    b: impl Iterator<Item = T> + 'a,
) -> impl Iterator<Item = T> + 'a {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    let mut from_a = true;
    std::iter::from_fn(move || {
        let next = if from_a {
            a.next().or_else(|| b.next())
        } else {
            b.next().or_else(|| a.next())
        };
        from_a = !from_a;
        next
    })
}

fn previous_count(version: &Version, arch: &str, settings: &Settings) -> usize {
    let jitter = (fingerprint(version, arch, settings)[0] % 8) as usize;
    (settings.previous_per_release + jitter).saturating_sub(3)
}

fn release(version: &Version, arch: &str, previous: Vec<Version>, settings: &Settings) -> FoundRelease {
    let fingerprint = fingerprint(version, arch, settings);
    let digest = format!("sha256:{}", hex::encode(fingerprint));
    let errata = u16::from_be_bytes([fingerprint[1], fingerprint[2]]);
    let mut metadata = Metadata::new();
    metadata.insert(
        "url",
        format!(
            "https://access.redhat.com/errata/RHBA-20{:02}:{errata:05}",
            19 + version.minor % 8
        ),
    );
    if arch == "multi" {
        metadata.insert(keys::RELEASE_ARCHITECTURE, "multi");
    }
    FoundRelease {
        document: ReleaseMetadataDocument {
            version: version.clone(),
            previous,
            next: Vec::new(),
            metadata,
        },
        arch: Arch::new(arch),
        payload: Payload::of(REPOSITORY, &digest),
    }
}

fn fingerprint(version: &Version, arch: &str, settings: &Settings) -> [u8; 32] {
    Sha256::digest(format!("{}+{arch}#{}", version, settings.seed)).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(names: &[&str]) -> BTreeSet<Version> {
        names.iter().map(|name| Version::parse(name).unwrap()).collect()
    }

    #[test]
    fn previous_releases_come_from_this_minor_and_the_previous_one() {
        let set = versions(&["4.8.0", "4.8.1", "4.8.2", "4.9.0-rc.1", "4.9.0", "4.9.1"]);
        let settings = Settings {
            seed: 0,
            previous_per_release: 30,
        };
        let releases = generate(&set, &settings);
        let amd64_491 = releases
            .iter()
            .find(|release| {
                release.arch.as_str() == "amd64" && release.document.version == Version::new(4, 9, 1)
            })
            .unwrap();
        let previous: Vec<String> = amd64_491
            .document
            .previous
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(previous, ["4.9.0", "4.8.2", "4.9.0-rc.1", "4.8.1", "4.8.0"]);
    }

    #[test]
    fn previous_minors_cross_into_the_next_major_only() {
        let set = versions(&["4.21.0", "5.0.0", "14.2.0", "14.21.0", "15.0.0"]);
        let releases = generate(&set, &Settings::default());
        let previous = |version: &str| -> Vec<String> {
            let release = releases
                .iter()
                .find(|release| {
                    release.arch.as_str() == "amd64" && release.document.version.to_string() == version
                })
                .unwrap();
            release
                .document
                .previous
                .iter()
                .map(ToString::to_string)
                .collect()
        };
        assert_eq!(previous("5.0.0"), ["4.21.0"]);
        assert!(previous("14.2.0").is_empty(), "not from 5.0, a copy apart");
        assert_eq!(previous("15.0.0"), ["14.21.0"]);
    }

    #[test]
    fn architectures_start_at_their_first_minor() {
        let set = versions(&["4.1.0", "4.2.0", "4.9.0", "4.11.0"]);
        let releases = generate(&set, &Settings::default());
        let count = |arch: &str| {
            releases
                .iter()
                .filter(|release| release.arch.as_str() == arch)
                .count()
        };
        assert_eq!(
            [
                count("amd64"),
                count("s390x"),
                count("ppc64le"),
                count("arm64"),
                count("multi")
            ],
            [3, 3, 3, 2, 1]
        );
        let copy = generate(
            &versions(&["14.1.0", "14.2.0", "14.9.0", "14.11.0"]),
            &Settings::default(),
        );
        assert_eq!(copy.len(), releases.len(), "a scaled copy ships as the original");
        let multi = releases.iter().find(|release| release.arch.is_multi()).unwrap();
        assert_eq!(&multi.document.metadata[keys::RELEASE_ARCHITECTURE], "multi");
        assert!(
            multi
                .payload
                .as_str()
                .starts_with("quay.io/openshift-release-dev/ocp-release@sha256:")
        );
        assert_eq!(multi.payload.digest().len(), "sha256:".len() + 64);
    }

    #[test]
    fn the_seed_changes_digests_not_shape() {
        let set = versions(&["4.9.0", "4.9.1"]);
        let a = generate(&set, &Settings::default());
        let b = generate(
            &set,
            &Settings {
                seed: 1,
                ..Settings::default()
            },
        );
        assert_eq!(a.len(), b.len());
        assert_ne!(a[0].payload.digest(), b[0].payload.digest());
        assert_eq!(a, generate(&set, &Settings::default()));
    }
}
