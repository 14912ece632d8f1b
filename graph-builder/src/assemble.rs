//! Turns scraped releases into the update graph.
//!
//! Every release becomes a node whose version carries its architecture as
//! build metadata (`4.16.3+amd64`); `previous` and `next` become edges within
//! that architecture, creating abstract nodes for releases never seen. What
//! cannot be used is left out and reported, never failing the whole graph.

use std::collections::BTreeMap;

use cincinnati_core::release::{keys, with_arch};
use cincinnati_core::{Graph, GraphError, Release, Version};

use crate::found::{DropReason, Dropped, FoundRelease};

/// The graph and what had to be left out of it.
#[derive(Debug, Default)]
pub struct Assembled {
    pub graph: Graph,
    pub dropped: Vec<Dropped>,
}

/// Builds the graph from releases in any order; the result does not depend
/// on the order.
pub fn assemble(releases: impl IntoIterator<Item = FoundRelease>) -> Assembled {
    let mut dropped = Vec::new();
    let by_version = unique_versions(releases, &mut dropped);

    let mut graph = Graph::new();
    // Versions in ascending order: update edges mostly point forward, which
    // keeps the DAG's topological order cheap to maintain. Metadata and
    // payload move into the graph: thousands of them, and only `previous`
    // and `next` are read after.
    let mut links = Vec::with_capacity(by_version.len());
    for (version, release) in by_version {
        let FoundRelease {
            document,
            arch,
            payload,
        } = release;
        let mut metadata = document.metadata;
        metadata.insert(keys::MANIFESTREF, payload.digest());
        metadata.insert(keys::ARCH, arch.as_str());
        graph
            .add_release(Release::concrete(
                version.clone(),
                payload.into_string(),
                metadata,
            ))
            .expect("versions are unique");
        links.push((version, arch, document.previous, document.next));
    }
    for (version, arch, previous, next) in links {
        let neighbours = |list: &[Version]| -> Vec<Version> {
            list.iter()
                .filter_map(|other| with_arch(other, arch.as_str()).ok())
                .collect()
        };
        for previous in neighbours(&previous) {
            add_edge(&mut graph, &previous, &version, &mut dropped);
        }
        for next in neighbours(&next) {
            add_edge(&mut graph, &version, &next, &mut dropped);
        }
    }
    dropped.sort();
    Assembled { graph, dropped }
}

/// Keeps one release per arch-suffixed version. Multi-arch shards are left
/// out; two different images claiming one version are both left out, since
/// which one is right cannot be known.
fn unique_versions(
    releases: impl IntoIterator<Item = FoundRelease>,
    dropped: &mut Vec<Dropped>,
) -> BTreeMap<Version, FoundRelease> {
    let mut by_version: BTreeMap<Version, Vec<FoundRelease>> = BTreeMap::new();
    for release in releases {
        let claims_multi = release
            .document
            .metadata
            .get(keys::RELEASE_ARCHITECTURE)
            .is_some_and(|arch| arch == "multi");
        if claims_multi && !release.arch.is_multi() {
            dropped.push(Dropped {
                subject: release.payload.into_string(),
                reason: DropReason::MultiArchShard,
            });
            continue;
        }
        match with_arch(&release.document.version, release.arch.as_str()) {
            Ok(version) => by_version.entry(version).or_default().push(release),
            Err(error) => dropped.push(Dropped {
                subject: release.payload.to_string(),
                reason: DropReason::UnknownArchitecture(format!("{:?}: {error}", release.arch.as_str())),
            }),
        }
    }
    by_version
        .into_iter()
        .filter_map(|(version, mut claims)| {
            claims.sort_by(|a, b| a.payload.digest().cmp(b.payload.digest()));
            claims.dedup_by(|a, b| a.payload.digest() == b.payload.digest());
            if claims.len() == 1 {
                return claims.pop().map(|release| (version, release));
            }
            for (position, claim) in claims.iter().enumerate() {
                let other = &claims[(position + 1) % claims.len()];
                dropped.push(Dropped {
                    subject: format!("{version} ({})", claim.payload),
                    reason: DropReason::DuplicateVersion {
                        other_digest: other.payload.digest().to_owned(),
                    },
                });
            }
            None
        })
        .collect()
}

fn add_edge(graph: &mut Graph, from: &Version, to: &Version, dropped: &mut Vec<Dropped>) {
    let from_id = find_or_add_abstract(graph, from);
    let to_id = find_or_add_abstract(graph, to);
    match graph.add_edge(from_id, to_id) {
        Ok(_) => {}
        Err(error @ (GraphError::Cycle(_) | GraphError::SelfLoop(_))) => dropped.push(Dropped {
            subject: format!("{from} -> {to}"),
            reason: DropReason::Cycle(error.to_string()),
        }),
        Err(other) => unreachable!("both releases were just looked up: {other}"),
    }
}

fn find_or_add_abstract(graph: &mut Graph, version: &Version) -> cincinnati_core::ReleaseId {
    match graph.find(version) {
        Some(id) => id,
        None => graph
            .add_release(Release::abstract_release(version.clone()))
            .expect("the version was not in the graph"),
    }
}

#[cfg(test)]
mod tests {
    use cincinnati_core::metadata_document::ReleaseMetadataDocument;
    use cincinnati_core::{Metadata, wire};

