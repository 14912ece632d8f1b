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
            | DiagnosticKind::DuplicateRisk => Severity::Error,
            _ => Severity::Warning,
        }
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Strictness {
    disallowed: BTreeSet<UpstreamErrorClass>,
}

impl Default for Strictness {
    fn default() -> Self {
        Self {
            disallowed: BTreeSet::from([UpstreamErrorClass::File, UpstreamErrorClass::Deserialize]),
        }
    }
}

impl Strictness {
    /// Exactly these upstream classes refuse graph-data.
    pub fn disallowing(classes: impl IntoIterator<Item = UpstreamErrorClass>) -> Self {
        Self {
            disallowed: classes.into_iter().collect(),
        }
    }

    pub fn severity(&self, kind: DiagnosticKind) -> Severity {
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
