//! The policy file (YAML), read and validated into a [`Policy`]. Every
//! problem is reported with the file and line, as graph-data's are.
//!
//! ```yaml
//! default:                  # rules for clusters in no group
//!   deferral_days: 0
//! groups:
//!   production:
//!     deferral_days: 14     # offer releases built at least 14 days ago
//!     max_version: 4.18.5   # and none above 4.18.5
//!     blocked_edges:        # graph-data's blocked-edges shape, this group only
//!       - {to: 4.18.4, from: '4[.]17[.].*'}
//!   canary: {}
//!   acme: {}
//! clusters:                 # cluster id (UUID) -> its groups
//!   0f2a9c4e-5b1d-4c3e-8f7a-1b2c3d4e5f60: [production]
//! rollouts:
//!   - target: 4.18.7
//!     start: 2026-11-20T00:00:00Z
//!     duration_hours: 168
//!     starting_percentage: 5
//!     halt_when:            # with a fleet store and rollout control: pause it
//!       silent_after_arriving_percent: 5   # when 5% of arrived clusters
//!       min_arrived: 50                    # (of at least 50) went silent,
//!       stuck_percent: 30                  # or 30% of those offered it more
//!       stuck_hours: 24                    # than 24 hours ago (of at least
//!       min_offered: 50                    # 50) have not taken it
//!       promql: sum(cluster:degraded:4_18_7)  # or (and) when this query, asked of
//!       above: 3                              # rollouts.prometheus_url, exceeds 3
//!     auto_resume: true     # an Alertmanager alert that paused it resumes
//!                           # it when resolved (default: an operator does)
//!     office_hours:         # newly offered only within these; outside,
//!       days: [mon, tue, wed, thu, fri]   # its progress waits for the
//!       from: "09:00"                     # next window
//!       to: "17:00"
//!       time_zone: Europe/Berlin
//!     canary: {clusters: 5} # 5 canaries must arrive before anyone else is
//!                           # offered; the schedule starts then (chosen among
//!                           # the fleet's established clusters, or with
//!                           # `group: <name>` among that group's clusters)
//!     arrival_timeout_hours: 6   # a canary not arrived 6 h after its offer
//!                                # halts it (and stuck_hours' default)
//!     max_offered_per_period: {clusters: 200, period_hours: 24}  # a rate
//! scoped_channels:          # seen by these groups only, joined to those channels
//!   - {channel: hotfix-acme-4.18, joins: [stable-4.18, fast-4.18], groups: [acme]}
//! ```

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use openshift_graph_data::yaml::{self, Spanned, line_of};
use openshift_graph_data::{BlockedEdgeSpec, FromPattern};
use rollout_model::ClusterId;
use rollout_model::declaration::{
    CanaryGate, Declaration, Gates, Halts, MAX_ROLLOUTS, Origin, QueryHalt, RateGate, Schedule, SilentHalt,
    StuckHalt,
};
use rollout_model::office_hours::OfficeHours;
use rollout_model::time::{SignedDuration, Timestamp, hours};
use semver::Version;
use serde::Deserialize;

use super::policy::{EdgeRule, Policy, Rules, ScopedChannel};
use crate::client::query::Channel;

