//! Reading the services' `/status` documents.

use serde_json::Value;

/// Every feed of an engine's status satisfies `condition` (and there is one).
pub fn every_feed(status: &Value, condition: impl Fn(&Value) -> bool) -> bool {
    status["feeds"]
        .as_array()
        .is_some_and(|feeds| !feeds.is_empty() && feeds.iter().all(condition))
}

/// An engine whose every feed's last fetch failed (it serves its last good graph).
pub fn all_stale(status: &Value) -> bool {
    every_feed(status, |feed| feed["stale"] == true)
}

/// An engine whose every feed's last fetch succeeded.
pub fn all_fresh(status: &Value) -> bool {
    every_feed(status, |feed| feed["stale"] == false)
}

/// A graph-builder whose release and graph-data sources both last succeeded.
pub fn sources_healthy(status: &Value) -> bool {
    let sources = &status["sources"];
    sources["releases"]["stale"] == false && sources["graph_data"]["stale"] == false
}

/// A graph-builder whose release and graph-data sources both last failed.
pub fn sources_failing(status: &Value) -> bool {
    let sources = &status["sources"];
    sources["releases"]["stale"] == true && sources["graph_data"]["stale"] == true
}
