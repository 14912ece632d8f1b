//! distribution's configuration file. It is YAML; JSON is valid YAML, so it is
//! rendered with serde_json instead of pulling in a YAML serialiser.

use std::net::SocketAddr;
use std::path::PathBuf;

use serde_json::json;

use crate::token_server;

/// Paths of the PEM files the TLS listener serves.
#[derive(Debug, Clone)]
pub(crate) struct TlsFiles {
    pub(crate) certificate: PathBuf,
    pub(crate) key: PathBuf,
}

/// How the registry checks clients.
#[derive(Debug, Clone)]
pub(crate) enum AuthConfig {
    Htpasswd(PathBuf),
    /// Bearer tokens from `realm`, signed by the key of the certificate in `certificate_bundle`.
    Token {
        realm: String,
        certificate_bundle: PathBuf,
    },
}

/// Everything but the listen address, which is picked per start attempt.
#[derive(Debug, Clone)]
pub(crate) struct RegistryConfig {
    pub(crate) storage: PathBuf,
    pub(crate) tls: Option<TlsFiles>,
    pub(crate) auth: Option<AuthConfig>,
}

impl RegistryConfig {
    pub(crate) fn render(&self, listen: SocketAddr) -> String {
        let mut http = json!({
            "addr": listen.to_string(),
            // A fixed secret avoids a start-up warning; nothing here is multi-instance.
            "secret": "registry-testkit",
        });
        if let Some(tls) = &self.tls {
            http["tls"] = json!({ "certificate": tls.certificate, "key": tls.key });
        }
        let mut config = json!({
            "version": "0.1",
            // stdout carries the access log (one line per request, read by
            // `request_log`); stderr carries warnings and errors for diagnostics.
            "log": { "level": "warn", "accesslog": { "disabled": false } },
            "storage": {
                "filesystem": { "rootdirectory": self.storage },
                "delete": { "enabled": true },
                "maintenance": { "uploadpurging": { "enabled": false } },
            },
            "http": http,
        });
        match &self.auth {
            Some(AuthConfig::Htpasswd(path)) => {
                config["auth"] = json!({ "htpasswd": { "realm": "registry-testkit", "path": path } });
            }
            Some(AuthConfig::Token {
                realm,
                certificate_bundle,
            }) => {
                config["auth"] = json!({ "token": {
                    "realm": realm,
                    "service": token_server::SERVICE,
                    "issuer": token_server::ISSUER,
                    "rootcertbundle": certificate_bundle,
                } });
            }
            None => {}
        }
        config.to_string()
    }
}
