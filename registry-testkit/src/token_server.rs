//! A tiny token server for distribution's `auth: token`. Clients that get a
//! `401` with `WWW-Authenticate: Bearer realm=...,service=...` ask it for a
//! token (`GET /token?service=...&scope=repository:NAME:pull,push`, with basic
//! credentials or none) and it answers with an ES256 JWT whose `x5c` header
//! carries the self-signed signing certificate that the registry trusts
//! (`rootcertbundle`).

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

use crate::error::Error;
use crate::options::Credentials;
use crate::tls::{self, Role};

pub(crate) const SERVICE: &str = "registry-testkit";
pub(crate) const ISSUER: &str = "registry-testkit-token-server";
const TOKEN_LIFETIME_SECONDS: u64 = 300;

/// The key that signs tokens and its self-signed certificate.
pub(crate) struct TokenSigner {
    key: EncodingKey,
    certificate_base64_der: String,
    pub(crate) certificate_pem: String,
}

impl TokenSigner {
    pub(crate) fn generate() -> Result<Self, Error> {
        let signer = tls::issue("registry-testkit token signer", Role::TokenSigner, None)?;
        Ok(Self {
            key: EncodingKey::from_ec_der(&signer.key.private_key_to_pkcs8()?),
            certificate_base64_der: STANDARD.encode(signer.certificate.to_der()?),
            certificate_pem: tls::pem(&signer.certificate)?,
        })
    }

    fn sign(&self, subject: &str, access: Vec<Value>) -> Result<String, jsonwebtoken::errors::Error> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        let claims = json!({
            "iss": ISSUER,
            "sub": subject,
            // distribution 2.8 reads `aud` as a single string.
            "aud": SERVICE,
            "iat": now,
            "nbf": now.saturating_sub(10),
            "exp": now + TOKEN_LIFETIME_SECONDS,
            "jti": format!("{subject}-{now}"),
            "access": access,
        });
        let mut header = Header::new(Algorithm::ES256);
        header.x5c = Some(vec![self.certificate_base64_der.clone()]);
        jsonwebtoken::encode(&header, &claims, &self.key)
    }
}

/// Runs on its own thread; stops when dropped.
pub(crate) struct TokenServer {
    server: Arc<tiny_http::Server>,
    worker: Option<JoinHandle<()>>,
    realm: String,
}

impl TokenServer {
    pub(crate) fn start(signer: TokenSigner, credentials: Credentials) -> Result<Self, Error> {
        let server = tiny_http::Server::http((Ipv4Addr::LOCALHOST, 0)).map_err(Error::TokenServer)?;
        let address = server
            .server_addr()
            .to_ip()
            .expect("a TCP listener has an IP address");
        let server = Arc::new(server);
        let requests = Arc::clone(&server);
        let worker = thread::spawn(move || {
            for request in requests.incoming_requests() {
                let (status, body) = answer(&signer, &credentials, &request);
                let response = tiny_http::Response::from_string(body.to_string())
                    .with_status_code(status)
                    .with_header(
                        tiny_http::Header::from_bytes("Content-Type", "application/json")
                            .expect("a valid static header"),
                    );
                // A client that went away needs no answer.
                let _ = request.respond(response);
            }
        });
        Ok(Self {
            server,
            worker: Some(worker),
            realm: format!("http://{address}/token"),
        })
    }

    pub(crate) fn realm(&self) -> &str {
        &self.realm
    }
}

impl std::fmt::Debug for TokenServer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("TokenServer")
            .field("realm", &self.realm)
            .finish()
    }
}

impl Drop for TokenServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(worker) = self.worker.take() {
            // A panicked worker has nothing left to clean up.
            let _ = worker.join();
        }
    }
}

fn answer(signer: &TokenSigner, credentials: &Credentials, request: &tiny_http::Request) -> (u16, Value) {
    let authenticated = match basic_credentials(request) {
        None => false,
        Some(given) if given == *credentials => true,
        Some(_) => return (401, json!({ "details": "wrong username or password" })),
    };
    let query = request.url().split_once('?').map_or("", |(_, query)| query);
    let access: Vec<Value> = form_urlencoded::parse(query.as_bytes())
        .filter(|(key, _)| key == "scope")
        .flat_map(|(_, scopes)| {
            scopes
                .split(' ')
                .filter_map(|scope| grant(scope, authenticated))
                .collect::<Vec<_>>()
        })
        .collect();
    let subject = if authenticated {
        credentials.username.as_str()
    } else {
        "anonymous"
    };
    match signer.sign(subject, access) {
        Ok(token) => (
            200,
            json!({ "token": token, "access_token": token, "expires_in": TOKEN_LIFETIME_SECONDS }),
        ),
        Err(error) => (500, json!({ "details": error.to_string() })),
    }
}

/// The access granted for one `type:name:actions` scope: everything asked for
/// when authenticated, only repository pulls when anonymous.
fn grant(scope: &str, authenticated: bool) -> Option<Value> {
    let (resource_type, rest) = scope.split_once(':')?;
    let (name, actions) = rest.rsplit_once(':')?;
    let granted: Vec<&str> = actions
        .split(',')
        .filter(|action| !action.is_empty())
        .filter(|action| authenticated || (resource_type == "repository" && *action == "pull"))
        .collect();
    (!granted.is_empty()).then(|| json!({ "type": resource_type, "name": name, "actions": granted }))
}

fn basic_credentials(request: &tiny_http::Request) -> Option<Credentials> {
    let header = request
        .headers()
        .iter()
        .find(|header| header.field.equiv("Authorization"))?;
    let encoded = header.value.as_str().strip_prefix("Basic ")?;
    let decoded = String::from_utf8(STANDARD.decode(encoded).ok()?).ok()?;
    let (username, password) = decoded.split_once(':')?;
    Some(Credentials {
        username: username.to_owned(),
        password: password.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anonymous_clients_are_granted_repository_pulls_only() {
        assert_eq!(
            grant("repository:ocp/release:pull,push", false),
            Some(json!({ "type": "repository", "name": "ocp/release", "actions": ["pull"] }))
        );
        assert_eq!(grant("repository:ocp/release:push", false), None);
        assert_eq!(grant("registry:catalog:*", false), None);
    }

    #[test]
    fn authenticated_clients_are_granted_what_they_ask_for() {
        assert_eq!(
            grant("repository:ocp/release:pull,push", true),
            Some(json!({ "type": "repository", "name": "ocp/release", "actions": ["pull", "push"] }))
        );
        assert_eq!(
            grant("registry:catalog:*", true),
            Some(json!({ "type": "registry", "name": "catalog", "actions": ["*"] }))
        );
    }

    #[test]
    fn malformed_scopes_are_ignored() {
        assert_eq!(grant("repository", true), None);
        assert_eq!(grant("repository:name-without-actions", true), None);
        assert_eq!(grant("repository:ocp/release:", true), None);
    }
}
