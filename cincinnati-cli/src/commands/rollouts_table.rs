//! The one table of rollouts, printed by `cincinnati rollout list` (and
//! after a change) and by `cincinnati fleet rollouts`: each rollout where
//! the engine's rollout model says it is, in the engine's own words, then
//! what holds or moves it, under it: canaries, rate, pause or hold, alerts,
//! a conflict with what declares it.

use cincinnati_client::rollout::{ControlView, RolloutView};

use crate::output::{BAD, Cell, DIM, GOOD, HEADING, RISK, Text, count, hours, styled};

/// `rollouts` as the engine knew them at `at`.
pub fn rollouts_table<'a>(text: &mut Text, at: &str, rollouts: impl IntoIterator<Item = &'a RolloutView>) {
    let rollouts: Vec<&RolloutView> = rollouts.into_iter().collect();
    if rollouts.is_empty() {
        text.line("The engine has no rollout (none in its policy file, none phasing in graph-data).");
        return;
    }
    text.line(format!(
        "{} at {at} (offered: clusters placed below it are offered the target; declared: what its \
         declared schedule alone gives)",
        styled(HEADING, "Rollouts"),
    ));
    text.blank();
    let rows = rollouts
        .iter()
        .map(|rollout| {
            vec![
                Cell::plain(&rollout.target),
                Cell::plain(rollout.declared_in()),
                Cell::number(percent(rollout.progress)),
                Cell::number(percent(rollout.declared_progress)),
                Cell::styled(state_style(&rollout.state), &rollout.said),
            ]
        })
        .collect();
    text.table(
        &["TARGET", "DECLARED IN", "OFFERED", "DECLARED", "WHERE IT IS"],
        rows,
    );
    for rollout in rollouts {
        let details = details(rollout);
        if !details.is_empty() {
            text.blank();
            text.line(styled(HEADING, &rollout.target));
            for detail in details {
                text.line(format!("  {detail}"));
            }
        }
    }
}

/// How a rollout's state is shown: red when something stopped it, yellow
/// when something holds it back, green when it runs.
fn state_style(state: &str) -> anstyle::Style {
    match state {
        "unknown" | "paused" | "not-judged" => BAD,
        "held" | "awaiting-canaries" | "outside-office-hours" | "rated" | "not-started" => RISK,
        "on-schedule" | "complete" => GOOD,
        _ => anstyle::Style::new(),
    }
}

/// What holds or moves `rollout`, a line each.
fn details(rollout: &RolloutView) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(conflict) = &rollout.conflict {
        lines.push(styled(BAD, format!("conflict with the policy file: {conflict}")));
    }
    if let Some(canaries) = &rollout.canaries {
        let group = canaries
            .group
            .as_ref()
            .map_or_else(String::new, |group| format!(" of group {group}"));
        let wanted = count(canaries.wanted.into(), "canary", "canaries");
        match &canaries.chosen_at {
            None => lines.push(format!("canaries: {wanted}{group}, not chosen yet")),
            Some(chosen_at) => {
                let arrived = canaries
                    .arrived_at
                    .as_ref()
                    .map_or_else(String::new, |at| format!(", all arrived at {at}"));
                let due = canaries
                    .due_by
                    .as_ref()
                    .map_or_else(String::new, |due| format!(", due by {due}"));
                lines.push(format!(
                    "canaries: {wanted}{group}, chosen at {chosen_at}{arrived}{due}"
                ));
                for canary in &canaries.clusters {
                    let arrived = canary.arrived_at.as_ref().map_or_else(
                        || styled(DIM, "not arrived"),
                        |at| styled(GOOD, format!("arrived at {at}")),
                    );
                    lines.push(format!(
                        "  {} (placed at {:.4}%): {arrived}",
                        canary.cluster, canary.place
                    ));
                }
            }
        }
    }
    if let Some(rate) = &rollout.rate {
        let period = rate
            .period_ends
            .as_ref()
            .map_or_else(String::new, |ends| format!(" (the period ends at {ends})"));
        lines.push(format!(
            "rate: at most {} newly offered every {}; {} in this period{period}, {} in all, {} waiting",
            count(rate.clusters, "cluster", "clusters"),
            hours(rate.period_hours),
            rate.in_period,
            rate.admitted,
            rate.waiting
        ));
    }
    if let Some(control) = &rollout.control {
        lines.extend(control_lines(control));
    }
    lines
}

/// What run-time control did, a line each.
fn control_lines(control: &ControlView) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(paused) = &control.paused {
        lines.push(styled(
            BAD,
            format!(
                "paused by {} since {}, keeping {}",
                paused.by,
                paused.since,
                percent(paused.progress)
            ),
        ));
    }
    if let Some(held) = control.held_progress {
        lines.push(styled(RISK, format!("held at {}", percent(held))));
    }
    if control.stood_still_secs > 0.0 {
        lines.push(format!(
            "{} behind its declared schedule: its clock stood still while paused",
            hours(control.stood_still_secs / 3600.0)
        ));
    }
    if !control.alerts.is_empty() {
        lines.push(styled(
            RISK,
            format!("alerts firing: {}", control.alerts.join(", ")),
        ));
    }
    if let Some(last) = &control.last {
        lines.push(format!(
            "last change: {} by {} at {}: {}",
            last.action, last.by, last.at, last.reason
        ));
    }
    lines
}

/// A progress, to a tenth of a percent.
pub fn percent(progress: f64) -> String {
    format!("{progress:.1}%")
}
