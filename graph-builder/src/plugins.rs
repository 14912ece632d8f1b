//! `[[plugin_settings]]` tables, typed where they are read: each source's
//! settings (their secrets [`service_kit::secret::Secret`]s), or a stage's
//! table, checked against the stage catalogue ([`catalog`]) and handed to
//! it as given.
//! Printed by `--check-config` with every default filled in and no secret.

use std::collections::BTreeSet;

use cincinnati_core::stage::Catalog;
use openshift_graph_data::{EdgeAddRemoveSettings, NodeRemoveSettings, SecondaryMetadataParseSettings};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use service_kit::settings::Named;

use crate::pipeline::BuildContext;
use crate::sources::graph_data::{ImageSettings, TarballSettings};
use crate::sources::releases::{PathSettings, RegistryScrapeSettings};

pub const RELEASE_SCRAPE: &str = "release-scrape-dockerv2";
pub const RELEASE_GRAPH_FILE: &str = "release-graph-file";
pub const RELEASE_METADATA_DIRECTORY: &str = "release-metadata-directory";
pub const GRAPH_DATA_IMAGE: &str = "dkrv2-secondary-metadata-scrape";
pub const GRAPH_DATA_TARBALL: &str = "graph-data-tarball";
pub const GRAPH_DATA_PARSE: &str = "openshift-secondary-metadata-parse";
pub const EDGE_ADD_REMOVE: &str = "edge-add-remove";
const GRAPH_DATA_GITHUB: &str = "github-secondary-metadata-scrape";
const QUAY_METADATA: &str = "quay-metadata";

/// The sources, by name; the stages are the catalogue's.
const SOURCES: [&str; 5] = [
    RELEASE_SCRAPE,
    RELEASE_GRAPH_FILE,
    RELEASE_METADATA_DIRECTORY,
    GRAPH_DATA_IMAGE,
    GRAPH_DATA_TARBALL,
];

/// The stages a `[[plugin_settings]]` table can name.
pub fn catalog() -> Catalog<BuildContext> {
    Catalog::new()
        .register::<SecondaryMetadataParseSettings>()
        .register::<EdgeAddRemoveSettings>()
        .register::<NodeRemoveSettings>()
}

/// Every plugin name a `[[plugin_settings]]` table may have.
pub fn known_plugins() -> BTreeSet<&'static str> {
    SOURCES.into_iter().chain(catalog().names()).collect()
}

/// One `[[plugin_settings]]` table.
#[derive(Debug, Clone)]
pub enum PluginTable {
    ReleaseScrape(RegistryScrapeSettings),
    ReleaseGraphFile(PathSettings),
    ReleaseMetadataDirectory(PathSettings),
    GraphDataImage(Box<ImageSettings>),
    GraphDataTarball(TarballSettings),
    /// A stage the catalogue knows, `name` included.
    Stage(toml::Table),
}

impl PluginTable {
    pub fn name(&self) -> &str {
        match self {
            Self::ReleaseScrape(_) => RELEASE_SCRAPE,
            Self::ReleaseGraphFile(_) => RELEASE_GRAPH_FILE,
            Self::ReleaseMetadataDirectory(_) => RELEASE_METADATA_DIRECTORY,
            Self::GraphDataImage(_) => GRAPH_DATA_IMAGE,
            Self::GraphDataTarball(_) => GRAPH_DATA_TARBALL,
            Self::Stage(table) => table
                .get("name")
                .and_then(toml::Value::as_str)
                .unwrap_or_default(),
        }
    }

