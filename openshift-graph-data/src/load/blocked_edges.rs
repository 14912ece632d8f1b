//! `blocked-edges/*.yaml`: `to` and `from`, and for conditional updates
//! (schema 1.1.0) a risk: `url`, `name`, `message`, `matchingRules`.
//!
//! Besides what applying needs, the rules graph-data's own CI
//! (`hack/validate-blocked-edges.py`) adds are checked, each its own
//! [`DiagnosticKind`], so that [`Strictness`](crate::Strictness) decides
//! whether they refuse: a risk's name CamelCase and a string, its URL
//! `https://`, its message a string, only `Always` and `PromQL` rules, each
//! once and with their own keys only, a risk in a file named after its `to`,
//! and one risk name meaning one risk across files.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};

use cincinnati_core::{MatchingRule, Risk};
use serde::Deserialize;
use serde_json::Value;

use super::yaml::{self, Spanned, line_of};
use super::{Document, Findings};
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
/// blocked edges). Only what applying reads carries its line (loading
/// thousands of files, every `Spanned` costs); the loader finds the others'
/// when it reports a problem.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockedEdgeSpec {
    pub to: Spanned<String>,
    pub from: Spanned<String>,
    pub url: Option<String>,
    pub name: Option<String>,
    pub message: Option<String>,
    pub matching_rules: Option<Vec<Spanned<Value>>>,
    /// Graph-data's own tooling's; only compared between the files that
    /// declare one risk.
    pub auto_extend: Option<Value>,
}

/// What a blocked edge declares: every update into `to` from a release
/// matching `from` removed, or (with a risk) made conditional.
#[derive(Debug, Clone)]
pub struct BlockedEdge {
    pub to: ReleaseName,
    pub from: FromPattern,
    pub risk: Option<Risk>,
}

/// Why a blocked edge is refused, with the line when one value is at fault.
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
        let risk = self.risk()?;
        Ok(BlockedEdge { to, from, risk })
    }

    /// The risk declared, `None` for an unconditional block. A declaration
    /// with some risk keys but not all is refused rather than guessed at.
    fn risk(&self) -> Result<Option<Risk>, SpecProblem> {
        let (url, name, message, rules) = (&self.url, &self.name, &self.message, &self.matching_rules);
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
            return Err(SpecProblem {
                kind: DiagnosticKind::Syntax,
                line: None,
                message: format!(
                    "a risk needs url, name, message and matchingRules; missing or empty: {}",
                    missing.join(", ")
                ),
            });
        }
        let matching_rules = rules
            .iter()
            .flatten()
            .enumerate()
            .map(|(index, rule)| {
                matching_rule(&rule.value).map_err(|why| SpecProblem {
                    kind: DiagnosticKind::Syntax,
                    line: Some(line_of(rule)),
                    message: format!("matchingRules[{index}]: {why}"),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Some(Risk {
            url: url.clone().unwrap_or_default(),
            name: name.clone().unwrap_or_default(),
            message: message.clone().unwrap_or_default(),
            matching_rules,
        }))
    }

    /// What graph-data's CI refuses and the loader does not need to: the
    /// rules of `hack/validate-blocked-edges.py` beyond [`Self::check`]'s,
    /// in the file at `path` whose content is `text` (where problems are,
    /// and how scalars are written: the CI reads YAML 1.1, where `Yes` is no
    /// string).
    fn ci_problems(&self, path: &str, text: &str) -> Vec<SpecProblem> {
        let mut problems = Vec::new();
        let mut problem = |kind, key: &str, message| {
            problems.push(SpecProblem {
                kind,
                line: Some(line_of_key(text, key).unwrap_or_else(|| line_of(&self.to))),
                message,
            })
        };
        if let Some(name) = &self.name {
            if yaml::is_written_as_non_string(text, "name", name) {
                problem(
                    DiagnosticKind::InvalidRiskName,
                    "name",
                    format!("risk name {name:?} is not a string in YAML 1.1: quote it"),
                );
            } else if !is_camel_case(name) {
                problem(
                    DiagnosticKind::InvalidRiskName,
                    "name",
                    format!(
                        "risk name {name:?} is not CamelCase (^[A-Z][A-Za-z0-9_]*$): clusters use it as a condition's reason"
                    ),
                );
            }
            let file_name = path.rsplit('/').next().unwrap_or(path);
            if !file_name.starts_with(&self.to.value) {
                let to = &self.to.value;
                problem(
                    DiagnosticKind::MisplacedRisk,
                    "to",
                    format!("a risk to {to} belongs in a file named {to}-<Name>.yaml"),
                );
            }
        }
        if let Some(url) = &self.url
            && !url.starts_with("https://")
        {
            let message = format!("`url` {url:?} is not an https:// URL");
            problem(DiagnosticKind::InvalidRiskUrl, "url", message);
        }
        if let Some(message) = &self.message
            && yaml::is_written_as_non_string(text, "message", message)
        {
            let message = format!("`message` {message:?} is not a string in YAML 1.1: quote it");
            problem(DiagnosticKind::InvalidRiskMessage, "message", message);
        }
        problems.extend(self.rule_problems());
        problems
    }

    /// The matching rules graph-data's CI refuses and [`Self::check`] does
    /// not: types it does not know, a type listed twice, keys a type does
    /// not have.
    fn rule_problems(&self) -> Vec<SpecProblem> {
        let mut problems = Vec::new();
        let mut types: Vec<&str> = Vec::new();
        for (index, rule) in self.matching_rules.iter().flatten().enumerate() {
            // A rule without a `type` is refused by `check`.
            let Some(rule_type) = rule.value.get("type").and_then(Value::as_str) else {
                continue;
            };
            let mut problem = |why: String| {
                problems.push(SpecProblem {
                    kind: DiagnosticKind::InvalidMatchingRule,
                    line: Some(line_of(rule)),
                    message: format!("matchingRules[{index}]: {why}"),
                })
            };
            if types.contains(&rule_type) {
                problem(format!("type {rule_type} is listed twice"));
            }
            types.push(rule_type);
            let extra = match rule_type {
                "Always" => other_keys(&rule.value, &["type"]),
                "PromQL" => {
                    let mut extra = other_keys(&rule.value, &["type", "promql"]);
                    let query = rule.value.get("promql");
                    extra.extend(query.map_or_else(Vec::new, |query| other_keys(query, &["promql"])));
                    extra
                }
                other => {
                    problem(format!(
                        "unknown type {other}: graph-data's CI knows only Always and PromQL"
                    ));
                    continue;
                }
            };
            if !extra.is_empty() {
                let extra: Vec<String> = extra.iter().map(|key| format!("`{key}`")).collect();
                problem(format!("{rule_type} rules have no {}", extra.join(", ")));
            }
        }
        problems
    }
}

/// The line of the top-level `key` of a block-style document.
fn line_of_key(text: &str, key: &str) -> Option<u64> {
    yaml::key_on_its_line(text, key).map(|(line, _)| line)
}

/// A risk name as clusters can use it for a condition's `reason` (graph-data
/// CI's stricter form): `^[A-Z][A-Za-z0-9_]*$`.
fn is_camel_case(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|first| first.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The keys of the mapping `value` other than `known`, in order.
fn other_keys<'v>(value: &'v Value, known: &[&str]) -> Vec<&'v str> {
    value
        .as_object()
        .into_iter()
        .flat_map(|object| object.keys())
        .map(String::as_str)
        .filter(|key| !known.contains(key))
        .collect()
}

