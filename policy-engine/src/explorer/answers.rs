//! The JSON answers behind the explorer page: `cincinnati-client`'s
//! documents (the ones the command-line client prints for `cincinnati
//! channels`, `path`, `explain` with `-o json`), computed with the same
//! library on the engine's graph, so the page and the CLI agree (the page
//! has no rule or version order of its own):
//!
//! - `GET {prefix}/v1/architectures`: the architectures of the graph.
//! - `GET {prefix}/v1/channels?arch=`: the channels of one architecture.
//! - `GET {prefix}/v1/channel?channel=&arch=`: one channel as clusters on
//!   it see it, which the page draws: its releases in the library's
//!   version order, each with its updates by the CVO's rules; at the
//!   request's moment, with the releases phasing into it whose `start` has
//!   come and their updates phased (unless the engine does not phase),
//!   cached no longer than until the next `start` or window's end.
//! - `GET {prefix}/v1/path?from=&to=&arch=&tier=&accept=`: an update plan,
//!   or where updates stop.
//! - `GET {prefix}/v1/explain?channel=&from=&to=&arch=`: why an update is,
//!   or is not, offered.
//!
//! Answers go out as the graph's do: ETag, gzip and Cache-Control.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::LazyLock;
use std::time::Duration;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use cincinnati_client::explain::{ExplainQuery, explain};
use cincinnati_client::json::{ChannelGraphJson, ChannelsJson, ExplanationJson, PathJson, SCHEMA_VERSION};
use cincinnati_client::plan::{PathQuery, plan};
use cincinnati_client::{ChannelView, Tier};
use cincinnati_core::{ApiError, ErrorKind, Version};
use http_answers::accept::APPLICATION_JSON;
use http_answers::query::{QueryParameters, RequiredParameters};
use http_answers::{CachePolicy, HttpError, PreparedBody};
use regex::Regex;
use rollout_model::time::{Timestamp, until};
use serde::Serialize;

use super::graphs::Graphs;
use crate::client::query::{Arch, Channel};

/// A semantic version, as `/openapi` declares it: numbers without leading
/// zeros (at most ten digits, so they fit), optional pre-release and build.
pub const VERSION_PATTERN: &str = r"^(0|[1-9][0-9]{0,9})\.(0|[1-9][0-9]{0,9})\.(0|[1-9][0-9]{0,9})(-(0|[1-9][0-9]{0,9}|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9][0-9]{0,9}|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$";

static VERSION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(VERSION_PATTERN).expect("the pattern compiles"));

/// `{"kind": "Architectures", "schemaVersion": 1, "architectures": [...]}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArchitecturesJson<'a> {
    kind: &'static str,
    schema_version: u32,
    architectures: Vec<&'a str>,
}

pub async fn architectures(
    request: HttpRequest,
    graphs: web::Data<Graphs>,
    caching: web::Data<CachePolicy>,
) -> Result<HttpResponse, HttpError> {
    if let Some(answer) = forwarded(&request, &graphs, "architectures", &caching).await {
        return answer;
    }
    let architectures = graphs.architectures()?;
    let document = ArchitecturesJson {
        kind: "Architectures",
        schema_version: SCHEMA_VERSION,
        architectures: architectures.iter().map(String::as_str).collect(),
    };
    respond(&request, &document, &caching)
}

pub async fn channels(
    request: HttpRequest,
    graphs: web::Data<Graphs>,
    caching: web::Data<CachePolicy>,
) -> Result<HttpResponse, HttpError> {
    let parameters = QueryParameters::parse(request.query_string());
    let arch = arch(&parameters, &graphs)?;
    if let Some(answer) = forwarded(&request, &graphs, "channels", &caching).await {
        return answer;
    }
    let graph = graphs.of(&arch).await?;
    let views: Vec<ChannelView> = graph.channels().collect();
    respond(&request, &ChannelsJson::new(graph.arch(), None, &views), &caching)
}

pub async fn channel(
    request: HttpRequest,
    graphs: web::Data<Graphs>,
    caching: web::Data<CachePolicy>,
) -> Result<HttpResponse, HttpError> {
    let parameters = QueryParameters::parse(request.query_string());
    RequiredParameters::new(["channel".to_owned()]).check(&parameters)?;
    let channel = Channel::parse(parameters.get("channel").unwrap_or_default())?;
    let arch = arch(&parameters, &graphs)?;
    if let Some(answer) = forwarded(&request, &graphs, "channel", &caching).await {
        return answer;
    }
    let graph = graphs.of(&arch).await?;
    // A release phasing into the channel is in it from its start: the
    // request's moment decides.
    let now = Timestamp::now();
    let channel = graphs.channel_at(&graph, channel.as_str(), now);
    // Not kept by caches beyond the next start or window's end.
    let valid_for = channel.next_change().map(|at| until(now, at));
    respond(
        &request,
        &ChannelGraphJson::new(&channel),
        &caching_for(&caching, &graphs, valid_for),
    )
}

