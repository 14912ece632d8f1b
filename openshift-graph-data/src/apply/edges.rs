//! The `edge-add-remove` step: update edges added and removed as release
//! metadata instructs, and risks resolved into conditional edges in between.

use cincinnati_core::release::with_arch;
use cincinnati_core::{Graph, GraphError, Release, ReleaseId, Version};

use super::from_matches::FromMatches;
use super::index::in_version_order;
use super::remove_regex::{ParentMatcher, RegexCache, combine};
use super::{InstructionKeys, conditional};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Location};
use crate::model::GraphData;

/// How the edge step reads its instructions (the `edge-add-remove` settings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeRules {
    pub keys: InstructionKeys,
    /// The `previous.remove` value that removes every incoming update.
    pub remove_all_edges_value: String,
    /// Strip the edge instructions from the metadata once applied.
    pub remove_consumed_metadata: bool,
    /// Turn risks into conditional edges; without, risky updates are only removed.
    pub include_conditional_edges: bool,
}

impl Default for EdgeRules {
    fn default() -> Self {
        Self {
            keys: InstructionKeys::default(),
            remove_all_edges_value: "*".to_owned(),
            remove_consumed_metadata: false,
            include_conditional_edges: true,
        }
    }
}

/// An instruction that cannot be carried out. Only removals fail the step:
/// an addition that cannot be made is reported and left out (fewer updates
/// is safe), but an update that cannot be removed may be one that must not
/// be offered.
#[derive(Debug, thiserror::Error)]
pub enum EdgeError {
    #[error("release {release}: `{key}` lists {item:?}, which is not a release version: {source}")]
    InvalidRelease {
        release: Version,
        key: String,
        item: String,
        source: semver::Error,
    },
    #[error("release {release}: `{key}` is not a valid regex: {source}")]
    InvalidRegex {
        release: Version,
        key: String,
        source: regex::Error,
    },
}

/// Adds edges (`previous.add`, `next.add`), resolves the risks of
/// `graph_data` into conditional edges against the updates present then, and
/// removes edges (`previous.remove`, `previous.remove_regex`, `next.remove`).
/// Removals come last, so they win over additions. Releases listed in an
/// instruction take the architecture of the release carrying it.
pub fn apply_edge_instructions(
    graph: &mut Graph,
    graph_data: Option<&GraphData>,
    rules: &EdgeRules,
) -> Result<Vec<Diagnostic>, EdgeError> {
    let order = in_version_order(graph);
    let warnings = add_edges(graph, &order, &rules.keys);
    let mut matches = FromMatches::of(graph);
    if rules.include_conditional_edges
        && let Some(data) = graph_data
    {
        *graph.conditional_edges_mut() = conditional::resolve(graph, data, &order, &mut matches);
    }
    let removals = edges_to_remove(graph, &order, graph_data, rules, &mut matches)?;
    graph.remove_edges(removals);
    if rules.remove_consumed_metadata {
        for id in order {
            let metadata = graph
                .metadata_mut(id)
                .expect("releases were listed from this graph");
            for key in rules.keys.edge_instructions() {
                metadata.remove(key);
            }
        }
    }
    Ok(warnings)
}

fn add_edges(graph: &mut Graph, order: &[ReleaseId], keys: &InstructionKeys) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    for &id in order {
        let release = graph.release(id).expect("releases were listed from this graph");
        let version = release.version.clone();
        let additions: Vec<_> = [
            (&keys.previous_add, Direction::Previous),
            (&keys.next_add, Direction::Next),
        ]
        .into_iter()
        .flat_map(|(key, direction)| listed(release, key, &keys.arch).map(move |item| (key, direction, item)))
        .collect();
        for (key, direction, item) in additions {
            let location = || Location::Release(version.clone());
            let other = match item {
                Ok(other) => other,
                Err(error) => {
                    warnings.push(Diagnostic::warning(
                        location(),
                        DiagnosticKind::InvalidVersion,
                        error.describe(key),
                    ));
                    continue;
                }
            };
            let Some(other_id) = graph.find(&other) else {
                let message = format!("`{key}` names {other}, which is not in the graph; no update added");
                warnings.push(Diagnostic::warning(
                    location(),
                    DiagnosticKind::UnknownRelease,
                    message,
                ));
                continue;
            };
            let (from, to) = direction.edge(id, other_id);
            match graph.add_edge(from, to) {
                Ok(_) => {}
                Err(error @ (GraphError::Cycle(_) | GraphError::SelfLoop(_))) => {
                    let message = format!("`{key}` update with {other} left out: {error}");
                    warnings.push(Diagnostic::warning(location(), DiagnosticKind::Cycle, message));
                }
                Err(other) => unreachable!("both releases were just found: {other}"),
            }
        }
    }
    warnings
}

