//! Graph-data checked against releases: what it names that no release is.
//!
//! Graph-data's CI refuses a channel version or a blocked-edge target that
//! the registry does not have; a `from` that matches no release blocks
//! nothing, most likely a typo. The graph-builder reports only the first as
//! it applies graph-data; [`unmatched`] is for checking a change against the
//! releases it will be applied to.

use std::collections::HashMap;

use cincinnati_core::Graph;

use super::channels;
use super::index::ReleaseIndex;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Location, Strictness};
use crate::model::{Declaration, GraphData};

/// What `data` names that matches no release of `releases`: channel
/// versions, then blocked-edge targets and `from` regexes in file order,
/// each as severe as `strictness` makes it.
pub fn unmatched(releases: &Graph, data: &GraphData, strictness: &Strictness) -> Vec<Diagnostic> {
    let mut found = channels::unmatched(releases, data);
    let index = ReleaseIndex::of_concrete(releases);
    let versions: Vec<String> = releases
        .releases()
        .filter(|(_, release)| !release.is_abstract())
        .map(|(_, release)| release.version.to_string())
        .collect();
    let mut declarations: Vec<Declaration> = data
        .blocks()
        .iter()
        .map(Declaration::Block)
        .chain(data.risks().iter().map(Declaration::Risk))
        .collect();
    declarations.sort_by(|a, b| a.origin().cmp(b.origin()));
    // Graph-data repeats a few patterns across hundreds of files.
    let mut matches_any: HashMap<&str, bool> = HashMap::new();
    for declaration in declarations {
        let origin = declaration.origin();
        let to = declaration.to();
        if index.find(releases, to).next().is_none() {
            found.push(Diagnostic::warning(
                Location::file(&origin.path, Some(origin.line)),
                DiagnosticKind::UnmatchedTarget,
                format!("`to` {to} matches no release"),
            ));
        }
        let from = declaration.from();
        let matched = *matches_any
            .entry(&from.text)
            .or_insert_with(|| versions.iter().any(|version| from.is_match(version)));
        if !matched {
            found.push(Diagnostic::warning(
                Location::file(&origin.path, Some(declaration.from_line())),
                DiagnosticKind::UnmatchedFrom,
                format!("`from` {:?} matches no release: it blocks nothing", from.text),
            ));
        }
    }
    for diagnostic in &mut found {
        diagnostic.severity = strictness.severity(diagnostic.kind);
    }
    found
}
