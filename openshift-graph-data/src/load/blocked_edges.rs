//! `blocked-edges/*.yaml`: `to` and `from`, and for conditional updates
//! (schema 1.1.0) a risk: `url`, `name`, `message`, `matchingRules`.

use std::collections::HashMap;

use cincinnati_core::{MatchingRule, Risk};
use serde::Deserialize;
use serde_json::Value;

use super::Findings;
use super::yaml::{Spanned, line_of};
use crate::diagnostic::DiagnosticKind;
use crate::files::{BLOCKED_EDGES_DIR, GraphDataFiles};
use crate::model::{Block, FromPattern, Origin, ReleaseName, RiskDeclaration};

const KNOWN_KEYS: &[&str] = &[
    "to",
    "from",
    "url",
    "name",
    "message",
    "matchingRules",
    "fixedIn",
    "autoExtend",
];

/// A blocked edge as a `blocked-edges/*.yaml` file writes it: the file's
/// shape, also written inline in other YAML (a policy-engine group's own
/// blocked edges).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockedEdgeSpec {
    pub to: Spanned<String>,
    pub from: Spanned<String>,
    pub url: Option<String>,
    pub name: Option<String>,
    pub message: Option<String>,
    pub matching_rules: Option<Vec<Value>>,
}

/// What a blocked edge declares: every update into `to` from a release
/// matching `from` removed, or (with a risk) made conditional.
#[derive(Debug, Clone)]
pub struct BlockedEdge {
    pub to: ReleaseName,
    pub from: FromPattern,
    pub risk: Option<Risk>,
}

/// Why a blocked edge is refused, with the line when one key is at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecProblem {
    pub kind: DiagnosticKind,
    pub line: Option<u64>,
    pub message: String,
}

impl BlockedEdgeSpec {
    /// Checks the declaration as graph-data's loader does: `to` SemVer,
    /// `from` a regex (compiled by `compile`, [`FromPattern::compile`] or a
    /// cache of it), a risk all or nothing.
    pub fn check(
        &self,
        compile: impl FnOnce(&str) -> Result<FromPattern, String>,
    ) -> Result<BlockedEdge, SpecProblem> {
        let to = ReleaseName::parse_target(&self.to.value).map_err(|error| SpecProblem {
            kind: DiagnosticKind::InvalidVersion,
            line: Some(line_of(&self.to)),
            message: format!("`to` {:?} is not SemVer: {error}", self.to.value),
        })?;
        let from = compile(&self.from.value).map_err(|error| SpecProblem {
            kind: DiagnosticKind::InvalidRegex,
            line: Some(line_of(&self.from)),
            message: format!("`from` is not a valid regex: {error}"),
        })?;
        let risk = risk_of(self).map_err(|message| SpecProblem {
            kind: DiagnosticKind::Syntax,
            line: None,
            message,
        })?;
        Ok(BlockedEdge { to, from, risk })
    }
}

/// Unconditional blocks and risks, each in file order.
pub(super) fn read(files: &GraphDataFiles, findings: &mut Findings) -> (Vec<Block>, Vec<RiskDeclaration>) {
    let mut blocks = Vec::new();
    let mut risks: Vec<RiskDeclaration> = Vec::new();
    // (target, risk name) → where it was first declared.
    let mut risk_names: HashMap<(ReleaseName, String), Origin> = HashMap::new();
    let documents = findings.parse_documents::<BlockedEdgeSpec>(files, BLOCKED_EDGES_DIR, KNOWN_KEYS);
    let patterns = documents.iter().filter_map(|(_, parsed)| parsed.as_ref().ok());
    findings.compile_all(patterns.map(|(file, _)| file.from.value.as_str()));
    for (path, parsed) in documents {
        let Some(file) = findings.accept(path, parsed, KNOWN_KEYS) else {
            continue;
        };
        let origin = Origin {
            path: path.to_owned(),
            line: line_of(&file.to),
        };
        let edge = match file.check(|pattern| findings.compile(pattern)) {
            Ok(edge) => edge,
            Err(problem) => {
                findings.report_at(path, problem.line, problem.kind, problem.message);
                continue;
            }
        };
        let BlockedEdge { to, from, risk } = edge;
        match risk {
            None => blocks.push(Block { to, from, origin }),
            Some(risk) => {
                let key = (to.clone(), risk.name.clone());
                if let Some(first) = risk_names.get(&key) {
                    let message = format!(
                        "risk {} for {to} is also declared in {}:{}; combine the `from` regexes with `|` in one file",
                        risk.name, first.path, first.line
                    );
                    findings.report_at(path, Some(origin.line), DiagnosticKind::DuplicateRisk, message);
                    continue;
                }
                risk_names.insert(key, origin.clone());
                risks.push(RiskDeclaration {
                    to,
                    from,
                    risk,
                    origin,
                });
            }
        }
    }
    (blocks, risks)
}

/// The risk a file declares, `None` for an unconditional block. A file with
/// some risk keys but not all is refused rather than guessed at.
fn risk_of(file: &BlockedEdgeSpec) -> Result<Option<Risk>, String> {
    let (url, name, message, rules) = (&file.url, &file.name, &file.message, &file.matching_rules);
    if url.is_none() && name.is_none() && message.is_none() && rules.is_none() {
        return Ok(None);
    }
    let missing: Vec<&str> = [
        ("url", url.is_none()),
        ("name", name.is_none()),
        ("message", message.is_none()),
        ("matchingRules", rules.as_ref().is_none_or(Vec::is_empty)),
    ]
    .into_iter()
    .filter_map(|(key, missing)| missing.then_some(key))
    .collect();
    if !missing.is_empty() {
        return Err(format!(
            "a risk needs url, name, message and matchingRules; missing or empty: {}",
            missing.join(", ")
        ));
    }
    let matching_rules = rules
        .iter()
        .flatten()
        .enumerate()
        .map(|(index, rule)| matching_rule(rule).map_err(|why| format!("matchingRules[{index}]: {why}")))
        .collect::<Result<_, _>>()?;
    Ok(Some(Risk {
        url: url.clone().unwrap_or_default(),
        name: name.clone().unwrap_or_default(),
        message: message.clone().unwrap_or_default(),
        matching_rules,
    }))
}

/// A rule as the Graph API carries it. Unknown types are kept verbatim for
/// newer clients; only `type` and `promql.promql` of known types survive, as
/// upstream does.
fn matching_rule(rule: &Value) -> Result<MatchingRule, String> {
    let rule_type = rule.get("type").and_then(Value::as_str).unwrap_or_default();
    match rule_type {
        "" => Err("no `type`".to_owned()),
        "Always" => Ok(MatchingRule::Always),
        "PromQL" => match rule.pointer("/promql/promql").and_then(Value::as_str) {
            Some(promql) if !promql.trim().is_empty() => Ok(MatchingRule::PromQl {
                promql: promql.to_owned(),
            }),
            _ => Err("a PromQL rule needs a non-empty `promql.promql` query".to_owned()),
        },
        other => Ok(MatchingRule::Other {
            rule_type: other.to_owned(),
            raw_json: rule.to_string(),
        }),
    }
}
