//! A client from what operators configure, with one rule for every registry
//! a service reads (release images, graph-data images, signatures):
//!
//! - `username` and `password` go together; given, they are the credentials;
//! - otherwise `credentials_path`, a Docker `config.json` (an empty path
//!   means none): a file that does not exist means anonymous access, with a
//!   warning — an optional Kubernetes Secret that is absent mounts no file;
//!   a file that exists but cannot be read, is not a Docker config, or has a
//!   broken entry for the registry stops start-up, naming the file, because
//!   reading anonymously instead would hide the mistake behind authorization
//!   errors later; a file without an entry for the registry means anonymous;
//! - the CAs of `root_certificate_dir` ([`ExtraRoots`]) are trusted besides
//!   the system's; the caller loads them, so the other clients of the same
//!   configuration (a signature store) trust the same ones.

use std::io::ErrorKind;
use std::path::Path;

use http_fetch::ExtraRoots;

use crate::address::{AddressError, RegistryAddress};
use crate::client::{RegistryClient, RegistryError, RegistrySettings};
use crate::credentials::{self, Credentials, CredentialsError};
use crate::retry::RetryPolicy;

/// One repository and how to reach it, as configured.
#[derive(Debug, Clone, Copy)]
pub struct Access<'a> {
    /// `quay.io`, `mirror:8443`, `http://127.0.0.1:5000`.
    pub registry: &'a str,
    pub repository: &'a str,
    pub username: Option<&'a str>,
    pub password: Option<&'a str>,
    pub credentials_path: Option<&'a Path>,
    pub roots: &'a ExtraRoots,
}

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Address(#[from] AddressError),
    #[error("username and password go together")]
    HalfCredentials,
    #[error(transparent)]
    Credentials(#[from] CredentialsError),
    #[error(transparent)]
    Client(#[from] RegistryError),
}

impl Access<'_> {
    /// The client, or why this configuration cannot work.
    pub fn client(&self, retry: RetryPolicy, user_agent: &'static str) -> Result<RegistryClient, SetupError> {
        let address = RegistryAddress::parse(self.registry)?;
        let credentials = self.credentials(&address)?;
        Ok(RegistryClient::new(RegistrySettings {
            address,
            repository: self.repository.to_owned(),
            credentials,
            roots: self.roots.clone(),
            retry,
            user_agent,
        })?)
    }

    fn credentials(&self, address: &RegistryAddress) -> Result<Option<Credentials>, SetupError> {
        match (self.username, self.password) {
            (Some(username), Some(password)) => {
                return Ok(Some(Credentials {
                    username: username.to_owned(),
                    password: password.to_owned(),
                }));
            }
            (None, None) => {}
            _ => return Err(SetupError::HalfCredentials),
        }
        let Some(path) = self.credentials_path.filter(|path| !path.as_os_str().is_empty()) else {
            return Ok(None);
        };
        match credentials::from_docker_config(path, &address.host, self.repository) {
            Err(CredentialsError::Read { source, .. }) if source.kind() == ErrorKind::NotFound => {
                tracing::warn!(
                    path = %path.display(),
                    registry = %address,
                    "no credentials file: reading the registry anonymously"
                );
                Ok(None)
            }
            found => Ok(found?),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_ROOTS: &ExtraRoots = &ExtraRoots::EMPTY;

    fn access(credentials_path: Option<&Path>) -> Access<'_> {
        Access {
            registry: "quay.io",
            repository: "openshift-release-dev/ocp-release",
            username: None,
            password: None,
            credentials_path,
            roots: NO_ROOTS,
        }
    }

    fn credentials(access: Access<'_>) -> Result<Option<Credentials>, SetupError> {
        access.credentials(&RegistryAddress::parse(access.registry).unwrap())
    }

    fn file(text: &str) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), text).unwrap();
        file
    }

    #[test]
    fn username_and_password_win_and_go_together() {
        let given = Access {
            username: Some("user"),
            password: Some("pass"),
            ..access(Some(Path::new("/nonexistent/config.json")))
        };
        assert_eq!(credentials(given).unwrap().unwrap().username, "user");
        let half = Access {
            username: Some("user"),
            ..access(None)
        };
        assert!(matches!(credentials(half), Err(SetupError::HalfCredentials)));
    }

    #[test]
    fn a_missing_or_empty_credentials_path_means_anonymous() {
        for path in ["/nonexistent/.dockerconfigjson", ""] {
            assert_eq!(
                credentials(access(Some(Path::new(path)))).unwrap(),
                None,
                "{path:?}"
            );
        }
        let other_registry = file(r#"{"auths": {"registry.example.com": {"auth": "dTpw"}}}"#);
        assert_eq!(credentials(access(Some(other_registry.path()))).unwrap(), None);
    }

    #[test]
    fn a_broken_credentials_file_is_an_error_naming_it() {
        let not_json = file("{ not json");
        let bad_entry = file(r#"{"auths": {"quay.io": {"auth": "not base64!"}}}"#);
        let unreadable = tempfile::tempdir().unwrap();
        for path in [not_json.path(), bad_entry.path(), unreadable.path()] {
            let error = credentials(access(Some(path))).unwrap_err().to_string();
            assert!(error.contains(&path.display().to_string()), "{error}");
        }
    }
}
