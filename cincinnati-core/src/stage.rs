//! Stages: graph transformations with typed settings, chained from
//! configuration by name. Both services build their pipelines here.
//!
//! A configuration names each stage in a table (`[[plugin_settings]]` in the
//! graph-builder, `[[policy]]` in the policy-engine):
//!
//! ```toml
//! [[policy]]
//! name = "arch-filter"
//! default_arch = "amd64"
//! ```
//!
//! The [`Catalog`] maps each name to its settings type; the table (less its
//! `name`) is deserialised into those settings, so unknown keys and wrong
//! types are refused at start-up with the stage named.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::DeserializeOwned;

use crate::error::ApiError;
use crate::graph::Graph;
use crate::listed::{Listed, Listing};
use crate::release::Release;

/// A test of one release, by which a stage keeps or drops it.
pub type ReleaseTest<'a> = Box<dyn Fn(&Release) -> bool + Send + Sync + 'a>;

/// One transformation of the graph. `C` is the typed input every stage of a
/// pipeline sees: the client's parameters in the policy-engine, the current
/// graph-data in the graph-builder.
pub trait Stage<C>: Send + Sync + fmt::Debug {
    /// The name this stage has in configuration.
    fn name(&self) -> &'static str;

    /// Transforms `graph`. The error carries the kind answered to clients.
    fn apply(&self, graph: &mut Graph, context: &C) -> Result<(), ApiError>;

    /// When this stage, for `context`, keeps the releases that pass a test
    /// of each release alone, with the edges and conditional edges among
    /// them (what [`Graph::subgraph`] keeps), and then does at most
    /// [`Stage::finish_kept`] on them: that test. [`Pipeline::run_on`] then
    /// copies only what the leading such stages keep, instead of the whole
    /// graph.
    fn release_test<'a>(&'a self, _context: &'a C) -> Option<ReleaseTest<'a>> {
        None
    }

    /// What this stage does, beyond its [`Stage::release_test`], to the
    /// releases it kept; run on the copy, in order, before the stages that
    /// follow the leading tested ones. It must not change what another
    /// stage's release test decides.
    fn finish_kept(&self, _graph: &mut Graph, _context: &C) -> Result<(), ApiError> {
        Ok(())
    }

    /// When this stage's [`Stage::release_test`] keeps, for `context`,
    /// only releases of a listing (it may keep fewer of them): that
    /// listing. What a pipeline led by such a stage answers depends on the
    /// graph only through that listing (see [`crate::listed`]).
    fn listing<'a>(&'a self, _context: &'a C) -> Option<Listing<'a>> {
        None
    }
}

/// Typed settings of a stage, read from its configuration table.
pub trait StageSettings<C>: DeserializeOwned {
    /// The `name` that selects these settings in configuration.
    const NAME: &'static str;

    /// Validates the settings and builds the stage.
    fn build(self) -> Result<Box<dyn Stage<C>>, String>;
}

/// Stages run in order over one graph.
pub struct Pipeline<C> {
    stages: Vec<Box<dyn Stage<C>>>,
}

impl<C> fmt::Debug for Pipeline<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.stage_names()).finish()
    }
}

/// A stage failed; the graph may be partly transformed and must be dropped.
#[derive(Debug, thiserror::Error)]
#[error("stage {stage}: {error}")]
pub struct PipelineError {
    pub stage: &'static str,
    pub error: ApiError,
}

impl<C> Pipeline<C> {
    pub fn new(stages: Vec<Box<dyn Stage<C>>>) -> Self {
        Self { stages }
    }

