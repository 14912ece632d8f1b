//! Releases: the nodes of the update graph.

use semver::{BuildMetadata, Version};

use crate::metadata::Metadata;

/// Well-known metadata keys (see the OpenShift design documents).
pub mod keys {
    /// The prefix upstream uses for every graph-related key.
    pub const PREFIX: &str = "io.openshift.upgrades.graph";
    /// Comma-separated channels a release belongs to.
    pub const CHANNELS: &str = "io.openshift.upgrades.graph.release.channels";
    /// The architecture the graph-builder derived from the registry.
    pub const ARCH: &str = "io.openshift.upgrades.graph.release.arch";
    /// The release image's manifest digest (`sha256:...`).
    pub const MANIFESTREF: &str = "io.openshift.upgrades.graph.release.manifestref";
    /// When the release image was built (RFC 3339, from its image config),
    /// written by this project's graph-builder: the age deferral rings
    /// read. Upstream engines ignore it as they ignore every unknown key.
    pub const CREATED: &str = "io.openshift.upgrades.graph.release.created";
    /// The phased rollouts (graph-data schema 2.0.0) of the channels a
    /// release is entering but not yet listed in (JSON), written by this
    /// project's graph-builder for the engines that phase per cluster; see
    /// `openshift_graph_data::phased::published`. Upstream engines and the
    /// CVO ignore it as they ignore every unknown key.
    pub const PHASED_ROLLOUTS: &str = "io.openshift.upgrades.graph.release.phased_rollouts";
    /// The architecture a release image claims for itself (`multi` on multi releases).
    pub const RELEASE_ARCHITECTURE: &str = "release.openshift.io/architecture";
}

/// One node of the update graph.
///
/// A release is *concrete* when it has a payload. Upstream graph-builders also
/// emit *abstract* releases: versions named in some `previous`/`next` list that
/// were never scraped. They carry only a version and are kept as such.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    pub version: Version,
    pub payload: Option<String>,
    pub metadata: Metadata,
}

impl Release {
    /// A release that was seen in full: version, payload and metadata.
    pub fn concrete(version: Version, payload: impl Into<String>, metadata: Metadata) -> Self {
        Self {
            version,
            payload: Some(payload.into()),
            metadata,
        }
    }

    /// A release known only by its version.
    pub fn abstract_release(version: Version) -> Self {
        Self {
            version,
            payload: None,
            metadata: Metadata::new(),
        }
    }

    pub fn is_abstract(&self) -> bool {
        self.payload.is_none()
    }

    /// The comma-separated metadata value under `key`, split and trimmed.
    pub fn metadata_list<'a>(&'a self, key: &str) -> impl Iterator<Item = &'a str> + 'a {
        self.metadata
            .get(key)
            .into_iter()
            .flat_map(|value| value.split(','))
            .map(str::trim)
            .filter(|item| !item.is_empty())
    }
}

// The architecture of a release, as the Graph API writes it: a
// graph-builder names every release with its architecture as build
// metadata (`4.16.3+amd64`) and lists it in `release.arch`; a policy-engine
// answers one architecture with both removed. Every crate asks these.

/// The architecture of a release of a full graph: its build metadata, or
/// else its `release.arch` metadata; `None` for a release of a view (one
/// architecture's, named without it).
pub fn arch_of(release: &Release) -> Option<&str> {
    if release.version.build.is_empty() {
        release.metadata.get(keys::ARCH)
    } else {
        Some(release.version.build.as_str())
    }
}

/// `version` with its build metadata replaced by `arch` (`4.16.3` → `4.16.3+amd64`).
pub fn with_arch(version: &Version, arch: &str) -> Result<Version, semver::Error> {
    let mut versioned = version.clone();
    versioned.build = BuildMetadata::new(arch)?;
    Ok(versioned)
}

/// `version` named as in a full graph of `arch`: `arch` added as build
/// metadata unless it carries some already (`4.16.3` → `4.16.3+amd64`), so
/// that graph-data's names and regexes match a view's releases too.
pub fn named_with_arch(version: &Version, arch: &str) -> Version {
    if version.build.is_empty() {
        with_arch(version, arch).unwrap_or_else(|_| version.clone())
    } else {
        version.clone()
    }
}

