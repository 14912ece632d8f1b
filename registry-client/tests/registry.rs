//! The client against a real registry (distribution's `docker-registry` on
//! 127.0.0.1): authentication, TLS, paging, manifests, blobs, retries, and
//! the set-up rule for credentials files.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use http_fetch::ExtraRoots;
use registry_client::manifest::Manifest;
use registry_client::{
    Access, Credentials, RegistryAddress, RegistryClient, RegistryFailure, RegistrySettings, RetryPolicy,
};
use registry_testkit::{CertificateShape, LocalRegistry, RegistryOptions};
use release_images::{
    Image, ImageList, Layer, ManifestFormat, PushOptions, Pushable, Pusher, ReleaseMetadata,
};

const REPOSITORY: &str = "ocp/release";
const USER_AGENT: &str = "registry-client-test/1";

fn quick_retries() -> RetryPolicy {
    RetryPolicy {
        attempts: 2,
        first_backoff: Duration::from_millis(10),
        attempt_timeout: Duration::from_secs(20),
    }
}

/// What a client knows of `registry` with neither credentials nor extra CAs.
fn settings_of(registry: &LocalRegistry) -> RegistrySettings {
    RegistrySettings {
        address: RegistryAddress::parse(&registry.url()).unwrap(),
        repository: REPOSITORY.to_owned(),
        credentials: None,
        roots: ExtraRoots::default(),
        retry: quick_retries(),
        user_agent: USER_AGENT,
    }
}

/// A client with everything `registry` asks for: its credentials, its CA.
fn client_for(registry: &LocalRegistry) -> RegistryClient {
    RegistryClient::new(RegistrySettings {
        credentials: registry.credentials().map(|c| Credentials {
            username: c.username.clone(),
            password: c.password.clone(),
        }),
        roots: registry
            .ca_pem()
            .map(|pem| ExtraRoots::from_pem("registry CA", pem).unwrap())
            .unwrap_or_default(),
        ..settings_of(registry)
    })
    .unwrap()
}

fn pusher_for(registry: &LocalRegistry) -> Pusher {
    Pusher::new(
        &registry.url(),
        PushOptions {
            ca_pem: registry.ca_pem().map(str::to_owned),
            basic_auth: registry
                .credentials()
                .map(|c| (c.username.clone(), c.password.clone())),
            ..PushOptions::default()
        },
    )
    .unwrap()
}

fn release(version: &str) -> ReleaseMetadata {
    ReleaseMetadata::new(version)
}

/// A registry started with `options`, holding one image under tag `x`.
async fn registry_with_one_image(options: RegistryOptions) -> LocalRegistry {
    let registry = LocalRegistry::start_with(options).await.unwrap();
    pusher_for(&registry)
        .push(REPOSITORY, "x", Image::release(&release("4.8.0"), "amd64"))
        .await
        .unwrap();
    registry
}

#[tokio::test]
async fn reads_the_four_manifest_formats() {
    let registry = LocalRegistry::start().await.unwrap();
    let pusher = pusher_for(&registry);
    let docker = Image::release(&release("4.1.0"), "amd64");
    let oci = Image::release(&release("4.1.1"), "arm64").format(ManifestFormat::Oci);
    let list = ImageList::multi_release(&release("4.1.2"), ["amd64", "s390x"], ManifestFormat::Docker);
    let index = ImageList::multi_release(&release("4.1.3"), ["amd64", "ppc64le"], ManifestFormat::Oci);
    let items: [(&str, Pushable); 4] = [
        ("docker", docker.into()),
        ("oci", oci.into()),
        ("list", list.into()),
        ("index", index.into()),
    ];
    let mut pushed = Vec::new();
    for (tag, item) in items {
        pushed.push(pusher.push(REPOSITORY, tag, item).await.unwrap());
    }
    let client = client_for(&registry);
    for (tag, expected_digest) in ["docker", "oci", "list", "index"].into_iter().zip(&pushed) {
        let (manifest, digest) = client.manifest(tag).await.unwrap();
        assert_eq!(&digest, expected_digest, "{tag}");
        assert_eq!(
            client.manifest_digest(tag).await.unwrap(),
            digest,
            "{tag} by HEAD"
        );
        match (tag, manifest) {
            ("docker" | "oci", Manifest::Image(image)) => {
                let config = client.small_blob(&image.config_digest, 4096).await.unwrap();
                let config: serde_json::Value = serde_json::from_slice(&config).unwrap();
                let expected = if tag == "docker" { "amd64" } else { "arm64" };
                assert_eq!(config["architecture"], expected);
            }
            ("list" | "index", Manifest::List(entries)) => {
                let architectures: Vec<_> =
                    entries.iter().filter_map(|e| e.architecture.as_deref()).collect();
                let expected = if tag == "list" {
                    ["amd64", "s390x"]
                } else {
                    ["amd64", "ppc64le"]
                };
                assert_eq!(architectures, expected);
            }
            (tag, manifest) => panic!("{tag}: {manifest:?}"),
        }
    }
}

