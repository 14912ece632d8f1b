//! The configurable path prefix in front of every API route.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A path prefix with exactly one leading slash and no trailing slash, or
/// empty for "no prefix": `a/b/` and `//a/b//` both become `/a/b`, as upstream
/// normalises `--service.path_prefix`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathPrefix(String);

impl PathPrefix {
    pub fn parse(raw: &str) -> Self {
        let trimmed = raw.trim().trim_matches('/');
        if trimmed.is_empty() {
            Self(String::new())
        } else {
            Self(format!("/{trimmed}"))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `path` (which starts with `/`) under this prefix.
    pub fn join(&self, path: &str) -> String {
        format!("{}{path}", self.0)
    }
}

impl fmt::Display for PathPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for PathPrefix {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for PathPrefix {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|raw| Self::parse(&raw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_slashes_like_upstream() {
        for raw in ["a/b/", "//a/b//", "/a/b", "a/b"] {
            assert_eq!(PathPrefix::parse(raw).as_str(), "/a/b", "{raw}");
        }
    }

    #[test]
    fn empty_and_root_mean_no_prefix() {
        for raw in ["", "/", "//"] {
            assert_eq!(PathPrefix::parse(raw).join("/graph"), "/graph", "{raw:?}");
        }
    }

    #[test]
    fn joins_routes_under_the_prefix() {
        assert_eq!(
            PathPrefix::parse("api/upgrades_info/").join("/v1/graph"),
            "/api/upgrades_info/v1/graph"
        );
    }
}
