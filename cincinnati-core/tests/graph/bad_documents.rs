//! Each validation rule of the Graph API parser, with a crafted document that
//! breaks it and the error that must name the offending item.

use cincinnati_core::wire::{self, WireError};
use cincinnati_core::{MatchingRule, graph::FromPartsError};

fn refused(json: &str) -> WireError {
    match wire::parse(json.as_bytes()) {
        Ok(document) => panic!("accepted {json}: {:?}", document.graph),
        Err(error) => error,
    }
}

const NODE_A: &str = r#"{"version":"1.0.0","payload":"a","metadata":{}}"#;
const NODE_B: &str = r#"{"version":"1.1.0","payload":"b","metadata":{}}"#;

#[test]
fn malformed_json_is_refused_with_its_position() {
    let error = refused(r#"{"nodes": [}"#);
    assert!(matches!(error, WireError::Json(_)));
    assert!(error.to_string().contains("line 1"), "{error}");
}

#[test]
fn missing_nodes_or_edges_are_refused() {
    assert!(
        refused(r#"{"edges": []}"#)
            .to_string()
            .contains("missing field `nodes`")
    );
    assert!(
        refused(r#"{"nodes": []}"#)
            .to_string()
            .contains("missing field `edges`")
    );
}

#[test]
fn empty_version_names_the_node() {
    let error = refused(&format!(r#"{{"nodes":[{NODE_A},{{"version":""}}],"edges":[]}}"#));
    assert!(matches!(error, WireError::EmptyVersion { index: 1 }), "{error}");
    assert_eq!(error.to_string(), "node 1: empty version");
}

#[test]
fn non_semver_version_names_the_node() {
    let error = refused(r#"{"nodes":[{"version":"4.1"}],"edges":[]}"#);
    assert!(
        error
            .to_string()
            .starts_with("node 0: version \"4.1\" is not SemVer"),
        "{error}"
    );
}

#[test]
fn duplicate_version_names_both_nodes() {
    let error = refused(&format!(r#"{{"nodes":[{NODE_A},{NODE_B},{NODE_A}],"edges":[]}}"#));
    assert!(
        matches!(
            &error,
            WireError::Graph(FromPartsError::DuplicateVersion {
                first: 0,
                second: 2,
                ..
            })
        ),
        "{error}"
    );
    assert!(error.to_string().contains("1.0.0"), "{error}");
}

#[test]
fn edge_out_of_range_names_the_edge() {
    let error = refused(&format!(
        r#"{{"nodes":[{NODE_A},{NODE_B}],"edges":[[0,1],[1,2]]}}"#
    ));
    assert_eq!(error.to_string(), "edge 1 [1, 2] points outside the 2 releases");
}

#[test]
fn duplicate_edge_names_the_edge() {
    let error = refused(&format!(
        r#"{{"nodes":[{NODE_A},{NODE_B}],"edges":[[0,1],[0,1]]}}"#
    ));
    assert_eq!(error.to_string(), "edge 1 [0, 1] appears twice");
}

#[test]
fn cycle_is_refused_and_named() {
    let error = refused(&format!(
        r#"{{"nodes":[{NODE_A},{NODE_B},{{"version":"1.2.0"}}],"edges":[[0,1],[1,2],[2,0]]}}"#
    ));
    let message = error.to_string();
    assert!(
        message.starts_with("update edges would form a cycle: "),
        "{message}"
    );
    for version in ["1.0.0", "1.1.0", "1.2.0"] {
        assert!(message.contains(version), "{message}");
    }
}

#[test]
fn self_loop_is_a_cycle() {
    let error = refused(&format!(r#"{{"nodes":[{NODE_A}],"edges":[[0,0]]}}"#));
    assert_eq!(
        error.to_string(),
        "update edges would form a cycle: 1.0.0 -> 1.0.0"
    );
}

#[test]
fn bad_conditional_edge_version_names_the_entry() {
    let error = refused(
        r#"{"nodes":[],"edges":[],"conditionalEdges":[{"edges":[{"from":"1.0.0","to":"x"}],"risks":[]}]}"#,
    );
    assert!(
        error
            .to_string()
            .starts_with("conditionalEdges[0].edges[0].to: \"x\" is not SemVer"),
        "{error}"
    );
}

#[test]
fn matching_rule_without_type_names_the_rule() {
    let error = refused(
        r#"{"nodes":[],"edges":[],"conditionalEdges":[{"edges":[],"risks":[
            {"url":"u","name":"n","message":"m","matchingRules":[{"type":"Always"},{"promql":{"promql":"q"}}]}]}]}"#,
    );
    assert!(
        error
            .to_string()
            .starts_with("conditionalEdges[0].risks[0].matchingRules[1]: missing field `type`"),
        "{error}"
    );
}

#[test]
fn metadata_values_must_be_strings() {
    let error = refused(r#"{"nodes":[{"version":"1.0.0","payload":"p","metadata":{"k":1}}],"edges":[]}"#);
    assert!(matches!(error, WireError::Json(_)), "{error}");
}

#[test]
fn upstream_graph_builder_output_is_accepted() {
    // No top-level version, nodes out of order, an abstract node, no conditionalEdges.
    let document = wire::parse(
        br#"{"nodes":[{"version":"1.1.0+amd64","payload":"b","metadata":{"k":"v"}},{"version":"1.0.0+amd64"}],
             "edges":[[1,0]]}"#,
    )
    .unwrap();
    assert_eq!(document.api_version, None);
    let graph = &document.graph;
    assert!(graph.conditional_edges().is_empty());
    let old = graph.find(&"1.0.0+amd64".parse().unwrap()).unwrap();
    let new = graph.find(&"1.1.0+amd64".parse().unwrap()).unwrap();
    assert!(graph.release(old).unwrap().is_abstract());
    assert!(graph.has_edge(old, new));
    assert_eq!(
        String::from_utf8(wire::serialize(graph, None)).unwrap(),
        r#"{"nodes":[{"version":"1.0.0+amd64"},{"version":"1.1.0+amd64","payload":"b","metadata":{"k":"v"}}],"edges":[[0,1]],"conditionalEdges":[]}"#
    );
}

#[test]
fn unknown_matching_rules_pass_through_unchanged() {
    let json = r#"{"version":1,"nodes":[{"version":"1.0.0","payload":"a","metadata":{}},{"version":"1.1.0","payload":"b","metadata":{}}],"edges":[],"conditionalEdges":[{"edges":[{"from":"1.0.0","to":"1.1.0"}],"risks":[{"url":"u","name":"n","message":"m","matchingRules":[{"type":"Always"},{"type":"PromQL","promql":{"promql":"up"}},{"type":"Future","future":{"x":[1,2]}}]}]}]}"#;
    let document = wire::parse(json.as_bytes()).unwrap();
    let rules = &document.graph.conditional_edges()[0].risks[0].matching_rules;
    assert_eq!(rules[0], MatchingRule::Always);
    assert_eq!(rules[1], MatchingRule::PromQl { promql: "up".into() });
    assert_eq!(rules[2].type_name(), "Future");
    assert_eq!(
        String::from_utf8(wire::serialize(&document.graph, Some(1))).unwrap(),
        json
    );
}
