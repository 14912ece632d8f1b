//! docs/operations.md's policy-engine tables, checked against the code so the
//! page cannot go stale: every setting key, flag, default, `[[policy]]`
//! filter, filter key and filter default, and every metric name and type.
//! Keys are learnt from the settings types themselves (serde's unknown-field
//! error lists what a struct accepts), flags from clap, metric names from the
//! source that registers them and types from a live registry. The
//! graph-builder's twin is graph-builder/tests/operations_doc.rs.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

use clap::CommandFactory as _;
use policy_engine::cli::Cli;
use policy_engine::filters::arch::ArchFilterSettings;
use policy_engine::filters::channel::ChannelFilterSettings;
use policy_engine::settings::Settings;
use serde::de::DeserializeOwned;

const DOC: &str = include_str!("../../docs/operations.md");
const SERVICE: &str = "policy-engine";
const METRIC_PREFIX: &str = "cincinnati_pe_";
/// The sources that register this service's metrics.
const METRIC_SOURCES: [&str; 3] = [
    include_str!("../src/metrics.rs"),
    include_str!("../../service-kit/src/metrics.rs"),
    include_str!("../../service-kit/src/errors.rs"),
];
/// Flags that are not settings, documented in prose.
const NOT_SETTINGS: [&str; 4] = ["config", "check_config", "help", "version"];

#[test]
fn every_setting_is_documented_with_its_flags_and_default() {
    let rows = table(&format!("settings: {SERVICE}"));
    let documented: BTreeSet<String> = rows.iter().map(|row| single_code(&row[0])).collect();
    assert_eq!(
        documented,
        settings_keys::<Settings>(),
        "setting keys in docs/operations.md vs Settings"
    );

    let flags = cli_flags();
    let mut documented_flags = BTreeSet::new();
    for row in &rows {
        for flag in code(&row[1]) {
            assert!(
                flags.contains(&flag),
                "{flag} (for {}) is not a flag of {SERVICE}",
                row[0]
            );
            documented_flags.insert(flag);
        }
    }
    let undocumented: Vec<_> = flags.difference(&documented_flags).collect();
    assert!(
        undocumented.is_empty(),
        "flags missing from the settings table: {undocumented:?}"
    );

    for row in &rows {
        check_default::<Settings>(&single_code(&row[0]), &row[2], &documented);
    }
}

#[test]
fn every_policy_and_policy_key_is_documented() {
    let documented = plugin_markers();
    // The catalogue names the filters; `cincinnati-graph-fetch` is read
    // beside it, so it is only required to be accepted (by plugin_keys).
    let undocumented: Vec<_> = known_filters()
        .into_iter()
        .filter(|name| !documented.contains(name))
        .collect();
    assert!(
        undocumented.is_empty(),
        "filters missing from docs/operations.md: {undocumented:?}"
    );
    for name in &documented {
        let rows = table(&format!("plugin: {SERVICE} {name}"));
        let keys: BTreeSet<String> = rows.iter().map(|row| single_code(&row[0])).collect();
        assert_eq!(keys, plugin_keys(name), "keys of [[policy]] {name}");
        for row in &rows {
            if let Some(literal) = toml_literal(&row[1]) {
                let key = single_code(&row[0]);
                assert_eq!(
                    filter_debug(name, &format!("{key} = {literal}\n")),
                    filter_debug(name, ""),
                    "[[policy]] {name}: the documented default of {key} ({literal}) is not the default"
                );
            }
        }
    }
}

#[test]
fn every_metric_is_documented_with_its_type() {
    let rows = table(&format!("metrics: {SERVICE}"));
    let documented: BTreeMap<String, String> = rows
        .iter()
        .map(|row| (single_code(&row[0]), row[1].trim().to_owned()))
        .collect();
    let registered: BTreeSet<String> = METRIC_SOURCES
        .iter()
        .flat_map(|source| metric_names(source))
        .map(|name| format!("{METRIC_PREFIX}{name}"))
        .collect();
    assert_eq!(
        documented.keys().cloned().collect::<BTreeSet<_>>(),
        registered,
        "metrics in docs/operations.md vs the names registered in the source"
    );
    // Labelled metrics appear only once they have a child; the others must
    // all be found by the source scan above, with the documented type.
    let metrics = policy_engine::metrics::EngineMetrics::new("test").unwrap();
    let families = metrics.registry.gather();
    assert!(families.len() > 5, "too few metric families gathered");
    for family in families {
        let kind = format!("{:?}", family.get_field_type()).to_lowercase();
        assert_eq!(
            documented.get(family.name()),
            Some(&kind),
            "{} is registered as a {kind}",
            family.name()
        );
    }
}