/// The longest rollout: a century (a rollout meant to stay in flight).
const MAX_DURATION_HOURS: f64 = 24.0 * 365.0 * 100.0;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    default: RulesFile,
    #[serde(default)]
    groups: HashMap<Spanned<String>, RulesFile>,
    #[serde(default)]
    clusters: HashMap<Spanned<String>, Vec<Spanned<String>>>,
    #[serde(default)]
    rollouts: Vec<RolloutFile>,
    #[serde(default)]
    scoped_channels: Vec<ScopedChannelFile>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    deferral_days: u32,
    max_version: Option<Spanned<String>>,
    #[serde(default)]
    blocked_edges: Vec<BlockedEdgeSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScopedChannelFile {
    channel: Spanned<String>,
    #[serde(default)]
    joins: Vec<Spanned<String>>,
    groups: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RolloutFile {
    target: Spanned<String>,
    start: Spanned<String>,
    duration_hours: Spanned<f64>,
    #[serde(default)]
    starting_percentage: f64,
    #[serde(default)]
    halt_when: Option<Spanned<HaltWhenFile>>,
    #[serde(default)]
    auto_resume: bool,
    #[serde(default)]
    office_hours: Option<Spanned<OfficeHoursFile>>,
    #[serde(default)]
    canary: Option<Spanned<CanaryFile>>,
    #[serde(default)]
    max_offered_per_period: Option<Spanned<MaxOfferedFile>>,
    #[serde(default)]
    arrival_timeout_hours: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CanaryFile {
    clusters: Option<u32>,
    group: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MaxOfferedFile {
    clusters: u64,
    period_hours: f64,
}

/// Canaries a rollout may name at most: each is a cluster awaited by name.
const MAX_CANARIES: u32 = 1_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OfficeHoursFile {
    days: Vec<String>,
    from: String,
    to: String,
    time_zone: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HaltWhenFile {
    silent_after_arriving_percent: Option<f64>,
    #[serde(default = "default_min_arrived")]
    min_arrived: u64,
    stuck_percent: Option<f64>,
    stuck_hours: Option<f64>,
    #[serde(default = "default_min_offered")]
    min_offered: u64,
    promql: Option<String>,
    above: Option<f64>,
}

/// Arrivals a silent share is judged on at least, unless the file says.
fn default_min_arrived() -> u64 {
    20
}

/// Hours after its offer a cluster that has not taken the target counts as
/// late (a canary) or stuck, unless the file says: a cluster-version
/// operator asks every few minutes, and an update of a cluster takes an
/// hour or two.
fn default_stuck_hours() -> f64 {
    24.0
}

/// `hours` as a duration of an hour to a year: how long a cluster may take
/// to arrive.
fn hours_clamped(hours: f64) -> SignedDuration {
    SignedDuration::from_secs_f64(hours.clamp(1.0, 24.0 * 366.0) * 3600.0)
}

/// Clusters offered that long a stuck share is judged on at least.
fn default_min_offered() -> u64 {
    20
}

/// A rollout's `halt_when`: the fleet's signal, a Prometheus query, or
/// both; at least one.
fn halt_criteria(
    halt: &Spanned<HaltWhenFile>,
    arrival_timeout: SignedDuration,
    problems: &mut Vec<Problem>,
) -> Halts {
    let file = &halt.value;
    let mut percent_of = |name: &str, percent: Option<f64>| {
        percent.inspect(|percent| {
            if !(*percent > 0.0 && *percent <= 100.0) {
                let message = format!("{name} {percent} is not within 0 (excluded) to 100");
                problems.push(problem_at(halt, message));
            }
        })
    };
    let silent = percent_of(
        "silent_after_arriving_percent",
        file.silent_after_arriving_percent,
    )
    .map(|percent| SilentHalt {
        percent,
        min_arrived: file.min_arrived.max(1),
    });
    let stuck = percent_of("stuck_percent", file.stuck_percent).map(|percent| StuckHalt {
        percent,
        after: file.stuck_hours.map_or(arrival_timeout, hours_clamped),
        min_offered: file.min_offered.max(1),
    });
    let query = match (&file.promql, file.above) {
        (None, None) => None,
        (Some(promql), Some(above)) if !promql.trim().is_empty() && above.is_finite() => Some(QueryHalt {
            promql: promql.trim().to_owned(),
            above,
        }),
        _ => {
            let message =
                "halt_when: promql and above go together (a query, and the figure its value must exceed)";
            problems.push(problem_at(halt, message.to_owned()));
            None
        }
    };
    if silent.is_none() && stuck.is_none() && file.promql.is_none() && file.above.is_none() {
        let message =
            "halt_when names no criterion: silent_after_arriving_percent, stuck_percent, or promql and above";
        problems.push(problem_at(halt, message.to_owned()));
    }
    Halts { silent, stuck, query }
}

/// One problem in a policy file, where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: Option<u64>,
    pub message: String,
}

/// Why a policy file was refused: every problem found, each with its line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct PolicyFileError {
    pub path: String,
    pub problems: Vec<Problem>,
}

impl fmt::Display for PolicyFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, problem) in self.problems.iter().enumerate() {
            if index > 0 {
                f.write_str("; ")?;
            }
            match problem.line {
                Some(line) => write!(f, "{}:{line}: {}", self.path, problem.message)?,
                None => write!(f, "{}: {}", self.path, problem.message)?,
            }
        }
        Ok(())
    }
}

