//! OpenShift graph-data through the crate's public API: loading and its
//! diagnostics, the pre-merge checks, the stages that apply it (against
//! upstream's fixtures and today's graph-data), YAML read as libyaml reads
//! it, signatures and the published tarball. One test binary, so the suite
//! links once.

mod conformance;
mod instructions;
mod malformed;
mod phased;
mod pre_merge;
mod present_day;
mod signature;
mod signature_tree;
mod sources;
mod support;
mod yaml_fidelity;
