//! The client's query, parsed and validated at the door: handlers and
//! filters get typed values, never a string map.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, OnceLock};

use cincinnati_core::ApiError;
use http_answers::query::{QueryParameters, RequiredParameters};
use rollout_model::{ClusterId, Placed};

/// The architecture of requests without `arch`, unless the arch filter's
/// `default_arch` says otherwise (upstream's default).
pub const DEFAULT_ARCH: &str = "amd64";

/// A channel name: `^[0-9a-z\-\.]+$` (note that `+` in a URL decodes to a
/// space, so `fast-4+9` is invalid). Shared: a request's channel is part of
/// the keys its answer is looked up by, cloned without copying.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Channel(Arc<str>);

/// An architecture: `^[0-9a-z]+$` (`amd64`, `s390x`, `multi`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Arch(Arc<str>);

impl Channel {
    pub const PATTERN: &'static str = r"^[0-9a-z\-\.]+$";

    pub fn parse(raw: &str) -> Result<Self, ApiError> {
        let valid = !raw.is_empty()
            && raw.bytes().all(|byte| {
                byte.is_ascii_digit() || byte.is_ascii_lowercase() || byte == b'-' || byte == b'.'
            });
        valid
            .then(|| Self(Arc::from(raw)))
            .ok_or_else(|| ApiError::invalid_param("channel", raw, Self::PATTERN))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Arch {
    pub const PATTERN: &'static str = r"^[0-9a-z]+$";

    pub fn parse(raw: &str) -> Result<Self, ApiError> {
        let valid = !raw.is_empty()
            && raw
                .bytes()
                .all(|byte| byte.is_ascii_digit() || byte.is_ascii_lowercase());
        valid
            .then(|| Self(Arc::from(raw)))
            .ok_or_else(|| ApiError::invalid_param("arch", raw, Self::PATTERN))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a request asks for. `version` and `id` are accepted and passed on
/// to an engine upstream when configured, but no filter reads them (nor did
/// upstream's). Unknown parameters are ignored.
#[derive(Debug, Clone)]
pub struct ClientQuery {
    pub channel: Option<Channel>,
    /// `None`: the arch filter's default (`amd64` unless configured).
    pub arch: Option<Arch>,
    pub version: Option<String>,
    pub id: Option<String>,
    /// Parameters this engine forwards to an engine upstream, by name.
    pub forwarded: BTreeMap<String, String>,
    /// The cluster `id` names, hashed to its place when first asked: its
    /// policy class and its recorded check both need it.
    cluster: OnceLock<Option<Placed>>,
}

/// Which parameters a request must carry and which it forwards upstream.
#[derive(Debug, Clone)]
pub struct QueryRules {
    /// Configured mandatory parameters plus those the filters require.
    pub required: RequiredParameters,
    /// Parameters forwarded to an engine upstream besides `channel` and `arch`.
    pub forwarded: BTreeSet<String>,
    /// Whether answers differ per `version` (`version-prune` runs).
    pub keyed_by_version: bool,
    /// The architecture of requests without `arch`: the arch filter's
    /// `default_arch`, which every filter and the explorer use.
    pub default_arch: Arch,
}

impl Default for QueryRules {
    fn default() -> Self {
        Self {
            required: RequiredParameters::default(),
            forwarded: BTreeSet::new(),
            keyed_by_version: false,
            default_arch: Arch(Arc::from(DEFAULT_ARCH)),
        }
    }
}

impl ClientQuery {
    /// Parses a raw query string. With repeated parameters the last wins,
    /// as upstream. Errors: `missing_params` naming every missing required
    /// parameter, then `invalid_params` for the first invalid value.
    pub fn parse(query_string: &str, rules: &QueryRules) -> Result<Self, ApiError> {
        Self::from_parameters(&QueryParameters::parse(query_string), rules)
    }

    /// The query of `parameters`, parsed from a request's query string.
    pub fn from_parameters(parameters: &QueryParameters<'_>, rules: &QueryRules) -> Result<Self, ApiError> {
        rules.required.check(parameters)?;
        let channel = parameters.get("channel").map(Channel::parse).transpose()?;
        let arch = parameters.get("arch").map(Arch::parse).transpose()?;
        let forwarded = rules
            .forwarded
            .iter()
            .filter_map(|name| Some((name.clone(), parameters.get(name)?.to_owned())))
            .collect();
        Ok(Self {
            channel,
            arch,
            version: parameters.get("version").map(str::to_owned),
            id: parameters.get("id").map(str::to_owned),
            forwarded,
            cluster: OnceLock::new(),
        })
    }

    /// The cluster `id` names with its place; `None` without an id or
    /// with one that is not a UUID.
    pub fn cluster(&self) -> Option<Placed> {
        *self.cluster.get_or_init(|| {
            self.id
                .as_deref()
                .and_then(ClusterId::parse)
                .map(ClusterId::placed)
        })
    }
}

#[cfg(test)]
mod tests {
    use cincinnati_core::ErrorKind;

    use super::*;

    fn rules(required: &[&str], forwarded: &[&str]) -> QueryRules {
        QueryRules {
            required: RequiredParameters::new(required.iter().map(|name| name.to_string())),
            forwarded: forwarded.iter().map(|name| name.to_string()).collect(),
            ..QueryRules::default()
        }
    }

    #[test]
    fn channel_and_arch_follow_upstream_patterns() {
        assert!(Channel::parse("stable-4.18").is_ok());
        assert!(Channel::parse("a").is_ok());
        for bad in ["", "fast-4 9", "Stable-4.18", "stable_4.18", "fast-4+9"] {
            assert_eq!(
                Channel::parse(bad).unwrap_err().kind,
                ErrorKind::InvalidParams,
                "{bad}"
            );
        }
        assert!(Arch::parse("multi").is_ok());
        assert!(Arch::parse("s390x").is_ok());
        for bad in ["", "x86-64", "AMD64", "amd64 "] {
            assert_eq!(
                Arch::parse(bad).unwrap_err().kind,
                ErrorKind::InvalidParams,
                "{bad}"
            );
        }
        assert_eq!(
            Arch::parse("x86-64").unwrap_err().value,
            "invalid client parameters: arch 'x86-64' does not match regex '^[0-9a-z]+$'"
        );
    }

    #[test]
    fn parses_known_parameters_and_ignores_the_rest() {
        let query = ClientQuery::parse(
            "channel=stable-4.18&arch=s390x&version=4.18.1&id=abc&unknown=1",
            &rules(&["channel"], &[]),
        )
        .unwrap();
        assert_eq!(query.channel.unwrap().as_str(), "stable-4.18");
        assert_eq!(query.arch.unwrap().as_str(), "s390x");
        assert_eq!(query.version.as_deref(), Some("4.18.1"));
        assert_eq!(query.id.as_deref(), Some("abc"));
        assert!(query.forwarded.is_empty());
    }

    #[test]
    fn the_last_repeated_parameter_wins() {
        let query = ClientQuery::parse("channel=a&channel=b", &rules(&[], &[])).unwrap();
        assert_eq!(query.channel.unwrap().as_str(), "b");
    }

    #[test]
    fn missing_parameters_are_all_named_before_validation() {
        let error = ClientQuery::parse("arch=BAD", &rules(&["version", "channel"], &[])).unwrap_err();
        assert_eq!(error, ApiError::missing_params(&["channel", "version"]));
        // Presence is what counts, as upstream: an empty value is present.
        let error = ClientQuery::parse("channel=", &rules(&["channel"], &[])).unwrap_err();
        assert_eq!(error.kind, ErrorKind::InvalidParams);
    }

    #[test]
    fn a_plus_decodes_to_a_space_and_is_invalid() {
        let error = ClientQuery::parse("channel=fast-4+9", &rules(&[], &[])).unwrap_err();
        assert_eq!(
            error.value,
            r"invalid client parameters: channel 'fast-4 9' does not match regex '^[0-9a-z\-\.]+$'"
        );
    }
}
