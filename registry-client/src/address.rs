//! Where a registry is: `quay.io`, `127.0.0.1:5000`, `https://mirror:8443`,
//! `http://127.0.0.1:5000` (plain HTTP, for local and test registries).

use std::fmt;

use oci_client::client::ClientProtocol;

/// The transport a registry is reached over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Https,
    Http,
}

/// A registry host (with optional port) and the scheme to reach it with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryAddress {
    pub scheme: Scheme,
    /// `host[:port]`, as it appears in image references and payloads.
    pub host: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid registry {input:?}: {reason}")]
pub struct AddressError {
    input: String,
    reason: &'static str,
}

impl RegistryAddress {
    /// Parses a registry setting. Without a scheme, HTTPS is used; upstream
    /// misparses `http://host` into `http://http//host/v2/`, we do not.
    pub fn parse(input: &str) -> Result<Self, AddressError> {
        let error = |reason| AddressError {
            input: input.to_owned(),
            reason,
        };
        let trimmed = input.trim();
        let (scheme, rest) = match trimmed.split_once("://") {
            Some(("http", rest)) => (Scheme::Http, rest),
            Some(("https", rest)) => (Scheme::Https, rest),
            Some(_) => return Err(error("the scheme must be http or https")),
            None => (Scheme::Https, trimmed),
        };
        let host = rest.trim_end_matches('/');
        if host.is_empty() {
            return Err(error("no host"));
        }
        if host.contains('/') {
            return Err(error(
                "a registry is a host and port only; put the path in `repository`",
            ));
        }
        Ok(Self {
            scheme,
            host: host.to_owned(),
        })
    }

    /// How oci-client is to reach the registry.
    pub fn protocol(&self) -> ClientProtocol {
        match self.scheme {
            Scheme::Https => ClientProtocol::Https,
            Scheme::Http => ClientProtocol::Http,
        }
    }

    /// The pull spec of an image by digest: `<host>/<repository>@<digest>`.
    /// The scheme is left out, so the payload is a valid image reference.
    pub fn payload(&self, repository: &str, digest: &str) -> String {
        format!("{}/{repository}@{digest}", self.host)
    }
}

impl fmt::Display for RegistryAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.scheme {
            Scheme::Https => write!(f, "https://{}", self.host),
            Scheme::Http => write!(f, "http://{}", self.host),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_hosts_schemes_and_ports() {
        let cases = [
            ("quay.io", Scheme::Https, "quay.io"),
            ("https://quay.io/", Scheme::Https, "quay.io"),
            ("http://127.0.0.1:5000", Scheme::Http, "127.0.0.1:5000"),
            (
                "mirror.example.com:8443",
                Scheme::Https,
                "mirror.example.com:8443",
            ),
            ("  http://localhost:5000/ ", Scheme::Http, "localhost:5000"),
        ];
        for (input, scheme, host) in cases {
            let address = RegistryAddress::parse(input).unwrap();
            assert_eq!((address.scheme, address.host.as_str()), (scheme, host), "{input}");
        }
    }

    #[test]
    fn refuses_what_is_not_a_registry() {
        for input in ["", "http://", "ftp://quay.io", "quay.io/openshift-release-dev"] {
            assert!(RegistryAddress::parse(input).is_err(), "{input}");
        }
    }

    #[test]
    fn the_scheme_selects_the_protocol_and_tls_is_the_default() {
        for (input, protocol) in [
            ("http://127.0.0.1:5000", ClientProtocol::Http),
            ("https://127.0.0.1:5000", ClientProtocol::Https),
            ("quay.io", ClientProtocol::Https),
        ] {
            assert_eq!(
                RegistryAddress::parse(input).unwrap().protocol(),
                protocol,
                "{input}"
            );
        }
    }

    #[test]
    fn payloads_have_no_scheme() {
        let address = RegistryAddress::parse("http://127.0.0.1:5000").unwrap();
        assert_eq!(
            address.payload("ocp/release", "sha256:ab"),
            "127.0.0.1:5000/ocp/release@sha256:ab"
        );
    }
}