pub async fn path(
    request: HttpRequest,
    graphs: web::Data<Graphs>,
    caching: web::Data<CachePolicy>,
) -> Result<HttpResponse, HttpError> {
    let parameters = QueryParameters::parse(request.query_string());
    RequiredParameters::new(["from".to_owned(), "to".to_owned()]).check(&parameters)?;
    let query = PathQuery {
        from: version(&parameters, "from")?,
        to: version(&parameters, "to")?,
        tier: tier(&parameters)?,
        accepted_risks: accepted_risks(&parameters),
        alternatives: 0,
    };
    let arch = arch(&parameters, &graphs)?;
    if let Some(answer) = forwarded(&request, &graphs, "path", &caching).await {
        return answer;
    }
    let graph = graphs.of(&arch).await?;
    let answer = plan(&graph, &query);
    respond(&request, &PathJson::new(graph.arch(), &query, &answer), &caching)
}

pub async fn explanation(
    request: HttpRequest,
    graphs: web::Data<Graphs>,
    caching: web::Data<CachePolicy>,
) -> Result<HttpResponse, HttpError> {
    let parameters = QueryParameters::parse(request.query_string());
    RequiredParameters::new(["channel", "from", "to"].map(str::to_owned)).check(&parameters)?;
    let channel = Channel::parse(parameters.get("channel").unwrap_or_default())?;
    let query = ExplainQuery {
        channel: channel.as_str().to_owned(),
        from: version(&parameters, "from")?,
        to: version(&parameters, "to")?,
    };
    let arch = arch(&parameters, &graphs)?;
    if let Some(answer) = forwarded(&request, &graphs, "explain", &caching).await {
        return answer;
    }
    let graph = graphs.of(&arch).await?;
    // The engine has the graph, not the graph-data it was built with: the
    // explanation names a block by the `remove_regex` the graph carries.
    let explanation = explain(&graph, &query, None);
    respond(&request, &ExplanationJson::new(&explanation), &caching)
}

/// An engine chained to another engine has no full graph to plan on: it
/// answers a question it has checked with the upstream engine's explorer
/// (which may forward in turn): its answer as it is, cached no longer than
/// the upstream says (a channel with releases phasing into it changes at
/// the next `start`), and its refusals of the question (4xx); any other
/// failure of the upstream (5xx, or one about access: 401, 403, 407) is
/// this engine's 503. `None` on an engine with the graph.
async fn forwarded(
    request: &HttpRequest,
    graphs: &Graphs,
    endpoint: &str,
    caching: &CachePolicy,
) -> Option<Result<HttpResponse, HttpError>> {
    let fetched = graphs.upstream_answer(endpoint, request.query_string()).await?;
    Some(match fetched {
        Ok(answer) if answer.status.is_success() => {
            let caching = caching_for(caching, graphs, upstream_max_age(&answer.headers));
            Ok(PreparedBody::new(answer.body).respond(request, APPLICATION_JSON, &caching))
        }
        Ok(answer)
            if answer.status.is_client_error() && ![401, 403, 407].contains(&answer.status.as_u16()) =>
        {
            let status = StatusCode::from_u16(answer.status.as_u16()).unwrap_or(StatusCode::BAD_REQUEST);
            Ok(HttpResponse::build(status)
                .content_type(APPLICATION_JSON)
                .body(answer.body))
        }
        Ok(answer) => Err(ApiError::new(
            ErrorKind::ServiceUnavailable,
            format_args!("the upstream engine answered {}", answer.status),
        )
        .into()),
        Err(error) => Err(ApiError::new(ErrorKind::ServiceUnavailable, error).into()),
    })
}

/// The caching of an answer that stays true for `valid_for` (none: until
/// the graph changes): `caching`, unless its max-age would keep it longer.
fn caching_for<'c>(
    caching: &'c CachePolicy,
    graphs: &Graphs,
    valid_for: Option<Duration>,
) -> Cow<'c, CachePolicy> {
    match valid_for {
        Some(valid_for) if valid_for < graphs.cache_max_age() => {
            Cow::Owned(CachePolicy::revalidate_after(valid_for))
        }
        _ => Cow::Borrowed(caching),
    }
}

