use oci_client::client::ClientProtocol;

use crate::error::Error;

/// A registry given as `http://host:port` (plain HTTP), `https://host:port`
/// or `host:port` (TLS), like the graph-builder's `registry` setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RegistryUrl {
    pub(crate) protocol: ClientProtocol,
    pub(crate) host_port: String,
}

impl RegistryUrl {
    pub(crate) fn parse(url: &str) -> Result<Self, Error> {
        let invalid = |reason| Error::InvalidRegistryUrl {
            url: url.to_owned(),
            reason,
        };
        let (protocol, rest) = match url.split_once("://") {
            Some(("http", rest)) => (ClientProtocol::Http, rest),
            Some(("https", rest)) => (ClientProtocol::Https, rest),
            Some(_) => return Err(invalid("the scheme must be http or https")),
            None => (ClientProtocol::Https, url),
        };
        let host_port = rest.trim_end_matches('/');
        if host_port.is_empty() {
            return Err(invalid("no host"));
        }
        if host_port.contains('/') {
            return Err(invalid(
                "a registry URL has no path; the repository is given separately",
            ));
        }
        Ok(Self {
            protocol,
            host_port: host_port.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(url: &str) -> (ClientProtocol, String) {
        let url = RegistryUrl::parse(url).expect("valid URL");
        (url.protocol, url.host_port)
    }

    #[test]
    fn the_scheme_selects_the_protocol_and_tls_is_the_default() {
        assert_eq!(
            parsed("http://127.0.0.1:5000"),
            (ClientProtocol::Http, "127.0.0.1:5000".into())
        );
        assert_eq!(
            parsed("https://127.0.0.1:5000/"),
            (ClientProtocol::Https, "127.0.0.1:5000".into())
        );
        assert_eq!(parsed("quay.io"), (ClientProtocol::Https, "quay.io".into()));
    }

    #[test]
    fn rejects_paths_unknown_schemes_and_empty_hosts() {
        for url in ["http://host/ocp/release", "ftp://host", "http://", ""] {
            assert!(RegistryUrl::parse(url).is_err(), "{url} was accepted");
        }
    }
}
