//! How fresh what a source gave is: when it last worked, and the failure
//! since, if any. Every source of every service (the graph-builder's
//! releases, graph-data and build, the metadata-helper's signatures, the
//! policy-engine's feeds, policy file and lookup service) keeps one, and
//! `/status` shows each the same way, flattened into the source's object:
//!
//! ```json
//! "last_success": "2026-11-18T11:06:40.5Z",
//! "last_error": {"at": "2026-11-18T11:07:40.5Z", "message": "GET ...: HTTP 503"},
//! "stale": true
//! ```
//!
//! `last_success` is `null` until the source first works; `last_error` is
//! `null` unless the source failed since it last worked; `stale` says
//! whether it did (what is served is then the last good state). Times are
//! RFC 3339 ([`crate::timestamp`]).

use std::fmt::Display;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::timestamp::{parse_rfc3339, rfc3339};

/// When a source last worked, and the failure since. A failure never
/// replaces the last good state: the source keeps serving it, and says so.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "FreshnessJson", try_from = "FreshnessJson")]
pub struct Freshness {
    last_success: Option<SystemTime>,
    /// Since `last_success`, the latest failure.
    last_error: Option<Failure>,
}

/// A failed attempt: when, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub at: SystemTime,
    pub message: String,
}

impl Freshness {
    /// The source worked at `at` (bringing something new or confirming what
    /// it had): not stale any more.
    pub fn succeeded(&mut self, at: SystemTime) {
        self.last_success = Some(at);
        self.last_error = None;
    }

    /// The source failed at `at`: stale until it works again.
    pub fn failed(&mut self, at: SystemTime, message: impl Display) {
        self.last_error = Some(Failure {
            at,
            message: message.to_string(),
        });
    }

    /// Whether the source failed since it last worked.
    pub fn is_stale(&self) -> bool {
        self.last_error.is_some()
    }

    pub fn last_success(&self) -> Option<SystemTime> {
        self.last_success
    }

    /// The latest failure since the last success.
    pub fn last_error(&self) -> Option<&Failure> {
        self.last_error.as_ref()
    }

    /// How long before `now` the source last worked.
    pub fn age(&self, now: SystemTime) -> Option<Duration> {
        self.last_success
            .map(|success| now.duration_since(success).unwrap_or_default())
    }
}

/// The JSON form (see the module documentation).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FreshnessJson {
    last_success: Option<String>,
    last_error: Option<FailureJson>,
    stale: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FailureJson {
    at: String,
    message: String,
}

impl From<Freshness> for FreshnessJson {
    fn from(freshness: Freshness) -> Self {
        Self {
            stale: freshness.is_stale(),
            last_success: freshness.last_success.map(rfc3339),
            last_error: freshness.last_error.map(|failure| FailureJson {
                at: rfc3339(failure.at),
                message: failure.message,
            }),
        }
    }
}

/// Why a document's freshness could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FreshnessJsonError {
    #[error("`{field}` is not an RFC 3339 time: {error}")]
    Time { field: &'static str, error: jiff::Error },
    #[error("`stale` ({stale}) does not say whether `last_error` is set")]
    Inconsistent { stale: bool },
}

impl TryFrom<FreshnessJson> for Freshness {
    type Error = FreshnessJsonError;

    fn try_from(json: FreshnessJson) -> Result<Self, Self::Error> {
        if json.stale != json.last_error.is_some() {
            return Err(FreshnessJsonError::Inconsistent { stale: json.stale });
        }
        let time = |field, text: &str| {
            parse_rfc3339(text).map_err(|error| FreshnessJsonError::Time { field, error })
        };
        Ok(Self {
            last_success: json
                .last_success
                .map(|text| time("last_success", &text))
                .transpose()?,
            last_error: json
                .last_error
                .map(|failure| {
                    Ok::<_, FreshnessJsonError>(Failure {
                        at: time("last_error.at", &failure.at)?,
                        message: failure.message,
                    })
                })
                .transpose()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use serde_json::json;

    use super::*;

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_795_000_000 + seconds)
    }

    #[test]
    fn a_failure_makes_it_stale_until_the_next_success() {
        let mut freshness = Freshness::default();
        assert!(!freshness.is_stale() && freshness.last_success().is_none());
        freshness.failed(at(0), "unreachable");
        assert!(freshness.is_stale(), "failing before any success");
        freshness.succeeded(at(10));
        assert!(!freshness.is_stale());
        freshness.failed(at(20), "first");
        freshness.failed(at(30), "second");
        let failure = freshness.last_error().unwrap();
        assert_eq!((failure.at, failure.message.as_str()), (at(30), "second"));
        assert_eq!(
            freshness.last_success(),
            Some(at(10)),
            "the last good state is kept"
        );
        assert_eq!(freshness.age(at(40)), Some(Duration::from_secs(30)));
        freshness.succeeded(at(50));
        assert!(!freshness.is_stale() && freshness.last_error().is_none());
    }

    /// A source's status object, with its own fields beside the freshness.
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct SourceStatus {
        source: String,
        #[serde(flatten)]
        freshness: Freshness,
    }

    #[test]
    fn the_json_form_is_flattened_into_the_sources_object_and_read_back() {
        let mut freshness = Freshness::default();
        freshness.succeeded(at(0));
        freshness.failed(at(60) + Duration::from_millis(500), "HTTP 503");
        let status = SourceStatus {
            source: "upstream".to_owned(),
            freshness,
        };
        let json = serde_json::to_value(&status).unwrap();
        assert_eq!(
            json,
            json!({
                "source": "upstream",
                "last_success": "2026-11-18T11:06:40Z",
                "last_error": {"at": "2026-11-18T11:07:40.5Z", "message": "HTTP 503"},
                "stale": true,
            })
        );
        assert_eq!(serde_json::from_value::<SourceStatus>(json).unwrap(), status);

        let fresh = json!({"source": "upstream", "last_success": null, "last_error": null, "stale": false});
        let read: SourceStatus = serde_json::from_value(fresh).unwrap();
        assert_eq!(read.freshness, Freshness::default());
    }

    #[test]
    fn unknown_fields_bad_times_and_a_contradiction_are_refused() {
        let document = |extra: serde_json::Value| {
            let mut document =
                json!({"source": "s", "last_success": null, "last_error": null, "stale": false});
            document
                .as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            serde_json::from_value::<SourceStatus>(document)
        };
        let error = document(json!({"last_error_unix": 1})).unwrap_err().to_string();
        assert!(error.contains("last_error_unix"), "{error}");
        let error = document(json!({"last_success": "yesterday"}))
            .unwrap_err()
            .to_string();
        assert!(error.contains("last_success"), "{error}");
        let error = document(json!({"stale": true})).unwrap_err().to_string();
        assert!(error.contains("stale"), "{error}");
    }
}
