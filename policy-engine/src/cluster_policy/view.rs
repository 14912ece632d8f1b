//! A rollout as the engine shows it: the one wire view
//! (`cincinnati_client::rollout::RolloutView`) every document embeds,
//! made from the rollout model only.

use cincinnati_client::rollout::{
    AuditEntry, CanariesView, CanaryView, ControlView, PauseView, RateView, RolloutView,
};
use rollout_model::control::Audited;
use rollout_model::rounds::canary_deadline;
use rollout_model::time::{Timestamp, to_the_second};
use rollout_model::{Rollout, Stage, describe};

/// `at` as the documents write it: RFC 3339, UTC, to the second.
pub fn shown(at: Timestamp) -> String {
    to_the_second(at)
}

/// `rollout` at `now`, with the conflict its run-time state has with the
/// policy file, if any.
pub fn rollout_view(rollout: &Rollout, now: Timestamp, conflict: Option<String>) -> RolloutView {
    let declaration = &rollout.declaration();
    let position = rollout.position(now);
    let gates = rollout.gates();
    let control = rollout.control();
    RolloutView {
        target: declaration.target.to_string(),
        line: declaration.origin.line(),
        phased_in: declaration.origin.phased_in().to_vec(),
        start: shown(declaration.schedule.start),
        complete: shown(declaration.schedule.complete_at()),
        starting_percentage: declaration.schedule.starting_percentage,
        office_hours: declaration.office_hours.as_ref().map(ToString::to_string),
        state: stage_name(&position.stage).to_owned(),
        said: describe::said(rollout, &position),
        progress: position.threshold,
        scheduled_progress: position.scheduled,
        declared_progress: declaration.schedule.progress_at(now),
        canaries: declaration.gates.canary.as_ref().map(|wanted| {
            let canaries = gates.and_then(|gates| gates.canaries.as_ref());
            CanariesView {
                wanted: wanted.clusters,
                group: wanted.group.clone(),
                chosen_at: canaries.map(|canaries| shown(canaries.chosen_at)),
                clusters: canaries
                    .map(|canaries| {
                        canaries
                            .members
                            .iter()
                            .map(|canary| CanaryView {
                                cluster: canary.cluster.clone(),
                                place: canary.place,
                                arrived_at: canary.arrived_at.map(shown),
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                arrived_at: canaries.and_then(|canaries| canaries.arrived_at).map(shown),
                due_by: gates
                    .filter(|gates| !gates.canaries_arrived())
                    .and_then(|gates| canary_deadline(rollout, gates))
                    .map(shown),
            }
        }),
        rate: declaration.gates.rate.map(|rate| {
            let state = gates.and_then(|gates| gates.rate.as_ref());
            RateView {
                clusters: rate.clusters,
                period_hours: rate.period.as_secs_f64() / 3600.0,
                period_ends: state.map(|state| shown(state.periods(rate.period).end_of(position.clock))),
                in_period: state.map_or(0, |state| state.admitted_in(rate.period, position.clock)),
                admitted: state.map_or(0, |state| state.total),
                waiting: gates.map_or(0, |gates| gates.waiting),
            }
        }),
        control: (control.overrides() || control.last.is_some() || !control.alerts.is_empty()).then(|| {
            ControlView {
                paused: control.pause.as_ref().map(|pause| PauseView {
                    since: shown(pause.at),
                    progress: pause.progress,
                    by: pause.by.to_string(),
                }),
                held_progress: control.held,
                stood_still_secs: control.stood_still.as_secs_f64(),
                alerts: control.alerts.values().cloned().collect(),
                last: control
                    .last
                    .as_ref()
                    .map(|last| audit_entry(&declaration.target.to_string(), last)),
            }
        }),
        conflict,
    }
}

/// An audited change as the documents show it.
pub fn audit_entry(target: &str, audited: &Audited) -> AuditEntry {
    AuditEntry {
        target: target.to_owned(),
        action: audited.action.as_str().to_owned(),
        by: audited.by.to_string(),
        reason: audited.reason.clone(),
        held_progress: audited.held,
        at: shown(audited.at),
    }
}

/// A stage's name in the documents.
pub fn stage_name(stage: &Stage) -> &'static str {
    match stage {
        Stage::Unknown => "unknown",
        Stage::NotJudged => "not-judged",
        Stage::Held { .. } => "held",
        Stage::Paused => "paused",
        Stage::AwaitingCanaries => "awaiting-canaries",
        Stage::NotStarted { .. } => "not-started",
        Stage::OutsideOfficeHours { .. } => "outside-office-hours",
        Stage::Rated => "rated",
        Stage::OnSchedule => "on-schedule",
        Stage::Complete => "complete",
    }
}
