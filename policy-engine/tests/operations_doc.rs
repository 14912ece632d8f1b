//! docs/operations.md's policy-engine tables, checked against the code so the
//! page cannot go stale: every setting key, flag, default, `[[policy]]`
//! filter, filter key and filter default, and every metric name, type and
//! label. What the code accepts is read from the code: setting keys from the
//! settings' serialised defaults (as the service skeleton learns them),
//! flags from the command line the skeleton derives, `[[policy]]` names from
//! the filter catalogue, their keys from their settings types, metrics from
//! the registry of a running engine. The graph-builder's twin is
//! graph-builder/tests/operations_doc.rs.

use std::collections::BTreeSet;

use doc_tables::{debug_of, fields_of, single_code, toml_literal};

mod every_metric;
use policy_engine::PolicyEngine;
use policy_engine::filters::arch::ArchFilterSettings;
use policy_engine::filters::channel::ChannelFilterSettings;
use policy_engine::filters::cluster_policy::ClusterPolicyFilterSettings;
use policy_engine::filters::version_prune::VersionPruneSettings;
use policy_engine::settings::{GraphFetchSettings, Settings, known_policies};

const DOC: &str = include_str!("../../docs/operations.md");
const SERVICE: &str = "policy-engine";
/// Flags that are not settings, documented in prose.
const NOT_SETTINGS: [&str; 5] = ["config", "check_config", "output", "help", "version"];

#[test]
fn every_setting_is_documented_with_its_flags_and_default() {
    let flags = doc_tables::flags_of(&service_kit::service::command::<PolicyEngine>(), &NOT_SETTINGS);
    doc_tables::check_settings_table::<Settings>(DOC, SERVICE, &flags);
}

#[test]
fn every_policy_and_policy_key_is_documented() {
    let documented = doc_tables::documented_plugins(DOC, SERVICE, known_policies());
    for name in &documented {
        if policy_keys(name).is_empty() {
            // A filter without keys has a marker and an empty table.
            continue;
        }
        let rows = doc_tables::table(DOC, &format!("plugin: {SERVICE} {name}"));
        let keys: BTreeSet<String> = rows.iter().map(|row| single_code(&row[0])).collect();
        assert_eq!(keys, policy_keys(name), "keys of [[policy]] {name}");
        for row in &rows {
            if let Some(literal) = toml_literal(&row[1]) {
                let key = single_code(&row[0]);
                assert_eq!(
                    policy_debug(name, &format!("{key} = {literal}\n")),
                    policy_debug(name, ""),
                    "[[policy]] {name}: the documented default of {key} ({literal}) is not the default"
                );
            }
        }
    }
}

#[tokio::test]
async fn every_metric_is_documented_with_its_type_and_labels() {
    let (engine, _dir) = every_metric::engine_with_every_metric();
    doc_tables::check_metric_table(DOC, SERVICE, &engine.metrics().described());
}

/// The keys `[[policy]] name` accepts besides `name`.
fn policy_keys(name: &str) -> BTreeSet<String> {
    match name {
        "cincinnati-graph-fetch" => fields_of::<GraphFetchSettings>(),
        "channel-filter" => fields_of::<ChannelFilterSettings>(),
        "arch-filter" => fields_of::<ArchFilterSettings>(),
        "cluster-policy" => fields_of::<ClusterPolicyFilterSettings>(),
        "version-prune" => fields_of::<VersionPruneSettings>(),
        other => panic!("add [[policy]] {other}'s settings type to policy_keys in this test"),
    }
}

/// The Debug of `[[policy]] name`'s settings read from `text`: equal for a
/// documented default and no value at all.
fn policy_debug(name: &str, text: &str) -> String {
    match name {
        "channel-filter" => debug_of::<ChannelFilterSettings>(text),
        "arch-filter" => debug_of::<ArchFilterSettings>(text),
        "version-prune" => debug_of::<VersionPruneSettings>(text),
        other => panic!("add [[policy]] {other}'s settings type to policy_debug in this test"),
    }
}