/// Unconditional blocks and risks, each in file order.
pub(super) fn read(files: &GraphDataFiles, findings: &mut Findings) -> (Vec<Block>, Vec<RiskDeclaration>) {
    let mut blocks = Vec::new();
    let mut risks: Vec<RiskDeclaration> = Vec::new();
    // (target, risk name) → where it was first declared.
    let mut risk_names: HashMap<(ReleaseName, String), Origin> = HashMap::new();
    let documents = findings.parse_documents::<BlockedEdgeSpec>(files, BLOCKED_EDGES_DIR, KNOWN_KEYS);
    let patterns = documents
        .iter()
        .filter_map(|document| document.parsed.as_ref().ok());
    findings.compile_all(patterns.map(|(file, _)| file.from.value.as_str()));
    let mut divergent = divergent_risks(&documents);
    for Document { path, text, parsed } in documents {
        let Some(file) = findings.accept(path, parsed, KNOWN_KEYS) else {
            continue;
        };
        let origin = Origin {
            path: path.to_owned(),
            line: line_of(&file.to),
        };
        let from_line = line_of(&file.from);
        let edge = file.check(|pattern| findings.compile(pattern));
        // A risk missing a key: at the first risk key there is.
        let risk_line = || {
            let keys = ["url", "name", "message", "matchingRules"];
            keys.iter().filter_map(|key| line_of_key(text, key)).min()
        };
        let mut problems: Vec<SpecProblem> = (edge.as_ref().err().cloned().into_iter())
            .map(|problem| SpecProblem {
                line: problem.line.or_else(risk_line).or(Some(origin.line)),
                ..problem
            })
            .chain(file.ci_problems(path, text))
            .chain(divergent.remove(path))
            .collect();
        problems.sort_by_key(|problem| problem.line);
        for problem in problems {
            findings.report_at(path, problem.line, problem.kind, problem.message);
        }
        let Ok(BlockedEdge { to, from, risk }) = edge else {
            continue;
        };
        let Some(risk) = risk else {
            blocks.push(Block {
                to,
                from,
                origin,
                from_line,
            });
            continue;
        };
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
            from_line,
        });
    }
    (blocks, risks)
}

