//! Builds OpenShift-style release images and pushes them to a real registry,
//! for tests, benchmarks and end-to-end runs of the graph-builder.
//!
//! A release image is a config (`architecture`, `os`) plus gzip-tar layers, one
//! of which holds `release-manifests/release-metadata`. [`Image`] and [`Layer`]
//! control every part (extra layers, layer order, raw or missing metadata);
//! [`ImageList`] makes Docker manifest lists and OCI indexes (multi releases);
//! [`Image::graph_data`] packs a graph-data tree. [`Pusher`] uploads them with
//! oci-client over HTTP or TLS, with optional basic auth. [`signature`] signs
//! an image digest as release tooling does.

mod blob;
mod directory;
mod error;
mod format;
mod image;
mod known_blobs;
mod layer;
mod manifest;
mod metadata;
mod push;
pub mod signature;

pub use error::Error;
pub use format::ManifestFormat;
pub use image::{Image, ImageList, Pushable};
pub use layer::Layer;
pub use metadata::{ARCHITECTURE_KEY, ReleaseMetadata};
pub use push::{PushOptions, Pusher};
pub use registry_client::release_image::{RELEASE_LABEL, RELEASE_METADATA_PATH};
