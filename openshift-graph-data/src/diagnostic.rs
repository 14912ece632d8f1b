//! Problems found in graph-data, where they are, and whether they refuse it.
//!
//! Every problem is reported, never only logged: a [`Diagnostic`] names the
//! file and line (or the release) at fault and a [`DiagnosticKind`]. Whether a
//! kind refuses the new graph-data or is only a warning is decided by
//! [`Strictness`], which carries upstream's `disallowed_errors` knob.
//!
//! The rule behind the defaults: a problem refuses the graph-data when
//! applying the rest anyway could offer clusters an update the graph-data
//! meant to block or drop releases from their channels (a broken blocked-edge
//! or channel file, an invalid regex, ambiguous duplicates). Problems that
//! lose nothing (an unknown key, a channel version not released yet, a stray
//! `OWNERS` file) are warnings. A refused graph-data leaves the last good one
//! in use, so refusing is the safe choice whenever information would be lost.
//!
//! Before a change merges, more is refused ([`Strictness::pre_merge`], what
//! `cincinnati graph-data check` applies): everything graph-data's own CI
//! refuses (`hack/validate-blocked-edges.py`, and the upstream loader run
//! with every `disallowed_errors` class, as graph-data's `verify_yaml`
//! runs it), and mistakes that no validator there catches but that change
//! what clusters see. The graph-builder only warns about these: graph-data
//! it is given has passed that CI, or is someone's own, which upstream's
//! graph-builder serves as it is.

use std::collections::BTreeSet;
use std::fmt;

use semver::Version;
use serde::Deserialize;

/// One problem in graph-data or in applying it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    pub location: Location,
    pub kind: DiagnosticKind,
    pub severity: Severity,
    pub message: String,
}

/// Where a problem is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Location {
    /// A graph-data file, by its path inside the graph-data (`channels/fast-4.16.yaml`),
    /// with the 1-based line when known.
    File { path: String, line: Option<u64> },
    /// The graph-data as a whole (a missing file, say).
    GraphData,
    /// A release of the graph, for instructions found in its metadata.
    Release(Version),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The new graph-data is refused; the last good one stays in use.
    Error,
    /// Reported; the graph-data is used, without the part at fault.
    Warning,
}

/// What went wrong. Each kind is one validation rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DiagnosticKind {
    /// A file could not be read.
    Unreadable,
    /// A file in `channels/` or `blocked-edges/` with an extension other than `.yaml`/`.yml`.
    InvalidExtension,
    /// A file in `channels/` or `blocked-edges/` without an extension.
    MissingExtension,
    /// Not valid YAML (or JSON), a value of the wrong type, or a required key missing.
    Syntax,
    /// A `from` regex that does not compile.
    InvalidRegex,
    /// A release name that is not SemVer (`to`, a channel version, a raw metadata key).
    InvalidVersion,
    /// A key this version does not know; ignored.
    UnknownKey,
    /// The `version` file names a schema this version cannot read.
    UnsupportedSchema,
    /// The `version` file names a newer minor schema: read, but newer features are ignored.
    NewerSchema,
    /// A file every graph-data has (`version`, `raw/metadata.json`, a channel) is missing.
    MissingFile,
    /// Two channel files declare the same channel name.
    DuplicateChannel,
    /// Two risk files declare the same risk name for the same target, which
    /// would list one update in two risk groups or with two risks of one name.
    DuplicateRisk,
    /// A channel lists a version that matches no release in the graph.
    UnmatchedChannelVersion,
    /// A release's metadata names a release that is not in the graph.
    UnknownRelease,
    /// An edge instruction would close a cycle; the edge is left out.
    Cycle,
    /// An entry under `signatures/` that is not `<algo>/<digest>/signature-<N>`
    /// (a regular file of at most 64 KiB); it is not published.
    MisplacedSignature,
    /// A `blocked-edges/` file named `.yml`: read (upstream reads both), but
    /// graph-data's CI accepts only `.yaml` there.
    YmlExtension,
    /// A risk `name` that is not a CamelCase string (`^[A-Z][A-Za-z0-9_]*$`):
    /// clusters use it as a condition's `reason`.
    InvalidRiskName,
    /// A risk `url` that is not `https://`.
    InvalidRiskUrl,
    /// A risk `message` that YAML reads as something other than a string
    /// (`42`, `yes`, `~`), as graph-data's CI reads YAML (1.1).
    InvalidRiskMessage,
    /// A matching rule graph-data's CI refuses: a type other than `Always`
    /// and `PromQL` (served as written, for newer clients), a type listed
    /// twice, or keys an `Always` or `PromQL` rule does not have.
    InvalidMatchingRule,
    /// A risk declared in a file whose name does not start with its `to`
    /// version (`blocked-edges/<to>-<Name>.yaml`).
    MisplacedRisk,
    /// Two files declare one risk name with different `url`, `message`,
    /// `matchingRules` (or any other key but `to`, `from` and `fixedIn`):
    /// clusters know a risk by its name.
    DivergentRisk,
    /// A channel whose `name` is not its file's name.
    ChannelNameMismatch,
    /// A channel lists one version twice (it is still a member once).
    DuplicateChannelVersion,
    /// A blocked edge whose `to` matches no release of the releases checked against.
    UnmatchedTarget,
    /// A blocked edge whose `from` regex matches no release of the releases
    /// checked against: it blocks nothing.
    UnmatchedFrom,
    /// A `phasedRollouts` rule whose `duration` is not a non-negative ISO
    /// 8601 duration.
    InvalidRolloutDuration,
    /// A version entry whose `start` is not an RFC 3339 time.
    InvalidRolloutStart,
    /// Two `phasedRollouts` rules of one channel for the same updates (the
    /// same `fromVersion`, or both without one).
    DuplicateRolloutCriterion,
    /// A `fromVersion` other than `patch` and `minor`: accepted, and matches
    /// no update.
    UnknownRolloutCriterion,
    /// A change that moves the window of a rollout under way (or brings a
    /// finished one back), without `locked: true` on the version entry:
    /// found only against the previous graph-data.
    MovedRollout,
}

