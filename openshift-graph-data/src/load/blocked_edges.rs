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

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockedEdgeFile {
    to: Spanned<String>,
    from: Spanned<String>,
    url: Option<String>,
    name: Option<String>,
    message: Option<String>,
    matching_rules: Option<Vec<Value>>,
}

/// Unconditional blocks and risks, each in file order.
pub(super) fn read(files: &GraphDataFiles, findings: &mut Findings) -> (Vec<Block>, Vec<RiskDeclaration>) {
    let mut blocks = Vec::new();
    let mut risks: Vec<RiskDeclaration> = Vec::new();
    // (target, risk name) → where it was first declared.
    let mut risk_names: HashMap<(ReleaseName, String), Origin> = HashMap::new();
    for (path, text) in findings.yaml_documents(files, BLOCKED_EDGES_DIR) {
        let Some(file) = findings.parse_yaml::<BlockedEdgeFile>(path, text, KNOWN_KEYS) else {
            continue;
        };
        let origin = Origin {
            path: path.to_owned(),
            line: line_of(&file.to),
        };
        let to = match ReleaseName::parse_target(&file.to.value) {
            Ok(to) => to,
            Err(error) => {
                let message = format!("`to` {:?} is not SemVer: {error}", file.to.value);
                findings.report_at(path, Some(origin.line), DiagnosticKind::InvalidVersion, message);
                continue;
            }
        };
        let from = match findings.compile(&file.from.value) {
            Ok(regex) => FromPattern {
                text: file.from.value.clone(),
                regex,
            },
            Err(error) => {
                let message = format!("`from` is not a valid regex: {error}");
                findings.report_at(
                    path,
                    Some(line_of(&file.from)),
                    DiagnosticKind::InvalidRegex,
                    message,
                );
                continue;
            }
        };
        match risk_of(&file) {
            Ok(None) => blocks.push(Block { to, from, origin }),
            Ok(Some(risk)) => {
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
            Err(message) => findings.report_at(path, None, DiagnosticKind::Syntax, message),
        }
    }
    (blocks, risks)
}

/// The risk a file declares, `None` for an unconditional block. A file with
/// some risk keys but not all is refused rather than guessed at.
fn risk_of(file: &BlockedEdgeFile) -> Result<Option<Risk>, String> {
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
