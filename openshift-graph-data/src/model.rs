//! Graph-data as typed values: what was declared, validated, with where.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use cincinnati_core::release::without_build;
use cincinnati_core::{Risk, Version};
use jiff::{Span, Timestamp};
use regex::Regex;
use regex_automata::meta;

use crate::files::Revision;
use crate::phased::{PhasedRollout, PhasedWindow, RolloutDurations};

/// A loaded, validated graph-data. The graph-builder keeps one per revision
/// (regexes compiled, releases indexed) and applies it to every release set
/// it builds until a newer revision loads. It keeps no file content: the
/// files it was loaded from (signatures included) are published from
/// [`GraphDataFiles`](crate::GraphDataFiles), by [`write_tar_gz`](crate::write_tar_gz).
#[derive(Clone)]
pub struct GraphData {
    pub(crate) schema_version: Version,
    pub(crate) raw_metadata: Vec<RawMetadata>,
    pub(crate) channels: Vec<Channel>,
    pub(crate) blocks: Vec<Block>,
    pub(crate) risks: Vec<RiskDeclaration>,
    pub(crate) revision: Revision,
    /// Every release named by a block or a risk (build removed) → those
    /// rules, blocks first, each in file order.
    pub(crate) removals_by_release: HashMap<Version, Vec<RuleRef>>,
}

/// A summary: graph-data is megabytes of YAML.
impl fmt::Debug for GraphData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GraphData")
            .field("revision", &self.revision)
            .field("schema_version", &self.schema_version)
            .field("channels", &self.channels.len())
            .field("blocks", &self.blocks.len())
            .field("risks", &self.risks.len())
            .field("raw_metadata", &self.raw_metadata.len())
            .finish()
    }
}

/// Where a declaration is: file and 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Origin {
    pub path: String,
    pub line: u64,
}

/// A release as graph-data names it: `4.16.3` for every architecture, or
/// `4.16.3+amd64` for one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReleaseName {
    /// The version without build metadata.
    pub release: Version,
    /// The one architecture meant, if any.
    pub arch: Option<String>,
}

/// A `from` regex: unanchored, matched against arch-suffixed versions.
#[derive(Clone)]
pub struct FromPattern {
    pub text: String,
    regex: meta::Regex,
}

/// The pattern as written: the compiled engine's own `Debug` is pages long.
impl fmt::Debug for FromPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("FromPattern").field(&self.text).finish()
    }
}

impl FromPattern {
    /// Compiles `text` with the regex crate's syntax and semantics, as
    /// upstream does, but with only the engines a yes/no match uses: the
    /// full DFAs and capture engines the regex crate also builds were most
    /// of the cost of loading graph-data, and a match against a version
    /// string never needs them. Errors are worded as the regex crate words
    /// them.
    pub fn compile(text: &str) -> Result<Self, String> {
        let config = meta::Config::new().dfa(false).onepass(false).backtrack(false);
        match meta::Regex::builder().configure(config).build(text) {
            Ok(regex) => Ok(Self {
                text: text.to_owned(),
                regex,
            }),
            Err(_) => Err(Regex::new(text).err().map_or_else(
                || format!("{text:?} cannot be compiled"),
                |error| error.to_string(),
            )),
        }
    }

    /// Whether `version` (arch-suffixed, as in the graph) matches.
    pub fn is_match(&self, version: &str) -> bool {
        self.regex.is_match(version)
    }
}

/// `raw/metadata.json`: metadata to set (or append to) on a release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawMetadata {
    pub release: ReleaseName,
    pub entries: BTreeMap<String, String>,
}

/// `channels/<name>.yaml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channel {
    pub name: String,
    pub versions: Vec<ChannelVersion>,
    pub origin: Origin,
    /// `phasedRollouts` (schema 2.0.0), in file order, no criterion twice;
    /// empty for a channel that does not phase.
    pub phased_rollouts: Vec<PhasedRollout>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelVersion {
    pub name: ReleaseName,
    pub line: u64,
    /// When the release enters the channel and its updates' rollouts start
    /// (schema 2.0.0); `None`: in the channel from the start, not phased.
    pub start: Option<Timestamp>,
    /// `locked: true`: a change to this entry's rollout while it is under
    /// way is deliberate (see [`crate::phased::moved_rollouts`]).
    pub locked: bool,
}

