//! An EUS-to-EUS plan as the steps an administrator takes: Red Hat's
//! documented Control Plane Only update (called EUS-to-EUS before 4.16;
//! openshift-docs, `modules/updating-eus-to-eus-upgrade-cli.adoc`):
//!
//! 1. every machine config pool updated (`oc get mcp`: UPDATED True,
//!    UPDATING False);
//! 2. the channel switched to the target's EUS channel
//!    (`oc adm upgrade channel eus-<4.y+2>`);
//! 3. every pool but `master` (which cannot be paused) paused
//!    (`oc patch mcp/worker --type merge --patch '{"spec":{"paused":true}}'`);
//! 4. the control plane updated to the odd minor, then to the target
//!    (`oc adm upgrade --to-latest` in the documentation; here each hop's
//!    release image by digest, `--to-image`, which `oc` takes without
//!    `--allow-explicit-upgrade` when it is one of the cluster's updates,
//!    and with `--allow-not-recommended` when it is a conditional one), each
//!    complete before the next (`oc adm upgrade` says `Cluster version is
//!    <version>`);
//! 5. the pools unpaused (`"paused":false`): the workers update once, from
//!    the release they ran to the target, skipping the releases between;
//! 6. `oc get mcp` again until every pool is updated.
//!
//! Updates within the starting minor come first, as ordinary updates
//! (workers update with each). A plan across two EUS minors or more
//! (4.14 → 4.18) is such an update per pair, the pools unpaused between:
//! kubelets may not fall more than three minors behind the API server. The
//! pools stay paused through updates within the even minor reached, up to
//! the next crossing, so workers reboot once per pair.

use cincinnati_core::Release;

use crate::channel::Tier;
use crate::plan::{Hop, PathQuery, Plan};

/// The documented commands.
pub const CHECK_POOLS: &str = "oc get mcp";
pub const PAUSE_WORKERS: &str = r#"oc patch mcp/worker --type merge --patch '{"spec":{"paused":true}}'"#;
pub const UNPAUSE_WORKERS: &str = r#"oc patch mcp/worker --type merge --patch '{"spec":{"paused":false}}'"#;
pub const CLUSTER_VERSION: &str = "oc adm upgrade";

/// The steps, and what the worker pools do at each hop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runbook<'g> {
    pub steps: Vec<Step<'g>>,
    /// Per hop of the plan (same index).
    pub workers: Vec<Workers<'g>>,
}

/// What the worker pools do while the control plane takes a hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workers<'g> {
    /// They update with the control plane (an ordinary update).
    Update,
    /// Paused: they skip the hop's target.
    Skip,
    /// Paused, and unpaused after this hop: they update from `from` (the
    /// release they ran when paused) to `to` at once.
    CatchUp { from: &'g Release, to: &'g Release },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step<'g> {
    pub action: Action,
    /// What to do and why, in one sentence.
    pub sentence: String,
    /// The commands, in order.
    pub commands: Vec<String>,
    /// For [`Action::Update`]: the hop's index in the plan.
    pub hop: Option<usize>,
    /// For [`Action::SwitchChannel`]: the channel.
    pub channel: Option<&'g str>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Prepare,
    CheckPools,
    SwitchChannel,
    PausePools,
    Update,
    UnpausePools,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Prepare => "prepare",
            Action::CheckPools => "checkPools",
            Action::SwitchChannel => "switchChannel",
            Action::PausePools => "pausePools",
            Action::Update => "update",
            Action::UnpausePools => "unpausePools",
        }
    }
}