    pub fn stage_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.stages.iter().map(|stage| stage.name())
    }

    pub fn run(&self, graph: &mut Graph, context: &C) -> Result<(), PipelineError> {
        run_stages(&self.stages, graph, context)
    }

    /// Runs the pipeline on a copy of `graph`, leaving `graph` as it is. The
    /// leading stages that only keep releases by a test (see
    /// [`Stage::release_test`]) are applied while copying, so that a
    /// pipeline that keeps a few hundred releases of thousands copies only
    /// those.
    pub fn run_on(&self, graph: &Graph, context: &C) -> Result<Graph, PipelineError> {
        self.run_on_copy(context, |keep| graph.subgraph(keep))
    }

    /// [`Pipeline::run_on`] `graph`, reading only the releases of the
    /// pipeline's [`Pipeline::listing`] through `listed` (what `graph`
    /// holds per value of a metadata list) when it is of that list.
    pub fn run_on_listed(&self, graph: &Graph, listed: &Listed, context: &C) -> Result<Graph, PipelineError> {
        self.run_on_copy(context, |keep| {
            self.listing(context)
                .and_then(|listing| listed.copy(graph, &listing, keep))
                .unwrap_or_else(|| graph.subgraph(keep))
        })
    }

    /// Runs the pipeline on the copy `copy` makes of the releases its
    /// argument keeps (the leading stages' release tests).
    fn run_on_copy(
        &self,
        context: &C,
        copy: impl FnOnce(&dyn Fn(&Release) -> bool) -> Graph,
    ) -> Result<Graph, PipelineError> {
        let tests: Vec<ReleaseTest<'_>> = self
            .stages
            .iter()
            .map_while(|stage| stage.release_test(context))
            .collect();
        let mut copy = copy(&|release| tests.iter().all(|test| test(release)));
        for stage in &self.stages[..tests.len()] {
            stage
                .finish_kept(&mut copy, context)
                .map_err(|error| PipelineError {
                    stage: stage.name(),
                    error,
                })?;
        }
        run_stages(&self.stages[tests.len()..], &mut copy, context)?;
        Ok(copy)
    }

    /// A listing that holds everything [`Pipeline::run_on`] copies for
    /// `context`: one that a stage among the leading tested ones keeps
    /// only releases of. `None` when the answer may depend on more of the
    /// graph.
    pub fn listing<'a>(&'a self, context: &'a C) -> Option<Listing<'a>> {
        self.stages
            .iter()
            .take_while(|stage| stage.release_test(context).is_some())
            .find_map(|stage| stage.listing(context))
    }
}

fn run_stages<C>(stages: &[Box<dyn Stage<C>>], graph: &mut Graph, context: &C) -> Result<(), PipelineError> {
    for stage in stages {
        stage.apply(graph, context).map_err(|error| PipelineError {
            stage: stage.name(),
            error,
        })?;
    }
    Ok(())
}

/// Why a stage configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("stage table {position} has no `name`")]
    MissingName { position: usize },
    #[error("unknown stage '{name}' (known: {known})")]
    UnknownStage { name: String, known: String },
    #[error("stage '{name}': {source}")]
    Settings { name: String, source: toml::de::Error },
    #[error("stage '{name}': {message}")]
    Invalid { name: String, message: String },
}

type Builder<C> = fn(toml::Table) -> Result<Box<dyn Stage<C>>, ConfigError>;

/// The stages a service knows, by configuration name.
pub struct Catalog<C> {
    builders: BTreeMap<&'static str, Builder<C>>,
}

impl<C> Default for Catalog<C> {
    fn default() -> Self {
        Self {
            builders: BTreeMap::new(),
        }
    }
}

impl<C> Catalog<C> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes the stage with settings `S` available under `S::NAME`.
    pub fn register<S: StageSettings<C>>(mut self) -> Self {
        self.builders.insert(S::NAME, build_from_table::<C, S>);
        self
    }

    pub fn knows(&self, name: &str) -> bool {
        self.builders.contains_key(name)
    }

    /// The names of the stages known, sorted.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.builders.keys().copied()
    }

    /// Builds one stage from its table (`name` plus settings).
    pub fn build(&self, position: usize, table: &toml::Table) -> Result<Box<dyn Stage<C>>, ConfigError> {
        let Some(toml::Value::String(name)) = table.get("name") else {
            return Err(ConfigError::MissingName { position });
        };
        let builder = self
            .builders
            .get(name.as_str())
            .ok_or_else(|| ConfigError::UnknownStage {
                name: name.clone(),
                known: self.names().collect::<Vec<_>>().join(", "),
            })?;
        let mut settings = table.clone();
        settings.remove("name");
        builder(settings)
    }

    /// Builds a pipeline from stage tables, in their order.
    pub fn pipeline(&self, tables: &[toml::Table]) -> Result<Pipeline<C>, ConfigError> {
        let stages = tables
            .iter()
            .enumerate()
            .map(|(position, table)| self.build(position, table))
            .collect::<Result<_, _>>()?;
        Ok(Pipeline::new(stages))
    }
}

fn build_from_table<C, S: StageSettings<C>>(table: toml::Table) -> Result<Box<dyn Stage<C>>, ConfigError> {
    let settings: S = toml::Value::Table(table)
        .try_into()
        .map_err(|source| ConfigError::Settings {
            name: S::NAME.to_owned(),
            source,
        })?;
    settings.build().map_err(|message| ConfigError::Invalid {
        name: S::NAME.to_owned(),
        message,
    })
}

#[cfg(test)]
mod tests {
    use semver::Version;
    use serde::Deserialize;

    use super::*;
    use crate::error::ErrorKind;
    use crate::release::Release;

