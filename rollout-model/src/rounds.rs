//! A gate round: what the fleet's facts change of a gated rollout's gates
//! (canaries chosen, their arrival, a late canary's halt, the clusters a
//! rate admits). Every engine sharing the store runs a round every
//! `rollouts.halt_check_secs`; the store applies the [`GateChange`] on the
//! gates as stored, with the rollout's row locked, so a change is made
//! once however many engines decide it.
//!
//! - **Canaries**: once the rollout has started and is on its schedule,
//!   the first K candidates (established clusters that can take the
//!   target, in the rollout's own order of their lots; or the members of
//!   the policy file's canary group) are chosen and offered the target;
//!   nobody else is. Each arrives (see [`crate::evidence`]); when all
//!   have, the gate opens and the schedule starts then. A canary not
//!   arrived `arrival_timeout` after its offer (or after the last resume)
//!   halts the rollout.
//! - **A rate**: periods from the first round that counts it (after the
//!   canaries, if any). The first round admits, uncounted, the clusters
//!   the rollout had offered before: those placed below its progress
//!   then, if engines ran it without a rate (a rate added to a rollout
//!   under way keeps what it offered), nobody otherwise. Each round then admits the
//!   first candidates (established clusters that can take the target,
//!   placed below the schedule's progress, in the rollout's order of
//!   lots) while the period has admitted fewer than N: at most N distinct
//!   clusters are newly offered the target in a period, whatever they do
//!   afterwards, on any number of engines. Nothing is admitted while the
//!   rollout is paused.

use crate::control::Action;
use crate::evidence::{ClusterRecord, Evidence};
use crate::gates::{Canary, GateState};
use crate::place::Lot;
use crate::position::Rollout;
use crate::time::{SignedDuration, Timestamp, hours_said};

/// What a round judges a rollout's gates on, as the fleet store gives it.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// Canary candidates, in order (when none are chosen yet).
    pub canary_candidates: Vec<Candidate>,
    /// The records of its canaries (once chosen).
    pub canaries: Vec<ClusterRecord>,
    /// The clusters placed below [`before_rate`] (on its rate's first
    /// round).
    pub offered_before: Vec<Candidate>,
    /// Rate candidates, in order.
    pub rate_candidates: Vec<Candidate>,
}

/// A whole round of `rollout`'s gates (stored as `gates`): its canaries,
/// then its rate.
pub fn round(
    rollout: &Rollout,
    gates: &GateState,
    facts: &Facts,
    evidence: &Evidence,
    now: Timestamp,
) -> GateChange {
    let canaries = canary_round(
        rollout,
        gates,
        (&facts.canary_candidates, &facts.canaries),
        evidence,
        now,
    );
    let rate = rate_round(
        rollout,
        gates,
        (&facts.offered_before, &facts.rate_candidates),
        now,
    );
    let waiting = if rollout.declaration().gates.rate.is_some() && rate != GateChange::default() {
        rate.waiting
    } else {
        canaries.waiting
    };
    GateChange {
        start_rate: rate.start_rate,
        admit: rate.admit,
        waiting,
        ..canaries
    }
}

/// A cluster a gate may choose or admit.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// As the store names it.
    pub cluster: String,
    pub lot: Lot,
    /// Its place (percent).
    pub place: f64,
}

/// What a round changes; the store applies it to the gates as stored.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GateChange {
    /// Choose these canaries (only if none are chosen).
    pub choose: Vec<Canary>,
    /// These canaries arrived at this time (only those not arrived yet).
    pub arrivals: Vec<(String, Timestamp)>,
    /// Every canary arrived: at this time, the rollout having been paused
    /// this long by then.
    pub open: Option<(Timestamp, SignedDuration)>,
    /// The rate is counted from now on: its first period starts, and these
    /// clusters, offered before, are admitted uncounted.
    pub start_rate: Option<(Timestamp, Vec<Candidate>)>,
    /// Admit from these, in order, while the period admitted fewer than
    /// its cap.
    pub admit: Option<Admission>,
    /// Candidates left waiting (for people).
    pub waiting: u64,
    /// The rollout must halt, for this reason (a late canary).
    pub halt: Option<String>,
    /// What the audit keeps of the change.
    pub audit: Vec<(Action, String)>,
}

/// Who a rate admits in a round.
#[derive(Debug, Clone, PartialEq)]
pub struct Admission {
    pub period: i64,
    /// The period's end, for the audit.
    pub period_ends: Timestamp,
    /// At most this many admitted in the period, in all.
    pub cap: u64,
    /// In order; those admitted already are skipped.
    pub candidates: Vec<Candidate>,
}

impl Admission {
    /// What the audit says of `admitted` clusters admitted, the period
    /// having admitted `in_period` with them.
    pub fn said(&self, admitted: u64, in_period: u64) -> String {
        format!(
            "admitted {admitted} clusters: {in_period} of at most {} newly offered in the period ending {}",
            self.cap, self.period_ends
        )
    }
}

