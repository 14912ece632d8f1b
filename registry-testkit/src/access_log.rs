//! distribution's access log: one Apache "combined" line per request on stdout,
//! e.g. `127.0.0.1 - - [22/Nov/2026:08:55:30 +0000] "GET /v2/ HTTP/1.1" 200 2 "" "curl/7.88.1"`.

/// One request the registry served, as its access log recorded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedRequest {
    pub method: String,
    /// The request target, including any query string.
    pub path: String,
    pub status: u16,
    pub user_agent: String,
}

/// What a request asked the registry API for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    /// `/v2/`, the version check clients use to discover authentication.
    ApiVersionCheck,
    Catalog,
    TagList,
    Manifest,
    Blob,
    BlobUpload,
    Other,
}

impl LoggedRequest {
    pub fn kind(&self) -> RequestKind {
        let path = self.path.split('?').next().unwrap_or_default();
        if path == "/v2/" || path == "/v2" {
            RequestKind::ApiVersionCheck
        } else if path == "/v2/_catalog" {
            RequestKind::Catalog
        } else if path.ends_with("/tags/list") {
            RequestKind::TagList
        } else if path.contains("/manifests/") {
            RequestKind::Manifest
        } else if path.contains("/blobs/uploads/") {
            RequestKind::BlobUpload
        } else if path.contains("/blobs/") {
            RequestKind::Blob
        } else {
            RequestKind::Other
        }
    }

    /// Parses one access-log line; `None` for anything else on stdout.
    pub(crate) fn parse(line: &str) -> Option<Self> {
        let (_, after_open_quote) = line.split_once('"')?;
        let (request_line, rest) = after_open_quote.split_once('"')?;
        let mut request_parts = request_line.split(' ');
        let method = request_parts.next()?.to_owned();
        let path = request_parts.next()?.to_owned();
        let status = rest.split_whitespace().next()?.parse().ok()?;
        // The user agent is the last quoted field; the referer before it may be empty.
        let without_closing_quote = rest.trim_end().strip_suffix('"')?;
        let (_, user_agent) = without_closing_quote.rsplit_once('"')?;
        Some(Self {
            method,
            path,
            status,
            user_agent: user_agent.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_combined_log_line() {
        let line = r#"127.0.0.1 - - [22/Nov/2026:08:55:30 +0000] "GET /v2/ocp/release/manifests/4.16.3 HTTP/1.1" 404 96 "" "oci-client/0.18.0""#;
        let request = LoggedRequest::parse(line).expect("a valid line");
        assert_eq!(request.method, "GET");
        assert_eq!(request.path, "/v2/ocp/release/manifests/4.16.3");
        assert_eq!(request.status, 404);
        assert_eq!(request.user_agent, "oci-client/0.18.0");
        assert_eq!(request.kind(), RequestKind::Manifest);
    }

    #[test]
    fn ignores_lines_that_are_not_access_log_lines() {
        assert_eq!(LoggedRequest::parse("time=\"x\" level=warn msg=hello"), None);
        assert_eq!(LoggedRequest::parse(""), None);
    }

    #[test]
    fn classifies_registry_api_paths() {
        let kind = |path: &str| {
            LoggedRequest {
                method: "GET".into(),
                path: path.into(),
                status: 200,
                user_agent: String::new(),
            }
            .kind()
        };
        assert_eq!(kind("/v2/"), RequestKind::ApiVersionCheck);
        assert_eq!(kind("/v2/_catalog?n=100"), RequestKind::Catalog);
        assert_eq!(kind("/v2/ocp/release/tags/list?n=20"), RequestKind::TagList);
        assert_eq!(kind("/v2/ocp/release/blobs/sha256:ab"), RequestKind::Blob);
        assert_eq!(
            kind("/v2/ocp/release/blobs/uploads/1234?digest=sha256:ab"),
            RequestKind::BlobUpload
        );
        assert_eq!(kind("/debug/vars"), RequestKind::Other);
    }
}
