//! Reading docs/operations.md's tables, and what the code accepts, for the
//! tests that keep the page true (each service's `operations_doc.rs` test).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;
use service_kit::metrics::Described;
use service_kit::schema::Schema;

/// The rows (cells trimmed, header and rule skipped) of the Markdown table
/// that follows `<!-- marker -->` in `doc`.
pub fn table(doc: &str, marker: &str) -> Vec<Vec<String>> {
    let comment = format!("<!-- {marker} -->");
    let start = doc
        .find(&comment)
        .unwrap_or_else(|| panic!("the document has no `{comment}`"));
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

/// The plugin tables of `service` name exactly the plugins the code knows;
/// returns their names, in the doc's order.
pub fn documented_plugins<'a>(
    doc: &str,
    service: &str,
    known: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    let documented = plugin_markers(doc, service);
    assert_eq!(
        documented.iter().map(String::as_str).collect::<BTreeSet<_>>(),
        known.into_iter().collect::<BTreeSet<_>>(),
        "plugin tables of {service} in docs/operations.md vs the plugins it knows"
    );
    documented
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

/// The fields a struct with `#[derive(Deserialize)]` declares, as serde
/// hands them to the deserializer: read from the type, without deserialising
/// anything.
pub fn fields_of<T: DeserializeOwned>() -> BTreeSet<String> {
    let mut fields = None;
    let _ = T::deserialize(FieldRecorder(&mut fields));
    fields
        .unwrap_or_else(|| panic!("{} is not a struct", std::any::type_name::<T>()))
        .iter()
        .map(|field| (*field).to_owned())
        .collect()
}

/// A deserializer that records the fields of the struct asked of it.
struct FieldRecorder<'a>(&'a mut Option<&'static [&'static str]>);

#[derive(Debug)]
struct Recorded;

impl std::fmt::Display for Recorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("fields recorded")
    }
}

impl std::error::Error for Recorded {}

impl serde::de::Error for Recorded {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        Recorded
    }
}

impl<'de> serde::Deserializer<'de> for FieldRecorder<'_> {
    type Error = Recorded;

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Recorded> {
        *self.0 = Some(fields);
        Err(Recorded)
    }

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Recorded> {
        Err(Recorded)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// A documented default must give the settings the defaults give: setting
/// the key to it changes nothing.
pub fn check_default<T: DeserializeOwned + Serialize + Default>(
    key: &str,
    cell: &str,
    keys: &BTreeSet<String>,
) {
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
        serde_json::to_value(&set).unwrap(),
        serde_json::to_value(T::default()).unwrap(),
        "the documented default of {key} ({literal}) is not the default"
    );
}

/// The `<!-- settings: SERVICE -->` table has one row per setting key of `T`
/// (as the service skeleton knows them: [`Schema`]), names in its flag
/// column exactly the service's `flags`, and documents each default as `T`
/// has it.
pub fn check_settings_table<T: DeserializeOwned + Serialize + Default>(
    doc: &str,
    service: &str,
    flags: &BTreeSet<String>,
) {
    let rows = table(doc, &format!("settings: {service}"));
    let documented: BTreeSet<String> = rows.iter().map(|row| single_code(&row[0])).collect();
    assert_eq!(
        documented,
        Schema::of::<T>().keys(),
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

pub fn debug_of<T: DeserializeOwned + Debug>(text: &str) -> String {
    let value: T = toml::from_str(text).unwrap_or_else(|error| panic!("{text}: {error}"));
    format!("{value:?}")
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

/// The `<!-- metrics: SERVICE -->` table names exactly the metrics the
/// service registered, each with its type and labels.
pub fn check_metric_table(doc: &str, service: &str, registered: &[Described]) {
    let rows = table(doc, &format!("metrics: {service}"));
    let documented: BTreeMap<String, (String, Vec<String>)> = rows
        .iter()
        .map(|row| (single_code(&row[0]), (row[1].trim().to_owned(), code(&row[2]))))
        .collect();
    let registered: BTreeMap<String, (String, Vec<String>)> = registered
        .iter()
        .map(|metric| {
            let kind = serde_json::to_value(metric.kind).unwrap();
            (
                metric.name.clone(),
                (kind.as_str().unwrap().to_owned(), metric.labels.clone()),
            )
        })
        .collect();
    assert_eq!(
        documented, registered,
        "metrics in docs/operations.md (name: type, labels) vs the metrics {service} registers"
    );
}