/// The runbook of `plan`, when it answers an EUS-to-EUS question: the EUS
/// tier, from an even minor to a later even minor of the same major.
pub fn runbook<'g>(query: &PathQuery, plan: &Plan<'g>) -> Option<Runbook<'g>> {
    let (from, to) = (&query.from, &query.to);
    let eus_to_eus = query.tier == Tier::Eus
        && from.major == to.major
        && from.minor % 2 == 0
        && to.minor % 2 == 0
        && to.minor > from.minor;
    if !eus_to_eus || !plan.hops.iter().any(crosses) {
        return None;
    }
    let workers = workers(&plan.hops);
    let mut steps = vec![Step {
        action: Action::Prepare,
        sentence: format!(
            "Before you start: update the operators installed with OLM to versions compatible with \
             {}.{}, use an `oc` of each update's target minor, and clear what `oc adm upgrade` reports as \
             Upgradeable=False (an admin-ack for removed APIs); a cluster whose every node is a control-plane \
             node (single-node, compact) has no workers to pause",
            to.major, to.minor
        ),
        commands: vec![CLUSTER_VERSION.to_owned()],
        hop: None,
        channel: None,
    }];
    let mut channel: Option<&str> = None;
    for (index, hop) in plan.hops.iter().enumerate() {
        let paused = workers[index] != Workers::Update;
        let window_starts = paused && (index == 0 || workers[index - 1] == Workers::Update || crosses(hop));
        if window_starts {
            steps.push(Step {
                action: Action::CheckPools,
                sentence: "Check that every machine config pool is updated (UPDATED True, UPDATING False)"
                    .to_owned(),
                commands: vec![CHECK_POOLS.to_owned()],
                hop: None,
                channel: None,
            });
        }
        if channel != Some(hop.channel) {
            steps.push(switch_channel(hop, channel.is_none()));
            channel = Some(hop.channel);
        }
        if window_starts {
            steps.push(Step {
                action: Action::PausePools,
                sentence: format!(
                    "Pause the worker pool, and each custom pool but master (which cannot be paused): \
                     the workers stay at {} while the control plane passes through {}.{}",
                    hop.from.version, hop.to.version.major, hop.to.version.minor
                ),
                commands: vec![PAUSE_WORKERS.to_owned()],
                hop: None,
                channel: None,
            });
        }
        steps.push(update(index, hop, paused));
        if let Workers::CatchUp { from, to } = workers[index] {
            steps.push(Step {
                action: Action::UnpausePools,
                sentence: format!(
                    "Unpause the pools paused above: the workers update from {} to {} at once, one reboot",
                    from.version, to.version
                ),
                commands: vec![UNPAUSE_WORKERS.to_owned()],
                hop: None,
                channel: None,
            });
            steps.push(Step {
                action: Action::CheckPools,
                sentence: format!(
                    "Wait until every pool is updated to {} (UPDATED True, UPDATING False)",
                    to.version
                ),
                commands: vec![CHECK_POOLS.to_owned()],
                hop: None,
                channel: None,
            });
        }
    }
    Some(Runbook { steps, workers })
}

/// Whether the hop leaves an even minor for a later one: where a Control
/// Plane Only update begins.
fn crosses(hop: &Hop<'_>) -> bool {
    let (from, to) = (&hop.from.version, &hop.to.version);
    from.minor % 2 == 0 && (to.major, to.minor) > (from.major, from.minor)
}

/// What the workers do at each hop: paused from each crossing hop until
/// the next one (or the end), caught up at the last hop of each window.
fn workers<'g>(hops: &[Hop<'g>]) -> Vec<Workers<'g>> {
    let mut workers = vec![Workers::Update; hops.len()];
    let starts: Vec<usize> = (0..hops.len()).filter(|&index| crosses(&hops[index])).collect();
    for (number, &start) in starts.iter().enumerate() {
        let end = starts.get(number + 1).copied().unwrap_or(hops.len()) - 1;
        workers[start..end].fill(Workers::Skip);
        workers[end] = Workers::CatchUp {
            from: hops[start].from,
            to: hops[end].to,
        };
    }
    workers
}

fn switch_channel<'g>(hop: &Hop<'g>, first: bool) -> Step<'g> {
    let sentence = if first {
        format!(
            "Be on {}, the channel that offers {} → {}",
            hop.channel, hop.from.version, hop.to.version
        )
    } else {
        format!(
            "Switch to {}, the channel that offers {} → {}",
            hop.channel, hop.from.version, hop.to.version
        )
    };
    Step {
        action: Action::SwitchChannel,
        sentence,
        commands: vec![format!("oc adm upgrade channel {}", hop.channel)],
        hop: None,
        channel: Some(hop.channel),
    }
}

fn update<'g>(index: usize, hop: &Hop<'g>, paused: bool) -> Step<'g> {
    let (from, to) = (&hop.from.version, &hop.to.version);
    let who = if paused {
        "the control plane"
    } else {
        "the cluster"
    };
    let mut command = match &hop.to.payload {
        Some(image) => format!("oc adm upgrade --to-image={image}"),
        None => format!("oc adm upgrade --to={to}"),
    };
    let risky = match hop.risks {
        Some(risks) => {
            command.push_str(" --allow-not-recommended");
            let names: Vec<&str> = risks.iter().map(|risk| risk.name.as_str()).collect();
            format!(", accepting {}", names.join(", "))
        }
        None => String::new(),
    };
    Step {
        action: Action::Update,
        sentence: format!(
            "Update {who} {from} → {to}{risky}; it is done when `oc adm upgrade` says \"Cluster version is {to}\""
        ),
        commands: vec![command, CLUSTER_VERSION.to_owned()],
        hop: Some(index),
        channel: None,
    }
}

