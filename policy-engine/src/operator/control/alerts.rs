//! Alertmanager's webhook (`POST {prefix}/v1/alerts/alertmanager` on the
//! status port): an alert that names a rollout pauses it while it fires.
//!
//! What is read of a notification (Alertmanager's webhook payload, version
//! "4"; every other field is ignored): `version`, and of each of `alerts`
//! its `status` (`firing` or `resolved`), `labels`, `annotations` and
//! `fingerprint`. An alert names a rollout by the label `rollout_target`,
//! else `to_version` (the version the rollout offers).
//!
//! An alert is its fingerprint (Alertmanager's hash of its label set, the
//! same in every notification of it, from either Alertmanager of an HA
//! pair), or, from a sender without one, its whole label set: two
//! instances of one alert rule (other labels) are two alerts. What an
//! alert does is the rollout model's (`rollout_model::change`), decided on
//! the rollout's state as stored with its row locked, so the same alert
//! delivered to two engines at once pauses, and is audited, once:
//!
//! 1. A firing alert is remembered on the rollout it names; the first
//!    pauses a running rollout, by `alertmanager:<token name>/<alertname>`,
//!    the reason being the alertname and `annotations.summary`. Repeats
//!    (`repeat_interval`, the other Alertmanager, retries) change nothing.
//! 2. A resolved alert is forgotten; when it was the last firing alert on a
//!    rollout an alert paused, and the rollout says `auto_resume: true`,
//!    the rollout resumes. Otherwise it stays paused for an operator.
//! 3. An alert that names no rollout, or a target the policy file has no
//!    rollout of, changes nothing and is answered so (200: Alertmanager
//!    would send the same notification again and again on an error).
//!    A firing alert the store cannot take is in force here at once and
//!    written when it can (`pending`); a resolved one the store cannot take
//!    is an error (503), which Alertmanager retries.

use std::collections::BTreeMap;
use std::time::SystemTime;

use cincinnati_client::header::Header;
use cincinnati_client::rollout::{AlertTaken, AlertsTaken};
use cincinnati_core::{ApiError, ErrorKind};
use rollout_model::change::Request;
use rollout_model::control::{Actor, AlertId};
use serde::Deserialize;
use service_kit::timestamp::rfc3339;

use super::{Changed, Control};

/// The payload version this engine reads (Alertmanager's since 0.x).
pub const PAYLOAD_VERSION: &str = "4";

/// A notification, as far as it is read.
#[derive(Debug, Deserialize)]
pub struct Notification {
    pub version: String,
    #[serde(default)]
    pub alerts: Vec<Alert>,
}

#[derive(Debug, Deserialize)]
pub struct Alert {
    pub status: AlertStatus,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    #[serde(default)]
    pub fingerprint: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlertStatus {
    Firing,
    Resolved,
}

impl Notification {
    /// Parses a notification's JSON body; a body that is not one is the
    /// sender's error (400: Alertmanager does not retry it).
    pub fn parse(body: &[u8]) -> Result<Self, ApiError> {
        let notification: Self = serde_json::from_slice(body).map_err(|error| {
            ApiError::new(
                ErrorKind::InvalidParams,
                format_args!("the body is not an Alertmanager webhook notification: {error}"),
            )
        })?;
        if notification.version != PAYLOAD_VERSION {
            return Err(ApiError::new(
                ErrorKind::InvalidParams,
                format_args!(
                    "Alertmanager webhook payload version {:?}: this engine reads version {PAYLOAD_VERSION}",
                    notification.version
                ),
            ));
        }
        Ok(notification)
    }
}

impl Alert {
    fn name(&self) -> &str {
        self.labels
            .get("alertname")
            .map_or("unnamed alert", String::as_str)
    }

    /// The rollout the alert names.
    fn target(&self) -> Option<&str> {
        self.labels
            .get("rollout_target")
            .or_else(|| self.labels.get("to_version"))
            .map(|target| target.trim())
            .filter(|target| !target.is_empty())
    }

    /// Which alert it is (see the module).
    fn identity(&self) -> AlertId {
        match self
            .fingerprint
            .as_deref()
            .filter(|fingerprint| !fingerprint.trim().is_empty())
        {
            Some(fingerprint) => AlertId::from_fingerprint(fingerprint.trim()),
            None => AlertId::from_labels(
                self.labels
                    .iter()
                    .map(|(name, value)| (name.as_str(), value.as_str())),
            ),
        }
    }

