//! Conditional edges: updates that are possible but carry known risks.

use std::sync::Arc;

use semver::Version;

/// An update from one release to another, named by version.
///
/// The versions are shared, compared, hashed and ordered as versions: a
/// graph ten times today's has 385,000 conditional edges between 41,000
/// versions, and two versions of their own took 80 bytes an edge, 16 now.
/// [`SharedVersions`] hands out one copy of each.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EdgeEndpoints {
    pub from: Arc<Version>,
    pub to: Arc<Version>,
}

impl EdgeEndpoints {
    /// An edge with versions of its own, for a few: share them for many.
    pub fn new(from: Version, to: Version) -> Self {
        Self {
            from: Arc::new(from),
            to: Arc::new(to),
        }
    }
}

/// One copy of each version named, for the edges of one graph.
#[derive(Debug, Default)]
pub struct SharedVersions(foldhash::HashSet<Arc<Version>>);

impl SharedVersions {
    /// The copy of `version`: `version` itself on first sight.
    pub fn share(&mut self, version: Version) -> Arc<Version> {
        if let Some(shared) = self.0.get(&version) {
            return Arc::clone(shared);
        }
        let shared = Arc::new(version);
        self.0.insert(Arc::clone(&shared));
        shared
    }

    /// The update `from` → `to`, its versions shared.
    pub fn edge(&mut self, from: Version, to: Version) -> EdgeEndpoints {
        EdgeEndpoints {
            from: self.share(from),
            to: self.share(to),
        }
    }
}

/// A group of updates that share exactly the same list of risks.
///
/// Clients drop a target that appears in two groups, so each (from, to) pair
/// must be in one group only, carrying its complete risk list.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ConditionalEdge {
    pub edges: Vec<EdgeEndpoints>,
    pub risks: Vec<Risk>,
}

/// A known issue that may affect clusters taking an update.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Risk {
    pub url: String,
    pub name: String,
    pub message: String,
    pub matching_rules: Vec<MatchingRule>,
}

/// How a cluster decides whether a risk applies to it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MatchingRule {
    /// The risk applies to every cluster.
    Always,
    /// The risk applies when the PromQL query returns a non-zero result.
    PromQl { promql: String },
    /// A rule type this version does not know. Kept verbatim (as JSON text) so
    /// that newer graph-data passes through to newer clients unharmed.
    Other { rule_type: String, raw_json: String },
}

impl ConditionalEdge {
    /// The same group with its edges in order, to compare groups regardless
    /// of the order they were built in.
    pub fn sorted(&self) -> Self {
        let mut sorted = self.clone();
        sorted.edges.sort_unstable();
        sorted
    }
}

impl MatchingRule {
    /// The `type` string of this rule on the wire and in graph-data.
    pub fn type_name(&self) -> &str {
        match self {
            MatchingRule::Always => "Always",
            MatchingRule::PromQl { .. } => "PromQL",
            MatchingRule::Other { rule_type, .. } => rule_type,
        }
    }
}
