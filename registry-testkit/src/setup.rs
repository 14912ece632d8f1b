//! Turns [`RegistryOptions`] into a work directory with the registry's
//! storage, secrets and configuration.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::config::{AuthConfig, RegistryConfig, TlsFiles};
use crate::error::Error;
use crate::htpasswd::htpasswd_entry;
use crate::options::{Authentication, CertificateShape, Credentials, RegistryOptions};
use crate::tls;
use crate::token_server::{TokenServer, TokenSigner};

/// Memory-backed by default: see [`RegistryOptions::workdir_in`].
const DEFAULT_WORKDIR_PARENT: &str = "/dev/shm";

/// Everything a registry needs before its process starts.
pub(crate) struct Prepared {
    pub(crate) workdir: TempDir,
    pub(crate) config: RegistryConfig,
    pub(crate) ca_pem: Option<String>,
    pub(crate) credentials: Option<Credentials>,
    pub(crate) token_server: Option<TokenServer>,
}

pub(crate) fn prepare(options: RegistryOptions) -> Result<Prepared, Error> {
    let workdir = create_workdir(options.workdir_parent.as_deref())?;
    let dir = workdir.path();
    let storage = dir.join("storage");
    std::fs::create_dir(&storage).map_err(|source| Error::Filesystem {
        path: storage.clone(),
        source,
    })?;
    let (tls, ca_pem) = match options.certificate {
        Some(shape) => {
            let (files, ca_pem) = prepare_tls(dir, shape)?;
            (Some(files), Some(ca_pem))
        }
        None => (None, None),
    };
    let (auth, token_server) = prepare_authentication(dir, &options.authentication)?;
    let credentials = match options.authentication {
        Authentication::Anonymous => None,
        Authentication::Basic(credentials) | Authentication::Token(credentials) => Some(credentials),
    };
    Ok(Prepared {
        config: RegistryConfig { storage, tls, auth },
        ca_pem,
        credentials,
        token_server,
        workdir,
    })
}

/// The server's certificate and key files, and the PEM clients must trust.
fn prepare_tls(dir: &Path, shape: CertificateShape) -> Result<(TlsFiles, String), Error> {
    let material = tls::generate(shape)?;
    let files = TlsFiles {
        certificate: write_file(dir, "server.crt", &material.server_certificate_pem)?,
        key: write_file(dir, "server.key", &material.server_key_pem)?,
    };
    Ok((files, material.ca_pem))
}

fn prepare_authentication(
    dir: &Path,
    authentication: &Authentication,
) -> Result<(Option<AuthConfig>, Option<TokenServer>), Error> {
    match authentication {
        Authentication::Anonymous => Ok((None, None)),
        Authentication::Basic(credentials) => {
            let htpasswd = write_file(dir, "htpasswd", &htpasswd_entry(credentials)?)?;
            Ok((Some(AuthConfig::Htpasswd(htpasswd)), None))
        }
        Authentication::Token(credentials) => {
            let signer = TokenSigner::generate()?;
            let certificate_bundle = write_file(dir, "token-signer.crt", &signer.certificate_pem)?;
            let server = TokenServer::start(signer, credentials.clone())?;
            let auth = AuthConfig::Token {
                realm: server.realm().to_owned(),
                certificate_bundle,
            };
            Ok((Some(auth), Some(server)))
        }
    }
}

fn create_workdir(parent: Option<&Path>) -> Result<TempDir, Error> {
    let create = |parent: &Path| {
        TempDir::with_prefix_in("registry-testkit-", parent).map_err(|source| Error::Filesystem {
            path: parent.to_path_buf(),
            source,
        })
    };
    match parent {
        Some(parent) => create(parent),
        None => create(Path::new(DEFAULT_WORKDIR_PARENT)).or_else(|_| create(&std::env::temp_dir())),
    }
}

pub(crate) fn write_file(dir: &Path, name: &str, contents: &str) -> Result<PathBuf, Error> {
    let path = dir.join(name);
    std::fs::write(&path, contents).map_err(|source| Error::Filesystem {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}
