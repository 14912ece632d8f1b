//! `cincinnati fleet`: what a policy-engine with a fleet store has recorded
//! of the clusters asking it, from its status port (`{prefix}/v1/fleet/...`;
//! the documents are `cincinnati_client::fleet`'s, printed as received with
//! `-o json` and `-o yaml`).

use cincinnati_client::fleet::{
    FleetAdoption, FleetCluster, FleetRollouts, FleetStuck, FleetVersions, NotMoving, VersionClusters,
    release_order,
};
use cincinnati_client::header::Header;
use http_fetch::Method;
use serde::Serialize;

use super::rollouts_table::rollouts_table;
use super::status_port::{Answers, EngineDocument, StatusPort, does_not_exist};
use crate::cli::{Common, FleetArgs, FleetCommand, Format};
use crate::input::Input;
use crate::outcome::{Answer, Failure};
use crate::output::{self, BAD, Cell, DIM, GOOD, HEADING, RISK, Text, count, hours, styled};

/// The widest bar of an adoption answer, in characters.
const BAR_WIDTH: u64 = 40;

/// Example clusters a table shows of each group not moving (`-o json` has
/// all the engine sends).
const EXAMPLES_SHOWN: usize = 3;

/// Where the fleet answers are.
const ANSWERS: Answers = Answers {
    command: "fleet",
    flag: "--fleet-url",
    route: "/v1/fleet",
    what: "the fleet answers",
    missing: "no fleet view there. A policy-engine answers {prefix}/v1/fleet/... on its status \
              port only with a fleet store: set fleet.store in its settings (fleet.store = \
              \"sqlite:///var/lib/cincinnati/fleet.db\", or a postgres:// URL); when it has one, \
              --fleet-url names its status port and prefix",
};

pub async fn run(
    input: &Input,
    common: &Common,
    args: &FleetArgs,
    format: Format,
) -> Result<Answer, Failure> {
    let fleet = StatusPort::new(
        input,
        common,
        &ANSWERS,
        args.fleet_url.as_deref(),
        args.token.token_file.as_deref(),
    )?;
    let arch = common.arch_given().map(str::to_owned);
    let hours = |hours: Option<u64>| hours.map(|hours| hours.to_string());
    match &args.question {
        FleetCommand::Versions(asked) => {
            let parameters = [
                ("channel", asked.channel.clone()),
                ("arch", arch),
                ("active_hours", hours(asked.active_hours)),
            ];
            let document: FleetVersions = fleet.ask(&["versions"], &parameters).await?;
            print(format, &document, |text, document| {
                versions_table(text, document);
                counted_note(text, &document.header, document.counted_at.as_deref());
            })
        }
        FleetCommand::Adoption(asked) => {
            let parameters = [
                ("version", Some(asked.version.to_string())),
                ("hours", Some(asked.hours.to_string())),
            ];
            let document: FleetAdoption = fleet.ask(&["adoption"], &parameters).await?;
            print(format, &document, adoption_table)
        }
        FleetCommand::Rollouts(_) => {
            let document: FleetRollouts = fleet.ask(&["rollouts"], &[]).await?;
            print(format, &document, |text, document| {
                fleet_rollouts_table(text, document);
                counted_note(text, &document.header, document.counted_at.as_deref());
            })
        }
        FleetCommand::Stuck(asked) => {
            let parameters = [
                ("channel", asked.channel.clone()),
                ("arch", arch.clone()),
                ("active_hours", hours(asked.active_hours)),
            ];
            let document: FleetStuck = fleet.ask(&["stuck"], &parameters).await?;
            print(format, &document, |text, document| {
                stuck_table(text, document);
                counted_note(text, &document.header, document.counted_at.as_deref());
            })
        }
        FleetCommand::Cluster(asked) => {
            let response = fleet.send(Method::GET, &["clusters", &asked.id], &[]).await?;
            if let Some(unknown) = does_not_exist(&response) {
                return Ok(Answer::No(format!("cluster {}: {unknown}", asked.id)));
            }
            let document: FleetCluster = fleet.read(response)?;
            print(format, &document, cluster_table)
        }
    }
}

fn print<D: Serialize>(
    format: Format,
    document: &D,
    table: impl FnOnce(&mut Text, &D),
) -> Result<Answer, Failure> {
    output::print(format, document, |text| table(text, document))?;
    Ok(Answer::Yes)
}

impl EngineDocument for FleetVersions {
    const KIND: &'static str = "FleetVersions";
}

impl EngineDocument for FleetAdoption {
    const KIND: &'static str = "FleetAdoption";
}

