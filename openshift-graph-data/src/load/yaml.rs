//! YAML documents with line numbers: typed values through serde, and the
//! top-level keys, so that unknown keys can be reported where they are.

use std::fmt;

use serde::de::{DeserializeOwned, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
pub(crate) use serde_saphyr::Spanned;

/// A YAML document that could not be read as expected.
#[derive(Debug)]
pub(crate) struct YamlError {
    pub line: Option<u64>,
    pub message: String,
}

pub(crate) fn parse<T: DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    serde_saphyr::from_str(text).map_err(|error| YamlError {
        line: error.location().map(|location| location.line()),
        message: error.without_snippet().to_string(),
    })
}

/// The keys of a top-level mapping, in document order.
pub(crate) fn top_level_keys(text: &str) -> Result<Vec<Spanned<String>>, YamlError> {
    parse::<TopLevelKeys>(text).map(|keys| keys.0)
}

/// Whether every top-level key of a block-style document is one of
/// `known`, as far as a glance at each line can tell: `false` means "not
/// sure", and the document's keys are then read properly. Parsing a
/// document a second time for its keys was a third of loading graph-data.
pub(crate) fn only_known_keys(text: &str, known: &[&str]) -> bool {
    text.lines().all(|line| {
        let glance = line.trim_end();
        if glance.is_empty() || glance.starts_with(['#', ' ', '-']) {
            // A comment, something nested, or an item of a top-level key's list.
            return glance != "---";
        }
        let Some((key, rest)) = glance.split_once(':') else {
            return false;
        };
        let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        plain && (rest.is_empty() || rest.starts_with(' ')) && known.contains(&key)
    })
}

/// The line a value was written on.
pub(crate) fn line_of<T>(spanned: &Spanned<T>) -> u64 {
    spanned.referenced.line()
}

struct TopLevelKeys(Vec<Spanned<String>>);

impl<'de> Deserialize<'de> for TopLevelKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeysVisitor;

        impl<'de> Visitor<'de> for KeysVisitor {
            type Value = TopLevelKeys;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopLevelKeys, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(TopLevelKeys(keys))
            }
        }

        deserializer.deserialize_map(KeysVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_with_their_lines() {
        let keys = top_level_keys("# comment\nname: a\nfeeder:\n  name: b\nversions: []\n").unwrap();
        let found: Vec<_> = keys
            .iter()
            .map(|key| (key.value.as_str(), line_of(key)))
            .collect();
        assert_eq!(found, [("name", 2), ("feeder", 3), ("versions", 5)]);
    }

    #[test]
    fn a_glance_vouches_only_for_plain_known_keys() {
        let known = ["to", "from", "name"];
        assert!(only_known_keys(
            "to: 4.1.1\nfrom: .*\n# why\nname:\n  - a\n- b\n",
            &known
        ));
        for unsure in [
            "to: 4.1.1\nowner: x\n",
            "\"to\": 4.1.1\n",
            "{to: 4.1.1, owner: x}\n",
            "to: 4.1.1\n---\nowner: x\n",
            "to:4.1.1\n",
            "? to\n: 4.1.1\n",
        ] {
            assert!(!only_known_keys(unsure, &known), "{unsure:?}");
        }
    }

    #[test]
    fn errors_name_the_line() {
        let error = parse::<Vec<String>>("- a\n- [b\n").unwrap_err();
        assert_eq!(error.line, Some(2), "{}", error.message);
    }
}