    use super::*;
    use crate::found::{Arch, Payload};

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    fn release(version: &str, arch: &str, previous: &[&str], next: &[&str]) -> FoundRelease {
        FoundRelease {
            document: ReleaseMetadataDocument {
                version: v(version),
                previous: previous.iter().map(|p| v(p)).collect(),
                next: next.iter().map(|n| v(n)).collect(),
                metadata: Metadata::new(),
            },
            arch: Arch::new(arch),
            payload: Payload::of("quay.io/ocp/release", &format!("sha256:{version}-{arch}")),
        }
    }

    fn edges(graph: &Graph) -> Vec<(String, String)> {
        let name = |id| graph.release(id).unwrap().version.to_string();
        let mut edges: Vec<_> = graph.edges().map(|(a, b)| (name(a), name(b))).collect();
        edges.sort();
        edges
    }

    #[test]
    fn edges_stay_within_one_architecture() {
        let assembled = assemble([
            release("4.1.0", "amd64", &[], &[]),
            release("4.1.1", "amd64", &["4.1.0"], &[]),
            release("4.1.1", "arm64", &["4.1.0"], &["4.1.2"]),
        ]);
        assert!(assembled.dropped.is_empty());
        assert_eq!(
            edges(&assembled.graph),
            [
                ("4.1.0+amd64".into(), "4.1.1+amd64".into()),
                ("4.1.0+arm64".into(), "4.1.1+arm64".into()),
                ("4.1.1+arm64".into(), "4.1.2+arm64".into()),
            ]
        );
        let abstract_arm = assembled.graph.find(&v("4.1.0+arm64")).unwrap();
        assert!(assembled.graph.release(abstract_arm).unwrap().is_abstract());
    }

    #[test]
    fn releases_carry_payload_manifestref_and_arch() {
        let assembled = assemble([release("4.2.10-s390x", "s390x", &[], &[])]);
        let id = assembled.graph.find(&v("4.2.10-s390x+s390x")).unwrap();
        let node = assembled.graph.release(id).unwrap();
        assert_eq!(
            node.payload.as_deref(),
            Some("quay.io/ocp/release@sha256:4.2.10-s390x-s390x")
        );
        assert_eq!(&node.metadata[keys::MANIFESTREF], "sha256:4.2.10-s390x-s390x");
        assert_eq!(&node.metadata[keys::ARCH], "s390x");
    }

    #[test]
    fn multi_arch_shards_are_left_out() {
        let mut shard = release("4.12.0", "amd64", &[], &[]);
        shard
            .document
            .metadata
            .insert(keys::RELEASE_ARCHITECTURE, "multi");
        let mut multi = release("4.12.0", "multi", &[], &[]);
        multi
            .document
            .metadata
            .insert(keys::RELEASE_ARCHITECTURE, "multi");
        let assembled = assemble([shard, multi]);
        assert_eq!(assembled.graph.release_count(), 1);
        assert!(assembled.graph.find(&v("4.12.0+multi")).is_some());
        assert_eq!(assembled.dropped.len(), 1);
        assert_eq!(assembled.dropped[0].reason, DropReason::MultiArchShard);
    }

    #[test]
    fn one_version_with_two_digests_is_left_out_and_the_rest_kept() {
        let mut twin = release("4.1.1", "amd64", &["4.1.0"], &[]);
        twin.payload = Payload::of("quay.io/ocp/release", "sha256:other");
        let assembled = assemble([
            release("4.1.0", "amd64", &[], &[]),
            release("4.1.1", "amd64", &["4.1.0"], &[]),
            release("4.1.1", "amd64", &["4.1.0"], &[]), // the same image twice is fine
            twin,
        ]);
        assert_eq!(assembled.graph.release_count(), 1);
        let reasons: Vec<_> = assembled.dropped.iter().map(|d| d.reason.label()).collect();
        assert_eq!(reasons, ["duplicate_version", "duplicate_version"]);
    }

    #[test]
    fn an_edge_closing_a_cycle_is_left_out_and_named() {
        let assembled = assemble([
            release("1.0.0", "amd64", &["1.1.0"], &[]),
            release("1.1.0", "amd64", &["1.0.0"], &[]),
        ]);
        assert_eq!(assembled.graph.release_count(), 2);
        assert_eq!(assembled.graph.edge_count(), 1);
        assert_eq!(assembled.dropped.len(), 1);
        let DropReason::Cycle(cycle) = &assembled.dropped[0].reason else {
            panic!("{:?}", assembled.dropped);
        };
        assert!(
            cycle.contains("1.0.0+amd64") && cycle.contains("1.1.0+amd64"),
            "{cycle}"
        );
    }

    #[test]
    fn the_graph_does_not_depend_on_input_order() {
        let releases = vec![
            release("4.1.0", "amd64", &[], &["4.1.1"]),
            release("4.1.1", "amd64", &["4.1.0"], &[]),
            release("4.1.2", "amd64", &["4.1.0", "4.1.1"], &[]),
            release("4.1.2", "multi", &["4.1.1"], &[]),
        ];
        let forward = wire::serialize(&assemble(releases.clone()).graph, None);
        let backward = wire::serialize(&assemble(releases.into_iter().rev()).graph, None);
        assert_eq!(forward, backward);
    }
}