impl DiagnosticKind {
    /// A stable name for logs, metrics and tests.
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticKind::Unreadable => "unreadable",
            DiagnosticKind::InvalidExtension => "invalid_extension",
            DiagnosticKind::MissingExtension => "missing_extension",
            DiagnosticKind::Syntax => "syntax",
            DiagnosticKind::InvalidRegex => "invalid_regex",
            DiagnosticKind::InvalidVersion => "invalid_version",
            DiagnosticKind::UnknownKey => "unknown_key",
            DiagnosticKind::UnsupportedSchema => "unsupported_schema",
            DiagnosticKind::NewerSchema => "newer_schema",
            DiagnosticKind::MissingFile => "missing_file",
            DiagnosticKind::DuplicateChannel => "duplicate_channel",
            DiagnosticKind::DuplicateRisk => "duplicate_risk",
            DiagnosticKind::UnmatchedChannelVersion => "unmatched_channel_version",
            DiagnosticKind::UnknownRelease => "unknown_release",
            DiagnosticKind::Cycle => "cycle",
            DiagnosticKind::MisplacedSignature => "misplaced_signature",
            DiagnosticKind::YmlExtension => "yml_extension",
            DiagnosticKind::InvalidRiskName => "invalid_risk_name",
            DiagnosticKind::InvalidRiskUrl => "invalid_risk_url",
            DiagnosticKind::InvalidRiskMessage => "invalid_risk_message",
            DiagnosticKind::InvalidMatchingRule => "invalid_matching_rule",
            DiagnosticKind::MisplacedRisk => "misplaced_risk",
            DiagnosticKind::DivergentRisk => "divergent_risk",
            DiagnosticKind::ChannelNameMismatch => "channel_name_mismatch",
            DiagnosticKind::DuplicateChannelVersion => "duplicate_channel_version",
            DiagnosticKind::UnmatchedTarget => "unmatched_target",
            DiagnosticKind::UnmatchedFrom => "unmatched_from",
            DiagnosticKind::InvalidRolloutDuration => "invalid_rollout_duration",
            DiagnosticKind::InvalidRolloutStart => "invalid_rollout_start",
            DiagnosticKind::DuplicateRolloutCriterion => "duplicate_rollout_criterion",
            DiagnosticKind::UnknownRolloutCriterion => "unknown_rollout_criterion",
            DiagnosticKind::MovedRollout => "moved_rollout",
        }
    }

    /// The upstream `disallowed_errors` value covering this kind, if any.
    /// Upstream files every parse failure of a file under `deserialize`.
    pub fn upstream_class(self) -> Option<UpstreamErrorClass> {
        match self {
            DiagnosticKind::Unreadable => Some(UpstreamErrorClass::File),
            DiagnosticKind::InvalidExtension => Some(UpstreamErrorClass::InvalidExtension),
            DiagnosticKind::MissingExtension => Some(UpstreamErrorClass::MissingExtension),
            DiagnosticKind::Syntax | DiagnosticKind::InvalidRegex | DiagnosticKind::InvalidVersion => {
                Some(UpstreamErrorClass::Deserialize)
            }
            _ => None,
        }
    }

    /// The severity of kinds that `disallowed_errors` does not govern.
    fn fixed_severity(self) -> Severity {
        match self {
            DiagnosticKind::UnsupportedSchema
            | DiagnosticKind::MissingFile
            | DiagnosticKind::DuplicateChannel
            | DiagnosticKind::DuplicateRisk
            | DiagnosticKind::InvalidRolloutDuration
            | DiagnosticKind::InvalidRolloutStart
            | DiagnosticKind::DuplicateRolloutCriterion
            | DiagnosticKind::MovedRollout => Severity::Error,
            _ => Severity::Warning,
        }
    }

    /// Whether [`Strictness::pre_merge`] refuses this kind, which the
    /// graph-builder only warns about. Graph-data's CI refuses the risk and
    /// file-name rules of `hack/validate-blocked-edges.py`, and (against the
    /// registry's releases) a channel version or blocked-edge target that is
    /// not released. No validator there checks a channel's file name, a
    /// version listed twice or a `from` that matches nothing, but each is a
    /// slip that changes (or was meant to change) what clusters see: a
    /// channel renamed, a version meant and not listed, an update not
    /// blocked. A `fromVersion` no reader knows is most likely a typo that
    /// rolls updates out at once.
    fn refused_before_merge(self) -> bool {
        matches!(
            self,
            DiagnosticKind::YmlExtension
                | DiagnosticKind::InvalidRiskName
                | DiagnosticKind::InvalidRiskUrl
                | DiagnosticKind::InvalidRiskMessage
                | DiagnosticKind::InvalidMatchingRule
                | DiagnosticKind::MisplacedRisk
                | DiagnosticKind::DivergentRisk
                | DiagnosticKind::ChannelNameMismatch
                | DiagnosticKind::DuplicateChannelVersion
                | DiagnosticKind::UnmatchedChannelVersion
                | DiagnosticKind::UnmatchedTarget
                | DiagnosticKind::UnmatchedFrom
                | DiagnosticKind::UnknownRolloutCriterion
        )
    }
}

