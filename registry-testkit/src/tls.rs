//! Throw-away TLS certificates for `127.0.0.1` and `localhost`.

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};

use crate::options::CertificateShape;

const SUBJECT_ALT_NAMES: [&str; 2] = ["127.0.0.1", "localhost"];

/// PEM files for the registry's TLS listener, and the PEM a client must trust.
#[derive(Debug)]
pub(crate) struct TlsMaterial {
    pub(crate) server_certificate_pem: String,
    pub(crate) server_key_pem: String,
    pub(crate) ca_pem: String,
}

pub(crate) fn generate(shape: CertificateShape) -> Result<TlsMaterial, rcgen::Error> {
    match shape {
        CertificateShape::SelfSignedCa => self_signed_ca(),
        CertificateShape::CaSignedServer => ca_signed_server(),
    }
}

fn self_signed_ca() -> Result<TlsMaterial, rcgen::Error> {
    let key = KeyPair::generate()?;
    let mut params = server_params("registry-testkit self-signed CA")?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let certificate = params.self_signed(&key)?.pem();
    Ok(TlsMaterial {
        server_certificate_pem: certificate.clone(),
        server_key_pem: key.serialize_pem(),
        ca_pem: certificate,
    })
}

fn ca_signed_server() -> Result<TlsMaterial, rcgen::Error> {
    let ca_key = KeyPair::generate()?;
    let mut ca_params = CertificateParams::default();
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "registry-testkit CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_pem = ca_params.self_signed(&ca_key)?.pem();
    let issuer = Issuer::new(ca_params, ca_key);

    let server_key = KeyPair::generate()?;
    let server_certificate_pem = server_params("registry-testkit server")?
        .signed_by(&server_key, &issuer)?
        .pem();
    Ok(TlsMaterial {
        server_certificate_pem,
        server_key_pem: server_key.serialize_pem(),
        ca_pem,
    })
}

fn server_params(common_name: &str) -> Result<CertificateParams, rcgen::Error> {
    let mut params = CertificateParams::new(SUBJECT_ALT_NAMES.map(String::from).to_vec())?;
    params.distinguished_name.push(DnType::CommonName, common_name);
    Ok(params)
}
