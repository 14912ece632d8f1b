//! The graph-builder stages that apply graph-data, configured by upstream's
//! names and keys:
//!
//! ```toml
//! [[plugin_settings]]
//! name = "openshift-secondary-metadata-parse"
//! data_directory = "/var/lib/cincinnati/graph-data"
//! disallowed_errors = ["deserialize", "file"]
//!
//! [[plugin_settings]]
//! name = "edge-add-remove"
//! remove_consumed_metadata = false
//! ```
//!
//! The stages read the graph-data from the pipeline context through
//! [`GraphDataInput`]; loading it (from `data_directory`, a tarball or an
//! image) and refreshing it is the graph-builder's job, so a refused
//! graph-data never reaches a stage and the last good one stays in use.

use std::collections::BTreeSet;
use std::path::PathBuf;

use cincinnati_core::release::keys;
use cincinnati_core::stage::{Stage, StageSettings};
use cincinnati_core::{ApiError, ErrorKind, Graph};
use jiff::Timestamp;
use serde::Deserialize;

use crate::apply::{
    EdgeRules, InstructionKeys, apply_edge_instructions, apply_graph_data, remove_flagged_releases,
};
use crate::diagnostic::{Diagnostic, Strictness, UpstreamErrorClass};
use crate::model::GraphData;

/// What the graph-data stages need from the graph-builder's pipeline context.
pub trait GraphDataInput {
    /// The graph-data in use: the last one that loaded without errors.
    fn graph_data(&self) -> Option<&GraphData>;

    /// The moment the graph is built for: a release whose `start` is later
    /// is not in its channel yet. Read once per build by the caller, so that
    /// every stage sees the same moment.
    fn now(&self) -> Timestamp;

    /// Receives the warnings a stage found while applying graph-data to the
    /// current releases (such as channel versions that match no release).
    fn report(&self, stage: &'static str, warnings: Vec<Diagnostic>);
}

const PARSE: &str = "openshift-secondary-metadata-parse";
const EDGE_ADD_REMOVE: &str = "edge-add-remove";
const NODE_REMOVE: &str = "node-remove";

fn default_key_prefix() -> String {
    keys::PREFIX.to_owned()
}

/// `openshift-secondary-metadata-parse`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecondaryMetadataParseSettings {
    /// Where the graph-data is when no scraper provides it: the graph-builder
    /// loads it from here.
    #[serde(default)]
    pub data_directory: Option<PathBuf>,
    #[serde(default = "default_key_prefix")]
    pub key_prefix: String,
    /// Accepted for compatibility; upstream does not use it either.
    #[serde(default = "default_arch")]
    pub default_arch: String,
    /// Upstream classes of problems that refuse graph-data; when absent, our
    /// safer default (see [`Strictness`]).
    #[serde(default)]
    pub disallowed_errors: Option<BTreeSet<UpstreamErrorClass>>,
}

fn default_arch() -> String {
    "amd64".to_owned()
}

impl SecondaryMetadataParseSettings {
    /// How graph-data loaded for this stage must be judged.
    pub fn strictness(&self) -> Strictness {
        match &self.disallowed_errors {
            Some(classes) => Strictness::disallowing(classes.iter().copied()),
            None => Strictness::default(),
        }
    }
}

#[derive(Debug)]
struct SecondaryMetadataParse {
    keys: InstructionKeys,
}

impl<C: GraphDataInput + Send + Sync + 'static> StageSettings<C> for SecondaryMetadataParseSettings {
    const NAME: &'static str = PARSE;

    fn build(self) -> Result<Box<dyn Stage<C>>, String> {
        Ok(Box::new(SecondaryMetadataParse {
            keys: InstructionKeys::with_prefix(&self.key_prefix),
        }))
    }
}

impl<C: GraphDataInput + Send + Sync> Stage<C> for SecondaryMetadataParse {
    fn name(&self) -> &'static str {
        PARSE
    }

    fn apply(&self, graph: &mut Graph, context: &C) -> Result<(), ApiError> {
        let data = context.graph_data().ok_or_else(|| {
            ApiError::new(
                ErrorKind::FailedPluginExecution,
                "no graph-data has been loaded yet; releases are not published without channels",
            )
        })?;
        let warnings = apply_graph_data(graph, data, &self.keys, context.now());
        context.report(PARSE, warnings);
        Ok(())
    }
}

/// `edge-add-remove`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EdgeAddRemoveSettings {
    #[serde(default = "default_key_prefix")]
    pub key_prefix: String,
    #[serde(default = "default_remove_all_edges_value")]
    pub remove_all_edges_value: String,
    #[serde(default)]
    pub remove_consumed_metadata: bool,
    #[serde(default = "default_true")]
    pub include_conditional_edges: bool,
}

fn default_remove_all_edges_value() -> String {
    "*".to_owned()
}

fn default_true() -> bool {
    true
}

#[derive(Debug)]
struct EdgeAddRemove {
    rules: EdgeRules,
}

impl<C: GraphDataInput + Send + Sync + 'static> StageSettings<C> for EdgeAddRemoveSettings {
    const NAME: &'static str = EDGE_ADD_REMOVE;

    fn build(self) -> Result<Box<dyn Stage<C>>, String> {
        if self.remove_all_edges_value.trim().is_empty() {
            return Err("remove_all_edges_value must not be empty".to_owned());
        }
        Ok(Box::new(EdgeAddRemove {
            rules: EdgeRules {
                keys: InstructionKeys::with_prefix(&self.key_prefix),
                remove_all_edges_value: self.remove_all_edges_value,
                remove_consumed_metadata: self.remove_consumed_metadata,
                include_conditional_edges: self.include_conditional_edges,
            },
        }))
    }
}

impl<C: GraphDataInput + Send + Sync> Stage<C> for EdgeAddRemove {
    fn name(&self) -> &'static str {
        EDGE_ADD_REMOVE
    }

    fn apply(&self, graph: &mut Graph, context: &C) -> Result<(), ApiError> {
        let warnings = apply_edge_instructions(graph, context.graph_data(), &self.rules)
            .map_err(|error| ApiError::new(ErrorKind::FailedPluginExecution, error))?;
        context.report(EDGE_ADD_REMOVE, warnings);
        Ok(())
    }
}

/// `node-remove`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeRemoveSettings {
    #[serde(default = "default_key_prefix")]
    pub key_prefix: String,
}

#[derive(Debug)]
struct NodeRemove {
    keys: InstructionKeys,
}

impl<C: GraphDataInput + Send + Sync + 'static> StageSettings<C> for NodeRemoveSettings {
    const NAME: &'static str = NODE_REMOVE;

    fn build(self) -> Result<Box<dyn Stage<C>>, String> {
        Ok(Box::new(NodeRemove {
            keys: InstructionKeys::with_prefix(&self.key_prefix),
        }))
    }
}

impl<C: Send + Sync> Stage<C> for NodeRemove {
    fn name(&self) -> &'static str {
        NODE_REMOVE
    }

    fn apply(&self, graph: &mut Graph, _: &C) -> Result<(), ApiError> {
        remove_flagged_releases(graph, &self.keys);
        Ok(())
    }
}
