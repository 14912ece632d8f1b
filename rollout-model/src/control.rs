//! What operators and automation did to a rollout at run time: its clock
//! stopped (a pause, with the progress it had then), the time it stood
//! still, a progress held, the alerts firing on it, the last change. The
//! fleet store keeps it; [`crate::change`] says how a request changes it.

use std::collections::BTreeMap;
use std::fmt;

use sha2::{Digest as _, Sha256};

use crate::text::{ACTOR_CHARS, clean};
use crate::time::{SignedDuration, Timestamp};

/// Alerts a rollout remembers as firing on it at most: more are taken
/// (they pause it as any alert does) but not remembered.
pub const MAX_ALERTS: usize = 64;

/// A rollout's run-time control; the default is the policy file's schedule
/// alone.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Control {
    /// Its clock stopped: nobody new is offered its target.
    pub pause: Option<Pause>,
    /// How long its clock stood still in earlier pauses: its schedule runs
    /// that much later than declared.
    pub stood_still: SignedDuration,
    /// A progress (percent) held whatever the schedule.
    pub held: Option<f64>,
    /// When it was last resumed: halts count evidence from then on, and
    /// canaries have their arrival timeout afresh.
    pub resumed_at: Option<Timestamp>,
    /// When that last pause began.
    pub resumed_from: Option<Timestamp>,
    /// Alertmanager's alerts firing on it, by identity, with their names.
    pub alerts: BTreeMap<AlertId, String>,
    /// The last change.
    pub last: Option<Audited>,
    /// When an engine first ran it declared without a rate (its schedule
    /// alone offering the target); none: always declared with one, so a
    /// rate, when first judged, finds nobody offered before it.
    pub unrated_since: Option<Timestamp>,
}

/// A stopped clock.
#[derive(Debug, Clone, PartialEq)]
pub struct Pause {
    pub at: Timestamp,
    /// The progress it had then: the most it offers until resumed, however
    /// the declaration is edited meanwhile.
    pub progress: f64,
    pub by: Actor,
}

impl Control {
    /// Whether its progress follows its schedule (not paused, not held).
    pub fn is_on_schedule(&self) -> bool {
        self.pause.is_none() && self.held.is_none()
    }

    /// How long its clock has stood still by `at`: earlier pauses, and the
    /// one it is in.
    pub fn stood_still_by(&self, at: Timestamp) -> SignedDuration {
        let current = self.pause.as_ref().map_or(SignedDuration::ZERO, |pause| {
            at.duration_since(pause.at).max(SignedDuration::ZERO)
        });
        self.stood_still_before(at) + current
    }

    /// How long its clock had stood still in pauses ended by now, as of
    /// `at` (which may be before the last of them ended: outside office
    /// hours the schedule is read at the last window's close). Of the
    /// pauses ended after `at` only the last is known: earlier ones are
    /// counted whole, so the schedule reads earlier (offers less, never
    /// more).
    pub fn stood_still_before(&self, at: Timestamp) -> SignedDuration {
        match (self.resumed_from, self.resumed_at) {
            (Some(from), Some(to)) if at < to => {
                (self.stood_still - to.duration_since(at.max(from))).max(SignedDuration::ZERO)
            }
            _ => self.stood_still,
        }
    }

    /// Whether it overrides its declaration (paused or held).
    pub fn overrides(&self) -> bool {
        !self.is_on_schedule()
    }
}

/// Who made a change, as the audit says it: an operator's token name,
/// `alertmanager:<token>/<alertname>`, or a halt's criterion (`fleet-signal`,
/// `canary`, `prometheus`), or `gate`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Actor(String);

/// What kind of actor made a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActorKind {
    Operator,
    Alert,
    Halt,
    Gate,
}

/// Names automation writes as the actor; no token may carry them.
pub const RESERVED_ACTORS: [&str; 4] = [HALT_FLEET, HALT_CANARY, HALT_PROMETHEUS, GATE];
/// A halt by the fleet's signals (`halt_when`'s silent or stuck share).
pub const HALT_FLEET: &str = "fleet-signal";
/// A halt by a canary that did not arrive in time.
pub const HALT_CANARY: &str = "canary";
/// A halt by a Prometheus query.
pub const HALT_PROMETHEUS: &str = "prometheus";
/// A gate's own changes (canaries chosen, arrived, clusters admitted).
pub const GATE: &str = "gate";
const ALERT_PREFIX: &str = "alertmanager:";

impl Actor {
    /// An operator, by the name of the token it sent (cleaned, bounded).
    pub fn operator(token: &str) -> Self {
        Self(clean(token, ACTOR_CHARS))
    }

    /// An Alertmanager alert named `alertname`, sent with `token`.
    pub fn alert(token: &str, alertname: &str) -> Self {
        Self(clean(&format!("{ALERT_PREFIX}{token}/{alertname}"), ACTOR_CHARS))
    }

    /// A halt criterion or the gates: one of [`RESERVED_ACTORS`].
    pub fn automation(name: &'static str) -> Self {
        Self(name.to_owned())
    }

    /// As stored (the store keeps what these constructors made).
    pub fn stored(name: String) -> Self {
        Self(name)
    }

