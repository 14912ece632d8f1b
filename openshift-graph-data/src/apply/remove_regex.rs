//! `previous.remove_regex`: one regex per target release, written by the
//! graph-data step and read by the edge step.
//!
//! Upstream overwrote the value for every unconditional blocked-edges file,
//! so of two files for one release only the last counted. Here every rule
//! for a release is combined, keeping what was already there.

use std::collections::HashMap;

use cincinnati_core::ReleaseId;
use regex::Regex;

use super::from_matches::FromMatches;
use crate::model::FromPattern;

/// One regex matching what any of `patterns` matches. Each alternative is
/// grouped, so that inline flags such as `(?i)` stay within their pattern.
pub(crate) fn combine<'a>(patterns: impl IntoIterator<Item = &'a str>) -> String {
    let patterns: Vec<&str> = patterns.into_iter().collect();
    match patterns.as_slice() {
        [single] => (*single).to_owned(),
        many => many
            .iter()
            .map(|pattern| format!("(?:{pattern})"))
            .collect::<Vec<_>>()
            .join("|"),
    }
}

/// Decides which parents a `previous.remove_regex` removes.
pub(crate) enum ParentMatcher<'a> {
    /// The value is exactly what graph-data wrote: its regexes were compiled
    /// once, when the graph-data was loaded, and their matches are shared.
    AnyOf(Vec<&'a FromPattern>),
    Compiled(Regex),
}

impl<'a> ParentMatcher<'a> {
    pub fn is_match(&self, parent: ReleaseId, matches: &mut FromMatches<'a>) -> bool {
        match self {
            ParentMatcher::AnyOf(patterns) => {
                patterns.iter().any(|pattern| matches.is_match(pattern, parent))
            }
            ParentMatcher::Compiled(regex) => regex.is_match(matches.name(parent)),
        }
    }
}

/// Regexes from metadata that graph-data did not write, compiled once per run.
#[derive(Default)]
pub(crate) struct RegexCache(HashMap<String, Regex>);

impl RegexCache {
    pub fn compile(&mut self, pattern: &str) -> Result<Regex, regex::Error> {
        if let Some(regex) = self.0.get(pattern) {
            return Ok(regex.clone());
        }
        let regex = Regex::new(pattern)?;
        self.0.insert(pattern.to_owned(), regex.clone());
        Ok(regex)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pattern_stays_as_written() {
        assert_eq!(combine([".*"]), ".*");
    }

    #[test]
    fn combined_patterns_match_what_any_matches() {
        let combined = Regex::new(&combine(["^4\\.1\\.0[+]", "(?i)X"])).unwrap();
        assert!(combined.is_match("4.1.0+amd64"));
        assert!(combined.is_match("4.2.0-x+amd64"));
        assert!(!combined.is_match("4.2.0+amd64"));
        assert!(
            !Regex::new(&combine(["a", "(?i)b"])).unwrap().is_match("A"),
            "flags stay in their group"
        );
    }
}