/// How long the upstream engine lets caches keep its answer: its
/// `Cache-Control` max-age, zero for `no-cache`; `None` when it says
/// neither.
fn upstream_max_age(headers: &http_fetch::HeaderMap) -> Option<Duration> {
    let cache_control = headers.get("cache-control")?.to_str().ok()?;
    cache_control
        .split(',')
        .map(str::trim)
        .find_map(|directive| match directive.strip_prefix("max-age=") {
            Some(seconds) => seconds.parse().ok().map(Duration::from_secs),
            None => (directive == "no-cache").then_some(Duration::ZERO),
        })
}

fn respond(
    request: &HttpRequest,
    document: &impl Serialize,
    caching: &CachePolicy,
) -> Result<HttpResponse, HttpError> {
    let body =
        serde_json::to_vec(document).map_err(|error| ApiError::new(ErrorKind::FailedJsonOut, error))?;
    Ok(PreparedBody::new(body).respond(request, APPLICATION_JSON, caching))
}

/// The architecture asked about; without one, the engine's default, as
/// for the graph.
fn arch(parameters: &QueryParameters, graphs: &Graphs) -> Result<Arch, ApiError> {
    parameters
        .get("arch")
        .map_or_else(|| Ok(graphs.default_arch().clone()), Arch::parse)
}

fn version(parameters: &QueryParameters, name: &str) -> Result<Version, ApiError> {
    let raw = parameters.get(name).unwrap_or_default();
    VERSION
        .is_match(raw)
        .then(|| Version::parse(raw).ok())
        .flatten()
        .ok_or_else(|| ApiError::invalid_param(name, raw, VERSION_PATTERN))
}

fn tier(parameters: &QueryParameters) -> Result<Tier, ApiError> {
    let raw = parameters.get("tier").unwrap_or(Tier::Stable.as_str());
    raw.parse()
        .map_err(|error| ApiError::new(ErrorKind::InvalidParams, error))
}

