//! Turns `[[plugin_settings]]` into what the graph-builder runs: one release
//! source, at most one graph-data source, and the ordered stages that apply
//! graph-data to the releases.
//!
//! Sources run on their own schedules; stages run, in configured order, each
//! time either source brings something new.

use std::collections::BTreeSet;

use cincinnati_core::stage::{Catalog, Pipeline};
use openshift_graph_data::{
    EdgeAddRemoveSettings, NodeRemoveSettings, SecondaryMetadataParseSettings, Strictness,
};
use serde::de::DeserializeOwned;

use crate::build::BuildContext;
use crate::settings::{RegistryDefaults, Settings};
use crate::sources::graph_data::{GraphDataSource, ImageSettings, TarballSettings};
use crate::sources::releases::{PathSettings, RegistryScrapeSettings, ReleaseSource};

const RELEASE_SCRAPE: &str = "release-scrape-dockerv2";
const RELEASE_GRAPH_FILE: &str = "release-graph-file";
const RELEASE_METADATA_DIRECTORY: &str = "release-metadata-directory";
const GRAPH_DATA_IMAGE: &str = "dkrv2-secondary-metadata-scrape";
const GRAPH_DATA_TARBALL: &str = "graph-data-tarball";
const GRAPH_DATA_GITHUB: &str = "github-secondary-metadata-scrape";
const QUAY_METADATA: &str = "quay-metadata";
const GRAPH_DATA_PARSE: &str = "openshift-secondary-metadata-parse";
const EDGE_ADD_REMOVE: &str = "edge-add-remove";
const NODE_REMOVE: &str = "node-remove";

/// What the configuration asks the graph-builder to run.
pub struct Plan {
    pub releases: ReleaseSource,
    pub graph_data: Option<GraphDataSource>,
    /// How new graph-data is judged (from `openshift-secondary-metadata-parse`).
    pub strictness: Strictness,
    pub pipeline: Pipeline<BuildContext>,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("plugin_settings[{position}] has no `name`")]
    MissingName { position: usize },
    #[error("plugin '{name}': {message}")]
    Invalid { name: String, message: String },
    #[error("unknown plugin '{name}' (known: {known})")]
    Unknown { name: String, known: String },
    #[error(
        "no release source: configure one of {RELEASE_SCRAPE}, {RELEASE_GRAPH_FILE}, {RELEASE_METADATA_DIRECTORY}"
    )]
    NoReleaseSource,
    #[error("more than one {kind} source ('{first}' and '{second}')")]
    TwoSources {
        kind: &'static str,
        first: String,
        second: String,
    },
    #[error(transparent)]
    Stage(#[from] cincinnati_core::stage::ConfigError),
}

fn catalog() -> Catalog<BuildContext> {
    Catalog::new()
        .register::<SecondaryMetadataParseSettings>()
        .register::<EdgeAddRemoveSettings>()
        .register::<NodeRemoveSettings>()
}

impl Plan {
    pub fn from_settings(settings: &Settings) -> Result<Self, PlanError> {
        if settings.plugin_settings.is_empty() {
            return Self::default_plan(&settings.upstream.registry);
        }
        let catalog = catalog();
        let mut releases: Option<(String, ReleaseSource)> = None;
        let mut graph_data: Option<(String, GraphDataSource)> = None;
        let mut data_directory = None;
        let mut strictness = Strictness::default();
        let mut stage_tables = Vec::new();
        for (position, table) in settings.plugin_settings.iter().enumerate() {
            let Some(toml::Value::String(name)) = table.get("name") else {
                return Err(PlanError::MissingName { position });
            };
            match name.as_str() {
                RELEASE_SCRAPE | RELEASE_GRAPH_FILE | RELEASE_METADATA_DIRECTORY => {
                    let source = release_source(name, table)?;
                    set_once(&mut releases, "release", name, source)?;
                }
                GRAPH_DATA_IMAGE | GRAPH_DATA_TARBALL => {
                    let source = graph_data_source(name, table)?;
                    set_once(&mut graph_data, "graph-data", name, source)?;
                }
                GRAPH_DATA_GITHUB => {
                    return Err(invalid(
                        name,
                        "GitHub is not supported; serve graph-data as an image \
                         (dkrv2-secondary-metadata-scrape), a tarball (graph-data-tarball) \
                         or a directory (openshift-secondary-metadata-parse data_directory)",
                    ));
                }
                QUAY_METADATA => {
                    return Err(invalid(
                        name,
                        "Quay label metadata is not supported; use graph-data",
                    ));
                }
                _ if catalog.knows(name) => {
                    if name == GRAPH_DATA_PARSE {
                        let parse: SecondaryMetadataParseSettings = typed(name, table)?;
                        strictness = parse.strictness();
                        data_directory = parse.data_directory.clone();
                    }
                    stage_tables.push(table.clone());
                }
                _ => {
                    let known: BTreeSet<&str> = [
                        RELEASE_SCRAPE,
                        RELEASE_GRAPH_FILE,
                        RELEASE_METADATA_DIRECTORY,
                        GRAPH_DATA_IMAGE,
                        GRAPH_DATA_TARBALL,
                        GRAPH_DATA_PARSE,
                        EDGE_ADD_REMOVE,
                        NODE_REMOVE,
                    ]
                    .into();
                    return Err(PlanError::Unknown {
                        name: name.clone(),
                        known: known.into_iter().collect::<Vec<_>>().join(", "),
                    });
                }
            }
        }
        let (_, releases) = releases.ok_or(PlanError::NoReleaseSource)?;
        let graph_data = match (graph_data, data_directory) {
            (Some((_, source)), _) => Some(source),
            (None, Some(directory)) => Some(GraphDataSource::Directory(directory)),
            (None, None) => None,
        };
        Ok(Self {
            releases,
            graph_data,
            strictness,
            pipeline: catalog.pipeline(&stage_tables)?,
        })
    }

