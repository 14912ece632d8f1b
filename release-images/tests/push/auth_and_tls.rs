//! Pushing to registries that require basic auth or serve TLS.

use oci_client::client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol};
use oci_client::errors::OciDistributionError;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use registry_testkit::{CertificateShape, LocalRegistry, RegistryOptions};
use release_images::{Error, Image, PushOptions, Pusher, ReleaseMetadata};

use crate::support::*;

fn release() -> Image {
    Image::release(&ReleaseMetadata::new("4.16.3"), "amd64")
}

fn with_credentials_of(registry: &LocalRegistry) -> PushOptions {
    let credentials = registry.credentials().expect("credentials");
    PushOptions {
        basic_auth: Some((credentials.username.clone(), credentials.password.clone())),
        ..PushOptions::default()
    }
}

/// Reads `4.16.3` back anonymously with oci-client (OpenSSL in this
/// workspace), trusting `ca_pem` if given.
async fn pull_manifest_digest(
    registry: &LocalRegistry,
    ca_pem: Option<&str>,
) -> Result<String, OciDistributionError> {
    let protocol = match registry.ca_pem() {
        Some(_) => ClientProtocol::Https,
        None => ClientProtocol::Http,
    };
    let config = ClientConfig {
        protocol,
        extra_root_certificates: ca_pem
            .map(|pem| Certificate {
                encoding: CertificateEncoding::Pem,
                data: pem.as_bytes().to_vec(),
            })
            .into_iter()
            .collect(),
        ..ClientConfig::default()
    };
    let client = Client::try_from(config)?;
    let reference: Reference = format!("{}/{REPOSITORY}:4.16.3", registry.host_port())
        .parse()
        .expect("reference");
    let (_, digest) = client
        .pull_manifest_raw(&reference, &RegistryAuth::Anonymous, &[DOCKER_MANIFEST])
        .await?;
    Ok(digest)
}

#[tokio::test]
async fn basic_auth_registry_refuses_anonymous_pushes_and_pulls() {
    let registry = LocalRegistry::start_with(RegistryOptions::default().basic_auth("pusher", "hunter2"))
        .await
        .expect("registry");

    let anonymous = plain_pusher(&registry)
        .push(REPOSITORY, "4.16.3", release())
        .await;
    assert!(
        matches!(anonymous, Err(Error::Registry { .. })),
        "anonymous push: {anonymous:?}"
    );

    let pusher = Pusher::new(&registry.url(), with_credentials_of(&registry)).expect("pusher");
    let digest = pusher
        .push(REPOSITORY, "4.16.3", release())
        .await
        .expect("authenticated push");

    let unauthenticated = reqwest::get(format!("{}/v2/{REPOSITORY}/manifests/4.16.3", registry.url()))
        .await
        .expect("GET");
    assert_eq!(unauthenticated.status(), 401);
    let manifest = RegistryReader::new(&registry)
        .manifest(REPOSITORY, "4.16.3")
        .await;
    assert_eq!(manifest.digest, digest);
}

#[tokio::test]
async fn token_auth_registry_takes_pushes_with_credentials_only() {
    let registry = LocalRegistry::start_with(RegistryOptions::default().token_auth("robot", "t0ken"))
        .await
        .expect("registry");

    let anonymous = plain_pusher(&registry)
        .push(REPOSITORY, "4.16.3", release())
        .await;
    assert!(
        matches!(anonymous, Err(Error::Registry { .. })),
        "anonymous push: {anonymous:?}"
    );

    let pusher = Pusher::new(&registry.url(), with_credentials_of(&registry)).expect("pusher");
    let digest = pusher
        .push(REPOSITORY, "4.16.3", release())
        .await
        .expect("push with a token");
    assert_eq!(
        pull_manifest_digest(&registry, None)
            .await
            .expect("anonymous pull"),
        digest
    );
}

#[tokio::test]
async fn tls_registry_with_a_self_signed_ca_is_reachable_with_that_ca_only() {
    let registry = LocalRegistry::start_with(RegistryOptions::default().tls(CertificateShape::SelfSignedCa))
        .await
        .expect("registry");
    let ca_pem = registry.ca_pem().expect("CA PEM").to_owned();

    let untrusting = Pusher::new(&registry.url(), PushOptions::default()).expect("pusher");
    let refused = untrusting.push(REPOSITORY, "4.16.3", release()).await;
    assert!(
        matches!(refused, Err(Error::Registry { .. })),
        "push without the CA: {refused:?}"
    );

    let options = PushOptions {
        ca_pem: Some(ca_pem.clone()),
        ..PushOptions::default()
    };
    let trusting = Pusher::new(&registry.url(), options).expect("pusher");
    let digest = trusting
        .push(REPOSITORY, "4.16.3", release())
        .await
        .expect("push with the CA");

    assert_eq!(
        pull_manifest_digest(&registry, Some(&ca_pem))
            .await
            .expect("pull with the CA"),
        digest
    );
    assert!(
        pull_manifest_digest(&registry, None).await.is_err(),
        "pulled without trusting the CA"
    );
}