impl EngineDocument for FleetRollouts {
    const KIND: &'static str = "FleetRollouts";
}

impl EngineDocument for FleetStuck {
    const KIND: &'static str = "FleetStuck";
}

impl EngineDocument for FleetCluster {
    const KIND: &'static str = "FleetCluster";
}

fn versions_table(text: &mut Text, document: &FleetVersions) {
    let scope = format!(
        "{}, {}",
        document.channel.as_deref().map_or_else(
            || "every channel".to_owned(),
            |channel| format!("channel {channel}")
        ),
        document.arch.as_deref().unwrap_or("every architecture")
    );
    let window = format!("in the last {}", count(document.active_hours, "hour", "hours"));
    if document.versions.is_empty() {
        text.line(format!("No cluster active {window} ({scope})."));
        return;
    }
    text.line(format!(
        "{} active {window} ({scope}), on {}",
        styled(HEADING, count(document.clusters, "cluster", "clusters")),
        count(
            distinct(document.versions.iter().map(|group| &group.version)),
            "version",
            "versions"
        ),
    ));
    text.blank();
    let mut versions: Vec<&VersionClusters> = document.versions.iter().collect();
    versions.sort_by(|a, b| {
        (&a.channel, &a.arch)
            .cmp(&(&b.channel, &b.arch))
            .then_with(|| release_order(&a.version, &b.version))
    });
    let mut rows: Vec<Vec<Cell>> = versions
        .into_iter()
        .map(|group| {
            vec![
                Cell::plain(&group.channel),
                Cell::plain(&group.arch),
                Cell::plain(&group.version),
                Cell::number(group.clusters),
                Cell::number(share(group.clusters, document.clusters)),
            ]
        })
        .collect();
    rows.push(vec![
        Cell::styled(HEADING, "total"),
        Cell::plain(""),
        Cell::plain(""),
        Cell::styled(HEADING, document.clusters).right(),
        Cell::number(share(document.clusters, document.clusters)),
    ]);
    text.table(&["CHANNEL", "ARCH", "VERSION", "CLUSTERS", "SHARE"], rows);
}

fn adoption_table(text: &mut Text, document: &FleetAdoption) {
    let window = format!("in the last {}", count(document.hours, "hour", "hours"));
    let Some(most) = document.arrivals.iter().map(|hour| hour.clusters).max() else {
        text.line(format!("No cluster arrived at {} {window}.", document.version));
        return;
    };
    text.line(format!(
        "{} arrived at {} {window}",
        styled(HEADING, count(document.clusters, "cluster", "clusters")),
        document.version
    ));
    text.blank();
    // Clusters a character of a bar stands for; a part of one is shown.
    let scale = most.div_ceil(BAR_WIDTH).max(1);
    let mut rows = Vec::new();
    let (mut so_far, mut previous) = (0, None);
    for hour in &document.arrivals {
        let at = unix_hour(&hour.hour);
        if let (Some(previous), Some(at)) = (previous, at)
            && at - previous > 1
        {
            rows.push(vec![
                Cell::styled(DIM, "…"),
                Cell::number(""),
                Cell::number(""),
                Cell::styled(
                    DIM,
                    count((at - previous - 1) as u64, "hour", "hours") + " without arrivals",
                ),
            ]);
        }
        previous = at;
        so_far += hour.clusters;
        let bar = "█".repeat(hour.clusters.div_ceil(scale) as usize);
        rows.push(vec![
            Cell::plain(&hour.hour),
            Cell::number(hour.clusters),
            Cell::number(so_far),
            Cell::styled(GOOD, bar),
        ]);
    }
    let legend = format!("█ = {}", count(scale, "cluster", "clusters"));
    text.table(&["HOUR", "ARRIVED", "SO FAR", &legend], rows);
}

