//! A channel drawn as Graphviz DOT or Mermaid: releases grouped by minor,
//! recommended updates solid, conditional ones dashed and labelled with
//! their risks.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use cincinnati_client::{ChannelView, ReleaseRef, Update};

/// The colour of conditional updates.
const RISK_COLOUR: &str = "#b8860b";

/// What to draw: `releases` of `view` (in version order) and the updates
/// between them.
pub struct Drawing<'g> {
    view: ChannelView<'g>,
    releases: Vec<ReleaseRef>,
}

impl<'g> Drawing<'g> {
    pub fn new(view: ChannelView<'g>, releases: Vec<ReleaseRef>) -> Self {
        Self { view, releases }
    }

    /// Releases by `(major, minor)`, in order.
    fn by_minor(&self) -> BTreeMap<(u64, u64), Vec<ReleaseRef>> {
        let mut minors: BTreeMap<(u64, u64), Vec<ReleaseRef>> = BTreeMap::new();
        for &release in &self.releases {
            let version = self.view.graph().version(release);
            minors
                .entry((version.major, version.minor))
                .or_default()
                .push(release);
        }
        minors
    }

    fn updates(&self) -> impl Iterator<Item = Update<'g>> + '_ {
        self.releases.iter().flat_map(|&release| {
            self.view
                .updates_from(release)
                .filter(|update| self.releases.binary_search(&update.to).is_ok())
        })
    }

    /// How many updates the drawing has: its edges.
    pub fn edges(&self) -> usize {
        self.updates().count()
    }

    fn version(&self, release: ReleaseRef) -> String {
        self.view.graph().version(release).to_string()
    }

    pub fn dot(&self) -> String {
        let mut out = String::new();
        let name = dot_string(self.view.name());
        // Writing to a String cannot fail.
        let _ = writeln!(out, "digraph {name} {{");
        out.push_str("  rankdir=LR;\n  node [shape=box, style=rounded, fontname=\"sans-serif\"];\n");
        for ((major, minor), releases) in self.by_minor() {
            let _ = writeln!(
                out,
                "  subgraph \"cluster_{major}.{minor}\" {{\n    label=\"{major}.{minor}\";"
            );
            for release in releases {
                let version = dot_string(&self.version(release));
                let errata = self.view.graph().release(release).metadata.get("url");
                match errata {
                    Some(url) => {
                        let _ = writeln!(out, "    {version} [URL={}];", dot_string(url));
                    }
                    None => {
                        let _ = writeln!(out, "    {version};");
                    }
                }
            }
            out.push_str("  }\n");
        }
        for update in self.updates() {
            let (from, to) = (
                dot_string(&self.version(update.from)),
                dot_string(&self.version(update.to)),
            );
            match update.risks {
                None => {
                    let _ = writeln!(out, "  {from} -> {to};");
                }
                Some(risks) => {
                    let names = dot_string(&risk_names(risks));
                    let _ = writeln!(
                        out,
                        "  {from} -> {to} [style=dashed, color=\"{RISK_COLOUR}\", tooltip={names}];"
                    );
                }
            }
        }
        out.push_str("}\n");
        out
    }

    pub fn mermaid(&self) -> String {
        let mut out = String::from("flowchart LR\n");
        let id =
            |release: ReleaseRef| format!("r{}", self.releases.binary_search(&release).unwrap_or_default());
        for ((major, minor), releases) in self.by_minor() {
            let _ = writeln!(out, "  subgraph m{major}_{minor}[\"{major}.{minor}\"]");
            for release in releases {
                let _ = writeln!(out, "    {}[\"{}\"]", id(release), self.version(release));
            }
            out.push_str("  end\n");
        }
        let mut conditional = Vec::new();
        for (position, update) in self.updates().enumerate() {
            match update.risks {
                None => {
                    let _ = writeln!(out, "  {} --> {}", id(update.from), id(update.to));
                }
                Some(risks) => {
                    let label = mermaid_text(&risk_names(risks));
                    let _ = writeln!(out, "  {} -.->|\"{label}\"| {}", id(update.from), id(update.to));
                    conditional.push(position.to_string());
                }
            }
        }
        if !conditional.is_empty() {
            let _ = writeln!(out, "  linkStyle {} stroke:{RISK_COLOUR}", conditional.join(","));
        }
        out
    }
}

fn risk_names(risks: &[cincinnati_core::Risk]) -> String {
    risks
        .iter()
        .map(|risk| risk.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A DOT double-quoted string.
fn dot_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Text inside a Mermaid quoted label.
fn mermaid_text(text: &str) -> String {
    text.replace('"', "#quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_backslashes_are_escaped() {
        assert_eq!(dot_string(r#"a "b" \c"#), r#""a \"b\" \\c""#);
        assert_eq!(mermaid_text(r#"a "b""#), "a #quot;b#quot;");
    }
}