/// The values of upstream's `disallowed_errors` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UpstreamErrorClass {
    File,
    InvalidExtension,
    MissingExtension,
    Deserialize,
}

/// Which problems refuse new graph-data.
///
/// `disallowed_errors` names the upstream classes that refuse. Upstream's
/// default is none (a broken blocked-edge file is skipped, silently
/// unblocking its edges); ours is `file` and `deserialize`, because a file
/// that cannot be read or parsed loses a block or a channel. Setting
/// `disallowed_errors` explicitly (even to `[]`) restores full control.
///
/// [`Strictness::pre_merge`] is for a change before it merges, not for a
/// graph-builder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Strictness {
    disallowed: BTreeSet<UpstreamErrorClass>,
    pre_merge: bool,
}

impl Default for Strictness {
    fn default() -> Self {
        Self {
            disallowed: BTreeSet::from([UpstreamErrorClass::File, UpstreamErrorClass::Deserialize]),
            pre_merge: false,
        }
    }
}

impl Strictness {
    /// Exactly these upstream classes refuse graph-data.
    pub fn disallowing(classes: impl IntoIterator<Item = UpstreamErrorClass>) -> Self {
        Self {
            disallowed: classes.into_iter().collect(),
            pre_merge: false,
        }
    }

    /// What a graph-data change must pass before it merges (`cincinnati
    /// graph-data check`): every upstream class refuses, as graph-data's CI
    /// loads it, and so does every kind graph-data's CI refuses or that
    /// silently changes what clusters see (see the module's documentation).
    pub fn pre_merge() -> Self {
        Self {
            disallowed: BTreeSet::from([
                UpstreamErrorClass::File,
                UpstreamErrorClass::InvalidExtension,
                UpstreamErrorClass::MissingExtension,
                UpstreamErrorClass::Deserialize,
            ]),
            pre_merge: true,
        }
    }

