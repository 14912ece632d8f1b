//! Turns the settings into what the graph-builder runs: one release source,
//! at most one graph-data source, the ordered stages that apply graph-data
//! to the releases, and the schedule. Built once, without binding a port or
//! contacting anything: `--check-config` builds it too.
//!
//! Sources run on their own schedules; stages run, in configured order, each
//! time either source brings something new.

use cincinnati_core::stage::Pipeline;
use openshift_graph_data::{SecondaryMetadataParseSettings, Strictness};

use crate::pipeline::BuildContext;
use crate::plugins::{
    EDGE_ADD_REMOVE, GRAPH_DATA_PARSE, PluginError, PluginTable, RELEASE_GRAPH_FILE,
    RELEASE_METADATA_DIRECTORY, RELEASE_SCRAPE, catalog, invalid, typed,
};
use crate::schedule::{Schedule, ScheduleError};
use crate::settings::{RegistryDefaults, Settings};
use crate::sources::graph_data::GraphDataSource;
use crate::sources::releases::{RegistryScrapeSettings, ReleaseSource};

/// What the configuration asks the graph-builder to run.
pub struct Plan {
    pub releases: ReleaseSource,
    pub graph_data: Option<GraphDataSource>,
    /// How new graph-data is judged (from `openshift-secondary-metadata-parse`).
    pub strictness: Strictness,
    pub pipeline: Pipeline<BuildContext>,
    pub schedule: Schedule,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    #[error(transparent)]
    Plugin(#[from] PluginError),
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

impl Plan {
    pub fn from_settings(settings: &Settings) -> Result<Self, PlanError> {
        let schedule = Schedule::from_settings(&settings.service)?;
        if settings.plugin_settings.is_empty() {
            return Self::default_plan(&settings.upstream.registry, schedule);
        }
        let mut releases: Option<(&str, ReleaseSource)> = None;
        let mut graph_data: Option<(&str, GraphDataSource)> = None;
        let mut data_directory = None;
        let mut strictness = Strictness::default();
        let mut stage_tables = Vec::new();
        for table in &settings.plugin_settings {
            let name = table.name();
            match table {
                PluginTable::ReleaseScrape(scrape) => {
                    set_once(
                        &mut releases,
                        "release",
                        name,
                        ReleaseSource::registry(scrape).map_err(|message| invalid(name, message))?,
                    )?;
                }
                PluginTable::ReleaseGraphFile(path) => {
                    set_once(
                        &mut releases,
                        "release",
                        name,
                        ReleaseSource::GraphFile(path.path.clone()),
                    )?;
                }
                PluginTable::ReleaseMetadataDirectory(path) => {
                    let directory = ReleaseSource::MetadataDirectory(path.path.clone());
                    set_once(&mut releases, "release", name, directory)?;
                }
                PluginTable::GraphDataImage(image) => {
                    let image = GraphDataSource::image(image).map_err(|message| invalid(name, message))?;
                    set_once(&mut graph_data, "graph-data", name, image)?;
                }
                PluginTable::GraphDataTarball(tarball) => {
                    let tarball =
                        GraphDataSource::tarball(tarball).map_err(|message| invalid(name, message))?;
                    set_once(&mut graph_data, "graph-data", name, tarball)?;
                }
                PluginTable::Stage(table) => {
                    if name == GRAPH_DATA_PARSE {
                        let parse: SecondaryMetadataParseSettings = typed(name, table.clone())?;
                        strictness = parse.strictness();
                        data_directory = parse.data_directory.clone();
                    }
                    stage_tables.push(table.clone());
                }
            }
        }
        let (_, releases) = releases.ok_or(PlanError::NoReleaseSource)?;
        let graph_data = match (graph_data, data_directory) {
            (Some((_, source)), _) => Some(source),
            (None, Some(directory)) => Some(GraphDataSource::directory(directory)),
            (None, None) => None,
        };
        Ok(Self {
            releases,
            graph_data,
            strictness,
            pipeline: catalog().pipeline(&stage_tables)?,
            schedule,
        })
    }

    /// Upstream's default chain without its GitHub graph-data: scrape the
    /// `[upstream.registry]` repository and apply edge instructions.
    fn default_plan(registry: &RegistryDefaults, schedule: Schedule) -> Result<Self, PlanError> {
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
        let scrape: RegistryScrapeSettings = typed(RELEASE_SCRAPE, table)?;
        let releases =
            ReleaseSource::registry(&scrape).map_err(|message| invalid(RELEASE_SCRAPE, message))?;
        let mut edge_add_remove = toml::Table::new();
        edge_add_remove.insert("name".into(), EDGE_ADD_REMOVE.into());
        Ok(Self {
            releases,
            graph_data: None,
            strictness: Strictness::default(),
            pipeline: catalog().pipeline(&[edge_add_remove])?,
            schedule,
        })
    }

    /// What `--check-config` prints about the plan.
    pub fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "releases": self.releases.describe(),
            "graph_data": self.graph_data.as_ref().map(GraphDataSource::describe),
            "stages": self.pipeline.stage_names().collect::<Vec<_>>(),
        })
    }
}

fn set_once<'a, T>(
    slot: &mut Option<(&'a str, T)>,
    kind: &'static str,
    name: &'a str,
    value: T,
) -> Result<(), PlanError> {
    if let Some((first, _)) = slot {
        return Err(PlanError::TwoSources {
            kind,
            first: (*first).to_owned(),
            second: name.to_owned(),
        });
    }
    *slot = Some((name, value));
    Ok(())
}
