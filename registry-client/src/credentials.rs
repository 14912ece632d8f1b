//! Registry credentials from a Docker `config.json` file, looked up the way
//! upstream does: the longest `host/namespace/...` prefix of the repository
//! first, then the host alone.

use std::collections::HashMap;
use std::path::Path;

use base64::Engine;
use serde::Deserialize;

/// A username and password. The password never appears in `Debug` output.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    #[error("cannot read credentials file {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("credentials file {path} is not a Docker config.json: {source}")]
    Parse { path: String, source: serde_json::Error },
    #[error("credentials file {path}: entry {entry}: {reason}")]
    Entry {
        path: String,
        entry: String,
        reason: &'static str,
    },
}

#[derive(Deserialize)]
struct DockerConfig {
    #[serde(default)]
    auths: HashMap<String, DockerAuth>,
}

#[derive(Deserialize)]
struct DockerAuth {
    #[serde(default)]
    auth: Option<String>,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    password: Option<String>,
}

/// Reads the credentials for `host`/`repository` from a Docker config file.
/// `Ok(None)` when the file has no entry for them.
pub fn from_docker_config(
    path: &Path,
    host: &str,
    repository: &str,
) -> Result<Option<Credentials>, CredentialsError> {
    let shown = path.display().to_string();
    let text = std::fs::read(path).map_err(|source| CredentialsError::Read {
        path: shown.clone(),
        source,
    })?;
    let config: DockerConfig = serde_json::from_slice(&text).map_err(|source| CredentialsError::Parse {
        path: shown.clone(),
        source,
    })?;
    let auths: HashMap<String, DockerAuth> = config
        .auths
        .into_iter()
        .map(|(key, auth)| (normalise_key(&key), auth))
        .collect();
    for candidate in lookup_keys(host, repository) {
        if let Some(auth) = auths.get(&candidate) {
            return decode(auth).map(Some).map_err(|reason| CredentialsError::Entry {
                path: shown,
                entry: candidate,
                reason,
            });
        }
    }
    Ok(None)
}

/// `https://quay.io/v1/` and `quay.io` name the same registry.
fn normalise_key(key: &str) -> String {
    let without_scheme = key.split_once("://").map_or(key, |(_, rest)| rest);
    without_scheme
        .trim_end_matches('/')
        .trim_end_matches("/v1")
        .trim_end_matches("/v2")
        .to_owned()
}

/// `host/a/b/c`, `host/a/b`, `host/a`, `host`: most specific first.
fn lookup_keys(host: &str, repository: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut path = format!("{host}/{repository}");
    loop {
        keys.push(path.clone());
        match path.rfind('/') {
            Some(slash) => path.truncate(slash),
            None => break,
        }
    }
    keys
}

fn decode(auth: &DockerAuth) -> Result<Credentials, &'static str> {
    if let (Some(username), Some(password)) = (&auth.username, &auth.password) {
        return Ok(Credentials {
            username: username.clone(),
            password: password.clone(),
        });
    }
    let encoded = auth
        .auth
        .as_deref()
        .ok_or("neither `auth` nor `username`/`password`")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|_| "`auth` is not base64")?;
    let decoded = String::from_utf8(decoded).map_err(|_| "`auth` is not UTF-8")?;
    let (username, password) = decoded.split_once(':').ok_or("`auth` is not `user:password`")?;
    Ok(Credentials {
        username: username.to_owned(),
        password: password.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_file(json: &str) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), json).unwrap();
        file
    }

    #[test]
    fn the_most_specific_entry_wins() {
        let file = config_file(
            r#"{"auths": {
                "https://quay.io/v1/": {"auth": "aG9zdDpob3N0cGFzcw=="},
                "quay.io/openshift-release-dev": {"username": "ns", "password": "nspass"}
            }}"#,
        );
        let found = from_docker_config(file.path(), "quay.io", "openshift-release-dev/ocp-release").unwrap();
        assert_eq!(found.unwrap().username, "ns");
        let host_only = from_docker_config(file.path(), "quay.io", "other/repo")
            .unwrap()
            .unwrap();
        assert_eq!(
            (host_only.username.as_str(), host_only.password.as_str()),
            ("host", "hostpass")
        );
        assert_eq!(
            from_docker_config(file.path(), "registry.example.com", "a/b").unwrap(),
            None
        );
    }

    #[test]
    fn bad_entries_and_files_are_named() {
        let file = config_file(r#"{"auths": {"quay.io": {"auth": "not base64!"}}}"#);
        let error = from_docker_config(file.path(), "quay.io", "a/b")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("entry quay.io") && error.contains("base64"),
            "{error}"
        );
        let missing = from_docker_config(Path::new("/nonexistent/config.json"), "quay.io", "a").unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with("cannot read credentials file /nonexistent/config.json")
        );
    }

    #[test]
    fn passwords_are_not_shown_in_debug_output() {
        let credentials = Credentials {
            username: "user".into(),
            password: "s3cret".into(),
        };
        assert!(!format!("{credentials:?}").contains("s3cret"));
    }
}
