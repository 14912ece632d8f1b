//! What makes an image an OpenShift release image, as the images carry it:
//! the facts the graph-builder reads and the test images are built with.

use std::collections::BTreeMap;

/// The label `oc adm release new` gives every release image: its version.
pub const RELEASE_LABEL: &str = "io.openshift.release";

/// Where a release image keeps its release metadata document
/// (`cincinnati-metadata-v0`), in its top-most layer.
pub const RELEASE_METADATA_PATH: &str = "release-manifests/release-metadata";

/// Whether an image labelled `labels` is a component of an OpenShift
/// release (what `oc adm release mirror` puts beside the releases), told
/// without reading its layers: OpenShift's builds label every image they
/// make (`io.openshift.build.*`, `com.redhat.component`), and only a
/// release is labelled [`RELEASE_LABEL`]. Another product's images, with
/// labels of their own or none, are not components: their layers are
/// searched for release metadata.
pub fn is_component_image(labels: &BTreeMap<String, String>) -> bool {
    !labels.contains_key(RELEASE_LABEL)
        && labels
            .keys()
            .any(|name| name.starts_with("io.openshift.build.") || name == "com.redhat.component")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(names: &[&str]) -> BTreeMap<String, String> {
        names
            .iter()
            .map(|name| ((*name).to_owned(), "x".to_owned()))
            .collect()
    }

    #[test]
    fn a_component_is_built_by_openshift_and_not_labelled_a_release() {
        assert!(is_component_image(&labels(&[
            "io.openshift.build.name",
            "vendor"
        ])));
        assert!(is_component_image(&labels(&["com.redhat.component"])));
        assert!(!is_component_image(&labels(&[
            RELEASE_LABEL,
            "io.openshift.build.name"
        ])));
        assert!(!is_component_image(&labels(&[
            "maintainer",
            "org.opencontainers.image.title"
        ])));
        assert!(!is_component_image(&labels(&[])));
    }
}