impl Runbook<'_> {
    /// The releases the workers never run: the targets of the hops they
    /// skip.
    pub fn skipped<'p>(&self, plan: &Plan<'p>) -> Vec<&'p Release> {
        plan.hops
            .iter()
            .zip(&self.workers)
            .filter(|(_, workers)| **workers == Workers::Skip)
            .map(|(hop, _)| hop.to)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use cincinnati_core::{Version, wire};

    use super::*;

    fn release(version: &str) -> Release {
        let document = format!(
            r#"{{"nodes": [{{"version": "{version}", "payload": "quay.io/r@sha256:{version}", "metadata": {{}}}}], "edges": []}}"#
        );
        let graph = wire::parse(document.as_bytes()).unwrap().graph;
        graph.releases().next().unwrap().1.clone()
    }

    fn query(from: &str, to: &str, tier: Tier) -> PathQuery {
        PathQuery {
            from: Version::parse(from).unwrap(),
            to: Version::parse(to).unwrap(),
            tier,
            accepted_risks: BTreeSet::new(),
            alternatives: 0,
        }
    }

    /// The plan through `versions`, each hop on the EUS channel of its
    /// target's minor.
    fn plan_of<'r>(releases: &'r [Release], channels: &'r [String]) -> Plan<'r> {
        let hops = releases
            .windows(2)
            .zip(channels)
            .map(|(pair, channel)| Hop {
                from: &pair[0],
                to: &pair[1],
                channel,
                risks: None,
            })
            .collect();
        Plan {
            hops,
            instead: Vec::new(),
        }
    }

    fn releases(versions: &[&str]) -> (Vec<Release>, Vec<String>) {
        let releases: Vec<Release> = versions.iter().map(|version| release(version)).collect();
        let channels = releases[1..]
            .iter()
            .map(|release| Tier::Eus.channel_into(4, release.version.minor))
            .collect();
        (releases, channels)
    }

    fn actions(runbook: &Runbook) -> Vec<String> {
        runbook
            .steps
            .iter()
            .map(|step| match (step.hop, step.channel) {
                (Some(hop), _) => format!("update #{hop}"),
                (_, Some(channel)) => format!("channel {channel}"),
                _ => step.action.as_str().to_owned(),
            })
            .collect()
    }

    #[test]
    fn the_workers_pause_before_the_odd_minor_and_catch_up_once_at_the_target() {
        let (releases, channels) = releases(&["4.14.30", "4.14.69", "4.15.67", "4.16.68"]);
        let plan = plan_of(&releases, &channels);
        let runbook = runbook(&query("4.14.30", "4.16.68", Tier::Eus), &plan).unwrap();
        assert_eq!(
            actions(&runbook),
            [
                "prepare",
                "channel eus-4.14",
                "update #0",
                "checkPools",
                "channel eus-4.16",
                "pausePools",
                "update #1",
                "update #2",
                "unpausePools",
                "checkPools"
            ]
        );
        assert_eq!(
            runbook.workers,
            [
                Workers::Update,
                Workers::Skip,
                Workers::CatchUp {
                    from: &releases[1],
                    to: &releases[3]
                }
            ]
        );
        assert_eq!(runbook.skipped(&plan), [&releases[2]]);
        let update = &runbook.steps[6];
        assert_eq!(
            update.commands,
            [
                "oc adm upgrade --to-image=quay.io/r@sha256:4.15.67",
                "oc adm upgrade"
            ]
        );
        assert!(
            update
                .sentence
                .starts_with("Update the control plane 4.14.69 → 4.15.67;")
        );
    }

    #[test]
    fn two_eus_pairs_unpause_between_them() {
        let (releases, channels) =
            releases(&["4.14.69", "4.15.67", "4.16.68", "4.16.70", "4.17.5", "4.18.2"]);
        let plan = plan_of(&releases, &channels);
        let runbook = runbook(&query("4.14.69", "4.18.2", Tier::Eus), &plan).unwrap();
        let paused: Vec<&str> = runbook
            .workers
            .iter()
            .map(|workers| match workers {
                Workers::Update => "update",
                Workers::Skip => "skip",
                Workers::CatchUp { .. } => "catch up",
            })
            .collect();
        assert_eq!(paused, ["skip", "skip", "catch up", "skip", "catch up"]);
        assert_eq!(
            runbook
                .skipped(&plan)
                .iter()
                .map(|release| release.version.to_string())
                .collect::<Vec<_>>(),
            ["4.15.67", "4.16.68", "4.17.5"]
        );
        // Each pair is checked, paused and unpaused on its own.
        let count = |action| runbook.steps.iter().filter(|step| step.action == action).count();
        assert_eq!((count(Action::PausePools), count(Action::UnpausePools)), (2, 2));
    }

    #[test]
    fn only_eus_to_eus_questions_get_a_runbook() {
        let (releases, channels) = releases(&["4.14.69", "4.15.67", "4.16.68"]);
        let plan = plan_of(&releases, &channels);
        assert!(runbook(&query("4.14.69", "4.16.68", Tier::Stable), &plan).is_none());
        assert!(
            runbook(
                &query("4.15.67", "4.16.68", Tier::Eus),
                &plan_of(&releases[1..], &channels[1..])
            )
            .is_none()
        );
        let (within, channels) = self::releases(&["4.16.1", "4.16.68"]);
        assert!(
            runbook(
                &query("4.16.1", "4.16.68", Tier::Eus),
                &plan_of(&within, &channels)
            )
            .is_none()
        );
    }
}