    pub fn severity(&self, kind: DiagnosticKind) -> Severity {
        if self.pre_merge && kind.refused_before_merge() {
            return Severity::Error;
        }
        match kind.upstream_class() {
            Some(class) if self.disallowed.contains(&class) => Severity::Error,
            Some(_) => Severity::Warning,
            None => kind.fixed_severity(),
        }
    }
}

impl Diagnostic {
    /// A problem found while applying graph-data to releases: too late to
    /// refuse the graph-data, and never worth refusing the graph.
    pub(crate) fn warning(location: Location, kind: DiagnosticKind, message: impl Into<String>) -> Self {
        Self {
            location,
            kind,
            severity: Severity::Warning,
            message: message.into(),
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl Location {
    pub fn file(path: impl Into<String>, line: Option<u64>) -> Self {
        Location::File {
            path: path.into(),
            line,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File {
                path,
                line: Some(line),
            } => write!(f, "{path}:{line}"),
            Location::File { path, line: None } => f.write_str(path),
            Location::GraphData => f.write_str("graph-data"),
            Location::Release(version) => write!(f, "release {version}"),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(
            f,
            "{}: {severity}[{}]: {}",
            self.location,
            self.kind.as_str(),
            self.message
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_strictness_refuses_lost_files_but_not_stray_ones() {
        let strictness = Strictness::default();
        assert_eq!(strictness.severity(DiagnosticKind::Syntax), Severity::Error);
        assert_eq!(strictness.severity(DiagnosticKind::InvalidRegex), Severity::Error);
        assert_eq!(strictness.severity(DiagnosticKind::Unreadable), Severity::Error);
        assert_eq!(
            strictness.severity(DiagnosticKind::MissingExtension),
            Severity::Warning
        );
        assert_eq!(strictness.severity(DiagnosticKind::UnknownKey), Severity::Warning);
        assert_eq!(
            strictness.severity(DiagnosticKind::DuplicateChannel),
            Severity::Error
        );
    }

    #[test]
    fn disallowed_errors_governs_only_upstream_classes() {
        let lenient = Strictness::disallowing([]);
        assert_eq!(lenient.severity(DiagnosticKind::Syntax), Severity::Warning);
        assert_eq!(
            lenient.severity(DiagnosticKind::UnsupportedSchema),
            Severity::Error
        );

        let strict = Strictness::disallowing([UpstreamErrorClass::MissingExtension]);
        assert_eq!(strict.severity(DiagnosticKind::MissingExtension), Severity::Error);
        assert_eq!(
            strict.severity(DiagnosticKind::InvalidExtension),
            Severity::Warning
        );
    }

    #[test]
    fn before_a_merge_what_graph_data_ci_refuses_refuses_too() {
        let pre_merge = Strictness::pre_merge();
        let graph_builder = Strictness::default();
        for kind in [
            DiagnosticKind::InvalidRiskName,
            DiagnosticKind::MisplacedRisk,
            DiagnosticKind::ChannelNameMismatch,
            DiagnosticKind::UnmatchedTarget,
            DiagnosticKind::MissingExtension,
        ] {
            assert_eq!(pre_merge.severity(kind), Severity::Error, "{kind:?}");
            assert_eq!(graph_builder.severity(kind), Severity::Warning, "{kind:?}");
        }
        for kind in [DiagnosticKind::UnknownKey, DiagnosticKind::NewerSchema] {
            assert_eq!(pre_merge.severity(kind), Severity::Warning, "{kind:?}");
        }
    }

    #[test]
    fn diagnostics_read_like_compiler_messages() {
        let diagnostic = Diagnostic {
            location: Location::file("blocked-edges/4.1.1.yaml", Some(2)),
            kind: DiagnosticKind::InvalidRegex,
            severity: Severity::Error,
            message: "`from` does not compile".into(),
        };
        assert_eq!(
            diagnostic.to_string(),
            "blocked-edges/4.1.1.yaml:2: error[invalid_regex]: `from` does not compile"
        );
    }
}
