//! docs/operations.md's metadata-helper tables, checked against the code so
//! the page cannot go stale: every setting key, flag and default (read from
//! the settings' serialised defaults and the command line the skeleton
//! derives), and every metric name, type and label (from the registry of a
//! running helper). The other services' twins are in their tests/. Also the
//! freshness fields every service's `/status` shares.

use metadata_helper::{MetadataHelper, Settings};

const DOC: &str = include_str!("../../../docs/operations.md");
const SERVICE: &str = "metadata-helper";
/// Flags that are not settings, documented in prose.
const NOT_SETTINGS: [&str; 5] = ["config", "check_config", "output", "help", "version"];

#[test]
fn every_setting_is_documented_with_its_flags_and_default() {
    let flags = doc_tables::flags_of(&service_kit::service::command::<MetadataHelper>(), &NOT_SETTINGS);
    doc_tables::check_settings_table::<Settings>(DOC, SERVICE, &flags);
}

#[tokio::test]
async fn every_metric_is_documented_with_its_type_and_labels() {
    let (helper, _signatures) = crate::support::every_metric::helper_with_every_metric();
    doc_tables::check_metric_table(DOC, SERVICE, &helper.metrics().described());
}

#[test]
fn the_freshness_fields_of_status_are_documented() {
    let documented: std::collections::BTreeSet<String> = doc_tables::table(DOC, "status: freshness")
        .iter()
        .map(|row| doc_tables::single_code(&row[0]))
        .collect();
    assert_eq!(
        documented,
        doc_tables::fields_of::<service_kit::freshness::Freshness>()
    );
}