/// The canaries' round of `rollout` (its gates as stored in `gates`):
/// `candidates` in order (when none are chosen yet), `records` the
/// store's records of its canaries (once chosen).
pub fn canary_round(
    rollout: &Rollout,
    gates: &GateState,
    (candidates, records): (&[Candidate], &[ClusterRecord]),
    evidence: &Evidence,
    now: Timestamp,
) -> GateChange {
    let declaration = &rollout.declaration();
    let Some(wanted) = declaration.gates.canary.as_ref() else {
        return GateChange::default();
    };
    let control = rollout.control();
    let target = &declaration.target;
    let Some(canaries) = &gates.canaries else {
        let position = rollout.position(now);
        if !control.is_on_schedule() || position.scheduled <= 0.0 || candidates.is_empty() {
            return GateChange {
                waiting: candidates.len() as u64,
                ..GateChange::default()
            };
        }
        let choose: Vec<Canary> = candidates
            .iter()
            .take(wanted.clusters as usize)
            .map(|candidate| Canary {
                cluster: candidate.cluster.clone(),
                lot: candidate.lot,
                place: candidate.place,
                arrived_at: None,
            })
            .collect();
        let places: Vec<String> = choose
            .iter()
            .map(|canary| format!("{:.4}%", canary.place))
            .collect();
        let said = format!(
            "chose {} canaries, the first offered {target} (placed at {})",
            choose.len(),
            places.join(", ")
        );
        return GateChange {
            choose,
            audit: vec![(Action::Canaries, said)],
            ..GateChange::default()
        };
    };
    if canaries.arrived_at.is_some() {
        return GateChange::default();
    }
    let arrivals: Vec<(String, Timestamp)> = canaries
        .members
        .iter()
        .filter(|canary| canary.arrived_at.is_none())
        .filter(|canary| {
            records.iter().any(|record| {
                record.cluster == canary.cluster && evidence.arrived(record, target, canaries.chosen_at)
            })
        })
        .map(|canary| (canary.cluster.clone(), now))
        .collect();
    let total = canaries.members.len();
    if canaries.arrived() + arrivals.len() == total {
        let said = format!("all {total} canaries arrived at {target}; the schedule starts at {now}");
        return GateChange {
            arrivals,
            open: Some((now, control.stood_still_by(now))),
            audit: vec![(Action::CanariesArrived, said)],
            ..GateChange::default()
        };
    }
    let deadline = canary_deadline(rollout, gates).unwrap_or(Timestamp::MAX);
    let halt = (control.pause.is_none() && now >= deadline).then(|| {
        let late = total - canaries.arrived() - arrivals.len();
        let timeout = declaration.gates.arrival_timeout;
        format!(
            "halted: {late} of the {total} canaries have not arrived at {target} within {} of their offer",
            hours_said(timeout)
        )
    });
    GateChange {
        arrivals,
        halt,
        ..GateChange::default()
    }
}

/// When a canary of `rollout` that has not arrived halts it: its
/// arrival timeout after the canaries' offer, or after the last resume.
pub fn canary_deadline(rollout: &Rollout, gates: &GateState) -> Option<Timestamp> {
    let canaries = gates.canaries.as_ref()?;
    let offered = rollout
        .control()
        .resumed_at
        .map_or(canaries.chosen_at, |resumed| resumed.max(canaries.chosen_at));
    offered
        .checked_add(rollout.declaration().gates.arrival_timeout)
        .ok()
}

/// The progress below which the clusters a rollout offered before its
/// rate was counted lie, when its rate is about to be counted for the
/// first time at `now` (none otherwise): where its schedule and control
/// are then.
pub fn before_rate(rollout: &Rollout, gates: &GateState, now: Timestamp) -> Option<f64> {
    let declared = &rollout.declaration().gates;
    if declared.rate.is_none() || gates.rate.is_some() {
        return None;
    }
    if declared.canary.is_some() && !gates.canaries_arrived() {
        return None;
    }
    // Only a schedule that ran without a rate offered anyone uncounted.
    // Declared with its rate, a rollout offered nobody before the rate was
    // judged (an unjudged gate offers to nobody); behind canaries, nobody
    // but them before they arrived, and the rate is first judged as they
    // do (seen: a rollout starting at 100% let the whole fleet in, fakes
    // included, at its canary's arrival; and one declared with its rate
    // half-way through its schedule, when an engine had read its gates
    // before their first round).
    let scheduled = if declared.canary.is_some() || rollout.control().unrated_since.is_none() {
        0.0
    } else {
        rollout.position(now).scheduled
    };
    Some(
        gates
            .before_rate_threshold
            .map_or(scheduled, |earlier| earlier.max(scheduled)),
    )
}

/// The rate's round of `rollout`: `offered_before` the clusters below
/// [`before_rate`] (on its first round), `candidates` in order (see the
/// module).
pub fn rate_round(
    rollout: &Rollout,
    gates: &GateState,
    (offered_before, candidates): (&[Candidate], &[Candidate]),
    now: Timestamp,
) -> GateChange {
    let declared = &rollout.declaration().gates;
    let Some(rate) = declared.rate else {
        return GateChange::default();
    };
    if declared.canary.is_some() && !gates.canaries_arrived() {
        return GateChange::default();
    }
    let (start_rate, origin, admitted_in_period) = match &gates.rate {
        Some(state) => (None, state.origin, state.admitted_in(rate.period, now)),
        None => (Some((now, offered_before.to_vec())), now, 0),
    };
    let named = gates.named();
    let fresh: Vec<Candidate> = candidates
        .iter()
        .filter(|candidate| !named.contains(candidate.lot))
        .filter(|candidate| !offered_before.iter().any(|before| before.lot == candidate.lot))
        .cloned()
        .collect();
    let slots = rate.clusters.saturating_sub(admitted_in_period);
    let periods = crate::time::Periods::new(origin, rate.period);
    let admit = (rollout.control().pause.is_none() && !fresh.is_empty()).then(|| Admission {
        period: periods.index(now),
        period_ends: periods.end_of(now),
        cap: rate.clusters,
        candidates: fresh.clone(),
    });
    GateChange {
        waiting: (fresh.len() as u64).saturating_sub(if admit.is_some() { slots } else { 0 }),
        start_rate,
        admit,
        ..GateChange::default()
    }
}
