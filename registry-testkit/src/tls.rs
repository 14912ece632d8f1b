//! Throw-away certificates for `127.0.0.1` and `localhost`, made with
//! OpenSSL: the TLS stack every outgoing connection of the services uses, so
//! tests need no second cryptography library.

use std::time::{SystemTime, UNIX_EPOCH};

use openssl::asn1::Asn1Time;
use openssl::bn::{BigNum, MsbOption};
use openssl::ec::{EcGroup, EcKey};
use openssl::error::ErrorStack;
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::x509::extension::{BasicConstraints, KeyUsage, SubjectAlternativeName};
use openssl::x509::{X509, X509NameBuilder};

use crate::options::CertificateShape;

const VALIDITY_DAYS: i64 = 3650;

/// PEM texts for a TLS listener, and the PEM a client must trust.
#[derive(Debug, Clone)]
pub(crate) struct TlsMaterial {
    pub(crate) server_certificate_pem: String,
    pub(crate) server_key_pem: String,
    pub(crate) ca_pem: String,
}

/// A key pair and its certificate.
pub(crate) struct Issued {
    pub(crate) key: PKey<Private>,
    pub(crate) certificate: X509,
}

/// What a certificate may be used for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Signs other certificates only.
    Ca,
    /// Serves `127.0.0.1` and `localhost`.
    Server,
    /// Both at once: the self-signed certificate of a mirror registry.
    CaAndServer,
    /// Signs tokens (distribution accepts only such certificates for them).
    TokenSigner,
}

pub(crate) fn generate(shape: CertificateShape) -> Result<TlsMaterial, ErrorStack> {
    let (server, ca_pem) = match shape {
        CertificateShape::SelfSignedCa => {
            let server = issue("registry-testkit self-signed CA", Role::CaAndServer, None)?;
            let ca_pem = pem(&server.certificate)?;
            (server, ca_pem)
        }
        CertificateShape::CaSignedServer => {
            let ca = issue("registry-testkit CA", Role::Ca, None)?;
            let server = issue("registry-testkit server", Role::Server, Some(&ca))?;
            (server, pem(&ca.certificate)?)
        }
    };
    Ok(TlsMaterial {
        server_certificate_pem: pem(&server.certificate)?,
        server_key_pem: String::from_utf8_lossy(&server.key.private_key_to_pem_pkcs8()?).into_owned(),
        ca_pem,
    })
}

/// A new P-256 key and its certificate, signed by `issuer` or by itself.
pub(crate) fn issue(common_name: &str, role: Role, issuer: Option<&Issued>) -> Result<Issued, ErrorStack> {
    let curve = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?;
    let key = PKey::from_ec_key(EcKey::generate(&curve)?)?;
    let mut name = X509NameBuilder::new()?;
    name.append_entry_by_nid(Nid::COMMONNAME, common_name)?;
    let name = name.build();
    let mut serial = BigNum::new()?;
    serial.rand(120, MsbOption::MAYBE_ZERO, false)?;
    let serial = serial.to_asn1_integer()?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs() as i64);

    let mut builder = X509::builder()?;
    builder.set_version(2)?;
    builder.set_serial_number(&serial)?;
    builder.set_subject_name(&name)?;
    builder.set_issuer_name(issuer.map_or(&name, |issuer| issuer.certificate.subject_name()))?;
    builder.set_pubkey(&key)?;
    // A day back, so a clock a little behind the test's still accepts it.
    let (not_before, not_after) = (
        Asn1Time::from_unix(now - 86_400)?,
        Asn1Time::from_unix(now + VALIDITY_DAYS * 86_400)?,
    );
    builder.set_not_before(&not_before)?;
    builder.set_not_after(&not_after)?;
    if matches!(role, Role::Ca | Role::CaAndServer) {
        builder.append_extension(BasicConstraints::new().critical().ca().build()?)?;
    }
    if matches!(role, Role::Server | Role::CaAndServer) {
        let names = SubjectAlternativeName::new()
            .ip("127.0.0.1")
            .dns("localhost")
            .build(&builder.x509v3_context(issuer.map(|issuer| issuer.certificate.as_ref()), None))?;
        builder.append_extension(names)?;
    }
    if role == Role::TokenSigner {
        builder.append_extension(KeyUsage::new().critical().digital_signature().build()?)?;
    }
    let signing_key = issuer.map_or(&key, |issuer| &issuer.key);
    builder.sign(signing_key, MessageDigest::sha256())?;
    Ok(Issued {
        key,
        certificate: builder.build(),
    })
}

pub(crate) fn pem(certificate: &X509) -> Result<String, ErrorStack> {
    Ok(String::from_utf8_lossy(&certificate.to_pem()?).into_owned())
}

#[cfg(test)]
mod tests {
    use openssl::stack::Stack;
    use openssl::x509::store::X509StoreBuilder;
    use openssl::x509::{X509StoreContext, X509VerifyResult};

    use super::*;

    /// Whether OpenSSL accepts `certificate_pem` when only `ca_pem` is trusted.
    fn verifies(certificate_pem: &str, ca_pem: &str) -> bool {
        let certificate = X509::from_pem(certificate_pem.as_bytes()).unwrap();
        let mut store = X509StoreBuilder::new().unwrap();
        store
            .add_cert(X509::from_pem(ca_pem.as_bytes()).unwrap())
            .unwrap();
        let store = store.build();
        let mut context = X509StoreContext::new().unwrap();
        context
            .init(&store, &certificate, &Stack::new().unwrap(), |context| {
                context.verify_cert()?;
                Ok(context.error())
            })
            .unwrap()
            == X509VerifyResult::OK
    }

    #[test]
    fn both_shapes_verify_against_the_ca_a_client_is_given() {
        for shape in [CertificateShape::SelfSignedCa, CertificateShape::CaSignedServer] {
            let material = generate(shape).unwrap();
            assert!(
                verifies(&material.server_certificate_pem, &material.ca_pem),
                "{shape:?}"
            );
            let other = generate(shape).unwrap();
            assert!(
                !verifies(&material.server_certificate_pem, &other.ca_pem),
                "{shape:?} verified against another CA"
            );
        }
    }

    #[test]
    fn the_self_signed_shape_is_its_own_ca() {
        let material = generate(CertificateShape::SelfSignedCa).unwrap();
        assert_eq!(material.server_certificate_pem, material.ca_pem);
        let text = X509::from_pem(material.ca_pem.as_bytes())
            .unwrap()
            .to_text()
            .unwrap();
        assert!(String::from_utf8_lossy(&text).contains("CA:TRUE"));
    }
}