    pub fn kind(&self) -> ActorKind {
        match self.0.as_str() {
            HALT_FLEET | HALT_CANARY | HALT_PROMETHEUS => ActorKind::Halt,
            GATE => ActorKind::Gate,
            name if name.starts_with(ALERT_PREFIX) => ActorKind::Alert,
            _ => ActorKind::Operator,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An alert's identity: Alertmanager's fingerprint (the hash of its label
/// set, the same for every notification of that alert, whichever
/// Alertmanager of a pair sends it), or, for a sender that gives none, a
/// SHA-256 of its sorted labels. Two instances of one alert rule (other
/// labels) are two alerts.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AlertId(String);

impl AlertId {
    /// From a fingerprint as Alertmanager writes it (hex); anything else
    /// (too long, other characters) is hashed, so an identity is always
    /// short and printable.
    pub fn from_fingerprint(fingerprint: &str) -> Self {
        if !fingerprint.is_empty()
            && fingerprint.len() <= 32
            && fingerprint.bytes().all(|byte| byte.is_ascii_hexdigit())
        {
            Self(fingerprint.to_ascii_lowercase())
        } else {
            Self(format!("sha256:{}", hex(&Sha256::digest(fingerprint.as_bytes()))))
        }
    }

    /// From an alert's labels (any order).
    pub fn from_labels<'a>(labels: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut labels: Vec<(&str, &str)> = labels.into_iter().collect();
        labels.sort_unstable();
        let mut hasher = Sha256::new();
        for (name, value) in labels {
            // Lengths first: no two label sets hash alike by shifting bytes.
            for part in [name, value] {
                hasher.update((part.len() as u64).to_be_bytes());
                hasher.update(part.as_bytes());
            }
        }
        Self(format!("labels:{}", hex(&hasher.finalize())))
    }

    /// As stored.
    pub fn stored(id: String) -> Self {
        Self(id)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// One audited change.
#[derive(Debug, Clone, PartialEq)]
pub struct Audited {
    pub action: Action,
    pub by: Actor,
    pub reason: String,
    pub at: Timestamp,
    /// The progress held, for a hold.
    pub held: Option<f64>,
}

/// What the audit says a change did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Pause,
    Resume,
    Hold,
    Release,
    /// Gates: canaries chosen, their arrival, clusters admitted by a rate.
    Canaries,
    CanariesArrived,
    Admitted,
}

impl Action {
    pub const ALL: [Self; 7] = [
        Self::Pause,
        Self::Resume,
        Self::Hold,
        Self::Release,
        Self::Canaries,
        Self::CanariesArrived,
        Self::Admitted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pause => "pause",
            Self::Resume => "resume",
            Self::Hold => "hold",
            Self::Release => "release",
            Self::Canaries => "canaries",
            Self::CanariesArrived => "canaries-arrived",
            Self::Admitted => "admitted",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|action| action.as_str() == text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actors_say_what_kind_they_are() {
        assert_eq!(Actor::operator("ops").kind(), ActorKind::Operator);
        assert_eq!(
            Actor::alert("am", "UpdatesFailing").as_str(),
            "alertmanager:am/UpdatesFailing"
        );
        assert_eq!(Actor::alert("am", "UpdatesFailing").kind(), ActorKind::Alert);
        assert_eq!(Actor::automation(HALT_CANARY).kind(), ActorKind::Halt);
        assert_eq!(Actor::automation(GATE).kind(), ActorKind::Gate);
        assert_eq!(Actor::operator("o\u{0}ps\nx").as_str(), "o ps x");
    }

    #[test]
    fn an_alert_is_its_fingerprint_or_its_whole_label_set() {
        assert_eq!(AlertId::from_fingerprint("A1B2c3").as_str(), "a1b2c3");
        let odd = AlertId::from_fingerprint("not hex, and long enough to be refused as it is");
        assert!(odd.as_str().starts_with("sha256:") && odd.as_str().len() == 71);
        let one = AlertId::from_labels([("alertname", "Degraded"), ("cluster", "a")]);
        let same = AlertId::from_labels([("cluster", "a"), ("alertname", "Degraded")]);
        let other = AlertId::from_labels([("alertname", "Degraded"), ("cluster", "b")]);
        assert_eq!(one, same);
        assert_ne!(one, other, "another instance of the same rule");
        assert_ne!(
            AlertId::from_labels([("ab", "c")]),
            AlertId::from_labels([("a", "bc")])
        );
    }

    #[test]
    fn a_pause_stands_still_until_resumed() {
        let at: Timestamp = "2026-11-28T10:00:00Z".parse().unwrap();
        let control = Control {
            pause: Some(Pause {
                at,
                progress: 30.0,
                by: Actor::operator("ops"),
            }),
            stood_still: SignedDuration::from_secs(60),
            ..Control::default()
        };
        assert_eq!(
            control.stood_still_by(at + SignedDuration::from_millis(1500)),
            SignedDuration::from_millis(61_500)
        );
        assert!(!control.is_on_schedule() && control.overrides());
        assert_eq!(Action::parse("canaries-arrived"), Some(Action::CanariesArrived));
    }
}
