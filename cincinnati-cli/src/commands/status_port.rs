//! What `fleet` and `rollout` share: a policy-engine's answers on its
//! status port (`{prefix}/v1/fleet/...`, `{prefix}/v1/rollouts/...`), where
//! they are, and how a document or an error answered there is read.
//!
//! The documents are `cincinnati_client`'s (each starts with
//! `cincinnati_client::fleet::Header`); errors are the services' JSON
//! errors (`{kind, value}`).

use anyhow::anyhow;
use cincinnati_client::Source;
use cincinnati_client::cluster_policy::explain_url_of;
use cincinnati_client::fetch::one_line;
use cincinnati_client::fleet::Header;
use cincinnati_client::json::SCHEMA_VERSION;
use cincinnati_core::ErrorKind;
use http_fetch::{Response, StatusCode, Url};
use serde::de::DeserializeOwned;

use crate::cli::Common;
use crate::input::Input;
use crate::outcome::{Failure, FailureKind};

/// The value of http-answers' 404 for a path no route matches (an engine
/// has some routes only when configured for them), unlike a 404 of a route
/// that names something the engine does not have.
const NO_ROUTE: &str = "does not exist: path ";

/// A document an engine answers, known by its `kind`.
pub trait EngineDocument: DeserializeOwned {
    const KIND: &'static str;
}

/// Where a command finds an engine's answers of one family.
pub struct Answers {
    /// The command asking (`fleet`).
    pub command: &'static str,
    /// Its flag naming them (`--fleet-url`).
    pub flag: &'static str,
    /// Their path under the engine's prefix (`/v1/fleet`).
    pub route: &'static str,
    /// What they are, in messages (`the fleet answers`).
    pub what: &'static str,
}

impl Answers {
    /// Their base URL: `given` (the command's flag), else those of the
    /// engine `--url` names (when given: the public service has no status
    /// port to ask).
    pub fn locate(&self, input: &Input, common: &Common, given: Option<&str>) -> Result<Url, Failure> {
        match (given, input.fetcher.source()) {
            (Some(text), _) => match Source::parse(text)? {
                Source::Url(url) => Ok(url),
                Source::File(_) => Err(Failure::input(anyhow!(
                    "{} {text:?} is not an http:// or https:// URL",
                    self.flag
                ))),
            },
            (None, Source::Url(graph_url)) if common.given.url => status_url_of(graph_url, self.route)
                .ok_or_else(|| {
                    Failure::input(anyhow!(
                        "cannot tell {} of {graph_url}; give {}",
                        self.what,
                        self.flag
                    ))
                }),
            (None, _) => Err(Failure::input(anyhow!(
                "{} asks a policy-engine's status port: give --url (the engine's graph URL) or {}",
                self.command,
                self.flag
            ))),
        }
    }
}

/// The answers at `route` (`/v1/fleet`) of the engine serving `graph_url`,
/// by the ports' convention (as its explain endpoint): the status port,
/// 1000 above the API's, and `{prefix}{route}` for `{prefix}/graph`.
fn status_url_of(graph_url: &Url, route: &str) -> Option<Url> {
    let mut url = explain_url_of(graph_url)?;
    let prefix = url.path().strip_suffix("/v1/explain-cluster")?.to_owned();
    url.set_path(&format!("{prefix}{route}"));
    Some(url)
}

/// `{base}/{route}?{parameters}`: the route's segments (escaped) under the
/// base, and the parameters that have a value.
pub fn route_url(base: &Url, route: &[&str], parameters: &[(&str, Option<String>)]) -> Url {
    let mut url = base.clone();
    url.path_segments_mut()
        .expect("an http URL has a path")
        .pop_if_empty()
        .extend(route);
    let given: Vec<(&str, &str)> = parameters
        .iter()
        .filter_map(|(name, value)| Some((*name, value.as_deref()?)))
        .collect();
    url.set_query(None);
    if !given.is_empty() {
        url.query_pairs_mut().extend_pairs(given);
    }
    url
}

