//! Alertmanager's webhook (`POST {prefix}/v1/alerts/alertmanager` on the
//! status port): an alert that names a rollout pauses it while it fires.
//!
//! What is read of a notification (Alertmanager's webhook payload, version
//! "4"; every other field is ignored): `version`, and of each of `alerts`
//! its `status` (`firing` or `resolved`), `labels` and `annotations`. An
//! alert names a rollout by the label `rollout_target`, else `to_version`
//! (the version the rollout offers).
//!
//! 1. A firing alert pauses the rollout it names, by
//!    `alertmanager:<token name>/<alertname>`, the reason being the
//!    alertname and `annotations.summary`. A rollout already paused is left
//!    as it is (Alertmanager sends a firing alert again every
//!    `repeat_interval`): the audit keeps the first pause.
//! 2. A resolved alert resumes the rollout only when its policy file entry
//!    says `auto_resume: true` and this alert (the same actor) made the
//!    pause in force; else the rollout stays paused for an operator.
//! 3. An alert that names no rollout, or a target the policy file has no
//!    rollout of, changes nothing and is answered so (200: Alertmanager
//!    would send the same notification again and again on an error).
//!    Only a store that cannot take a change is an error (503), which
//!    Alertmanager retries.

use std::collections::BTreeMap;
use std::time::SystemTime;

use cincinnati_client::fleet::Header;
use cincinnati_client::rollout_control::{AlertTaken, AlertsTaken};
use cincinnati_core::{ApiError, ErrorKind};
use fleet_store::rollouts::Change;
use serde::Deserialize;
use service_kit::timestamp::rfc3339;

use super::Control;

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

    fn reason(&self) -> String {
        match self.annotations.get("summary") {
            Some(summary) if !summary.trim().is_empty() => format!("{}: {}", self.name(), summary.trim()),
            _ => self.name().to_owned(),
        }
    }
}

/// What an alert did; `failed` is the one that makes the answer an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Paused,
    AlreadyPaused,
    Resumed,
    LeftPaused,
    NotPaused,
    NoRolloutLabel,
    UnknownRollout,
    Failed,
}

impl Outcome {
    pub const ALL: [Self; 8] = [
        Self::Paused,
        Self::AlreadyPaused,
        Self::Resumed,
        Self::LeftPaused,
        Self::NotPaused,
        Self::NoRolloutLabel,
        Self::UnknownRollout,
        Self::Failed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Paused => "paused",
            Self::AlreadyPaused => "already-paused",
            Self::Resumed => "resumed",
            Self::LeftPaused => "left-paused",
            Self::NotPaused => "not-paused",
            Self::NoRolloutLabel => "no-rollout-label",
            Self::UnknownRollout => "unknown-rollout",
            Self::Failed => "failed",
        }
    }
}

impl Control {
    /// Takes each alert of `notification`, sent with the token named
    /// `token`, at `now` (see the module documentation). `Err` when the
    /// store could not take a change: some alerts may have been taken, and
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
            let (outcome, error) = match self.take_alert(alert, token, now).await {
                Ok(outcome) => (outcome, None),
                Err(error) => (Outcome::Failed, Some(error)),
            };
            self.metrics.alerts.with_label_values(&[outcome.as_str()]).inc();
            tracing::info!(
                alertname = alert.name(),
                status = ?alert.status,
                target = alert.target(),
                outcome = outcome.as_str(),
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
                outcome: outcome.as_str().to_owned(),
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

    async fn take_alert(&self, alert: &Alert, token: &str, now: SystemTime) -> Result<Outcome, ApiError> {
        let Some(target) = alert.target() else {
            return Ok(Outcome::NoRolloutLabel);
        };
        let actor = format!("alertmanager:{token}/{}", alert.name());
        let (change, outcome) = {
            let policy = self.policy.current();
            let rollouts = policy.rollouts();
            let Some(rollout) = rollouts
                .iter()
                .find(|rollout| rollout.target.to_string() == target)
            else {
                return Ok(Outcome::UnknownRollout);
            };
            let paused_by = rollout
                .control
                .as_ref()
                .filter(|control| control.paused_at.is_some())
                .map(|control| control.actor.as_str());
            match (alert.status, paused_by) {
                (AlertStatus::Firing, Some(_)) => return Ok(Outcome::AlreadyPaused),
                (AlertStatus::Firing, None) => (Change::Pause, Outcome::Paused),
                (AlertStatus::Resolved, None) => return Ok(Outcome::NotPaused),
                (AlertStatus::Resolved, Some(by)) if rollout.auto_resume && by == actor => {
                    (Change::Resume, Outcome::Resumed)
                }
                (AlertStatus::Resolved, Some(_)) => return Ok(Outcome::LeftPaused),
            }
        };
        let reason = match change {
            Change::Resume => format!("resolved: {}", alert.reason()),
            _ => alert.reason(),
        };
        self.change(target, change, (&actor, &reason), now).await?;
        Ok(outcome)
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