// -- the policy-engine's catalogue ----------------------------------------

fn cli_flags() -> BTreeSet<String> {
    flags_of(&Cli::command())
}

/// Filter names the catalogue knows, from its answer to an unknown one.
fn known_filters() -> BTreeSet<String> {
    let error = resolve_error(table_of("name = \"__probe__\""));
    let (_, known) = error
        .split_once("(known: ")
        .unwrap_or_else(|| panic!("unexpected answer to an unknown filter: {error}"));
    known
        .trim_end_matches(')')
        .split(", ")
        .map(str::to_owned)
        .collect()
}

/// The keys `[[policy]] name` accepts besides `name`.
fn plugin_keys(name: &str) -> BTreeSet<String> {
    let error = resolve_error(table_of(&format!("name = \"{name}\"\n__probe__ = 1")));
    expected_fields(&error)
        .unwrap_or_else(|| panic!("[[policy]] {name}: no unknown-field answer to a probe key: {error}"))
}

fn resolve_error(policy: toml::Table) -> String {
    let settings = Settings {
        policy: vec![policy],
        ..Settings::default()
    };
    settings.resolve().unwrap_err().to_string()
}

/// The Debug of filter `name`'s settings read from `text`: equal for a
/// documented default and no value at all.
fn filter_debug(name: &str, text: &str) -> String {
    match name {
        "channel-filter" => debug_of::<ChannelFilterSettings>(text),
        "arch-filter" => debug_of::<ArchFilterSettings>(text),
        other => panic!("add [[policy]] {other}'s settings type to filter_debug in this test"),
    }
}

// -- the same in graph-builder/tests/operations_doc.rs: keep them in step --

/// The rows (cells, trimmed) of the table after `<!-- {marker} -->`.
fn table(marker: &str) -> Vec<Vec<String>> {
    let comment = format!("<!-- {marker} -->");
    let start = DOC
        .find(&comment)
        .unwrap_or_else(|| panic!("docs/operations.md has no `{comment}`"));
    let rows: Vec<Vec<String>> = DOC[start + comment.len()..]
        .lines()
        .skip_while(|line| line.trim().is_empty())
        .take_while(|line| line.starts_with('|'))
        .skip(2)
        .map(|line| {
            let cells: Vec<String> = line.split('|').map(|cell| cell.trim().to_owned()).collect();
            cells[1..cells.len() - 1].to_vec()
        })
        .collect();
    assert!(!rows.is_empty(), "the table after `{comment}` is empty");
    rows
}

/// The names of the `<!-- plugin: SERVICE NAME -->` tables, in order.
fn plugin_markers() -> Vec<String> {
    let opening = format!("<!-- plugin: {SERVICE} ");
    DOC.match_indices(&opening)
        .map(|(at, _)| {
            let rest = &DOC[at + opening.len()..];
            rest[..rest.find(" -->").expect("an unterminated marker")].to_owned()
        })
        .collect()
}