/// The document an engine answered, or why it did not: an error answer is
/// said with what `hint` adds for its status (what to do about it).
pub fn read<D: EngineDocument>(
    response: Response,
    hint: impl FnOnce(StatusCode) -> Option<String>,
) -> Result<D, Failure> {
    let url = &response.url;
    if !response.status.is_success() {
        let status = response.status.as_u16();
        let said = said(&response.body);
        return Err(service(match hint(response.status) {
            Some(hint) => anyhow!("{url} answered {status} ({said}): {hint}"),
            None => anyhow!("{url} answered {status}: {said}"),
        }));
    }
    let header: Header = serde_json::from_slice(&response.body)
        .map_err(|error| service(anyhow!("{url} is not a {} document: {error}", D::KIND)))?;
    if header.kind != D::KIND {
        return Err(service(anyhow!(
            "{url} answered a {:?} document, not {}",
            header.kind,
            D::KIND
        )));
    }
    serde_json::from_slice(&response.body).map_err(|error| {
        let schema = if header.schema_version == SCHEMA_VERSION {
            String::new()
        } else {
            format!(
                " of schemaVersion {} (this cincinnati reads {SCHEMA_VERSION})",
                header.schema_version
            )
        };
        service(anyhow!("{url} is not a {} document{schema}: {error}", D::KIND))
    })
}

/// What the engine said of something a route names that it does not have
/// (an unknown cluster, a rollout its policy file does not declare): a 404
/// `does_not_exist` of the route, not of a path without a route.
pub fn does_not_exist(response: &Response) -> Option<String> {
    if response.status != StatusCode::NOT_FOUND {
        return None;
    }
    let error = ErrorBody::of(&response.body)?;
    (error.kind.parse() == Ok(ErrorKind::DoesNotExist) && !error.value.starts_with(NO_ROUTE))
        .then_some(error.value)
}

/// The service's JSON error.
#[derive(serde::Deserialize)]
struct ErrorBody {
    kind: String,
    value: String,
}

impl ErrorBody {
    fn of(body: &[u8]) -> Option<Self> {
        serde_json::from_slice(body).ok()
    }
}

/// What an error answer says: `kind: value` of a JSON error, else the body
/// on one line, shortened.
fn said(body: &[u8]) -> String {
    if let Some(error) = ErrorBody::of(body) {
        return format!("{}: {}", error.kind, error.value);
    }
    match one_line(body) {
        text if text.is_empty() => "an empty body".to_owned(),
        text => text,
    }
}

fn service(error: anyhow::Error) -> Failure {
    Failure {
        kind: FailureKind::Service,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answers_are_on_the_status_port_under_the_prefix() {
        let url = |text: &str, route| status_url_of(&text.parse().unwrap(), route).map(|url| url.to_string());
        assert_eq!(
            url(
                "http://127.0.0.1:8082/api/upgrades_info/graph?channel=x",
                "/v1/fleet"
            )
            .as_deref(),
            Some("http://127.0.0.1:9082/api/upgrades_info/v1/fleet")
        );
        assert_eq!(
            url("http://pe:8081/v1/graph", "/v1/rollouts").as_deref(),
            Some("http://pe:9081/v1/rollouts")
        );
        assert_eq!(url("http://pe:8081/somewhere", "/v1/fleet"), None);
    }

    #[test]
    fn a_route_is_escaped_under_the_base_and_only_given_parameters_are_sent() {
        let base: Url = "http://pe:9081/api/v1/rollouts/?stale=1".parse().unwrap();
        let url = route_url(
            &base,
            &["4.18.52+amd64", "progress"],
            &[
                ("reason", Some("storage alarms & co".to_owned())),
                ("percent", None),
            ],
        );
        assert_eq!(
            url.as_str(),
            "http://pe:9081/api/v1/rollouts/4.18.52+amd64/progress?reason=storage+alarms+%26+co"
        );
        assert_eq!(
            route_url(&base, &[], &[]).as_str(),
            "http://pe:9081/api/v1/rollouts"
        );
    }
}
