//! What makes an image an OpenShift release image, as the images carry it:
//! the facts the graph-builder reads and the test images are built with.

/// The label `oc adm release new` gives every release image: its version.
/// Every image OpenShift builds is labelled; a labelled image without this
/// one is a component image.
pub const RELEASE_LABEL: &str = "io.openshift.release";

/// Where a release image keeps its release metadata document
/// (`cincinnati-metadata-v0`), in its top-most layer.
pub const RELEASE_METADATA_PATH: &str = "release-manifests/release-metadata";