impl Channel {
    /// How long the rollout of the update `from → to` takes in this channel:
    /// the rule for its kind of update (`fromVersion`), else the default,
    /// else zero.
    pub fn phased_duration(&self, from: &Version, to: &Version) -> Span {
        RolloutDurations::of(&self.phased_rollouts).for_update(from, to)
    }

    /// The entry listing the release `version` (arch-suffixed, as in the
    /// graph), if this channel lists it.
    pub fn entry_for(&self, version: &Version) -> Option<&ChannelVersion> {
        self.versions.iter().find(|entry| entry.name.matches(version))
    }

    /// The window of the update `from → to` in this channel, when `to` is
    /// listed with a `start`.
    pub fn phased_window(&self, from: &Version, to: &Version) -> Option<PhasedWindow> {
        let rollout = self.rollout_of(self.entry_for(to)?)?;
        Some(rollout.window(from, to))
    }
}

/// A blocked-edges file without risk: updates into `to` from releases
/// matching `from` are removed.
#[derive(Debug, Clone)]
pub struct Block {
    pub to: ReleaseName,
    pub from: FromPattern,
    /// Where the file declares it, at the line of `to`.
    pub origin: Origin,
    /// The line of `from`.
    pub from_line: u64,
}

/// A blocked-edges file with a risk: updates into `to` from releases
/// matching `from` become conditional, carrying the risk.
#[derive(Debug, Clone)]
pub struct RiskDeclaration {
    pub to: ReleaseName,
    pub from: FromPattern,
    pub risk: Risk,
    /// Where the file declares it, at the line of `to`.
    pub origin: Origin,
    /// The line of `from`.
    pub from_line: u64,
}

impl ReleaseName {
    /// A release named in a channel: build metadata, when given, is the architecture.
    pub fn parse(text: &str) -> Result<Self, semver::Error> {
        let version = Version::parse(text.trim())?;
        let arch = (!version.build.is_empty()).then(|| version.build.to_string());
        Ok(Self {
            release: without_build(&version),
            arch,
        })
    }

    /// A blocked-edge target. Like [`ReleaseName::parse`], plus the legacy
    /// quirk: a pre-release of exactly `s390x` (`4.2.11-s390x`) names the
    /// s390x build of that pre-release, from before `+arch` existed.
    pub fn parse_target(text: &str) -> Result<Self, semver::Error> {
        let mut name = Self::parse(text)?;
        if name.arch.is_none() && name.release.pre.as_str() == "s390x" {
            name.arch = Some("s390x".to_owned());
        }
        Ok(name)
    }

    /// Whether `version` (arch-suffixed, as in the graph) is this release.
    pub fn matches(&self, version: &Version) -> bool {
        cincinnati_core::release::same_release(&self.release, version)
            && self
                .arch
                .as_deref()
                .is_none_or(|arch| version.build.as_str() == arch)
    }
}

impl fmt::Display for ReleaseName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.arch {
            Some(arch) if self.release.pre.as_str() != arch => write!(f, "{}+{arch}", self.release),
            _ => write!(f, "{}", self.release),
        }
    }
}

impl PartialEq for FromPattern {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for FromPattern {}

/// A block or a risk, by position.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RuleRef {
    Block(usize),
    Risk(usize),
}

/// A blocked-edges file: it removes updates into a release, outright or
/// to make them conditional.
#[derive(Debug, Clone, Copy)]
pub enum Declaration<'a> {
    Block(&'a Block),
    Risk(&'a RiskDeclaration),
}

impl<'a> Declaration<'a> {
    pub fn to(self) -> &'a ReleaseName {
        match self {
            Declaration::Block(block) => &block.to,
            Declaration::Risk(risk) => &risk.to,
        }
    }

    pub fn from(self) -> &'a FromPattern {
        match self {
            Declaration::Block(block) => &block.from,
            Declaration::Risk(risk) => &risk.from,
        }
    }

    pub fn origin(self) -> &'a Origin {
        match self {
            Declaration::Block(block) => &block.origin,
            Declaration::Risk(risk) => &risk.origin,
        }
    }

    /// The line of `from`, in the file of [`Declaration::origin`].
    pub fn from_line(self) -> u64 {
        match self {
            Declaration::Block(block) => block.from_line,
            Declaration::Risk(risk) => risk.from_line,
        }
    }
}