    /// Upstream's default chain without its GitHub graph-data: scrape the
    /// `[upstream.registry]` repository and apply edge instructions.
    fn default_plan(registry: &RegistryDefaults) -> Result<Self, PlanError> {
        let mut table = toml::Table::new();
        table.insert("registry".into(), registry.url.clone().into());
        table.insert("repository".into(), registry.repository.clone().into());
        table.insert(
            "fetch_concurrency".into(),
            (registry.fetch_concurrency as i64).into(),
        );
        if let Some(path) = &registry.credentials_path {
            table.insert("credentials_path".into(), path.clone().into());
        }
        if let Some(key) = &registry.manifestref_key {
            table.insert("manifestref_key".into(), key.clone().into());
        }
        let releases = release_source(RELEASE_SCRAPE, &table)?;
        let mut edge_add_remove = toml::Table::new();
        edge_add_remove.insert("name".into(), EDGE_ADD_REMOVE.into());
        Ok(Self {
            releases,
            graph_data: None,
            strictness: Strictness::default(),
            pipeline: catalog().pipeline(&[edge_add_remove])?,
        })
    }
}

fn invalid(name: &str, message: impl Into<String>) -> PlanError {
    PlanError::Invalid {
        name: name.to_owned(),
        message: message.into(),
    }
}

fn set_once<T>(
    slot: &mut Option<(String, T)>,
    kind: &'static str,
    name: &str,
    value: T,
) -> Result<(), PlanError> {
    if let Some((first, _)) = slot {
        return Err(PlanError::TwoSources {
            kind,
            first: first.clone(),
            second: name.to_owned(),
        });
    }
    *slot = Some((name.to_owned(), value));
    Ok(())
}

/// The table's settings, `name` aside, refusing unknown keys.
fn typed<T: DeserializeOwned>(name: &str, table: &toml::Table) -> Result<T, PlanError> {
    let mut settings = table.clone();
    settings.remove("name");
    toml::Value::Table(settings)
        .try_into()
        .map_err(|error: toml::de::Error| invalid(name, error.to_string()))
}

fn release_source(name: &str, table: &toml::Table) -> Result<ReleaseSource, PlanError> {
    match name {
        RELEASE_SCRAPE => ReleaseSource::registry(&typed::<RegistryScrapeSettings>(name, table)?)
            .map_err(|message| invalid(name, message)),
        RELEASE_GRAPH_FILE => Ok(ReleaseSource::GraphFile(typed::<PathSettings>(name, table)?.path)),
        _ => Ok(ReleaseSource::MetadataDirectory(
            typed::<PathSettings>(name, table)?.path,
        )),
    }
}

fn graph_data_source(name: &str, table: &toml::Table) -> Result<GraphDataSource, PlanError> {
    let source = match name {
        GRAPH_DATA_IMAGE => GraphDataSource::image(&typed::<ImageSettings>(name, table)?),
        _ => GraphDataSource::tarball(&typed::<TarballSettings>(name, table)?),
    };
    source.map_err(|message| invalid(name, message))
}