    /// Test input: the versions the client wants removed.
    struct Unwanted(Vec<Version>);

    #[derive(Debug)]
    struct RemoveUnwanted;

    impl Stage<Unwanted> for RemoveUnwanted {
        fn name(&self) -> &'static str {
            "remove-unwanted"
        }
        fn apply(&self, graph: &mut Graph, unwanted: &Unwanted) -> Result<(), ApiError> {
            graph.retain_releases(|release| !unwanted.0.contains(&release.version));
            Ok(())
        }
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct RemoveUnwantedSettings {}

    impl StageSettings<Unwanted> for RemoveUnwantedSettings {
        const NAME: &'static str = "remove-unwanted";
        fn build(self) -> Result<Box<dyn Stage<Unwanted>>, String> {
            Ok(Box::new(RemoveUnwanted))
        }
    }

    #[derive(Debug)]
    struct RequireReleases {
        at_least: usize,
    }

    impl Stage<Unwanted> for RequireReleases {
        fn name(&self) -> &'static str {
            "require-releases"
        }
        fn apply(&self, graph: &mut Graph, _: &Unwanted) -> Result<(), ApiError> {
            if graph.release_count() < self.at_least {
                return Err(ApiError::new(
                    ErrorKind::FailedPluginExecution,
                    "too few releases",
                ));
            }
            Ok(())
        }
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct RequireReleasesSettings {
        at_least: usize,
    }

    impl StageSettings<Unwanted> for RequireReleasesSettings {
        const NAME: &'static str = "require-releases";
        fn build(self) -> Result<Box<dyn Stage<Unwanted>>, String> {
            if self.at_least == 0 {
                return Err("at_least must be positive".into());
            }
            Ok(Box::new(RequireReleases {
                at_least: self.at_least,
            }))
        }
    }

    fn catalog() -> Catalog<Unwanted> {
        Catalog::new()
            .register::<RemoveUnwantedSettings>()
            .register::<RequireReleasesSettings>()
    }

    fn tables(toml_text: &str) -> Vec<toml::Table> {
        #[derive(Deserialize)]
        struct File {
            stage: Vec<toml::Table>,
        }
        toml::from_str::<File>(toml_text).unwrap().stage
    }

    fn graph_of(versions: &[&str]) -> Graph {
        let mut graph = Graph::new();
        for version in versions {
            graph
                .add_release(Release::abstract_release(Version::parse(version).unwrap()))
                .unwrap();
        }
        graph
    }

    #[test]
    fn stages_run_in_configured_order() {
        let pipeline = catalog()
            .pipeline(&tables(
                "[[stage]]\nname = \"remove-unwanted\"\n[[stage]]\nname = \"require-releases\"\nat_least = 2\n",
            ))
            .unwrap();
        assert_eq!(
            pipeline.stage_names().collect::<Vec<_>>(),
            ["remove-unwanted", "require-releases"]
        );

        let mut graph = graph_of(&["1.0.0", "1.1.0", "1.2.0"]);
        pipeline
            .run(&mut graph, &Unwanted(vec![Version::parse("1.1.0").unwrap()]))
            .unwrap();
        assert_eq!(graph.release_count(), 2);

        let error = pipeline
            .run(&mut graph, &Unwanted(vec![Version::parse("1.0.0").unwrap()]))
            .unwrap_err();
        assert_eq!(error.stage, "require-releases");
        assert_eq!(error.error.kind, ErrorKind::FailedPluginExecution);
    }

    #[test]
    fn configuration_errors_name_the_stage_and_key() {
        let unknown = catalog()
            .pipeline(&tables("[[stage]]\nname = \"nope\"\n"))
            .unwrap_err();
        assert_eq!(
            unknown.to_string(),
            "unknown stage 'nope' (known: remove-unwanted, require-releases)"
        );

        let bad_key = catalog()
            .pipeline(&tables(
                "[[stage]]\nname = \"require-releases\"\nat_least = 1\ntypo = 1\n",
            ))
            .unwrap_err();
        let message = bad_key.to_string();
        assert!(
            message.starts_with("stage 'require-releases':") && message.contains("typo"),
            "{message}"
        );

        let invalid = catalog()
            .pipeline(&tables("[[stage]]\nname = \"require-releases\"\nat_least = 0\n"))
            .unwrap_err();
        assert_eq!(
            invalid.to_string(),
            "stage 'require-releases': at_least must be positive"
        );

        let nameless = catalog()
            .pipeline(&tables("[[stage]]\nat_least = 1\n"))
            .unwrap_err();
        assert_eq!(nameless.to_string(), "stage table 0 has no `name`");
    }
}