/// `version` without the build identifiers equal to `arch`, if it had any
/// (`4.16.3+amd64` → `4.16.3`): how a view names a full graph's release.
pub fn without_arch(version: &Version, arch: &str) -> Option<Version> {
    if !version.build.split('.').any(|identifier| identifier == arch) {
        return None;
    }
    let kept: Vec<&str> = version
        .build
        .split('.')
        .filter(|identifier| *identifier != arch)
        .collect();
    let mut stripped = version.clone();
    // The kept identifiers were valid in the original build metadata.
    stripped.build = BuildMetadata::new(&kept.join(".")).unwrap_or(BuildMetadata::EMPTY);
    Some(stripped)
}

/// `version` without build metadata (`4.16.3+amd64` → `4.16.3`).
pub fn without_build(version: &Version) -> Version {
    let mut plain = version.clone();
    plain.build = BuildMetadata::EMPTY;
    plain
}

/// Whether two versions are equal when build metadata is ignored, the way
/// upstream compares a graph-data version with an arch-suffixed release.
pub fn same_release(a: &Version, b: &Version) -> bool {
    a.major == b.major && a.minor == b.minor && a.patch == b.patch && a.pre == b.pre
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn arch_suffix_round_trip_keeps_prerelease() {
        let suffixed = with_arch(&v("4.2.10-s390x"), "s390x").unwrap();
        assert_eq!(suffixed.to_string(), "4.2.10-s390x+s390x");
        assert_eq!(without_build(&suffixed), v("4.2.10-s390x"));
    }

    #[test]
    fn a_release_s_architecture_is_its_build_metadata_or_its_arch_key() {
        let named = Release::concrete(v("4.16.3+arm64"), "p", Metadata::default());
        assert_eq!(arch_of(&named), Some("arm64"));
        let listed = Release::concrete(
            v("4.16.3"),
            "p",
            Metadata::from_iter([(keys::ARCH.to_owned(), "s390x".to_owned())]),
        );
        assert_eq!(arch_of(&listed), Some("s390x"));
        assert_eq!(
            arch_of(&Release::concrete(v("4.16.3"), "p", Metadata::default())),
            None
        );
    }

    #[test]
    fn a_view_s_names_and_a_full_graph_s_convert_both_ways() {
        assert_eq!(named_with_arch(&v("4.16.3"), "amd64"), v("4.16.3+amd64"));
        assert_eq!(named_with_arch(&v("4.16.3+multi"), "amd64"), v("4.16.3+multi"));
        assert_eq!(without_arch(&v("4.16.3+amd64"), "amd64"), Some(v("4.16.3")));
        assert_eq!(without_arch(&v("4.16.3+amd64.x"), "amd64"), Some(v("4.16.3+x")));
        assert_eq!(without_arch(&v("4.16.3+multi"), "amd64"), None);
        assert_eq!(without_arch(&v("4.16.3"), "amd64"), None);
    }

    #[test]
    fn invalid_arch_is_rejected() {
        assert!(with_arch(&v("4.1.0"), "not valid").is_err());
    }

    #[test]
    fn newest_release_orders_last() {
        let mut versions = [v("4.10.0"), v("4.9.9"), v("4.10.0-rc.1"), v("4.10.0+amd64")];
        versions.sort();
        let names: Vec<_> = versions.iter().map(ToString::to_string).collect();
        assert_eq!(names, ["4.9.9", "4.10.0-rc.1", "4.10.0", "4.10.0+amd64"]);
    }

    #[test]
    fn same_release_ignores_build_only() {
        assert!(same_release(&v("4.1.0"), &v("4.1.0+amd64")));
        assert!(!same_release(&v("4.1.0-rc.1"), &v("4.1.0+amd64")));
    }

    #[test]
    fn metadata_list_splits_and_trims() {
        let mut metadata = Metadata::new();
        metadata.insert(keys::CHANNELS, "a-4.1, b-4.1,,");
        let release = Release::concrete(v("4.1.0"), "p", metadata);
        assert_eq!(
            release.metadata_list(keys::CHANNELS).collect::<Vec<_>>(),
            ["a-4.1", "b-4.1"]
        );
    }
}
