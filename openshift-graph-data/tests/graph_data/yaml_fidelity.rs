//! Graph-data YAML read byte-exactly: every scalar as libyaml reads it, as
//! upstream's graph-builder does. Checked against literal expectations and
//! against `serde_norway`, an independent libyaml-based reader.

use openshift_graph_data::{GraphData, Strictness};
use release_set_generator::testdata_graph_data;
use serde::Deserialize;

use crate::support::{files, load_dir};

/// A risk file whose last key, `message`, is written as `form`.
fn risk_file_ending_with(form: &str) -> String {
    format!(
        "to: 4.18.1\nfrom: .*\nurl: https://example.com/risk\nname: Risk\nmatchingRules:\n- type: Always\nmessage: {form}"
    )
}

/// The message as this crate reads it from a risk file.
fn message_read_from(text: &str) -> String {
    let graph_data = files(&[
        ("version", "1.1.0\n"),
        ("raw/metadata.json", "{}"),
        ("channels/stable-4.18.yaml", "name: stable-4.18\nversions: []\n"),
        ("blocked-edges/4.18.1-Risk.yaml", text),
    ]);
    let loaded =
        GraphData::load(&graph_data, &Strictness::default()).unwrap_or_else(|refused| panic!("{refused}"));
    let [risk] = loaded.graph_data.risks() else {
        panic!("one risk expected in {text:?}");
    };
    risk.risk.message.clone()
}

#[derive(Deserialize)]
struct MessageOnly {
    message: String,
}

fn message_read_by_libyaml(text: &str) -> String {
    serde_norway::from_str::<MessageOnly>(text).unwrap().message
}

/// Each scalar form at the end of a file, with and without a final line
/// break: (form, the value YAML 1.2 and libyaml give it).
const SCALARS_AT_END_OF_FILE: &[(&str, &str)] = &[
    ("|\n  a\n  b", "a\nb"),
    ("|\n  a\n  b\n", "a\nb\n"),
    ("|\n  a\n  b\n\n\n", "a\nb\n"),
    ("|-\n  a\n  b", "a\nb"),
    ("|-\n  a\n  b\n", "a\nb"),
    ("|+\n  a\n  b", "a\nb"),
    ("|+\n  a\n  b\n", "a\nb\n"),
    ("|+\n  a\n  b\n\n", "a\nb\n\n"),
    ("|2\n   a\n  b", " a\nb"),
    ("|+2\n   a\n  b", " a\nb"),
    ("|2-\n   a\n  b\n", " a\nb"),
    ("| # a comment on the header\n  a\n  b", "a\nb"),
    ("|\n\n  a\n  b", "\na\nb"),
    (">\n  a\n  b", "a b"),
    (">\n  a\n  b\n", "a b\n"),
    (">-\n  a\n  b", "a b"),
    (">+\n  a\n  b", "a b"),
    (">\n  a\n\n  b", "a\nb"),
    ("'a b'", "a b"),
    ("'a b'\n", "a b"),
    ("\"a\\nb\"", "a\nb"),
    ("a b", "a b"),
    ("a b\n", "a b"),
    // A comment after the scalar ends it before the end of the file.
    ("|\n  a\n# the end", "a\n"),
];

#[test]
fn scalars_at_the_end_of_a_file_read_as_libyaml_reads_them() {
    for (form, expected) in SCALARS_AT_END_OF_FILE {
        let text = risk_file_ending_with(form);
        assert_eq!(
            message_read_by_libyaml(&text),
            *expected,
            "the expectation for {form:?}"
        );
        assert_eq!(message_read_from(&text), *expected, "read from {text:?}");
    }
}

/// Endings where only libyaml's reading says what is right.
const ODD_ENDINGS: &[&str] = &[
    "|\n  a\n  ",
    "|+\n  a\n  ",
    "|+\n  a\n\n  ",
    ">\n  a\n  b  ",
    "|\n  a\n  # not a comment",
    "|-\n  a\n  b\t",
    "|\n  a\n...",
];

#[test]
fn odd_endings_read_as_libyaml_reads_them() {
    for form in ODD_ENDINGS {
        let text = risk_file_ending_with(form);
        assert_eq!(
            message_read_from(&text),
            message_read_by_libyaml(&text),
            "read from {text:?}"
        );
    }
}

#[test]
fn crlf_line_breaks_read_as_lf_ones() {
    for (form, expected) in SCALARS_AT_END_OF_FILE {
        let text = risk_file_ending_with(form).replace('\n', "\r\n");
        assert_eq!(
            message_read_by_libyaml(&text),
            *expected,
            "the expectation for {text:?}"
        );
        assert_eq!(message_read_from(&text), *expected, "read from {text:?}");
    }
}

#[test]
fn a_promql_query_ending_the_file_keeps_no_line_break_it_lacks() {
    let text = "to: 4.18.22\nfrom: 4[.]17[.].*\nurl: https://example.com/risk\nname: Risk\nmessage: m\nmatchingRules:\n- type: PromQL\n  promql:\n    promql: |\n      group(up)\n      or\n      0 * group(up)";
    let graph_data = files(&[
        ("version", "1.1.0\n"),
        ("raw/metadata.json", "{}"),
        ("channels/stable-4.18.yaml", "name: stable-4.18\nversions: []\n"),
        ("blocked-edges/4.18.22-Risk.yaml", text),
    ]);
    let loaded = GraphData::load(&graph_data, &Strictness::default()).unwrap();
    let rules = &loaded.graph_data.risks()[0].risk.matching_rules;
    assert_eq!(
        rules,
        &[cincinnati_core::MatchingRule::PromQl {
            promql: "group(up)\nor\n0 * group(up)".to_owned()
        }]
    );
}

/// A risk file as libyaml reads it: the fields the Graph API carries.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
struct RiskText {
    url: String,
    name: String,
    message: String,
    matching_rules: Vec<RuleText>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct RuleText {
    r#type: String,
    promql: Option<PromQlText>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct PromQlText {
    promql: String,
}

impl RiskText {
    fn of(risk: &cincinnati_core::Risk) -> Self {
        let matching_rules = risk
            .matching_rules
            .iter()
            .map(|rule| match rule {
                cincinnati_core::MatchingRule::Always => RuleText {
                    r#type: "Always".to_owned(),
                    promql: None,
                },
                cincinnati_core::MatchingRule::PromQl { promql } => RuleText {
                    r#type: "PromQL".to_owned(),
                    promql: Some(PromQlText {
                        promql: promql.clone(),
                    }),
                },
                cincinnati_core::MatchingRule::Other { rule_type, .. } => RuleText {
                    r#type: rule_type.clone(),
                    promql: None,
                },
            })
            .collect();
        Self {
            url: risk.url.clone(),
            name: risk.name.clone(),
            message: risk.message.clone(),
            matching_rules,
        }
    }
}

#[test]
fn every_risk_of_todays_graph_data_reads_as_libyaml_reads_it() {
    let dir = testdata_graph_data();
    let (graph_data, _) = load_dir(&dir);
    let mut differing = Vec::new();
    for declaration in graph_data.risks() {
        let text = std::fs::read_to_string(dir.join(&declaration.origin.path)).unwrap();
        let by_libyaml: RiskText = serde_norway::from_str(&text).unwrap();
        if RiskText::of(&declaration.risk) != by_libyaml {
            differing.push(&declaration.origin.path);
        }
    }
    assert_eq!(graph_data.risks().len(), 1601);
    assert!(
        differing.is_empty(),
        "read differently from libyaml: {differing:#?}"
    );
}
