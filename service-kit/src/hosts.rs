//! The hosts a status server answers for. The status port is open to every
//! pod of the cluster, and operators reach it through `kubectl
//! port-forward` on their own machine: a web page an operator's browser
//! opens can make its own name resolve to the forwarded port (DNS
//! rebinding) and send requests the browser takes for same-origin ones.
//! Such a request names the page's host, which no name of ours is: a
//! status server answers a request only when its host (the absolute-form
//! target's authority, else `Host`) is
//!
//! 1. an IP literal (IPv4, or bracketed IPv6), with any port;
//! 2. `localhost`, or the machine's hostname (the pod's name);
//! 3. a Kubernetes service name: a name of one label (a service of the
//!    pod's namespace, as Alertmanager's configuration names it: public
//!    DNS has no such names, so no page is served from one), or a name
//!    ending in `.svc` or `.svc.cluster.local`;
//! 4. a name of `status.hosts`: exactly, or below a `*.` entry's suffix.
//!
//! Names compare without case and without a trailing dot. A request
//! without a host (HTTP/1.0) names nothing a page could have chosen, and is
//! answered. Any other is answered 421 Misdirected Request (RFC 9110
//! §15.5.20), before its body is read. The public ports do not check:
//! clusters reach them by any name.

use std::net::{Ipv4Addr, Ipv6Addr};

use actix_web::dev::RequestHead;
use actix_web::http::header::HOST;

/// Where a status server's hosts are, as configured (see the module
/// documentation).
#[derive(Debug, Clone, Default)]
pub struct StatusHosts {
    /// Configured names, exact: lower case, without a trailing dot.
    names: Vec<String>,
    /// Configured `*.` entries: the suffix with its leading dot.
    suffixes: Vec<String>,
    /// The machine's hostname.
    hostname: Option<String>,
}

/// A `status.hosts` entry that is no host name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("status.hosts: {0:?} is not a host name (letters, digits, `-` and `.`; `*.` before a suffix)")]
pub struct InvalidHost(pub String);

/// Suffixes of the names Kubernetes gives services (rule 3).
const SERVICE_SUFFIXES: [&str; 2] = [".svc", ".svc.cluster.local"];

impl StatusHosts {
    /// The hosts of rules 1 to 3 and the names `configured`, with this
    /// machine's hostname.
    pub fn new(configured: &[String]) -> Result<Self, InvalidHost> {
        Self::with_hostname(configured, own_hostname())
    }

    fn with_hostname(configured: &[String], hostname: Option<String>) -> Result<Self, InvalidHost> {
        let mut hosts = Self {
            hostname: hostname.map(|name| normalise(&name)),
            ..Self::default()
        };
        for entry in configured {
            let name = normalise(entry);
            let (suffix, bare) = match name.strip_prefix("*.") {
                Some(suffix) => (true, suffix),
                None => (false, name.as_str()),
            };
            let valid = !bare.is_empty()
                && bare.split('.').all(|label| {
                    !label.is_empty() && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                });
            if !valid {
                return Err(InvalidHost(entry.clone()));
            }
            if suffix {
                hosts.suffixes.push(format!(".{bare}"));
            } else {
                hosts.names.push(name);
            }
        }
        Ok(hosts)
    }

    /// Whether the request names a host this server answers for.
    pub fn admits(&self, head: &RequestHead) -> bool {
        let authority = match head.uri.authority() {
            Some(authority) => authority.as_str(),
            None => match head.headers.get(HOST) {
                Some(host) => host.to_str().unwrap_or_default(),
                None => return true,
            },
        };
        self.admits_authority(authority)
    }

    fn admits_authority(&self, authority: &str) -> bool {
        let host = match authority.strip_prefix('[') {
            Some(bracketed) => {
                return bracketed
                    .split_once(']')
                    .is_some_and(|(literal, _)| literal.parse::<Ipv6Addr>().is_ok());
            }
            None => match authority.rsplit_once(':') {
                Some((host, port)) if port.bytes().all(|byte| byte.is_ascii_digit()) => host,
                _ => authority,
            },
        };
        if host.parse::<Ipv4Addr>().is_ok() {
            return true;
        }
        let name = normalise(host);
        let below = |suffix: &str| name.len() > suffix.len() && name.ends_with(suffix);
        name == "localhost"
            || self.hostname.as_deref() == Some(name.as_str())
            || is_label(&name)
            || SERVICE_SUFFIXES.iter().any(|suffix| below(suffix))
            || self.names.contains(&name)
            || self.suffixes.iter().any(|suffix| below(suffix))
    }
}

/// One DNS label: letters, digits and `-`.
fn is_label(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-')
}

fn normalise(name: &str) -> String {
    name.trim().trim_end_matches('.').to_ascii_lowercase()
}

/// The kernel's hostname (in a pod, the pod's name), if it can be read.
fn own_hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts() -> StatusHosts {
        let configured = ["Ops.Example.com.".to_owned(), "*.internal.example".to_owned()];
        StatusHosts::with_hostname(&configured, Some("policy-engine-7d9f".to_owned())).unwrap()
    }

    #[test]
    fn ip_literals_local_names_service_names_and_configured_names_are_answered() {
        let hosts = hosts();
        for authority in [
            "127.0.0.1",
            "10.128.4.17:9081",
            "[::1]:9081",
            "[fd00::4]",
            "localhost:9081",
            "LOCALHOST.",
            "policy-engine-7d9f:9081",
            "cincinnati-policy-engine-status:9081",
            "policy-engine.cincinnati.svc:9081",
            "policy-engine.cincinnati.svc.cluster.local.",
            "ops.example.com:443",
            "engine.internal.example",
        ] {
            assert!(hosts.admits_authority(authority), "{authority}");
        }
    }

    #[test]
    fn every_other_name_is_misdirected() {
        let hosts = hosts();
        for authority in [
            "rebound.example",
            "rebound.example:9081",
            "localhost.rebound.example",
            "127.0.0.1.rebound.example",
            "policy-engine.cincinnati",
            ".svc",
            "under_score",
            "policy-engine.svc.rebound.example",
            "example.com",
            "internal.example",
            "[::1",
            "[not-an-address]",
            "0x7f.1",
            "",
        ] {
            assert!(!hosts.admits_authority(authority), "{authority}");
        }
    }

    #[test]
    fn the_host_is_the_absolute_form_s_authority_else_host_and_none_is_answered() {
        let hosts = hosts();
        let head = |target: &str, host: Option<&str>| {
            let mut request = actix_web::test::TestRequest::get().uri(target);
            if let Some(host) = host {
                request = request.insert_header((HOST, host));
            }
            request.to_http_request().head().clone()
        };
        assert!(hosts.admits(&head("/livez", Some("127.0.0.1:9081"))));
        assert!(!hosts.admits(&head("/livez", Some("rebound.example"))));
        assert!(!hosts.admits(&head("http://rebound.example/livez", Some("127.0.0.1"))));
        assert!(hosts.admits(&head("http://localhost/livez", Some("rebound.example"))));
        assert!(hosts.admits(&head("/livez", None)));
    }

    #[test]
    fn an_entry_that_is_no_host_name_is_refused() {
        for entry in ["", "*.", "ops.example.com:9081", "http://ops", "a..b", "*"] {
            assert_eq!(
                StatusHosts::with_hostname(&[entry.to_owned()], None).err(),
                Some(InvalidHost(entry.to_owned())),
                "{entry:?}"
            );
        }
    }
}
