//! The error model both services answer with: `{"kind": ..., "value": ...}`.

use serde::Serialize;

/// Every error kind clients and dashboards know, with its HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    FailedJsonIn,
    FailedJsonOut,
    FailedUpstreamFetch,
    FailedPluginExecution,
    FailedUpstreamRequest,
    InvalidContentType,
    MissingParams,
    InvalidParams,
    ArchVersionError,
    FileOpenError,
    DoesNotExist,
    /// Not an upstream kind: upstream answered a wrong method with an empty
    /// body. Clients never send one; a JSON error is easier to debug.
    MethodNotAllowed,
    /// Not an upstream kind: upstream hung or answered 500 before its first
    /// graph. We answer 503 so load balancers and clients retry elsewhere.
    ServiceUnavailable,
    /// Not an upstream kind: an operator endpoint asked without a bearer
    /// token (401, with `WWW-Authenticate: Bearer`).
    Unauthorized,
    /// Not an upstream kind: an operator endpoint asked with a token it
    /// does not know (403).
    Forbidden,
    /// Not an upstream kind: a request to the status port naming a host
    /// the server does not answer for (421, RFC 9110 §15.5.20).
    MisdirectedRequest,
}

/// What clients and dashboards know of each kind, in declaration order:
/// the `kind` string on the wire, the HTTP status, and the prefix upstream
/// puts before the detail in `value`.
const FACTS: [(ErrorKind, &str, u16, &str); 16] = [
    (
        ErrorKind::FailedJsonIn,
        "failed_json_in",
        500,
        "failed to deserialize JSON",
    ),
    (
        ErrorKind::FailedJsonOut,
        "failed_json_out",
        500,
        "failed to serialize JSON",
    ),
    (
        ErrorKind::FailedUpstreamFetch,
        "failed_upstream_fetch",
        500,
        "failed to fetch upstream graph",
    ),
    (
        ErrorKind::FailedPluginExecution,
        "failed_plugin_execution",
        500,
        "failed to execute plugins",
    ),
    (
        ErrorKind::FailedUpstreamRequest,
        "failed_upstream_request",
        500,
        "failed to assemble upstream request",
    ),
    (
        ErrorKind::InvalidContentType,
        "invalid_content_type",
        406,
        "invalid Content-Type requested",
    ),
    (
        ErrorKind::MissingParams,
        "missing_params",
        400,
        "mandatory client parameters missing",
    ),
    (
        ErrorKind::InvalidParams,
        "invalid_params",
        400,
        "invalid client parameters",
    ),
    (
        ErrorKind::ArchVersionError,
        "arch_version_error",
        500,
        "failed to process version",
    ),
    (
        ErrorKind::FileOpenError,
        "file_open_err",
        500,
        "failed to open file",
    ),
    (ErrorKind::DoesNotExist, "does_not_exist", 404, "does not exist"),
    (
        ErrorKind::MethodNotAllowed,
        "method_not_allowed",
        405,
        "method not allowed",
    ),
    (
        ErrorKind::ServiceUnavailable,
        "service_unavailable",
        503,
        "service unavailable",
    ),
    (
        ErrorKind::Unauthorized,
        "unauthorized",
        401,
        "authentication required",
    ),
    (ErrorKind::Forbidden, "forbidden", 403, "not allowed"),
    (
        ErrorKind::MisdirectedRequest,
        "misdirected_request",
        421,
        "misdirected request",
    ),
];

impl ErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: [ErrorKind; 16] = {
        let mut all = [ErrorKind::FailedJsonIn; 16];
        let mut position = 0;
        while position < FACTS.len() {
            all[position] = FACTS[position].0;
            position += 1;
        }
        all
    };

    fn facts(self) -> &'static (ErrorKind, &'static str, u16, &'static str) {
        &FACTS[self as usize]
    }

    /// The `kind` string on the wire.
    pub fn as_str(self) -> &'static str {
        self.facts().1
    }

    /// The HTTP status code answered with this kind.
    pub fn status_code(self) -> u16 {
        self.facts().2
    }

    /// The prefix upstream puts before the detail in `value`.
    fn value_prefix(self) -> &'static str {
        self.facts().3
    }
}

/// A `kind` string no kind has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown error kind {0:?}")]
pub struct UnknownErrorKind(pub String);