/// Reads the policy in `text`, named `path` in errors.
pub fn parse(path: &str, text: &str) -> Result<Policy, PolicyFileError> {
    let refused = |problems| PolicyFileError {
        path: path.to_owned(),
        problems,
    };
    // An empty file is an empty policy, not a syntax error.
    let file: PolicyFile = if text.trim().is_empty() {
        PolicyFile {
            default: RulesFile::default(),
            groups: HashMap::new(),
            clusters: HashMap::new(),
            rollouts: Vec::new(),
            scoped_channels: Vec::new(),
        }
    } else {
        yaml::parse(text).map_err(|error| {
            refused(vec![Problem {
                line: error.line,
                message: error.message,
            }])
        })?
    };
    let mut problems = Vec::new();
    let policy = file.validate(&mut problems);
    if problems.is_empty() {
        Ok(policy)
    } else {
        problems.sort_by_key(|problem| problem.line);
        Err(refused(problems))
    }
}

fn problem_at<T>(spanned: &Spanned<T>, message: String) -> Problem {
    Problem {
        line: Some(line_of(spanned)),
        message,
    }
}

impl PolicyFile {
    fn validate(self, problems: &mut Vec<Problem>) -> Policy {
        let (default, default_edges) = self.default.validate(problems);
        let mut groups: BTreeMap<String, Rules> = BTreeMap::new();
        let mut group_edges: BTreeMap<String, Vec<EdgeRule>> = BTreeMap::new();
        for (name, rules) in self.groups {
            let (rules, edges) = rules.validate(problems);
            if !edges.is_empty() {
                group_edges.insert(name.value.clone(), edges);
            }
            groups.insert(name.value, rules);
        }
        let mut clusters: HashMap<ClusterId, (u64, Vec<String>)> = HashMap::new();
        for (raw_id, members) in self.clusters {
            let line = line_of(&raw_id);
            let Some(id) = ClusterId::parse(&raw_id.value) else {
                let message = format!("cluster id {:?} is not a UUID", raw_id.value);
                problems.push(problem_at(&raw_id, message));
                continue;
            };
            for group in &members {
                if !groups.contains_key(&group.value) {
                    let message = format!(
                        "cluster {id}: group {:?} is not defined under `groups`",
                        group.value
                    );
                    problems.push(problem_at(group, message));
                }
            }
            let names = members.into_iter().map(|group| group.value).collect();
            if let Some((first, _)) = clusters.insert(id, (line, names)) {
                problems.push(Problem {
                    line: Some(line),
                    message: format!("cluster {id} is listed twice (first on line {first})"),
                });
            }
        }
        let mut rollouts: Vec<Declaration> = Vec::new();
        for rollout in self.rollouts {
            if let Some(rollout) = rollout.validate(&groups, &clusters, problems) {
                if rollouts.iter().any(|other| other.target == rollout.target) {
                    let message = format!("a second rollout of {}", rollout.target);
                    problems.push(Problem {
                        line: rollout.origin.line(),
                        message,
                    });
                }
                rollouts.push(rollout);
            }
        }
        if rollouts.len() > MAX_ROLLOUTS {
            problems.push(Problem {
                line: None,
                message: format!("{} rollouts; at most {MAX_ROLLOUTS}", rollouts.len()),
            });
        }
        let scoped_channels = validate_scoped_channels(self.scoped_channels, &groups, problems);
        let clusters = clusters.into_iter().map(|(id, (_, names))| (id, names)).collect();
        Policy::new(default, groups, clusters, rollouts)
            .with_edge_rules(default_edges, group_edges)
            .with_scoped_channels(scoped_channels)
    }
}

