use std::path::PathBuf;

/// A username and password the registry (or its token server) accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credentials {
    pub username: String,
    pub password: String,
}

/// How clients authenticate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum Authentication {
    #[default]
    Anonymous,
    /// HTTP basic authentication against an htpasswd file.
    Basic(Credentials),
    /// distribution's token authentication, with bearer tokens from the
    /// testkit's token server: anonymous clients may pull, the credentials may
    /// pull and push.
    Token(Credentials),
}

/// The shape of the throw-away TLS certificate a registry serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CertificateShape {
    /// One self-signed certificate that is its own CA (`basicConstraints CA:TRUE`),
    /// as generated for mirror registries in disconnected sites. Go and OpenSSL
    /// clients accept it once it is trusted; rustls (webpki) refuses it even then,
    /// with `CaUsedAsEndEntity`.
    SelfSignedCa,
    /// A CA certificate plus a separate server certificate signed by it: the shape
    /// every TLS stack accepts once the CA is trusted.
    CaSignedServer,
}

/// How to run a [`crate::LocalRegistry`]: plain HTTP and anonymous by default.
#[derive(Clone, Debug, Default)]
pub struct RegistryOptions {
    pub(crate) authentication: Authentication,
    pub(crate) certificate: Option<CertificateShape>,
    pub(crate) workdir_parent: Option<PathBuf>,
}

impl RegistryOptions {
    /// Require HTTP basic authentication (an htpasswd file) for every request.
    pub fn basic_auth(mut self, username: impl Into<String>, password: impl Into<String>) -> Self {
        self.authentication = Authentication::Basic(credentials(username, password));
        self
    }

    /// Require bearer tokens, as quay.io does: the registry's 401 challenge
    /// sends clients to a token server on another loopback port, which gives
    /// anonymous clients pull access and these credentials pull and push access.
    pub fn token_auth(mut self, username: impl Into<String>, password: impl Into<String>) -> Self {
        self.authentication = Authentication::Token(credentials(username, password));
        self
    }

    /// Serve HTTPS with a certificate generated for `127.0.0.1` and `localhost`.
    pub fn tls(mut self, shape: CertificateShape) -> Self {
        self.certificate = Some(shape);
        self
    }

    /// Where to create the registry's temporary work directory (storage,
    /// configuration). By default it is `/dev/shm` where that exists, else the
    /// system temporary directory: the registry stores each image as many
    /// tiny files, and creating and removing them on a disk can take longer
    /// than the test (about 50 s to remove 1,000 images on an ext4 disk
    /// mounted with `discard`). Choose a disk for content larger than memory.
    pub fn workdir_in(mut self, parent: impl Into<PathBuf>) -> Self {
        self.workdir_parent = Some(parent.into());
        self
    }
}

fn credentials(username: impl Into<String>, password: impl Into<String>) -> Credentials {
    Credentials {
        username: username.into(),
        password: password.into(),
    }
}
