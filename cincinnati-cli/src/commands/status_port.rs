//! What `fleet` and `rollout` share: a policy-engine's answers on its
//! status port (`{prefix}/v1/fleet/...`, `{prefix}/v1/rollouts/...`), where
//! they are, the token sent there, and how a document or an error answered
//! there is read.
//!
//! The documents are `cincinnati_client`'s (each starts with
//! `cincinnati_client::header::Header`); errors are the services' JSON
//! errors (`{kind, value}`).

use std::path::Path;

use anyhow::{Context as _, anyhow};
use cincinnati_client::Source;
use cincinnati_client::cluster_policy::explain_url_of;
use cincinnati_client::fetch::one_line;
use cincinnati_client::header::Header;
use cincinnati_client::json::SCHEMA_VERSION;
use cincinnati_client::tokens;
use cincinnati_core::ErrorKind;
use http_fetch::{Method, Response, StatusCode, Url};
use serde::de::DeserializeOwned;

use crate::cli::Common;
use crate::input::Input;
use crate::outcome::{Failure, FailureKind};

/// The environment variable holding the token when `--token-file` is not
/// given.
const TOKEN_VARIABLE: &str = "CINCINNATI_TOKEN";

/// The value of http-answers' 404 for a path no route matches (an engine
/// has some routes only when configured for them), unlike a 404 of a route
/// that names something the engine does not have.
const NO_ROUTE: &str = "does not exist: path ";

/// A document an engine answers, known by its `kind`.
pub trait EngineDocument: DeserializeOwned {
    const KIND: &'static str;
}

/// An engine's answers of one family, the token sent there and the
/// client asking.
pub struct StatusPort<'a> {
    base: Url,
    token: Option<Token>,
    input: &'a Input,
    answers: &'static Answers,
}

impl<'a> StatusPort<'a> {
    /// `answers` at `given` (the command's flag), else those of the engine
    /// `--url` names, with the token of `token_file`, else of
    /// `CINCINNATI_TOKEN`.
    pub fn new(
        input: &'a Input,
        common: &Common,
        answers: &'static Answers,
        given: Option<&str>,
        token_file: Option<&Path>,
    ) -> Result<Self, Failure> {
        Ok(Self {
            base: answers.locate(input, common, given)?,
            token: Token::given(token_file)?,
            input,
            answers,
        })
    }

    /// `method {base}/{route}?{parameters}` with the token, whatever the
    /// status.
    pub async fn send(
        &self,
        method: Method,
        route: &[&str],
        parameters: &[(&str, Option<String>)],
    ) -> Result<Response, Failure> {
        let url = route_url(&self.base, route, parameters);
        let bearer = self.token.as_ref().map(|token| token.secret.as_str());
        self.input
            .send_with_token(self.answers.command, method, &url, bearer)
            .await
    }

    /// The document at `route`.
    pub async fn ask<D: EngineDocument>(
        &self,
        route: &[&str],
        parameters: &[(&str, Option<String>)],
    ) -> Result<D, Failure> {
        self.read(self.send(Method::GET, route, parameters).await?)
    }

    /// The document the engine answered, or why it did not, with what to
    /// do about a refusal of the token and about a 404 (an engine without
    /// these answers).
    pub fn read<D: EngineDocument>(&self, response: Response) -> Result<D, Failure> {
        read(response, |status| match status {
            StatusCode::UNAUTHORIZED => Some(match &self.token {
                None => format!(
                    "no token given: --token-file FILE or the environment variable {TOKEN_VARIABLE} \
                     gives one of the engine's rollouts.token_file"
                ),
                Some(token) => format!(
                    "the token from {} was sent, and did not arrive: something between may drop \
                     the Authorization header",
                    token.from
                ),
            }),
            StatusCode::FORBIDDEN => self.token.as_ref().map(|token| {
                format!(
                    "the token from {} is not one of the engine's rollouts.token_file, or its scope \
                     does not allow this (read: the rollouts and the fleet; pause: also pause; \
                     operate: everything)",
                    token.from
                )
            }),
            StatusCode::NOT_FOUND => Some(self.answers.missing.to_owned()),
            _ => None,
        })
    }
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
    /// Why an engine may not have them, and what to do (said on a 404).
    pub missing: &'static str,
}

impl Answers {
    /// Their base URL: `given` (the command's flag), else those of the
    /// engine `--url` names (when given: the public service has no status
    /// port to ask).
    fn locate(&self, input: &Input, common: &Common, given: Option<&str>) -> Result<Url, Failure> {
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
fn route_url(base: &Url, route: &[&str], parameters: &[(&str, Option<String>)]) -> Url {
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
fn read<D: EngineDocument>(
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

/// The bearer token sent, and where it was read (for messages: the token
/// itself is never printed).
struct Token {
    secret: String,
    from: String,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

impl Token {
    /// The first token of `--token-file` (read as the engine reads its
    /// own), else `CINCINNATI_TOKEN` (when not blank); none without either.
    fn given(file: Option<&Path>) -> Result<Option<Self>, Failure> {
        if let Some(path) = file {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading --token-file {}", path.display()))
                .map_err(Failure::input)?;
            let first = tokens::parse(&text)
                .map_err(|problem| anyhow!("--token-file {}: {problem}", path.display()))
                .map_err(Failure::input)?
                .into_iter()
                .next()
                .ok_or_else(|| {
                    Failure::input(anyhow!(
                        "--token-file {} holds no token (a line `name token [scope]`, or the token alone)",
                        path.display()
                    ))
                })?;
            return Ok(Some(Self {
                secret: first.token,
                from: format!("--token-file {}", path.display()),
            }));
        }
        let secret = std::env::var(TOKEN_VARIABLE).unwrap_or_default();
        Ok((!secret.trim().is_empty()).then(|| Self {
            secret: secret.trim().to_owned(),
            from: TOKEN_VARIABLE.to_owned(),
        }))
    }
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
    fn a_token_file_without_a_token_is_refused_and_the_token_never_shown() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "# nothing\n").unwrap();
        let refused = Token::given(Some(&file)).unwrap_err();
        assert!(
            refused.error.to_string().contains("holds no token"),
            "{}",
            refused.error
        );
        std::fs::write(&file, "# operators\n\nops s3cret read\nci other\n").unwrap();
        let token = Token::given(Some(&file)).unwrap().unwrap();
        assert_eq!(token.secret, "s3cret");
        assert!(!format!("{token:?}").contains("s3cret"), "{token:?}");
        std::fs::write(&file, "bare-token\n").unwrap();
        assert_eq!(Token::given(Some(&file)).unwrap().unwrap().secret, "bare-token");
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