impl GraphData {
    /// The schema version the `version` file declares.
    pub fn schema_version(&self) -> &Version {
        &self.schema_version
    }

    pub fn revision(&self) -> &Revision {
        &self.revision
    }

    pub fn raw_metadata(&self) -> &[RawMetadata] {
        &self.raw_metadata
    }

    /// Channels in name order.
    pub fn channels(&self) -> &[Channel] {
        &self.channels
    }

    /// Unconditional blocks in file order.
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// Risks in file order.
    pub fn risks(&self) -> &[RiskDeclaration] {
        &self.risks
    }

    /// The declarations removing updates into the release `version`
    /// (arch-suffixed): blocks then risks, each in file order, as upstream
    /// applies them.
    pub fn declarations_into(&self, version: &Version) -> impl Iterator<Item = Declaration<'_>> {
        let rules = self
            .removals_by_release
            .get(&without_build(version))
            .map(Vec::as_slice)
            .unwrap_or_default();
        rules
            .iter()
            .map(|&rule| self.declaration(rule))
            .filter(move |declaration| declaration.to().matches(version))
    }

    /// The declarations removing the update `from → to` (arch-suffixed
    /// versions, as in the full graph), in the order they are applied.
    pub fn declarations_for(&self, from: &Version, to: &Version) -> impl Iterator<Item = Declaration<'_>> {
        let from = from.to_string();
        self.declarations_into(to)
            .filter(move |declaration| declaration.from().is_match(&from))
    }

    fn declaration(&self, rule: RuleRef) -> Declaration<'_> {
        match rule {
            RuleRef::Block(index) => Declaration::Block(&self.blocks[index]),
            RuleRef::Risk(index) => Declaration::Risk(&self.risks[index]),
        }
    }

    pub(crate) fn index_removals(&mut self) {
        let blocks = self
            .blocks
            .iter()
            .enumerate()
            .map(|(index, block)| (&block.to, RuleRef::Block(index)));
        let risks = self
            .risks
            .iter()
            .enumerate()
            .map(|(index, risk)| (&risk.to, RuleRef::Risk(index)));
        let mut by_release: HashMap<Version, Vec<RuleRef>> = HashMap::new();
        for (to, rule) in blocks.chain(risks) {
            by_release.entry(to.release.clone()).or_default().push(rule);
        }
        self.removals_by_release = by_release;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn a_from_pattern_matches_as_the_regex_crate_does_and_is_refused_in_its_words() {
        let pattern = FromPattern::compile("4[.]1[0-4][.].*").unwrap();
        assert!(pattern.is_match("4.12.3+amd64"));
        assert!(!pattern.is_match("4.15.0+amd64"));
        assert!(
            FromPattern::compile(r"(?i)^4\.16\.3[+]AMD64$")
                .unwrap()
                .is_match("4.16.3+amd64")
        );
        for refused in ["4[.", "(?P<x", "a{2,1}", r"\w{1000}{1000}"] {
            let expected = Regex::new(refused).unwrap_err().to_string();
            assert_eq!(FromPattern::compile(refused).unwrap_err(), expected);
        }
    }

    #[test]
    fn a_name_without_arch_matches_every_arch() {
        let name = ReleaseName::parse("4.2.14").unwrap();
        assert!(name.matches(&v("4.2.14+amd64")));
        assert!(name.matches(&v("4.2.14+s390x")));
        assert!(!name.matches(&v("4.2.14-rc.1+amd64")));
    }

    #[test]
    fn a_name_with_arch_matches_that_arch_only() {
        let name = ReleaseName::parse("4.2.14+amd64").unwrap();
        assert!(name.matches(&v("4.2.14+amd64")));
        assert!(!name.matches(&v("4.2.14+s390x")));
        assert_eq!(name.to_string(), "4.2.14+amd64");
    }

    #[test]
    fn legacy_s390x_prerelease_names_the_s390x_build() {
        let target = ReleaseName::parse_target("4.2.11-s390x").unwrap();
        assert!(target.matches(&v("4.2.11-s390x+s390x")));
        assert!(!target.matches(&v("4.2.11-s390x+amd64")));
        assert_eq!(target.to_string(), "4.2.11-s390x");

        let channel_name = ReleaseName::parse("4.2.11-s390x").unwrap();
        assert!(
            channel_name.matches(&v("4.2.11-s390x+amd64")),
            "the quirk is for targets only"
        );
    }
}