    /// A table read as the configuration file would be.
    pub fn from_table(table: toml::Table) -> Result<Self, PluginError> {
        let Some(toml::Value::String(name)) = table.get("name") else {
            return Err(PluginError::MissingName);
        };
        let name = name.clone();
        Ok(match name.as_str() {
            RELEASE_SCRAPE => Self::ReleaseScrape(typed(&name, table)?),
            RELEASE_GRAPH_FILE => Self::ReleaseGraphFile(typed(&name, table)?),
            RELEASE_METADATA_DIRECTORY => Self::ReleaseMetadataDirectory(typed(&name, table)?),
            GRAPH_DATA_IMAGE => Self::GraphDataImage(Box::new(typed(&name, table)?)),
            GRAPH_DATA_TARBALL => Self::GraphDataTarball(typed(&name, table)?),
            GRAPH_DATA_GITHUB => {
                return Err(invalid(
                    &name,
                    "GitHub is not supported; serve graph-data as an image \
                     (dkrv2-secondary-metadata-scrape), a tarball (graph-data-tarball) \
                     or a directory (openshift-secondary-metadata-parse data_directory)",
                ));
            }
            QUAY_METADATA => {
                return Err(invalid(
                    &name,
                    "Quay label metadata is not supported; use graph-data",
                ));
            }
            _ if catalog().knows(&name) => Self::Stage(table),
            _ => {
                return Err(PluginError::Unknown {
                    known: known_plugins().into_iter().collect::<Vec<_>>().join(", "),
                    name,
                });
            }
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("a [[plugin_settings]] table has no `name`")]
    MissingName,
    #[error("plugin '{name}': {message}")]
    Invalid { name: String, message: String },
    #[error("unknown plugin '{name}' (known: {known})")]
    Unknown { name: String, known: String },
}

pub fn invalid(name: &str, message: impl Into<String>) -> PluginError {
    PluginError::Invalid {
        name: name.to_owned(),
        message: message.into(),
    }
}

/// The table's settings, `name` aside, refusing unknown keys.
pub fn typed<T: de::DeserializeOwned>(name: &str, mut table: toml::Table) -> Result<T, PluginError> {
    table.remove("name");
    toml::Value::Table(table)
        .try_into()
        .map_err(|error: toml::de::Error| invalid(name, error.to_string()))
}

impl<'de> Deserialize<'de> for PluginTable {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::from_table(toml::Table::deserialize(deserializer)?).map_err(de::Error::custom)
    }
}

impl Serialize for PluginTable {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let name = self.name();
        match self {
            Self::ReleaseScrape(settings) => Named(name, settings).serialize(serializer),
            Self::ReleaseGraphFile(settings) | Self::ReleaseMetadataDirectory(settings) => {
                Named(name, settings).serialize(serializer)
            }
            Self::GraphDataImage(settings) => Named(name, settings).serialize(serializer),
            Self::GraphDataTarball(settings) => Named(name, settings).serialize(serializer),
            Self::Stage(table) => table.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, Serialize)]
    struct Plugins {
        plugin_settings: Vec<PluginTable>,
    }

    #[test]
    fn printed_plugins_hide_their_secrets() {
        let plugins: Plugins = toml::from_str(
            "[[plugin_settings]]\nname = \"release-scrape-dockerv2\"\nusername = \"u\"\npassword = \"hunter2\"\n\
             [[plugin_settings]]\nname = \"graph-data-tarball\"\nurl = \"https://user:hunter3@gd.example/graph-data\"\n",
        )
        .unwrap();
        let printed = serde_json::to_string(&plugins).unwrap();
        assert!(!printed.contains("hunter"), "{printed}");
        assert!(
            printed.contains("\"<redacted>\"") && printed.contains("\"u\""),
            "{printed}"
        );
        assert!(
            printed.contains("https://user:redacted@gd.example/graph-data"),
            "{printed}"
        );
        assert!(!format!("{plugins:?}").contains("hunter"));
    }

    #[test]
    fn unknown_and_unsupported_plugins_are_refused_naming_them() {
        let error = PluginTable::from_table(toml::from_str("name = \"quay-metadata\"").unwrap()).unwrap_err();
        assert!(error.to_string().contains("quay-metadata"), "{error}");
        let error = PluginTable::from_table(toml::from_str("name = \"nope\"").unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("unknown plugin 'nope'") && error.contains(RELEASE_SCRAPE),
            "{error}"
        );
    }
}
