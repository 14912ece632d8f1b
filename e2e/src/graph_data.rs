//! OpenShift graph-data as a test describes it: channels and blocked edges
//! (with or without a risk), written out as the files of a graph-data
//! repository and pushed as an image.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;
use image_signature::layout::{SIGNATURES_DIR, SignatureName};

/// The repository and tag the graph-builder reads graph-data from.
pub const GRAPH_DATA_REPOSITORY: &str = "ocp/graph-data";
pub const GRAPH_DATA_TAG: &str = "latest";

/// The graph-data schema version the files declare.
const SCHEMA_VERSION: &str = "1.1.0";

#[derive(Debug, Clone, Default)]
pub struct GraphData {
    /// Channel name → the versions it lists.
    pub channels: BTreeMap<String, Vec<String>>,
    pub blocked_edges: Vec<BlockedEdge>,
    /// Files written verbatim after the others (path, contents): how a test
    /// breaks the graph-data. The expected graph ignores them.
    pub raw_files: Vec<(String, String)>,
    /// Release signatures, written as `signatures/<algo>/<hex>/signature-<N>`
    /// (what `oc adm release mirror` adds). The graph ignores them.
    pub signatures: BTreeMap<SignatureName, Vec<u8>>,
}

/// A `blocked-edges/<file>.yaml`.
#[derive(Debug, Clone)]
pub struct BlockedEdge {
    pub file: String,
    /// The target release, without `+arch`.
    pub to: String,
    /// An unanchored regular expression, matched against the source
    /// release's version with `+arch`.
    pub from: String,
    /// `None`: the matching edges are removed. `Some`: they become
    /// conditional updates carrying this risk.
    pub risk: Option<Risk>,
}

#[derive(Debug, Clone)]
pub struct Risk {
    pub name: String,
    pub url: String,
    pub message: String,
    pub rule: MatchingRule,
}

#[derive(Debug, Clone)]
pub enum MatchingRule {
    Always,
    PromQl(String),
}

impl GraphData {
    pub fn channel(mut self, name: &str, versions: &[&str]) -> Self {
        let versions = versions.iter().map(|version| (*version).to_owned()).collect();
        self.channels.insert(name.to_owned(), versions);
        self
    }

    pub fn blocked_edge(mut self, edge: BlockedEdge) -> Self {
        self.blocked_edges.push(edge);
        self
    }

    pub fn signature(mut self, name: SignatureName, signature: Vec<u8>) -> Self {
        self.signatures.insert(name, signature);
        self
    }

    /// The directory of the signature tree below a directory written by
    /// [`GraphData::write_to`].
    pub fn signatures_dir(directory: &Path) -> std::path::PathBuf {
        directory.join(SIGNATURES_DIR)
    }

    /// Writes the graph-data repository's files below `directory`.
    pub fn write_to(&self, directory: &Path) -> anyhow::Result<()> {
        let mut files = vec![
            ("version".to_owned(), format!("{SCHEMA_VERSION}\n")),
            ("raw/metadata.json".to_owned(), "{}\n".to_owned()),
        ];
        files.extend(
            self.channels
                .iter()
                .map(|(name, versions)| (format!("channels/{name}.yaml"), channel_yaml(name, versions))),
        );
        files.extend(
            self.blocked_edges
                .iter()
                .map(|edge| (format!("blocked-edges/{}.yaml", edge.file), edge.yaml())),
        );
        files.extend(self.raw_files.iter().cloned());
        let signatures = self
            .signatures
            .iter()
            .map(|(name, bytes)| (format!("{SIGNATURES_DIR}/{}", name.path()), bytes.clone()));
        let files = files
            .into_iter()
            .map(|(relative, contents)| (relative, contents.into_bytes()))
            .chain(signatures);
        for (relative, contents) in files {
            let path = directory.join(relative);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
            }
            std::fs::write(&path, contents).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    }
}

impl BlockedEdge {
    fn yaml(&self) -> String {
        let mut yaml = format!("to: {}\nfrom: {}\n", quoted(&self.to), quoted(&self.from));
        if let Some(risk) = &self.risk {
            yaml += &format!(
                "url: {}\nname: {}\nmessage: {}\nmatchingRules:\n{}",
                quoted(&risk.url),
                quoted(&risk.name),
                quoted(&risk.message),
                risk.rule.yaml()
            );
        }
        yaml
    }
}

impl MatchingRule {
    fn yaml(&self) -> String {
        match self {
            MatchingRule::Always => "- type: Always\n".to_owned(),
            MatchingRule::PromQl(query) => {
                format!("- type: PromQL\n  promql:\n    promql: {}\n", quoted(query))
            }
        }
    }
}

fn channel_yaml(name: &str, versions: &[String]) -> String {
    let listed: String = versions
        .iter()
        .map(|version| format!("- {}\n", quoted(version)))
        .collect();
    format!("name: {}\nversions:\n{listed}", quoted(name))
}

/// A single-quoted YAML scalar: nothing in it is special but the quote.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}
