//! docs/operations.md's graph-builder tables, checked against the code so the
//! page cannot go stale: every setting key, flag, default, plugin, plugin key
//! and plugin default, and every metric name and type. Keys are learnt from
//! the settings types themselves (serde's unknown-field error lists what a
//! struct accepts), flags from clap, metric names from the source that
//! registers them and types from a live registry. The policy-engine's twin
//! is policy-engine/tests/operations_doc.rs.

use std::collections::BTreeSet;

use clap::CommandFactory as _;
use doc_tables::{debug_of, expected_fields, single_code, table_of, toml_literal};
use graph_builder::cli::Cli;
use graph_builder::plan::Plan;
use graph_builder::settings::Settings;
use graph_builder::sources::graph_data::{ImageSettings, TarballSettings};
use graph_builder::sources::releases::{PathSettings, RegistryScrapeSettings};
use openshift_graph_data::{EdgeAddRemoveSettings, NodeRemoveSettings, SecondaryMetadataParseSettings};

const DOC: &str = include_str!("../../docs/operations.md");
const SERVICE: &str = "graph-builder";
const METRIC_PREFIX: &str = "cincinnati_gb_";
/// The sources that register this service's metrics (the graph-builder
/// registers service-kit's `graph_response_errors_total` in app.rs).
const METRIC_SOURCES: [&str; 4] = [
    include_str!("../src/metrics.rs"),
    include_str!("../../service-kit/src/metrics.rs"),
    include_str!("../../service-kit/src/errors.rs"),
    include_str!("../../service-kit/src/supervisor.rs"),
];
/// Flags that are not settings, documented in prose.
const NOT_SETTINGS: [&str; 5] = ["config", "once", "check_config", "help", "version"];

#[test]
fn every_setting_is_documented_with_its_flags_and_default() {
    doc_tables::check_settings_table::<Settings>(DOC, SERVICE, &cli_flags());
}

#[test]
fn every_plugin_and_plugin_key_is_documented() {
    let documented = plugin_markers();
    assert_eq!(
        known_plugins(),
        documented.iter().cloned().collect::<BTreeSet<_>>(),
        "plugins in docs/operations.md vs the plan's catalogue"
    );
    for name in &documented {
        let rows = table(&format!("plugin: {SERVICE} {name}"));
        let keys: BTreeSet<String> = rows.iter().map(|row| single_code(&row[0])).collect();
        assert_eq!(keys, plugin_keys(name), "keys of plugin {name}");
        let required: String = rows
            .iter()
            .filter(|row| row[1].trim() == "required")
            .map(|row| format!("{} = \"x\"\n", single_code(&row[0])))
            .collect();
        let base = plugin_debug(name, &required);
        for row in &rows {
            if let Some(literal) = toml_literal(&row[1]) {
                let key = single_code(&row[0]);
                assert_eq!(
                    plugin_debug(name, &format!("{required}{key} = {literal}\n")),
                    base,
                    "plugin {name}: the documented default of {key} ({literal}) is not the default"
                );
            }
        }
    }
}

#[test]
fn every_metric_is_documented_with_its_type() {
    let metrics = graph_builder::metrics::Metrics::new("test").unwrap();
    doc_tables::check_metric_table(DOC, SERVICE, METRIC_PREFIX, &METRIC_SOURCES, &metrics.registry);
}

// -- the graph-builder's catalogue ----------------------------------------

fn cli_flags() -> BTreeSet<String> {
    flags_of(&Cli::command())
}

/// Plugin names the plan knows, from its answer to an unknown one.
fn known_plugins() -> BTreeSet<String> {
    doc_tables::known_names(&plan_error(&[table_of("name = \"__probe__\"")]))
}

/// The keys plugin `name` accepts besides `name`.
fn plugin_keys(name: &str) -> BTreeSet<String> {
    let probe = table_of(&format!("name = \"{name}\"\n__probe__ = 1"));
    // A release source first, so a stage is judged (stages are built after
    // the sources are found); a release source is judged before that one.
    let error = plan_error(&[
        table_of("name = \"release-graph-file\"\npath = \"/nonexistent\""),
        probe,
    ]);
    expected_fields(&error)
        .unwrap_or_else(|| panic!("plugin {name}: no unknown-field answer to a probe key: {error}"))
}

fn plan_error(tables: &[toml::Table]) -> String {
    let settings = Settings {
        plugin_settings: tables.to_vec(),
        ..Settings::default()
    };
    match Plan::from_settings(&settings) {
        Ok(_) => panic!("the probe configuration was accepted"),
        Err(error) => error.to_string(),
    }
}

/// The Debug of plugin `name`'s settings read from `text`: equal for a
/// documented default and no value at all.
fn plugin_debug(name: &str, text: &str) -> String {
    match name {
        "release-scrape-dockerv2" => debug_of::<RegistryScrapeSettings>(text),
        "release-graph-file" | "release-metadata-directory" => debug_of::<PathSettings>(text),
        "graph-data-tarball" => debug_of::<TarballSettings>(text),
        "dkrv2-secondary-metadata-scrape" => debug_of::<ImageSettings>(text),
        "openshift-secondary-metadata-parse" => debug_of::<SecondaryMetadataParseSettings>(text),
        "edge-add-remove" => debug_of::<EdgeAddRemoveSettings>(text),
        "node-remove" => debug_of::<NodeRemoveSettings>(text),
        other => panic!("add plugin {other}'s settings type to plugin_debug in this test"),
    }
}

// -- the same in policy-engine/tests/operations_doc.rs: keep them in step --

fn table(marker: &str) -> Vec<Vec<String>> {
    doc_tables::table(DOC, marker)
}

fn plugin_markers() -> Vec<String> {
    doc_tables::plugin_markers(DOC, SERVICE)
}

fn flags_of(command: &clap::Command) -> BTreeSet<String> {
    doc_tables::flags_of(command, &NOT_SETTINGS)
}
