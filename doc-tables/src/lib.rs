//! Reading docs/operations.md's tables, and what the code accepts, for the
//! tests that keep the page true (graph-builder and policy-engine
//! `tests/operations_doc.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

use serde::de::DeserializeOwned;

/// The rows (cells, trimmed) of the table after `<!-- {marker} -->`.
/// The rows (cells trimmed, header and rule skipped) of the Markdown table
/// that follows `<!-- marker -->` in `doc`.
pub fn table(doc: &str, marker: &str) -> Vec<Vec<String>> {
    let comment = format!("<!-- {marker} -->");
    let start = doc
        .find(&comment)
        .unwrap_or_else(|| panic!("docs/operations.md has no `{comment}`"));
    let rows: Vec<Vec<String>> = doc[start + comment.len()..]
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

/// The names of `service`'s `<!-- plugin: SERVICE NAME -->` tables, in order.
pub fn plugin_markers(doc: &str, service: &str) -> Vec<String> {
    let opening = format!("<!-- plugin: {service} ");
    doc.match_indices(&opening)
        .map(|(at, _)| {
            let rest = &doc[at + opening.len()..];
            rest[..rest.find(" -->").expect("an unterminated marker")].to_owned()
        })
        .collect()
}

/// The `code` spans of a cell.
pub fn code(cell: &str) -> Vec<String> {
    cell.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

pub fn single_code(cell: &str) -> String {
    match code(cell).as_slice() {
        [one] => one.clone(),
        _ => panic!("expected one `code` span in {cell:?}"),
    }
}

/// A default cell's TOML value: one code span that parses as TOML. `none`,
/// `required` and the name of another setting are not values.
pub fn toml_literal(cell: &str) -> Option<String> {
    let spans = code(cell);
    let [span] = spans.as_slice() else { return None };
    toml::from_str::<toml::Table>(&format!("value = {span}"))
        .is_ok()
        .then(|| span.clone())
}

/// The fields serde expected where `__probe__` was refused: its
/// deny_unknown_fields message lists them all.
pub fn expected_fields(message: &str) -> Option<BTreeSet<String>> {
    let line = message
        .lines()
        .find(|line| line.contains("unknown field `__probe__`"))?;
    let (_, expected) = line.split_once("expected")?;
    Some(code(expected).into_iter().collect())
}

/// Every leaf key (dotted) the settings type accepts, found by asking it
/// about a `__probe__` key at each level: a level that answers with a list
/// of fields is a table, any other answer means a value.
pub fn settings_keys<T: DeserializeOwned>() -> BTreeSet<String> {
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
pub fn check_default<T: DeserializeOwned + Debug + Default>(key: &str, cell: &str, keys: &BTreeSet<String>) {
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

/// The `<!-- settings: SERVICE -->` table has one row per setting key of `T`,
/// names in its flag column exactly the service's `flags`, and documents
/// each default as `T` has it.
pub fn check_settings_table<T: DeserializeOwned + Debug + Default>(
    doc: &str,
    service: &str,
    flags: &BTreeSet<String>,
) {
    let rows = table(doc, &format!("settings: {service}"));
    let documented: BTreeSet<String> = rows.iter().map(|row| single_code(&row[0])).collect();
    assert_eq!(
        documented,
        settings_keys::<T>(),
        "setting keys in docs/operations.md vs the settings of {service}"
    );

    let mut documented_flags = BTreeSet::new();
    for row in &rows {
        for flag in code(&row[1]) {
            assert!(
                flags.contains(&flag),
                "{flag} (for {}) is not a flag of {service}",
                row[0]
            );
            documented_flags.insert(flag);
        }
    }
    let undocumented: Vec<_> = flags.difference(&documented_flags).collect();
    assert!(
        undocumented.is_empty(),
        "flags of {service} missing from the settings table: {undocumented:?}"
    );

    for row in &rows {
        check_default::<T>(&single_code(&row[0]), &row[2], &documented);
    }
}

/// The names a catalogue lists in its refusal of an unknown name
/// (`... (known: a, b, c)`).
pub fn known_names(refusal: &str) -> BTreeSet<String> {
    let (_, known) = refusal
        .split_once("(known: ")
        .unwrap_or_else(|| panic!("unexpected answer to an unknown name: {refusal}"));
    known
        .trim_end_matches(')')
        .split(", ")
        .map(str::to_owned)
        .collect()
}

pub fn debug_of<T: DeserializeOwned + Debug>(text: &str) -> String {
    let value: T = toml::from_str(text).unwrap_or_else(|error| panic!("{text}: {error}"));
    format!("{value:?}")
}

pub fn table_of(text: &str) -> toml::Table {
    toml::from_str(text).unwrap()
}

/// Every spelling of every settings flag: `--long`, aliases, `-short`.
pub fn flags_of(command: &clap::Command, not_settings: &[&str]) -> BTreeSet<String> {
    let mut flags = BTreeSet::new();
    for argument in command.get_arguments() {
        if not_settings.contains(&argument.get_id().as_str()) {
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
pub fn metric_names(source: &str) -> BTreeSet<String> {
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

/// The `<!-- metrics: SERVICE -->` table names exactly the metrics the
/// `sources` register (prefixed), each with the type `registry` reports.
pub fn check_metric_table(
    doc: &str,
    service: &str,
    prefix: &str,
    sources: &[&str],
    registry: &prometheus::Registry,
) {
    let rows = table(doc, &format!("metrics: {service}"));
    let documented: BTreeMap<String, String> = rows
        .iter()
        .map(|row| (single_code(&row[0]), row[1].trim().to_owned()))
        .collect();
    let registered: BTreeSet<String> = sources
        .iter()
        .flat_map(|source| metric_names(source))
        .map(|name| format!("{prefix}{name}"))
        .collect();
    assert_eq!(
        documented.keys().cloned().collect::<BTreeSet<_>>(),
        registered,
        "metrics in docs/operations.md vs the names registered in the source"
    );
    // Labelled metrics appear only once they have a child; the others must
    // all be found by the source scan above, with the documented type.
    let families = registry.gather();
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