#[tokio::test]
async fn a_small_blob_over_its_limit_is_refused_naming_the_limit_and_a_stream_is_not_bounded() {
    let registry = LocalRegistry::start().await.unwrap();
    let image = Image::new("amd64").layer(Layer::random(1, 3));
    pusher_for(&registry)
        .push(REPOSITORY, "big", image)
        .await
        .unwrap();
    let client = client_for(&registry);
    let (Manifest::Image(image), _) = client.manifest("big").await.unwrap() else {
        panic!("an image");
    };
    let layer = &image.layers[0].digest;
    let error = client.small_blob(layer, 1024).await.unwrap_err();
    assert!(matches!(error.cause, RegistryFailure::TooLarge(1024)), "{error}");
    assert!(
        error.to_string().contains("larger than the 1024 bytes allowed"),
        "{error}"
    );

    use futures::StreamExt as _;
    let mut stream = client.blob_stream(layer).await.unwrap();
    let mut length = 0;
    while let Some(chunk) = stream.next().await {
        length += chunk.unwrap().len();
    }
    assert!(length > 512 * 1024, "the whole layer, not {length} bytes");
}

#[tokio::test]
async fn basic_authentication() {
    let registry = registry_with_one_image(RegistryOptions::default().basic_auth("reader", "s3cret")).await;
    assert_eq!(client_for(&registry).list_tags().await.unwrap(), ["x"]);

    let anonymous = RegistryClient::new(settings_of(&registry)).unwrap();
    let error = anonymous.list_tags().await.unwrap_err();
    assert!(!error.to_string().contains("s3cret"));
    assert!(error.operation.starts_with("list tags"), "{error}");
}

#[tokio::test]
async fn token_authentication() {
    let registry = registry_with_one_image(RegistryOptions::default().token_auth("reader", "t0ken")).await;
    let client = client_for(&registry);
    assert_eq!(client.list_tags().await.unwrap(), ["x"]);
    assert!(client.manifest("x").await.is_ok());
}

#[tokio::test]
async fn tls_with_a_self_signed_certificate_that_is_its_own_ca() {
    let registry =
        registry_with_one_image(RegistryOptions::default().tls(CertificateShape::SelfSignedCa)).await;

    // Trusted through a root_certificate_dir, as operators configure it.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mirror-ca.crt"), registry.ca_pem().unwrap()).unwrap();
    let trusted = RegistryClient::new(RegistrySettings {
        roots: ExtraRoots::from_dir(dir.path()),
        ..settings_of(&registry)
    })
    .unwrap();
    assert_eq!(trusted.list_tags().await.unwrap(), ["x"]);

    let untrusted = RegistryClient::new(settings_of(&registry)).unwrap();
    assert!(
        untrusted.list_tags().await.is_err(),
        "an untrusted certificate must be refused"
    );
}

#[tokio::test]
async fn an_unreachable_registry_is_retried_then_an_error() {
    let mut registry = LocalRegistry::start().await.unwrap();
    let client = client_for(&registry);
    registry.stop().unwrap();
    let error = client.list_tags().await.unwrap_err();
    assert!(error.operation.starts_with("list tags"), "{error}");
    assert_eq!(
        client.request_counts().tag_pages.load(Ordering::Relaxed),
        2,
        "retried once"
    );
}

#[tokio::test]
async fn thousands_of_tags_are_paged_to_the_end() {
    let registry = LocalRegistry::start().await.unwrap();
    // One image under many tags: one upload, a manifest per tag.
    let image: Pushable = Image::release(&release("4.11.0"), "amd64").into();
    let items: Vec<(String, Pushable)> = (0..1500).map(|n| (format!("t{n}"), image.clone())).collect();
    pusher_for(&registry).push_all(REPOSITORY, &items).await.unwrap();
    let client = client_for(&registry);
    let mut tags = client.list_tags().await.unwrap();
    tags.sort();
    let mut expected: Vec<String> = items.into_iter().map(|(tag, _)| tag).collect();
    expected.sort();
    assert_eq!(tags, expected);
    assert!(
        client.request_counts().tag_pages.load(Ordering::Relaxed) <= 16,
        "paging terminates"
    );
}

/// `Access` with `registry`'s address and the given credentials keys.
fn access<'a>(registry: &'a str, credentials_path: Option<&'a Path>, roots: &'a ExtraRoots) -> Access<'a> {
    Access {
        registry,
        repository: REPOSITORY,
        username: None,
        password: None,
        credentials_path,
        roots,
    }
}

#[tokio::test]
async fn credentials_from_a_docker_config_file_are_used() {
    let registry = registry_with_one_image(RegistryOptions::default().basic_auth("reader", "s3cret")).await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        format!(
            r#"{{"auths": {{"{}": {{"username": "reader", "password": "s3cret"}}}}}}"#,
            registry.host_port()
        ),
    )
    .unwrap();
    let url = registry.url();
    let roots = ExtraRoots::default();
    let client = access(&url, Some(&config), &roots)
        .client(quick_retries(), USER_AGENT)
        .unwrap();
    assert_eq!(client.list_tags().await.unwrap(), ["x"]);

    let missing = dir.path().join("absent.json");
    let anonymous = access(&url, Some(&missing), &roots)
        .client(quick_retries(), USER_AGENT)
        .unwrap();
    assert!(
        anonymous.list_tags().await.is_err(),
        "read anonymously, and refused"
    );

    std::fs::write(&config, "{ not json").unwrap();
    let error = access(&url, Some(&config), &roots)
        .client(quick_retries(), USER_AGENT)
        .unwrap_err()
        .to_string();
    assert!(error.contains(&config.display().to_string()), "{error}");
}