impl std::str::FromStr for ErrorKind {
    type Err = UnknownErrorKind;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        FACTS
            .iter()
            .find(|(_, name, ..)| *name == text)
            .map(|(kind, ..)| *kind)
            .ok_or_else(|| UnknownErrorKind(text.to_owned()))
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error as answered to a client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {value}")]
pub struct ApiError {
    pub kind: ErrorKind,
    pub value: String,
}

impl ApiError {
    /// An error whose value is upstream's prefix for `kind` followed by `detail`.
    pub fn new(kind: ErrorKind, detail: impl std::fmt::Display) -> Self {
        Self {
            kind,
            value: format!("{}: {detail}", kind.value_prefix()),
        }
    }

    /// An error whose value is upstream's fixed text for `kind`.
    pub fn bare(kind: ErrorKind) -> Self {
        Self {
            kind,
            value: kind.value_prefix().to_owned(),
        }
    }

    /// `missing_params` naming the parameters, sorted as upstream does.
    pub fn missing_params<S: AsRef<str>>(names: &[S]) -> Self {
        let mut names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
        names.sort_unstable();
        Self::new(ErrorKind::MissingParams, names.join(", "))
    }

    /// `invalid_params` for a parameter that does not match its pattern.
    pub fn invalid_param(name: &str, value: &str, pattern: &str) -> Self {
        Self::new(
            ErrorKind::InvalidParams,
            format_args!("{name} '{value}' does not match regex '{pattern}'"),
        )
    }

    pub fn status_code(&self) -> u16 {
        self.kind.status_code()
    }

    /// The JSON body: `{"kind": ..., "value": ...}`.
    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct Body<'a> {
            kind: &'a str,
            value: &'a str,
        }
        serde_json::to_string(&Body {
            kind: self.kind.as_str(),
            value: &self.value,
        })
        .expect("serialising strings cannot fail")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_kinds_keep_their_names_and_statuses() {
        let expected = [
            ("failed_json_in", 500),
            ("failed_json_out", 500),
            ("failed_upstream_fetch", 500),
            ("failed_plugin_execution", 500),
            ("failed_upstream_request", 500),
            ("invalid_content_type", 406),
            ("missing_params", 400),
            ("invalid_params", 400),
            ("arch_version_error", 500),
            ("file_open_err", 500),
            ("does_not_exist", 404),
        ];
        for (name, status) in expected {
            let kind = ErrorKind::ALL
                .into_iter()
                .find(|kind| kind.as_str() == name)
                .unwrap_or_else(|| panic!("kind {name} is missing"));
            assert_eq!(kind.status_code(), status, "{name}");
        }
    }

    #[test]
    fn the_table_is_in_declaration_order_and_names_parse_back() {
        for (position, (kind, name, ..)) in FACTS.iter().enumerate() {
            assert_eq!(*kind as usize, position, "{name}");
            assert_eq!(name.parse::<ErrorKind>(), Ok(*kind));
        }
        assert_eq!(
            "no_such_kind".parse::<ErrorKind>(),
            Err(UnknownErrorKind("no_such_kind".to_owned()))
        );
    }

    #[test]
    fn missing_params_are_sorted_like_upstream() {
        let error = ApiError::missing_params(&["version", "channel"]);
        assert_eq!(
            error.to_json(),
            r#"{"kind":"missing_params","value":"mandatory client parameters missing: channel, version"}"#
        );
        assert_eq!(error.status_code(), 400);
    }

    #[test]
    fn invalid_param_names_the_pattern() {
        let error = ApiError::invalid_param("channel", "fast-4 9", r"^[0-9a-z\-\.]+$");
        assert_eq!(
            error.value,
            r"invalid client parameters: channel 'fast-4 9' does not match regex '^[0-9a-z\-\.]+$'"
        );
    }

    #[test]
    fn bodies_escape_their_values() {
        let error = ApiError::new(ErrorKind::FailedUpstreamFetch, "\"quoted\"\n");
        let body: serde_json::Value = serde_json::from_str(&error.to_json()).unwrap();
        assert_eq!(body["value"], "failed to fetch upstream graph: \"quoted\"\n");
        assert_eq!(body["kind"], "failed_upstream_fetch");
    }
}
