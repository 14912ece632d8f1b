//! docs/operations.md's graph-builder tables, checked against the code so the
//! page cannot go stale: every setting key, flag, default, plugin, plugin key
//! and plugin default, and every metric name, type and label. What the code
//! accepts is read from the code: setting keys from the settings' serialised
//! defaults (as the service skeleton learns them), flags from the command
//! line the skeleton derives, plugin names from `known_plugins()`, their keys
//! from their settings types, metrics from the registry of a running
//! graph-builder. The policy-engine's twin is
//! policy-engine/tests/operations_doc.rs.

use std::collections::BTreeSet;
use std::fmt::Debug;

use doc_tables::{debug_of, fields_of, single_code, toml_literal};
use graph_builder::GraphBuilder;
use graph_builder::plugins::known_plugins;
use graph_builder::settings::Settings;
use graph_builder::sources::graph_data::{ImageSettings, TarballSettings};
use graph_builder::sources::releases::{PathSettings, RegistryScrapeSettings};
use openshift_graph_data::{EdgeAddRemoveSettings, NodeRemoveSettings, SecondaryMetadataParseSettings};
use serde::de::DeserializeOwned;

const DOC: &str = include_str!("../../../docs/operations.md");
const SERVICE: &str = "graph-builder";
/// Flags that are not settings, documented in prose.
const NOT_SETTINGS: [&str; 6] = ["config", "once", "check_config", "output", "help", "version"];

#[test]
fn every_setting_is_documented_with_its_flags_and_default() {
    let flags = doc_tables::flags_of(&service_kit::service::command::<GraphBuilder>(), &NOT_SETTINGS);
    doc_tables::check_settings_table::<Settings>(DOC, SERVICE, &flags);
}

#[test]
fn every_plugin_and_plugin_key_is_documented() {
    let documented = doc_tables::documented_plugins(DOC, SERVICE, known_plugins());
    for name in &documented {
        let rows = doc_tables::table(DOC, &format!("plugin: {SERVICE} {name}"));
        let (accepted, plugin_debug) = plugin(name);
        let keys: BTreeSet<String> = rows.iter().map(|row| single_code(&row[0])).collect();
        assert_eq!(keys, accepted, "keys of plugin {name}");
        let required: String = rows
            .iter()
            .filter(|row| row[1].trim() == "required")
            .map(|row| format!("{} = \"x\"\n", single_code(&row[0])))
            .collect();
        let base = plugin_debug(&required);
        for row in &rows {
            if let Some(literal) = toml_literal(&row[1]) {
                let key = single_code(&row[0]);
                assert_eq!(
                    plugin_debug(&format!("{required}{key} = {literal}\n")),
                    base,
                    "plugin {name}: the documented default of {key} ({literal}) is not the default"
                );
            }
        }
    }
}

#[tokio::test]
async fn every_metric_is_documented_with_its_type_and_labels() {
    let application = crate::support::every_metric::graph_builder_with_every_metric();
    doc_tables::check_metric_table(DOC, SERVICE, &application.metrics().described());
}

/// Plugin `name`'s settings type: the keys it accepts besides `name`, and
/// the Debug of the settings read from a text (equal for a documented
/// default and no value at all).
fn plugin(name: &str) -> (BTreeSet<String>, fn(&str) -> String) {
    fn typed<T: DeserializeOwned + Debug>() -> (BTreeSet<String>, fn(&str) -> String) {
        (fields_of::<T>(), debug_of::<T>)
    }
    match name {
        "release-scrape-dockerv2" => typed::<RegistryScrapeSettings>(),
        "release-graph-file" | "release-metadata-directory" => typed::<PathSettings>(),
        "graph-data-tarball" => typed::<TarballSettings>(),
        "dkrv2-secondary-metadata-scrape" => typed::<ImageSettings>(),
        "openshift-secondary-metadata-parse" => typed::<SecondaryMetadataParseSettings>(),
        "edge-add-remove" => typed::<EdgeAddRemoveSettings>(),
        "node-remove" => typed::<NodeRemoveSettings>(),
        other => panic!("add plugin {other}'s settings type to plugin() in this test"),
    }
}