/// The rollouts as `rollout list` shows them, then how each moved the
/// clusters.
fn fleet_rollouts_table(text: &mut Text, document: &FleetRollouts) {
    rollouts_table(
        text,
        &document.header.generated_at,
        document.rollouts.iter().map(|rollout| &rollout.rollout),
    );
    if document.rollouts.is_empty() {
        return;
    }
    text.blank();
    text.line(format!(
        "{} (active in the last {}; silent: not seen for {} after arriving)",
        styled(HEADING, "Their clusters"),
        count(document.active_hours, "hour", "hours"),
        count(document.silent_hours, "hour", "hours"),
    ));
    text.blank();
    let rows = document
        .rollouts
        .iter()
        .map(|rollout| {
            let silent = if rollout.silent_after_arriving > 0 {
                Cell::styled(BAD, rollout.silent_after_arriving).right()
            } else {
                Cell::number(0)
            };
            vec![
                Cell::plain(&rollout.rollout.target),
                Cell::number(rollout.in_scope),
                Cell::number(rollout.offered),
                Cell::number(match rollout.offered {
                    0 => rollout.arrived.to_string(),
                    offered => format!("{} ({})", rollout.arrived, share(rollout.arrived, offered)),
                }),
                Cell::number(
                    rollout
                        .median_hours_to_arrive
                        .map_or_else(|| "-".to_owned(), hours),
                ),
                silent,
            ]
        })
        .collect();
    text.table(
        &[
            "TARGET",
            "IN SCOPE",
            "OFFERED",
            "ARRIVED (OF OFFERED)",
            "MEDIAN TO ARRIVE",
            "SILENT AFTER ARRIVING",
        ],
        rows,
    );
}

fn stuck_table(text: &mut Text, document: &FleetStuck) {
    let scope = format!(
        "active in the last {}, {}, {}",
        count(document.active_hours, "hour", "hours"),
        document.channel.as_deref().map_or_else(
            || "every channel".to_owned(),
            |channel| format!("channel {channel}")
        ),
        document.arch.as_deref().unwrap_or("every architecture")
    );
    if document.no_update.is_empty() && document.not_moving.is_empty() {
        text.line(format!(
            "No cluster is stuck ({scope}): every version has a recommended update, and no cluster \
             has stayed on one for more than {} with an update offered.",
            count(document.stuck_days, "day", "days")
        ));
        return;
    }
    text.line(format!("{} ({scope})", styled(HEADING, "Stuck clusters")));
    if !document.no_update.is_empty() {
        let clusters = document.no_update.iter().map(|group| group.group.clusters).sum();
        text.blank();
        text.line(format!(
            "No recommended update in their channel: {} on {}",
            count(clusters, "cluster", "clusters"),
            count(
                distinct(document.no_update.iter().map(|group| &group.group.version)),
                "version",
                "versions"
            )
        ));
        let rows = document
            .no_update
            .iter()
            .map(|group| {
                vec![
                    Cell::plain(&group.group.channel),
                    Cell::plain(&group.group.arch),
                    Cell::plain(&group.group.version),
                    Cell::number(group.group.clusters),
                    Cell::styled(RISK, &group.reason),
                ]
            })
            .collect();
        text.table(&["CHANNEL", "ARCH", "VERSION", "CLUSTERS", "REASON"], rows);
    }
    if !document.not_moving.is_empty() {
        let clusters = document.not_moving.iter().map(|group| group.clusters).sum();
        text.blank();
        text.line(format!(
            "Not moving, on their version for more than {} with an update offered: {} on {}",
            count(document.stuck_days, "day", "days"),
            count(clusters, "cluster", "clusters"),
            count(
                distinct(document.not_moving.iter().map(|group| &group.version)),
                "version",
                "versions"
            )
        ));
        let rows = document
            .not_moving
            .iter()
            .map(|group| {
                vec![
                    Cell::plain(&group.channel),
                    Cell::plain(&group.arch),
                    Cell::plain(&group.version),
                    Cell::number(group.clusters),
                    Cell::plain(&group.newest_offered),
                ]
            })
            .collect();
        text.table(
            &["CHANNEL", "ARCH", "VERSION", "CLUSTERS", "NEWEST OFFERED"],
            rows,
        );
        for group in &document.not_moving {
            examples(text, group);
        }
    }
}

/// The clusters longest on a version that is not left.
fn examples(text: &mut Text, group: &NotMoving) {
    if group.examples.is_empty() {
        return;
    }
    text.blank();
    text.line(format!(
        "  {} on {} ({}), longest on it first:",
        group.version, group.channel, group.arch
    ));
    for example in group.examples.iter().take(EXAMPLES_SHOWN) {
        text.line(format!("    {}  since {}", example.cluster, example.since));
    }
    let shown = group.examples.len().min(EXAMPLES_SHOWN) as u64;
    if group.clusters > shown {
        let listed = if group.examples.len() as u64 > shown {
            format!(" (-o json lists {})", group.examples.len())
        } else {
            String::new()
        };
        text.line(styled(
            DIM,
            format!("    and {} more{listed}", group.clusters - shown),
        ));
    }
}