    fn reason(&self) -> String {
        match self.annotations.get("summary") {
            Some(summary) if !summary.trim().is_empty() => format!("{}: {}", self.name(), summary.trim()),
            _ => self.name().to_owned(),
        }
    }
}

/// What an alert may do besides what the rollout model says it did.
pub const NO_ROLLOUT_LABEL: &str = "no-rollout-label";
pub const UNKNOWN_ROLLOUT: &str = "unknown-rollout";
pub const PENDING: &str = "pending";
pub const FAILED: &str = "failed";

/// Every outcome an alert is counted under.
pub const OUTCOMES: [&str; 12] = [
    "paused",
    "already-paused",
    "resumed",
    "not-paused",
    "left-paused",
    "overridden",
    "held",
    "released",
    NO_ROLLOUT_LABEL,
    UNKNOWN_ROLLOUT,
    PENDING,
    FAILED,
];

impl Control {
    /// Takes each alert of `notification`, sent with the token named
    /// `token` (see the module documentation). `Err` when the store could
    /// not take a resolved alert: some alerts may have been taken, and
    /// taking them again changes nothing.
    pub async fn take_alerts(
        &self,
        notification: &Notification,
        token: &str,
        now: SystemTime,
    ) -> Result<AlertsTaken, ApiError> {
        let mut taken = Vec::with_capacity(notification.alerts.len());
        let mut failure = None;
        for alert in &notification.alerts {
            let (outcome, error) = match self.take_alert(alert, token).await {
                Ok(outcome) => (outcome, None),
                Err(error) => (FAILED, Some(error)),
            };
            self.metrics.alerts.with_label_values(&[outcome]).inc();
            tracing::info!(
                alertname = alert.name(),
                status = ?alert.status,
                target = alert.target(),
                outcome,
                "Alertmanager alert taken"
            );
            failure = failure.or(error);
            taken.push(AlertTaken {
                alertname: alert.name().to_owned(),
                status: match alert.status {
                    AlertStatus::Firing => "firing",
                    AlertStatus::Resolved => "resolved",
                }
                .to_owned(),
                target: alert.target().map(str::to_owned),
                outcome: outcome.to_owned(),
            });
        }
        match failure {
            Some(error) => Err(error),
            None => Ok(AlertsTaken {
                header: Header::new("AlertsTaken", rfc3339(now)),
                alerts: taken,
            }),
        }
    }

    async fn take_alert(&self, alert: &Alert, token: &str) -> Result<&'static str, ApiError> {
        let Some(target) = alert.target() else {
            return Ok(NO_ROLLOUT_LABEL);
        };
        if self.declaration(target).is_err() {
            return Ok(UNKNOWN_ROLLOUT);
        }
        let (request, reason) = match alert.status {
            AlertStatus::Firing => (
                Request::AlertFiring {
                    alert: alert.identity(),
                    name: alert.name().to_owned(),
                },
                alert.reason(),
            ),
            AlertStatus::Resolved => (
                Request::AlertResolved {
                    alert: alert.identity(),
                },
                alert.reason(),
            ),
        };
        let by = Actor::alert(token, alert.name());
        Ok(match self.change(target, request, (&by, &reason)).await? {
            Changed::Made(outcome) => outcome.as_str(),
            Changed::Pending => PENDING,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notification_is_read_as_alertmanager_sends_it() {
        let body = br#"{
            "version": "4", "groupKey": "{}:{alertname=\"UpdatesFailing\"}", "truncatedAlerts": 0,
            "status": "firing", "receiver": "cincinnati", "groupLabels": {}, "commonLabels": {},
            "commonAnnotations": {}, "externalURL": "http://alertmanager:9093",
            "alerts": [
                {"status": "firing", "labels": {"alertname": "UpdatesFailing", "to_version": "4.18.7"},
                 "annotations": {"summary": "  5% of clusters failed  "}, "startsAt": "2026-11-26T10:00:00Z",
                 "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "http://prometheus", "fingerprint": "a1"},
                {"status": "resolved", "labels": {"alertname": "Other", "rollout_target": "4.18.8",
                 "to_version": "4.18.7"}, "annotations": {}}
            ]
        }"#;
        let notification = Notification::parse(body).unwrap();
        let [firing, resolved] = &notification.alerts[..] else {
            panic!()
        };
        assert_eq!(firing.identity(), AlertId::from_fingerprint("a1"));
        assert_eq!(
            resolved.identity(),
            AlertId::from_labels([
                ("alertname", "Other"),
                ("rollout_target", "4.18.8"),
                ("to_version", "4.18.7")
            ]),
            "no fingerprint: the label set"
        );
        assert_eq!(firing.status, AlertStatus::Firing);
        assert_eq!(firing.target(), Some("4.18.7"));
        assert_eq!(firing.reason(), "UpdatesFailing: 5% of clusters failed");
        assert_eq!(resolved.status, AlertStatus::Resolved);
        assert_eq!(resolved.target(), Some("4.18.8"), "rollout_target first");
        assert_eq!(resolved.reason(), "Other");
    }

    #[test]
    fn what_is_not_a_version_4_notification_is_the_sender_s_error() {
        for body in [
            &b"{"[..],
            b"[]",
            br#"{"version": "3", "alerts": []}"#,
            br#"{"alerts": []}"#,
        ] {
            let error = Notification::parse(body).unwrap_err();
            assert_eq!(error.status_code(), 400, "{}", String::from_utf8_lossy(body));
        }
        let unknown_status = br#"{"version": "4", "alerts": [{"status": "pending"}]}"#;
        assert!(Notification::parse(unknown_status).is_err());
    }
}
