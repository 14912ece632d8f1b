//! What a test publishes, and the standard scenario most tests start from:
//! five versions in two minors for every architecture, four channels and
//! blocked edges of every kind.

use release_images::ManifestFormat;

use crate::graph_data::{BlockedEdge, GraphData, MatchingRule, Risk};
use crate::releases::{MULTI, PushedRelease, Release, SINGLE_ARCHITECTURES};

/// Everything a test has published that the services should serve.
#[derive(Debug, Clone, Default)]
pub struct Published {
    pub releases: Vec<PushedRelease>,
    pub graph_data: GraphData,
}

impl Published {
    /// The same, with only the releases `keep` accepts.
    pub fn only(&self, keep: impl Fn(&PushedRelease) -> bool) -> Self {
        Self {
            releases: self
                .releases
                .iter()
                .filter(|pushed| keep(pushed))
                .cloned()
                .collect(),
            graph_data: self.graph_data.clone(),
        }
    }
}

/// Every architecture a client may ask for.
pub const ARCHITECTURES: [&str; 5] = [
    SINGLE_ARCHITECTURES[0],
    SINGLE_ARCHITECTURES[1],
    SINGLE_ARCHITECTURES[2],
    SINGLE_ARCHITECTURES[3],
    MULTI,
];

/// The channels of [`graph_data`], plus one that lists nothing.
pub const CHANNELS: [&str; 5] = [
    "stable-4.16",
    "stable-4.17",
    "fast-4.17",
    "candidate-4.17",
    "eus-4.16",
];

/// The channel that lists every version, released or future.
pub const CANDIDATE: &str = "candidate-4.17";

/// A few clients' views, for tests that watch the chain through a fault:
/// channels with and without risks, single and multi architecture.
pub const WATCHED: [(&str, &str); 3] = [(CANDIDATE, "amd64"), (CANDIDATE, MULTI), ("stable-4.16", "arm64")];

/// The standard releases' versions, each with the versions it updates from
/// (`previous`) and to (`next`), for every architecture.
const UPDATES: [(&str, &[&str], &[&str]); 5] = [
    ("4.16.0", &[], &[]),
    ("4.16.1", &["4.16.0"], &[]),
    ("4.16.2", &["4.16.0", "4.16.1"], &["4.17.1"]),
    ("4.17.0", &["4.16.0", "4.16.1"], &[]),
    ("4.17.1", &["4.16.0", "4.16.1", "4.17.0"], &[]),
];

/// Versions the candidate channel already lists but nobody has published:
/// what tests push to see something new arrive.
pub const FUTURE_VERSIONS: [&str; 2] = ["4.17.2", "4.17.3"];

/// The standard releases: 25 images, every version for every architecture,
/// in Docker and OCI formats alternately (multi releases as Docker manifest
/// lists and OCI indexes).
pub fn releases() -> Vec<Release> {
    ARCHITECTURES
        .iter()
        .enumerate()
        .flat_map(|(arch_position, &arch)| {
            UPDATES
                .iter()
                .enumerate()
                .map(move |(version_position, (version, previous, next))| {
                    let mut release = Release::new(
                        version,
                        arch,
                        alternating_format(arch_position + version_position),
                    );
                    release.previous = previous.iter().map(|v| (*v).to_owned()).collect();
                    release.next = next.iter().map(|v| (*v).to_owned()).collect();
                    release.created = Some(created(version));
                    release
                })
        })
        .collect()
}

/// When the standard releases' images say they were built: 4.16 in
/// January 2024, 4.17 in June 2025, a day apart per patch release.
pub fn created(version: &str) -> String {
    let patch: u32 = version
        .rsplit('.')
        .next()
        .and_then(|patch| patch.parse().ok())
        .unwrap_or(0);
    let month = if version.starts_with("4.16.") {
        "2024-01"
    } else {
        "2025-06"
    };
    format!("{month}-{:02}T00:00:00Z", patch + 1)
}

/// `version` for every architecture, updating from `previous`.
pub fn new_releases(version: &str, previous: &[&str]) -> Vec<Release> {
    ARCHITECTURES
        .iter()
        .enumerate()
        .map(|(position, &arch)| {
            let mut release = Release::new(version, arch, alternating_format(position));
            release.previous = previous.iter().map(|v| (*v).to_owned()).collect();
            release
        })
        .collect()
}

fn alternating_format(position: usize) -> ManifestFormat {
    if position.is_multiple_of(2) {
        ManifestFormat::Docker
    } else {
        ManifestFormat::Oci
    }
}

/// The standard graph-data:
/// - channels that overlap (a release in up to four), one listing future versions;
/// - two risks on the same edge (4.16.1 → 4.17.0), one of them also on 4.16.0 → 4.17.0;
/// - a risk for one architecture only (arm64 updates to 4.16.2);
/// - an edge removed outright (4.16.0 → 4.17.1).
pub fn graph_data() -> GraphData {
    let mut candidate: Vec<&str> = UPDATES.iter().map(|(version, _, _)| *version).collect();
    candidate.extend(FUTURE_VERSIONS);
    GraphData::default()
        .channel("stable-4.16", &["4.16.0", "4.16.1", "4.16.2"])
        .channel("stable-4.17", &["4.16.2", "4.17.0"])
        .channel("fast-4.17", &["4.16.1", "4.16.2", "4.17.0", "4.17.1"])
        .channel(CANDIDATE, &candidate)
        .blocked_edge(risk(
            "4.17.0-NetworkMigration",
            "4.17.0",
            "4[.]16[.][01]",
            MatchingRule::PromQl(r#"group(cluster_operator_conditions{name="network"})"#.to_owned()),
        ))
        .blocked_edge(risk(
            "4.17.0-EtcdDataLoss",
            "4.17.0",
            "4[.]16[.]1",
            MatchingRule::Always,
        ))
        .blocked_edge(risk(
            "4.16.2-ArmFirmware",
            "4.16.2",
            "[+]arm64$",
            MatchingRule::PromQl("group(node_uname_info{machine=\"aarch64\"})".to_owned()),
        ))
        .blocked_edge(BlockedEdge {
            file: "4.17.1-pulled".to_owned(),
            to: "4.17.1".to_owned(),
            from: "^4[.]16[.]0[+]".to_owned(),
            risk: None,
        })
}

/// A blocked edge with a risk named after its file's suffix.
pub fn risk(file: &str, to: &str, from: &str, rule: MatchingRule) -> BlockedEdge {
    let name = file.rsplit_once('-').map_or(file, |(_, name)| name);
    BlockedEdge {
        file: file.to_owned(),
        to: to.to_owned(),
        from: from.to_owned(),
        risk: Some(Risk {
            name: name.to_owned(),
            url: format!("https://issues.example.com/{name}"),
            message: format!("Clusters updating to {to} may hit {name}."),
            rule,
        }),
    }
}
