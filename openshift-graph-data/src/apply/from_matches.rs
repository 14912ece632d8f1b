//! `from` regexes matched against the graph's releases, each pair once.
//!
//! Graph-data repeats a few patterns (`.*`, `4[.]13[.].*`) across hundreds
//! of files, and updates into neighbouring releases share most of their
//! sources: risks, then removals, ask about the same (pattern, release)
//! pairs again and again. Matching was most of applying graph-data.

use cincinnati_core::{Graph, ReleaseId};

use crate::model::FromPattern;

pub(crate) struct FromMatches<'p> {
    /// Every release's version as text, as `from` regexes see it
    /// (`4.16.3+amd64`), by release index.
    names: Vec<String>,
    /// Per pattern, per release index: matched, not matched, or not asked yet.
    known: foldhash::HashMap<&'p str, Vec<Option<bool>>>,
}

impl<'p> FromMatches<'p> {
    pub fn of(graph: &Graph) -> Self {
        let mut names = vec![String::new(); graph.release_bound()];
        for (id, release) in graph.releases() {
            names[id.index()] = release.version.to_string();
        }
        Self {
            names,
            known: foldhash::HashMap::default(),
        }
    }

    /// Whether `pattern` matches the release `id`.
    pub fn is_match(&mut self, pattern: &'p FromPattern, id: ReleaseId) -> bool {
        let names = &self.names;
        let known = self
            .known
            .entry(&pattern.text)
            .or_insert_with(|| vec![None; names.len()]);
        *known[id.index()].get_or_insert_with(|| pattern.is_match(&names[id.index()]))
    }

    /// The version text of `id`, for regexes not worth remembering.
    pub fn name(&self, id: ReleaseId) -> &str {
        &self.names[id.index()]
    }
}