fn validate_scoped_channels(
    scoped: Vec<ScopedChannelFile>,
    groups: &BTreeMap<String, Rules>,
    problems: &mut Vec<Problem>,
) -> Vec<ScopedChannel> {
    let mut valid: Vec<ScopedChannel> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for file in scoped {
        let before = problems.len();
        for name in std::iter::once(&file.channel).chain(&file.joins) {
            if let Err(error) = Channel::parse(&name.value) {
                problems.push(problem_at(
                    name,
                    format!("channel {:?}: {}", name.value, error.value),
                ));
            }
        }
        if file.joins.iter().any(|joined| joined.value == file.channel.value) {
            let message = format!("scoped channel {} joins itself", file.channel.value);
            problems.push(problem_at(&file.channel, message));
        }
        if seen.contains(&file.channel.value) {
            let message = format!("scoped channel {} is declared twice", file.channel.value);
            problems.push(problem_at(&file.channel, message));
        }
        seen.push(file.channel.value.clone());
        if file.groups.is_empty() {
            let message = format!(
                "scoped channel {} names no group that may see it",
                file.channel.value
            );
            problems.push(problem_at(&file.channel, message));
        }
        for group in &file.groups {
            if !groups.contains_key(&group.value) {
                let message = format!(
                    "scoped channel {}: group {:?} is not defined under `groups`",
                    file.channel.value, group.value
                );
                problems.push(problem_at(group, message));
            }
        }
        if problems.len() == before {
            valid.push(ScopedChannel {
                channel: file.channel.value,
                joins: file.joins.into_iter().map(|joined| joined.value).collect(),
                groups: file.groups.into_iter().map(|group| group.value).collect(),
            });
        }
    }
    valid
}

impl RulesFile {
    fn validate(self, problems: &mut Vec<Problem>) -> (Rules, Vec<EdgeRule>) {
        let max_version = self.max_version.and_then(|raw| match Version::parse(&raw.value) {
            Ok(version) => Some(version),
            Err(error) => {
                let message = format!("max_version {:?} is not SemVer: {error}", raw.value);
                problems.push(problem_at(&raw, message));
                None
            }
        });
        let edges = self
            .blocked_edges
            .into_iter()
            .filter_map(|spec| {
                let line = line_of(&spec.to);
                spec.check(FromPattern::compile)
                    .map(|edge| EdgeRule { edge, line })
                    .map_err(|problem| {
                        problems.push(Problem {
                            line: problem.line.or(Some(line)),
                            message: format!("blocked edge: {}", problem.message),
                        });
                    })
                    .ok()
            })
            .collect();
        let rules = Rules {
            deferral_days: self.deferral_days,
            max_version,
        };
        (rules, edges)
    }
}

impl RolloutFile {
    fn validate(
        self,
        groups: &BTreeMap<String, Rules>,
        clusters: &HashMap<ClusterId, (u64, Vec<String>)>,
        problems: &mut Vec<Problem>,
    ) -> Option<Declaration> {
        let line = line_of(&self.target);
        let before = problems.len();
        let target = Version::parse(&self.target.value)
            .map_err(|error| {
                let message = format!("rollout target {:?} is not SemVer: {error}", self.target.value);
                problems.push(problem_at(&self.target, message));
            })
            .ok();
        let start = self
            .start
            .value
            .parse::<Timestamp>()
            .map_err(|error| {
                let message = format!(
                    "rollout start {:?} is not an RFC 3339 time: {error}",
                    self.start.value
                );
                problems.push(problem_at(&self.start, message));
            })
            .ok();
        let duration_hours = self.duration_hours.value;
        if !(duration_hours.is_finite() && duration_hours > 0.0 && duration_hours <= MAX_DURATION_HOURS) {
            let message = format!(
                "duration_hours {duration_hours} is not within 0 (excluded) and {MAX_DURATION_HOURS} (a century)"
            );
            problems.push(problem_at(&self.duration_hours, message));
        }
        if !(0.0..=100.0).contains(&self.starting_percentage) {
            problems.push(Problem {
                line: Some(line),
                message: format!(
                    "starting_percentage {} is not within 0 to 100",
                    self.starting_percentage
                ),
            });
        }
        let gates = self.gates(groups, clusters, problems);
        let halts = match &self.halt_when {
            Some(halt) => halt_criteria(halt, gates.arrival_timeout, problems),
            None => Halts::default(),
        };
        let office_hours = self.office_hours.and_then(|office| {
            let hours = &office.value;
            OfficeHours::new(&hours.days, &hours.from, &hours.to, &hours.time_zone)
                .map_err(|message| problems.push(problem_at(&office, message)))
                .ok()
        });
        (problems.len() == before).then(|| Declaration {
            target: target.expect("checked"),
            origin: Origin::PolicyFile { line },
            schedule: Schedule {
                start: start.expect("checked"),
                duration: SignedDuration::from_secs_f64(duration_hours * 3600.0),
                starting_percentage: self.starting_percentage,
            },
            office_hours,
            gates,
            halts,
            auto_resume: self.auto_resume,
        })
    }

