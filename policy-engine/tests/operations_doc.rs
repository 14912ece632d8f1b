//! docs/operations.md's policy-engine tables, checked against the code so the
//! page cannot go stale: every setting key, flag, default, `[[policy]]`
//! filter, filter key and filter default, and every metric name and type.
//! Keys are learnt from the settings types themselves (serde's unknown-field
//! error lists what a struct accepts), flags from clap, metric names from the
//! source that registers them and types from a live registry. The
//! graph-builder's twin is graph-builder/tests/operations_doc.rs.

use std::collections::BTreeSet;

use clap::CommandFactory as _;
use doc_tables::{debug_of, expected_fields, single_code, table_of, toml_literal};
use policy_engine::cli::Cli;
use policy_engine::filters::arch::ArchFilterSettings;
use policy_engine::filters::channel::ChannelFilterSettings;
use policy_engine::settings::Settings;

const DOC: &str = include_str!("../../docs/operations.md");
const SERVICE: &str = "policy-engine";
const METRIC_PREFIX: &str = "cincinnati_pe_";
/// The sources that register this service's metrics.
const METRIC_SOURCES: [&str; 5] = [
    include_str!("../src/metrics.rs"),
    include_str!("../../service-kit/src/metrics.rs"),
    include_str!("../../service-kit/src/errors.rs"),
    include_str!("../../service-kit/src/supervisor.rs"),
    include_str!("../../service-kit/src/connections.rs"),
];
/// Flags that are not settings, documented in prose.
const NOT_SETTINGS: [&str; 4] = ["config", "check_config", "help", "version"];

#[test]
fn every_setting_is_documented_with_its_flags_and_default() {
    doc_tables::check_settings_table::<Settings>(DOC, SERVICE, &cli_flags());
}

#[test]
fn every_policy_and_policy_key_is_documented() {
    let documented = plugin_markers();
    // The catalogue names the filters; `cincinnati-graph-fetch` is read
    // beside it, so it is only required to be accepted (by plugin_keys).
    let undocumented: Vec<_> = known_filters()
        .into_iter()
        .filter(|name| !documented.contains(name))
        .collect();
    assert!(
        undocumented.is_empty(),
        "filters missing from docs/operations.md: {undocumented:?}"
    );
    for name in &documented {
        let rows = table(&format!("plugin: {SERVICE} {name}"));
        let keys: BTreeSet<String> = rows.iter().map(|row| single_code(&row[0])).collect();
        assert_eq!(keys, plugin_keys(name), "keys of [[policy]] {name}");
        for row in &rows {
            if let Some(literal) = toml_literal(&row[1]) {
                let key = single_code(&row[0]);
                assert_eq!(
                    filter_debug(name, &format!("{key} = {literal}\n")),
                    filter_debug(name, ""),
                    "[[policy]] {name}: the documented default of {key} ({literal}) is not the default"
                );
            }
        }
    }
}

#[test]
fn every_metric_is_documented_with_its_type() {
    let metrics = policy_engine::metrics::EngineMetrics::new("test").unwrap();
    doc_tables::check_metric_table(DOC, SERVICE, METRIC_PREFIX, &METRIC_SOURCES, &metrics.registry);
}

// -- the policy-engine's catalogue ----------------------------------------

fn cli_flags() -> BTreeSet<String> {
    flags_of(&Cli::command())
}

/// Filter names the catalogue knows, from its answer to an unknown one.
fn known_filters() -> BTreeSet<String> {
    doc_tables::known_names(&resolve_error(table_of("name = \"__probe__\"")))
}

/// The keys `[[policy]] name` accepts besides `name`.
fn plugin_keys(name: &str) -> BTreeSet<String> {
    let error = resolve_error(table_of(&format!("name = \"{name}\"\n__probe__ = 1")));
    expected_fields(&error)
        .unwrap_or_else(|| panic!("[[policy]] {name}: no unknown-field answer to a probe key: {error}"))
}

fn resolve_error(policy: toml::Table) -> String {
    let settings = Settings {
        policy: vec![policy],
        ..Settings::default()
    };
    settings.resolve().unwrap_err().to_string()
}

/// The Debug of filter `name`'s settings read from `text`: equal for a
/// documented default and no value at all.
fn filter_debug(name: &str, text: &str) -> String {
    match name {
        "channel-filter" => debug_of::<ChannelFilterSettings>(text),
        "arch-filter" => debug_of::<ArchFilterSettings>(text),
        other => panic!("add [[policy]] {other}'s settings type to filter_debug in this test"),
    }
}

// -- the same in graph-builder/tests/operations_doc.rs: keep them in step --

fn table(marker: &str) -> Vec<Vec<String>> {
    doc_tables::table(DOC, marker)
}

fn plugin_markers() -> Vec<String> {
    doc_tables::plugin_markers(DOC, SERVICE)
}

fn flags_of(command: &clap::Command) -> BTreeSet<String> {
    doc_tables::flags_of(command, &NOT_SETTINGS)
}