/// `accept=a,b`: the risks whose conditional updates a plan may take.
fn accepted_risks(parameters: &QueryParameters) -> BTreeSet<String> {
    parameters
        .get("accept")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use cincinnati_client::UpdateGraph;
    use cincinnati_client::document::{Document, Shape};
    use serde_json::json;

    use super::*;
    use crate::test_graphs::graph;

    /// candidate-4.18 on amd64: versions whose string order is not their
    /// order (4.18.9 and 4.18.10, release candidates 2 and 10), an update
    /// listed both as recommended and as conditional (4.18.9 → 4.18.10),
    /// a risk with a rule clusters cannot evaluate beside one they can
    /// (4.18.0 → 4.18.9) and one with none (4.18.0 → 4.18.10, dropped); a
    /// release of another channel updating into it (4.17.5).
    const CANDIDATE_4_18: &str = r#"{
      "nodes": [
        {"version": "4.18.10+amd64", "payload": "p/4.18.10", "metadata": {"io.openshift.upgrades.graph.release.channels": "candidate-4.18", "url": "https://errata/10"}},
        {"version": "4.18.0-rc.10+amd64", "payload": "p/4.18.0-rc.10", "metadata": {"io.openshift.upgrades.graph.release.channels": "candidate-4.18"}},
        {"version": "4.18.9+amd64", "payload": "p/4.18.9", "metadata": {"io.openshift.upgrades.graph.release.channels": "candidate-4.18"}},
        {"version": "4.18.0+amd64", "payload": "p/4.18.0", "metadata": {"io.openshift.upgrades.graph.release.channels": "candidate-4.18"}},
        {"version": "4.18.2+amd64", "payload": "p/4.18.2", "metadata": {"io.openshift.upgrades.graph.release.channels": "candidate-4.18"}},
        {"version": "4.18.0-rc.2+amd64", "payload": "p/4.18.0-rc.2", "metadata": {"io.openshift.upgrades.graph.release.channels": "candidate-4.18"}},
        {"version": "4.17.5+amd64", "payload": "p/4.17.5", "metadata": {"io.openshift.upgrades.graph.release.channels": "candidate-4.17"}}
      ],
      "edges": [[5, 1], [1, 3], [3, 4], [4, 2], [4, 0], [2, 0], [6, 4]],
      "conditionalEdges": [
        {"edges": [{"from": "4.18.9+amd64", "to": "4.18.10+amd64"}],
         "risks": [{"url": "https://risk/both", "name": "Both", "message": "listed twice", "matchingRules": [{"type": "Always"}]}]},
        {"edges": [{"from": "4.18.0+amd64", "to": "4.18.9+amd64"}],
         "risks": [{"url": "https://risk/pruned", "name": "Pruned", "message": "one rule left",
                    "matchingRules": [{"type": "Future"}, {"type": "PromQL", "promql": {"promql": "up == 0"}}]}]},
        {"edges": [{"from": "4.18.0+amd64", "to": "4.18.10+amd64"}],
         "risks": [{"url": "https://risk/none", "name": "Unevaluable", "message": "no rule left", "matchingRules": [{"type": "Future"}]}]}
      ]
    }"#;

    fn amd64(json: &str) -> UpdateGraph {
        UpdateGraph::build(
            "amd64",
            &[Document {
                graph: graph(json),
                shape: Shape::Full,
            }],
        )
    }

    #[test]
    fn a_channel_is_answered_in_version_order_with_the_updates_the_cvo_offers() {
        let graph = amd64(CANDIDATE_4_18);
        let answer =
            serde_json::to_value(ChannelGraphJson::new(&graph.channel_as_listed("candidate-4.18"))).unwrap();
        let release = |version: &str, url: Option<&str>, updates: serde_json::Value| {
            json!({
                "version": version,
                "payload": format!("p/{version}"),
                "url": url,
                "channels": ["candidate-4.18"],
                "updates": updates,
            })
        };
        let recommended = |to: &str| json!({"to": to, "recommended": true, "risks": []});
        let expected = json!({
            "kind": "ChannelGraph",
            "schemaVersion": SCHEMA_VERSION,
            "channel": "candidate-4.18",
            "arch": "amd64",
            "releases": [
                release("4.18.0-rc.2", None, json!([recommended("4.18.0-rc.10")])),
                release("4.18.0-rc.10", None, json!([recommended("4.18.0")])),
                release("4.18.0", None, json!([
                    {"to": "4.18.9", "recommended": false, "risks": [{
                        "url": "https://risk/pruned", "name": "Pruned", "message": "one rule left",
                        "matchingRules": [{"type": "PromQL", "promql": {"promql": "up == 0"}}],
                    }]},
                    recommended("4.18.2"),
                ])),
                release("4.18.2", None, json!([recommended("4.18.10"), recommended("4.18.9")])),
                release("4.18.9", None, json!([{"to": "4.18.10", "recommended": false, "risks": [{
                    "url": "https://risk/both", "name": "Both", "message": "listed twice",
                    "matchingRules": [{"type": "Always"}],
                }]}])),
                release("4.18.10", Some("https://errata/10"), json!([])),
            ],
            "recommendedCount": 5,
            "conditionalCount": 2,
            "phasedCount": 0,
        });
        assert_eq!(answer, expected);
    }

    #[test]
    fn a_channel_no_release_is_in_has_no_releases() {
        let graph = amd64(CANDIDATE_4_18);
        let answer =
            serde_json::to_value(ChannelGraphJson::new(&graph.channel_as_listed("stable-4.18"))).unwrap();
        assert_eq!(answer["releases"], json!([]));
        assert_eq!(
            (&answer["recommendedCount"], &answer["conditionalCount"]),
            (&json!(0), &json!(0))
        );
    }

    #[test]
    fn versions_are_refused_unless_the_documented_pattern_matches() {
        let from = |value: &str| version(&QueryParameters::parse(&format!("from={value}")), "from");
        for good in ["4.18.1", "4.18.0-rc.3", "4.18.1%2Bamd64", "0.0.0-a-b.0"] {
            assert!(from(good).is_ok(), "{good}");
        }
        for bad in ["4.18", "04.18.1", "4.18.1-01", "4.18.1-", "99999999999.0.0", ""] {
            let error = from(bad).unwrap_err();
            assert_eq!(error.kind, ErrorKind::InvalidParams, "{bad}");
        }
    }

    #[test]
    fn the_upstream_s_max_age_is_read_from_its_cache_control() {
        let max_age = |value: &str| {
            let mut headers = http_fetch::HeaderMap::new();
            headers.insert("cache-control", value.parse().unwrap());
            upstream_max_age(&headers)
        };
        assert_eq!(
            max_age("public, max-age=90, must-revalidate"),
            Some(Duration::from_secs(90))
        );
        assert_eq!(max_age("public, no-cache"), Some(Duration::ZERO));
        assert_eq!(max_age("private"), None);
        assert_eq!(upstream_max_age(&http_fetch::HeaderMap::new()), None);
    }

    #[test]
    fn accepted_risks_are_a_comma_separated_list() {
        let parameters = QueryParameters::parse("accept=A,%20B,,A");
        assert_eq!(
            accepted_risks(&parameters).into_iter().collect::<Vec<_>>(),
            ["A", "B"]
        );
    }
}