    /// Its `canary`, `max_offered_per_period` and `arrival_timeout_hours`.
    fn gates(
        &self,
        groups: &BTreeMap<String, Rules>,
        clusters: &HashMap<ClusterId, (u64, Vec<String>)>,
        problems: &mut Vec<Problem>,
    ) -> Gates {
        let canary = self.canary.as_ref().and_then(|canary| {
            let CanaryFile {
                clusters: count,
                group,
            } = &canary.value;
            let members = group.as_ref().map(|group| {
                clusters
                    .values()
                    .filter(|(_, names)| names.contains(group))
                    .count()
            });
            let problem = match (count, group, members) {
                (Some(count), _, _) if !(1..=MAX_CANARIES).contains(count) => Some(format!(
                    "canary clusters {count} is not within 1 to {MAX_CANARIES}"
                )),
                (None, None, _) => {
                    Some("canary names how many clusters (clusters) or which (group)".to_owned())
                }
                (_, Some(group), _) if !groups.contains_key(group) => {
                    Some(format!("canary group {group:?} is not defined under `groups`"))
                }
                (_, Some(group), Some(0)) => Some(format!(
                    "canary group {group:?} lists no cluster under `clusters`"
                )),
                _ => None,
            };
            if let Some(message) = problem {
                problems.push(problem_at(canary, message));
                return None;
            }
            let wanted = count.unwrap_or(u32::try_from(members.unwrap_or_default()).unwrap_or(MAX_CANARIES));
            Some(CanaryGate {
                clusters: wanted.min(MAX_CANARIES),
                group: group.clone(),
            })
        });
        let rate = self.max_offered_per_period.as_ref().and_then(|rate| {
            let MaxOfferedFile {
                clusters,
                period_hours,
            } = rate.value;
            match hours(period_hours).filter(|_| clusters > 0 && period_hours <= 24.0 * 366.0) {
                Some(period) => Some(RateGate { clusters, period }),
                None => {
                    let message = format!(
                        "max_offered_per_period {{clusters: {clusters}, period_hours: {period_hours}}}: \
                         clusters at least 1, period_hours within 0 (excluded) and a year"
                    );
                    problems.push(problem_at(rate, message));
                    None
                }
            }
        });
        let arrival_timeout = match &self.arrival_timeout_hours {
            Some(hours) if hours.value.is_finite() && hours.value > 0.0 => hours_clamped(hours.value),
            Some(hours) => {
                let message = format!("arrival_timeout_hours {} is not above 0", hours.value);
                problems.push(problem_at(hours, message));
                hours_clamped(default_stuck_hours())
            }
            None => hours_clamped(default_stuck_hours()),
        };
        Gates {
            canary,
            rate,
            arrival_timeout,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "\
default:
  deferral_days: 1
groups:
  production:
    deferral_days: 14
    max_version: 4.18.5
  canary: {}
clusters:
  0F2A9C4E-5B1D-4C3E-8F7A-1B2C3D4E5F60: [production, canary]
rollouts:
  - target: 4.18.7
    start: 2026-11-20T00:00:00Z
    duration_hours: 168
    starting_percentage: 5
";

    fn problems(text: &str) -> String {
        parse("policy.yaml", text).unwrap_err().to_string()
    }

    #[test]
    fn a_good_file_is_read() {
        let policy = parse("policy.yaml", GOOD).unwrap();
        let id = ClusterId::parse("0f2a9c4e-5b1d-4c3e-8f7a-1b2c3d4e5f60").unwrap();
        assert_eq!(policy.groups_of(&id), ["canary", "production"]);
        assert_eq!(policy.declarations().len(), 1);
        assert_eq!(policy.declarations()[0].origin.line(), Some(11));
        assert!(parse("empty.yaml", "\n# nothing yet\n").is_ok());
    }

    #[test]
    fn syntax_errors_and_unknown_keys_name_the_line() {
        assert!(
            problems("default:\n  deferral_days: [\n").starts_with("policy.yaml:"),
            "{}",
            problems("default:\n  deferral_days: [\n")
        );
        let unknown = problems("groups:\n  production:\n    deferal_days: 3\n");
        assert!(
            unknown.starts_with("policy.yaml:3:") && unknown.contains("deferal_days"),
            "{unknown}"
        );
    }

    #[test]
    fn every_semantic_problem_is_reported_with_its_line() {
        let text = "\
groups:
  production:
    max_version: 4.18
clusters:
  not-a-uuid: [production]
  0f2a9c4e-5b1d-4c3e-8f7a-1b2c3d4e5f60: [prod]
rollouts:
  - target: 4.18.7
    start: yesterday
    duration_hours: 0
    starting_percentage: 150
    halt_when: {silent_after_arriving_percent: 0}
  - target: 4.18.8
    start: 2026-11-20T00:00:00Z
    duration_hours: 1
    halt_when: {promql: up}
  - target: 4.18.9
    start: 2026-11-20T00:00:00Z
    duration_hours: 1
    halt_when: {min_arrived: 5}
  - target: 4.18.10
    start: 2026-11-20T00:00:00Z
    duration_hours: 1
    halt_when: {stuck_percent: 120, stuck_hours: 6}
    office_hours: {days: [mon], from: \"09:00\", to: \"17:00\", time_zone: Mars/Olympus}
";
        let report = problems(text);
        for expected in [
            "policy.yaml:3: max_version \"4.18\" is not SemVer",
            "policy.yaml:5: cluster id \"not-a-uuid\" is not a UUID",
            "policy.yaml:6: cluster 0f2a9c4e-5b1d-4c3e-8f7a-1b2c3d4e5f60: group \"prod\" is not defined",
            "policy.yaml:8: starting_percentage 150",
            "policy.yaml:9: rollout start \"yesterday\" is not an RFC 3339 time",
            "policy.yaml:10: duration_hours 0",
            "policy.yaml:12: silent_after_arriving_percent 0 is not within 0 (excluded) to 100",
            "policy.yaml:16: halt_when: promql and above go together",
            "policy.yaml:20: halt_when names no criterion",
            "policy.yaml:24: stuck_percent 120 is not within 0 (excluded) to 100",
            "policy.yaml:25: office_hours time_zone \"Mars/Olympus\" is not an IANA time zone",
        ] {
            assert!(report.contains(expected), "{expected} not in {report}");
        }
    }

    #[test]
    fn blocked_edges_and_scoped_channels_are_checked_with_their_lines() {
        let text = "\
groups:
  acme:
    blocked_edges:
      - {to: 4.18, from: '.*'}
      - {to: 4.18.2, from: '(unclosed'}
      - {to: 4.18.2, from: '.*', name: HalfARisk}
      - {to: 4.18.2, from: '.*'}
scoped_channels:
  - {channel: hotfix-acme-4.18, joins: [stable-4.18], groups: [acme, nobody]}
  - {channel: Hotfix, joins: [Hotfix], groups: []}
  - {channel: hotfix-acme-4.18, groups: [acme]}
";
        let report = problems(text);
        for expected in [
            "policy.yaml:4: blocked edge: `to` \"4.18\" is not SemVer",
            "policy.yaml:5: blocked edge: `from` is not a valid regex",
            "policy.yaml:6: blocked edge: a risk needs url, name, message and matchingRules",
            "policy.yaml:9: scoped channel hotfix-acme-4.18: group \"nobody\" is not defined",
            "policy.yaml:10: channel \"Hotfix\"",
            "policy.yaml:10: scoped channel Hotfix joins itself",
            "policy.yaml:10: scoped channel Hotfix names no group",
            "policy.yaml:11: scoped channel hotfix-acme-4.18 is declared twice",
        ] {
            assert!(report.contains(expected), "{expected} not in {report}");
        }
        assert!(
            !report.contains("policy.yaml:7:"),
            "the good blocked edge: {report}"
        );
    }

    #[test]
    fn a_group_s_blocked_edges_and_scoped_channels_are_read() {
        let text = "\
default:
  blocked_edges: [{to: 4.18.9, from: '.*'}]
groups:
  acme:
    blocked_edges:
      - {to: 4.18.2, from: '4[.]17[.].*', url: u, name: R, message: m, matchingRules: [{type: Always}]}
  other: {}
scoped_channels:
  - {channel: hotfix-acme-4.18, joins: [stable-4.18, fast-4.18], groups: [acme]}
";
        let policy = parse("policy.yaml", text).unwrap();
        assert_eq!(policy.edge_rule_count(), 2);
        assert_eq!(
            policy.scoped_channels(),
            [ScopedChannel {
                channel: "hotfix-acme-4.18".to_owned(),
                joins: vec!["stable-4.18".to_owned(), "fast-4.18".to_owned()],
                groups: vec!["acme".to_owned()],
            }]
        );
    }

    #[test]
    fn gates_are_read_and_their_bad_figures_refused_with_their_line() {
        let rollout = |gates: &str| {
            format!(
                "rollouts:\n  - target: 4.18.7\n    start: 2026-11-20T00:00:00Z\n    duration_hours: 24\n{gates}"
            )
        };
        let policy = parse(
            "policy.yaml",
            &rollout(
                "    canary: {clusters: 3}\n    arrival_timeout_hours: 6\n    \
                 max_offered_per_period: {clusters: 200, period_hours: 24}\n    halt_when: {stuck_percent: 30}\n",
            ),
        )
        .unwrap();
        let gates = &policy.declarations()[0].gates;
        assert_eq!(
            gates.canary,
            Some(CanaryGate {
                clusters: 3,
                group: None
            })
        );
        assert_eq!(gates.arrival_timeout, SignedDuration::from_hours(6));
        assert_eq!(
            gates.rate,
            Some(RateGate {
                clusters: 200,
                period: SignedDuration::from_hours(24)
            })
        );
        let stuck = policy.declarations()[0].halts.stuck.unwrap();
        assert_eq!(
            stuck.after,
            SignedDuration::from_hours(6),
            "stuck_hours from the arrival timeout"
        );

        let refused = parse(
            "policy.yaml",
            &rollout(
                "    canary: {clusters: 0}\n    arrival_timeout_hours: -1\n    \
                 max_offered_per_period: {clusters: 0, period_hours: 24}\n",
            ),
        )
        .unwrap_err()
        .to_string();
        for expected in [
            "policy.yaml:5: canary clusters 0 is not within 1 to 1000",
            "policy.yaml:6: arrival_timeout_hours -1 is not above 0",
            "policy.yaml:7: max_offered_per_period {clusters: 0, period_hours: 24}",
        ] {
            assert!(refused.contains(expected), "{refused}");
        }
    }

    #[test]
    fn canaries_an_operator_names_come_from_a_group_of_the_file() {
        let text = |canary: &str| {
            format!(
                "groups: {{early: {{}}, empty: {{}}}}\nclusters: {{0f2a9c4e-5b1d-4c3e-8f7a-1b2c3d4e5f60: [early]}}\n\
                 rollouts:\n  - target: 4.18.7\n    start: 2026-11-20T00:00:00Z\n    duration_hours: 24\n    canary: {canary}\n"
            )
        };
        let policy = parse("policy.yaml", &text("{group: early}")).unwrap();
        assert_eq!(
            policy.declarations()[0].gates.canary,
            Some(CanaryGate {
                clusters: 1,
                group: Some("early".into())
            }),
            "every member, without a count"
        );
        for (canary, expected) in [
            (
                "{group: nobody}",
                "canary group \"nobody\" is not defined under `groups`",
            ),
            (
                "{group: empty}",
                "canary group \"empty\" lists no cluster under `clusters`",
            ),
            ("{}", "canary names how many clusters (clusters) or which (group)"),
        ] {
            let refused = parse("policy.yaml", &text(canary)).unwrap_err().to_string();
            assert!(refused.ends_with(expected), "{refused}");
        }
    }

    #[test]
    fn ids_listed_twice_and_rollouts_of_one_target_twice_are_refused() {
        let text = "\
groups: {a: {}}
clusters:
  0f2a9c4e-5b1d-4c3e-8f7a-1b2c3d4e5f60: [a]
  0F2A9C4E-5B1D-4C3E-8F7A-1B2C3D4E5F60: [a]
rollouts:
  - {target: 4.18.7, start: 2026-11-20T00:00:00Z, duration_hours: 1}
  - {target: 4.18.7, start: 2026-11-21T00:00:00Z, duration_hours: 1}
";
        let report = problems(text);
        assert!(report.contains("is listed twice"), "{report}");
        assert!(
            report.contains("policy.yaml:7: a second rollout of 4.18.7"),
            "{report}"
        );
    }
}