/// The `code` spans of a cell.
fn code(cell: &str) -> Vec<String> {
    cell.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

fn single_code(cell: &str) -> String {
    match code(cell).as_slice() {
        [one] => one.clone(),
        _ => panic!("expected one `code` span in {cell:?}"),
    }
}

/// A default cell's TOML value: one code span that parses as TOML. `none`,
/// `required` and the name of another setting are not values.
fn toml_literal(cell: &str) -> Option<String> {
    let spans = code(cell);
    let [span] = spans.as_slice() else { return None };
    toml::from_str::<toml::Table>(&format!("value = {span}"))
        .is_ok()
        .then(|| span.clone())
}

/// The fields serde expected where `__probe__` was refused: its
/// deny_unknown_fields message lists them all.
fn expected_fields(message: &str) -> Option<BTreeSet<String>> {
    let line = message
        .lines()
        .find(|line| line.contains("unknown field `__probe__`"))?;
    let (_, expected) = line.split_once("expected")?;
    Some(code(expected).into_iter().collect())
}

/// Every leaf key (dotted) the settings type accepts, found by asking it
/// about a `__probe__` key at each level: a level that answers with a list
/// of fields is a table, any other answer means a value.
fn settings_keys<T: DeserializeOwned>() -> BTreeSet<String> {
    fn probe<T: DeserializeOwned>(path: &[String]) -> Option<BTreeSet<String>> {
        let header = if path.is_empty() {
            String::new()
        } else {
            format!("[{}]\n", path.join("."))
        };
        let error = toml::from_str::<T>(&format!("{header}__probe__ = 1\n")).err()?;
        expected_fields(&error.to_string())
    }
    let mut keys = BTreeSet::new();
    let mut pending = vec![Vec::new()];
    while let Some(path) = pending.pop() {
        let fields = probe::<T>(&path).unwrap_or_else(|| panic!("no field list for [{}]", path.join(".")));
        for field in fields {
            let mut child = path.clone();
            child.push(field);
            if probe::<T>(&child).is_some() {
                pending.push(child);
            } else {
                keys.insert(child.join("."));
            }
        }
    }
    keys
}

/// A documented default must give the settings the defaults give: setting
/// the key to it changes nothing.
fn check_default<T: DeserializeOwned + Debug + Default>(key: &str, cell: &str, keys: &BTreeSet<String>) {
    let Some(literal) = toml_literal(cell) else {
        let spans = code(cell);
        assert!(
            matches!(cell, "none" | "required" | "—") || spans.iter().all(|span| keys.contains(span)),
            "{key}: the default {cell:?} is neither a TOML value, none, required, nor another setting"
        );
        return;
    };
    let (section, leaf) = key
        .rsplit_once('.')
        .map_or(("", key), |(section, leaf)| (section, leaf));
    let header = if section.is_empty() {
        String::new()
    } else {
        format!("[{section}]\n")
    };
    let set: T = toml::from_str(&format!("{header}{leaf} = {literal}\n"))
        .unwrap_or_else(|error| panic!("{key} = {literal}: {error}"));
    assert_eq!(
        format!("{set:?}"),
        format!("{:?}", T::default()),
        "the documented default of {key} ({literal}) is not the default"
    );
}

fn debug_of<T: DeserializeOwned + Debug>(text: &str) -> String {
    let value: T = toml::from_str(text).unwrap_or_else(|error| panic!("{text}: {error}"));
    format!("{value:?}")
}

fn table_of(text: &str) -> toml::Table {
    toml::from_str(text).unwrap()
}

/// Every spelling of every settings flag: `--long`, aliases, `-short`.
fn flags_of(command: &clap::Command) -> BTreeSet<String> {
    let mut flags = BTreeSet::new();
    for argument in command.get_arguments() {
        if NOT_SETTINGS.contains(&argument.get_id().as_str()) {
            continue;
        }
        flags.extend(argument.get_long().map(|long| format!("--{long}")));
        flags.extend(argument.get_short().map(|short| format!("-{short}")));
        for alias in argument.get_all_aliases().unwrap_or_default() {
            flags.insert(format!("--{alias}"));
        }
    }
    flags
}

/// Metric names registered in `source` (outside its tests): the string
/// literal opening the argument list of `…::new(`, `counter(` or `gauge(`.
fn metric_names(source: &str) -> BTreeSet<String> {
    let source = source.split("#[cfg(test)]").next().unwrap_or(source);
    let mut names = BTreeSet::new();
    for (at, _) in source.match_indices('(') {
        let before = source[..at].trim_end();
        if !["new", "counter", "gauge"].iter().any(|call| {
            before.ends_with(call)
                && !before[..before.len() - call.len()].ends_with(|c: char| c.is_alphanumeric() || c == '_')
        }) {
            continue;
        }
        let rest = source[at + 1..].trim_start();
        if let Some(literal) = rest.strip_prefix('"') {
            let name = &literal[..literal.find('"').expect("an unterminated string")];
            if !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            {
                names.insert(name.to_owned());
            }
        }
    }
    names
}