fn edges_to_remove<'d>(
    graph: &Graph,
    order: &[ReleaseId],
    graph_data: Option<&'d GraphData>,
    rules: &EdgeRules,
    matches: &mut FromMatches<'d>,
) -> Result<Vec<(ReleaseId, ReleaseId)>, EdgeError> {
    let keys = &rules.keys;
    let mut cache = RegexCache::default();
    let mut removals = Vec::new();
    for &id in order {
        let release = graph.release(id).expect("releases were listed from this graph");
        if let Some(value) = release.metadata.get(&keys.previous_remove) {
            if value.trim() == rules.remove_all_edges_value {
                removals.extend(graph.parents(id).map(|parent| (parent, id)));
            } else {
                for parent in found(graph, release, &keys.previous_remove, &keys.arch)? {
                    removals.push((parent, id));
                }
            }
        }
        if let Some(pattern) = release.metadata.get(&keys.previous_remove_regex) {
            let matcher = parent_matcher(release, pattern, graph_data, &mut cache, keys)?;
            let parents = graph
                .parents(id)
                .filter(|&parent| matcher.is_match(parent, matches));
            removals.extend(parents.map(|parent| (parent, id)));
        }
        for child in found(graph, release, &keys.next_remove, &keys.arch)? {
            removals.push((id, child));
        }
    }
    Ok(removals)
}

/// The matcher for a `previous.remove_regex` value: graph-data's own
/// compiled regexes when the value is what graph-data wrote, else the value
/// compiled (once per distinct value).
fn parent_matcher<'a>(
    release: &Release,
    pattern: &str,
    graph_data: Option<&'a GraphData>,
    cache: &mut RegexCache,
    keys: &InstructionKeys,
) -> Result<ParentMatcher<'a>, EdgeError> {
    if let Some(data) = graph_data {
        let rules: Vec<_> = data.declarations_into(&release.version).collect();
        if !rules.is_empty() && combine(rules.iter().map(|rule| rule.from().text.as_str())) == pattern {
            return Ok(ParentMatcher::AnyOf(
                rules.iter().map(|rule| rule.from()).collect(),
            ));
        }
    }
    cache
        .compile(pattern)
        .map(ParentMatcher::Compiled)
        .map_err(|source| EdgeError::InvalidRegex {
            release: release.version.clone(),
            key: keys.previous_remove_regex.clone(),
            source,
        })
}

/// The releases a removal list names that are in the graph.
fn found(graph: &Graph, release: &Release, key: &str, arch_key: &str) -> Result<Vec<ReleaseId>, EdgeError> {
    let mut ids = Vec::new();
    for item in listed(release, key, arch_key) {
        let version = item.map_err(|error| EdgeError::InvalidRelease {
            release: release.version.clone(),
            key: key.to_owned(),
            item: error.item,
            source: error.source,
        })?;
        ids.extend(graph.find(&version));
    }
    Ok(ids)
}

#[derive(Debug, Clone, Copy)]
enum Direction {
    /// The listed release updates to the one carrying the list.
    Previous,
    /// The release carrying the list updates to the listed one.
    Next,
}

impl Direction {
    fn edge(self, carrier: ReleaseId, listed: ReleaseId) -> (ReleaseId, ReleaseId) {
        match self {
            Direction::Previous => (listed, carrier),
            Direction::Next => (carrier, listed),
        }
    }
}

struct ListError {
    item: String,
    source: semver::Error,
}

impl ListError {
    fn describe(&self, key: &str) -> String {
        format!(
            "`{key}` lists {:?}, which is not a release version: {}",
            self.item, self.source
        )
    }
}

/// The releases of a comma-separated list under `key`, each given the
/// architecture of `release` (`4.1.0` on an amd64 release is `4.1.0+amd64`).
fn listed<'a>(
    release: &'a Release,
    key: &str,
    arch_key: &str,
) -> impl Iterator<Item = Result<Version, ListError>> + 'a {
    let arch = release.metadata.get(arch_key);
    release.metadata_list(key).map(move |item| {
        let error = |source| ListError {
            item: item.to_owned(),
            source,
        };
        let version = Version::parse(item).map_err(error)?;
        match arch {
            Some(arch) => with_arch(&version, arch).map_err(error),
            None => Ok(version),
        }
    })
}
