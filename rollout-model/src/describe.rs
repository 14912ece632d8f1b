//! What a rollout's position says to people, in one sentence: the words
//! `/v1/rollouts`, the fleet's rollouts, explain, the Fleet view and
//! `cincinnati rollout list` all show.

use crate::position::{Position, Rollout, Stage};
use crate::rounds::canary_deadline;
use crate::time::to_the_second;

/// `rollout` at `position`, in words.
pub fn said(rollout: &Rollout, position: &Position) -> String {
    let declaration = &rollout.declaration();
    let control = rollout.control();
    let seconds = to_the_second;
    match &position.stage {
        Stage::Unknown => {
            "run-time state not read yet: offered to nobody until rollout control reads it".to_owned()
        }
        Stage::NotJudged => "gates not judged yet: offered to nobody until they are".to_owned(),
        Stage::Held { progress } => {
            let by = control.last.as_ref().map_or_else(String::new, |last| {
                format!(" by {} at {}: {}", last.by, seconds(last.at), last.reason)
            });
            format!("held at {progress:.1}%{by}")
        }
        Stage::Paused => {
            let pause = control.pause.as_ref().expect("a paused stage has a pause");
            let reason = control
                .last
                .as_ref()
                .filter(|last| last.by == pause.by)
                .map_or_else(String::new, |last| format!(": {}", last.reason));
            format!(
                "paused at {:.1}% by {} since {}{reason}",
                pause.progress,
                pause.by,
                seconds(pause.at)
            )
        }
        Stage::AwaitingCanaries => {
            let wanted = declaration
                .gates
                .canary
                .as_ref()
                .map_or(0, |canary| canary.clusters);
            match rollout
                .gates()
                .and_then(|gates| gates.canaries.as_ref().map(|canaries| (gates, canaries)))
            {
                Some((gates, canaries)) => {
                    let by = canary_deadline(rollout, gates)
                        .map_or_else(String::new, |deadline| format!(", due by {}", seconds(deadline)));
                    format!(
                        "awaiting {} canaries ({} arrived{by}); nobody else is offered {}",
                        canaries.members.len(),
                        canaries.arrived(),
                        declaration.target
                    )
                }
                None => format!(
                    "choosing {wanted} canaries once it has started and runs ({} clusters can be chosen now)",
                    rollout.gates().map_or(0, |gates| gates.waiting)
                ),
            }
        }
        Stage::NotStarted { starts } => format!("starts at {}", seconds(*starts)),
        Stage::OutsideOfficeHours { opens } => {
            let office = declaration
                .office_hours
                .as_ref()
                .expect("outside office hours only with office hours");
            format!(
                "outside office hours at {:.1}%, opens {}",
                position.threshold,
                office.local(*opens)
            )
        }
        Stage::Rated => {
            let rate = declaration.gates.rate.expect("rated only with a rate");
            match rollout
                .gates()
                .and_then(|gates| gates.rate.as_ref().map(|state| (gates, state)))
            {
                Some((gates, state)) => {
                    let periods = state.periods(rate.period);
                    format!(
                        "{} of at most {} newly offered in the period until {} ({} in all); {} waiting",
                        state.admitted_in(rate.period, position.clock),
                        rate.clusters,
                        seconds(periods.end_of(position.clock)),
                        state.admitted.len(),
                        gates.waiting
                    )
                }
                None => format!(
                    "at most {} newly offered a period, counted from the next gate check",
                    rate.clusters
                ),
            }
        }
        Stage::OnSchedule => format!(
            "on schedule at {:.1}%, complete at {}",
            position.threshold,
            seconds(
                rollout
                    .offered_from(Default::default())
                    .unwrap_or(declaration.schedule.complete_at())
            )
        ),
        Stage::Complete => "complete: offered to every cluster".to_owned(),
    }
}