fn cluster_table(text: &mut Text, document: &FleetCluster) {
    text.line(format!(
        "{} {}: {} on {} ({})",
        styled(HEADING, "Cluster"),
        document.cluster,
        styled(HEADING, &document.version),
        document.channel,
        document.arch
    ));
    let on_version = format!("on {} since", document.version);
    let facts = [
        ("first seen", document.first_seen.clone()),
        ("last seen", document.last_seen.clone()),
        (on_version.as_str(), document.version_since.clone()),
        ("place in rollouts", format!("{:.2}%", document.place)),
    ];
    let width = facts
        .iter()
        .map(|(name, _)| name.chars().count())
        .max()
        .unwrap_or(0);
    for (name, value) in facts {
        text.line(format!("  {name:width$}  {value}"));
    }
    text.blank();
    if document.changes.is_empty() {
        text.line("No change of version recorded.");
        return;
    }
    text.line(format!(
        "{}, oldest first:",
        count(
            document.changes.len() as u64,
            "change of version",
            "changes of version"
        )
    ));
    let rows = document
        .changes
        .iter()
        .map(|change| {
            vec![
                Cell::plain(&change.from),
                Cell::plain(&change.to),
                Cell::plain(&change.at),
            ]
        })
        .collect();
    text.table(&["FROM", "TO", "AT"], rows);
}

/// How many different versions there are (a version is in several
/// channels).
fn distinct<'a>(versions: impl Iterator<Item = &'a String>) -> u64 {
    versions.collect::<std::collections::BTreeSet<_>>().len() as u64
}

/// `part` of `whole`, in percent to a tenth; a share too small to show as
/// one is `<0.1%`.
fn share(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".to_owned();
    }
    let percent = part as f64 * 100.0 / whole as f64;
    if part > 0 && percent < 0.05 {
        "<0.1%".to_owned()
    } else {
        format!("{percent:.1}%")
    }
}

/// Says how old the engine's count was when the answer was made of it
/// (the whole fleet's answers are counted every
/// `fleet.count_interval_secs`), if a second or more.
fn counted_note(text: &mut Text, header: &Header, counted_at: Option<&str>) {
    let Some(age) = count_age(&header.generated_at, counted_at) else {
        return;
    };
    text.blank();
    text.line(styled(
        DIM,
        format!("As counted {age} s before this answer (the engine counts the fleet every fleet.count_interval_secs)."),
    ));
}

/// Whole seconds between the count and the answer made of it, if any.
fn count_age(generated_at: &str, counted_at: Option<&str>) -> Option<i64> {
    counted_at
        .and_then(unix_seconds)
        .zip(unix_seconds(generated_at))
        .map(|(counted, made)| made - counted)
        .filter(|age| *age >= 1)
}

/// Seconds since 1970 of a time as the engine writes it (RFC 3339); `None`
/// for another shape.
fn unix_seconds(text: &str) -> Option<i64> {
    let at: jiff::Timestamp = text.parse().ok()?;
    Some(at.as_second())
}

/// Hours since 1970 of an hour as the engine writes it.
fn unix_hour(text: &str) -> Option<i64> {
    unix_seconds(text).map(|seconds| seconds.div_euclid(3600))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hours_are_counted_across_months_years_and_leap_days() {
        assert_eq!(unix_hour("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(unix_hour("1970-01-02T03:00:00Z"), Some(27));
        let hours = |a, b| unix_hour(b).unwrap() - unix_hour(a).unwrap();
        assert_eq!(hours("2026-12-31T23:00:00Z", "2027-01-01T00:00:00Z"), 1);
        assert_eq!(hours("2028-02-28T23:00:00Z", "2028-03-01T00:00:00Z"), 25);
        assert_eq!(hours("2100-02-28T23:00:00Z", "2100-03-01T00:00:00Z"), 1);
        assert_eq!(unix_hour("2026-11-26T14:00:00Z"), Some(498_806));
        assert_eq!(unix_hour("yesterday"), None);
        let counted = Some("2026-11-26T14:00:00Z");
        assert_eq!(
            count_age("2026-11-26T14:00:00.9Z", counted),
            None,
            "as the answer was made"
        );
        assert_eq!(count_age("2026-11-26T14:00:42Z", counted), Some(42));
        assert_eq!(
            count_age("2026-11-26T14:00:42Z", None),
            None,
            "an engine before countedAt"
        );
        assert_eq!(unix_hour("2026-13-01T00:00:00Z"), None);
    }

    #[test]
    fn shares_read_as_people_say_them() {
        assert_eq!(share(1, 3), "33.3%");
        assert_eq!(share(1, 1_000_000), "<0.1%");
        assert_eq!(share(0, 10), "0.0%");
        assert_eq!(share(0, 0), "-");
    }
}