/// The files that declare a risk name otherwise than most files declaring
/// it (than the first, when as many declare it each way), each with why.
/// Graph-data's CI wants one risk name to mean one risk; comparing with the
/// most common declaration blames the odd file out, not the files that
/// agree with each other.
fn divergent_risks<'f>(documents: &[Document<'f, BlockedEdgeSpec>]) -> HashMap<&'f str, SpecProblem> {
    /// The declarations (indexes into `documents`, in path order) that
    /// declare a name one way.
    type Variant = Vec<usize>;
    let mut by_name: foldhash::HashMap<&str, Vec<Variant>> =
        foldhash::HashMap::with_capacity_and_hasher(documents.len(), Default::default());
    for (index, document) in documents.iter().enumerate() {
        let Some(name) = Declared::of(document).and_then(|declared| declared.spec.name.as_deref()) else {
            continue;
        };
        let variants = by_name.entry(name).or_default();
        let declared_alike =
            |variant: &&mut Variant| differing_keys(&documents[variant[0]], document).is_empty();
        match variants.iter_mut().find(declared_alike) {
            Some(variant) => variant.push(index),
            None => variants.push(vec![index]),
        }
    }
    let mut divergent = HashMap::new();
    for (name, variants) in by_name {
        if variants.len() < 2 {
            continue;
        }
        let Some(most) = (0..variants.len()).max_by_key(|&at| (variants[at].len(), Reverse(at))) else {
            continue;
        };
        let model = &documents[variants[most][0]];
        let model_line = name_line(model);
        let more = match variants[most].len() - 1 {
            0 => String::new(),
            1 => " and 1 more file".to_owned(),
            n => format!(" and {n} more files"),
        };
        let others = variants.iter().enumerate().filter(|&(at, _)| at != most);
        for &index in others.flat_map(|(_, variant)| variant) {
            let document = &documents[index];
            let keys = differing_keys(model, document);
            let line = keys
                .iter()
                .filter_map(|key| line_of_key(document.text, key))
                .min();
            let keys: Vec<String> = keys.iter().map(|key| format!("`{key}`")).collect();
            let message = format!(
                "risk {name} has another {} than in {}:{model_line}{more}: clusters know a risk by its name",
                keys.join(", "),
                model.path
            );
            let (kind, line) = (DiagnosticKind::DivergentRisk, line.or(Some(name_line(document))));
            divergent.insert(document.path, SpecProblem { kind, line, message });
        }
    }
    divergent
}

/// The line of a risk's `name` (of `to`, in a document not in block style).
fn name_line(document: &Document<BlockedEdgeSpec>) -> u64 {
    let to_line = || Declared::of(document).map_or(1, |declared| line_of(&declared.spec.to));
    line_of_key(document.text, "name").unwrap_or_else(to_line)
}

/// A blocked-edges file that was read, with its keys this version does not
/// know.
struct Declared<'d> {
    spec: &'d BlockedEdgeSpec,
    text: &'d str,
    unknown_keys: bool,
}

impl<'d> Declared<'d> {
    fn of(document: &'d Document<BlockedEdgeSpec>) -> Option<Self> {
        let (spec, unknown_keys) = document.parsed.as_ref().ok()?;
        Some(Self {
            spec,
            text: document.text,
            unknown_keys: !unknown_keys.is_empty(),
        })
    }

    /// The entries whose keys this version does not know (rare: only those
    /// files are read a second time).
    fn unknown_entries(&self) -> BTreeMap<String, Value> {
        if !self.unknown_keys {
            return BTreeMap::new();
        }
        let mut entries = yaml::parse::<BTreeMap<String, Value>>(self.text).unwrap_or_default();
        entries.retain(|key, _| !KNOWN_KEYS.contains(&key.as_str()));
        entries
    }
}

/// The keys `document` declares its risk with otherwise than `model` does:
/// every key but `to`, `from` and `fixedIn` (which say where the risk
/// applies), as graph-data's CI compares them. None when they agree (or
/// either was not read).
fn differing_keys(model: &Document<BlockedEdgeSpec>, document: &Document<BlockedEdgeSpec>) -> Vec<String> {
    let (Some(model), Some(declared)) = (Declared::of(model), Declared::of(document)) else {
        return Vec::new();
    };
    let (a, b) = (declared.spec, model.spec);
    fn rules(spec: &BlockedEdgeSpec) -> Option<impl Iterator<Item = &Value>> {
        let rules = spec.matching_rules.as_ref()?;
        Some(rules.iter().map(|rule| &rule.value))
    }
    let same_rules = match (rules(a), rules(b)) {
        (Some(a), Some(b)) => a.eq(b),
        (a, b) => a.is_none() && b.is_none(),
    };
    let mut differing: Vec<String> = [
        ("url", a.url == b.url),
        ("message", a.message == b.message),
        ("matchingRules", same_rules),
        ("autoExtend", a.auto_extend == b.auto_extend),
    ]
    .into_iter()
    .filter(|(_, same)| !same)
    .map(|(key, _)| key.to_owned())
    .collect();
    if declared.unknown_keys || model.unknown_keys {
        let (unknown, model_unknown) = (declared.unknown_entries(), model.unknown_entries());
        let mut keys: Vec<&String> = unknown.keys().chain(model_unknown.keys()).collect();
        keys.sort_unstable();
        keys.dedup();
        differing.extend(
            keys.into_iter()
                .filter(|key| unknown.get(*key) != model_unknown.get(*key))
                .cloned(),
        );
    }
    differing
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
