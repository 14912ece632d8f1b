//! Runs the real `docker-registry` binary; see scripts/install-test-deps.sh.

use registry_testkit::{CertificateShape, LocalRegistry, RegistryOptions, RequestKind};
use reqwest::{Client, StatusCode};
use sha2::{Digest, Sha256};

fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// Uploads `blob` as a monolithic upload (POST, then PUT with the content) and returns its digest.
async fn upload_blob(client: &Client, base_url: &str, repository: &str, blob: &[u8]) -> String {
    let digest = sha256_digest(blob);
    let session = client
        .post(format!("{base_url}/v2/{repository}/blobs/uploads/"))
        .send()
        .await
        .expect("start upload");
    assert_eq!(session.status(), StatusCode::ACCEPTED, "start upload");
    let location = session.headers()["location"]
        .to_str()
        .expect("location")
        .to_owned();
    let separator = if location.contains('?') { '&' } else { '?' };
    let response = client
        .put(format!("{location}{separator}digest={digest}"))
        .body(blob.to_vec())
        .send()
        .await
        .expect("finish upload");
    assert_eq!(response.status(), StatusCode::CREATED, "finish upload");
    digest
}

async fn blob_status(client: &Client, base_url: &str, repository: &str, digest: &str) -> StatusCode {
    client
        .head(format!("{base_url}/v2/{repository}/blobs/{digest}"))
        .send()
        .await
        .expect("HEAD blob")
        .status()
}

/// A client (OpenSSL, the workspace's one TLS stack) that trusts exactly `ca_pem`.
fn client_trusting(ca_pem: &str) -> Client {
    let certificate = reqwest::Certificate::from_pem(ca_pem.as_bytes()).expect("CA PEM");
    Client::builder()
        .tls_certs_only([certificate])
        .build()
        .expect("client")
}

#[tokio::test]
async fn plain_registry_answers_on_loopback_and_stops_when_dropped() {
    let registry = LocalRegistry::start().await.expect("registry starts");
    assert!(registry.host_port().starts_with("127.0.0.1:"));
    assert_eq!(registry.url(), format!("http://{}", registry.host_port()));
    assert_eq!(registry.ca_pem(), None);

    let version_check = format!("{}/v2/", registry.url());
    let response = reqwest::get(&version_check).await.expect("GET /v2/");
    assert_eq!(response.status(), StatusCode::OK);

    drop(registry);
    assert!(
        reqwest::get(&version_check).await.is_err(),
        "the registry still answers after drop"
    );
}

#[tokio::test]
async fn storage_lives_in_the_chosen_directory_until_drop() {
    let parent = tempfile::tempdir().expect("tempdir");
    let registry = LocalRegistry::start_with(RegistryOptions::default().workdir_in(parent.path()))
        .await
        .expect("registry starts");
    upload_blob(&Client::new(), &registry.url(), "stored/repo", b"on disk").await;
    let workdirs = || std::fs::read_dir(parent.path()).expect("read_dir").count();
    assert_eq!(workdirs(), 1);

    drop(registry);
    assert_eq!(workdirs(), 0, "the work directory outlived the registry");
}

#[tokio::test]
async fn basic_auth_refuses_anonymous_and_wrong_passwords() {
    let registry = LocalRegistry::start_with(RegistryOptions::default().basic_auth("alice", "s3cret"))
        .await
        .expect("registry starts");
    let credentials = registry.credentials().expect("credentials").clone();
    assert_eq!(credentials.username, "alice");
    let url = format!("{}/v2/", registry.url());
    let client = Client::new();

    let anonymous = client.get(&url).send().await.expect("GET");
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    let challenge = anonymous.headers()["www-authenticate"].to_str().expect("header");
    assert!(challenge.starts_with("Basic "), "challenge: {challenge}");

    let wrong = client
        .get(&url)
        .basic_auth("alice", Some("wrong"))
        .send()
        .await
        .expect("GET");
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);

    let authenticated = client
        .get(&url)
        .basic_auth(&credentials.username, Some(&credentials.password))
        .send()
        .await
        .expect("GET");
    assert_eq!(authenticated.status(), StatusCode::OK);
}

#[tokio::test]
async fn ca_signed_server_certificate_is_trusted_through_its_ca_only() {
    let registry =
        LocalRegistry::start_with(RegistryOptions::default().tls(CertificateShape::CaSignedServer))
            .await
            .expect("registry starts");
    assert!(registry.url().starts_with("https://127.0.0.1:"));
    let ca_pem = registry.ca_pem().expect("CA PEM");
    let url = format!("{}/v2/", registry.url());

    let trusted = client_trusting(ca_pem)
        .get(&url)
        .send()
        .await
        .expect("TLS with the CA");
    assert_eq!(trusted.status(), StatusCode::OK);

    let untrusted = Client::new().get(&url).send().await;
    assert!(untrusted.is_err(), "system roots accepted the throw-away CA");
}

#[tokio::test]
async fn self_signed_ca_certificate_is_its_own_ca_which_openssl_accepts_once_trusted() {
    let registry = LocalRegistry::start_with(RegistryOptions::default().tls(CertificateShape::SelfSignedCa))
        .await
        .expect("registry starts");
    let ca_pem = registry.ca_pem().expect("CA PEM");
    assert_eq!(
        ca_pem.matches("BEGIN CERTIFICATE").count(),
        1,
        "one certificate, no chain"
    );
    let url = format!("{}/v2/", registry.url());

    // webpki (rustls) refuses a CA certificate as a server certificate
    // (CaUsedAsEndEntity) even when trusted; OpenSSL accepts it: the reason
    // the workspace's one TLS stack is OpenSSL.
    let trusted = client_trusting(ca_pem)
        .get(&url)
        .send()
        .await
        .expect("OpenSSL accepts a trusted CA certificate as the server certificate");
    assert_eq!(trusted.status(), StatusCode::OK);
    assert!(
        Client::new().get(&url).send().await.is_err(),
        "system roots accepted the throw-away certificate"
    );
}

#[tokio::test]
async fn token_auth_lets_anonymous_clients_pull_and_credentials_push() {
    let registry = LocalRegistry::start_with(RegistryOptions::default().token_auth("robot", "t0ken"))
        .await
        .expect("registry starts");
    let realm = registry.token_realm().expect("token realm").to_owned();
    let client = Client::new();

    let challenge = client
        .get(format!("{}/v2/", registry.url()))
        .send()
        .await
        .expect("GET /v2/");
    assert_eq!(challenge.status(), StatusCode::UNAUTHORIZED);
    let header = challenge.headers()["www-authenticate"]
        .to_str()
        .expect("header")
        .to_owned();
    assert!(
        header.starts_with(&format!("Bearer realm=\"{realm}\"")),
        "challenge: {header}"
    );

    let token = |credentials: Option<(&str, &str)>, scope: &str| {
        let query = form_urlencoded::Serializer::new(String::new())
            .append_pair("service", "registry-testkit")
            .append_pair("scope", scope)
            .finish();
        let mut request = client.get(format!("{realm}?{query}"));
        if let Some((username, password)) = credentials {
            request = request.basic_auth(username, Some(password));
        }
        async move {
            let response = request.send().await.expect("token request");
            let status = response.status();
            let body = response.bytes().await.expect("token response");
            let body: serde_json::Value = serde_json::from_slice(&body).expect("token JSON");
            (status, body["token"].as_str().map(str::to_owned))
        }
    };
    let start_upload = |token: String| {
        client
            .post(format!("{}/v2/team/app/blobs/uploads/", registry.url()))
            .bearer_auth(token)
            .send()
    };

    let (status, anonymous) = token(None, "repository:team/app:pull,push").await;
    assert_eq!(status, StatusCode::OK);
    let anonymous = anonymous.expect("anonymous token");
    let pull = client
        .get(format!("{}/v2/team/app/manifests/latest", registry.url()))
        .bearer_auth(&anonymous)
        .send()
        .await
        .expect("GET manifest");
    assert_eq!(
        pull.status(),
        StatusCode::NOT_FOUND,
        "an anonymous pull is authorised"
    );
    let push = start_upload(anonymous).await.expect("POST upload");
    assert_eq!(
        push.status(),
        StatusCode::UNAUTHORIZED,
        "an anonymous push is refused"
    );

    let (status, _) = token(Some(("robot", "wrong")), "repository:team/app:pull,push").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let (_, authenticated) = token(Some(("robot", "t0ken")), "repository:team/app:pull,push").await;
    let push = start_upload(authenticated.expect("token"))
        .await
        .expect("POST upload");
    assert_eq!(
        push.status(),
        StatusCode::ACCEPTED,
        "an authenticated push is authorised"
    );
}

#[tokio::test]
async fn stop_and_restart_keep_the_port_and_the_storage() {
    let mut registry = LocalRegistry::start().await.expect("registry starts");
    let client = Client::new();
    let host_port = registry.host_port();
    let digest = upload_blob(&client, &registry.url(), "fault/repo", b"survives a restart").await;

    registry.stop().expect("stops");
    assert!(!registry.is_running());
    assert!(
        client
            .get(format!("{}/v2/", registry.url()))
            .send()
            .await
            .is_err(),
        "a stopped registry still answers"
    );

    registry.restart().await.expect("restarts");
    assert!(registry.is_running());
    assert_eq!(registry.host_port(), host_port);
    assert_eq!(
        blob_status(&client, &registry.url(), "fault/repo", &digest).await,
        StatusCode::OK
    );
}

#[tokio::test]
async fn request_log_counts_each_kind_of_request_exactly() {
    let registry = LocalRegistry::start().await.expect("registry starts");
    let client = Client::new();
    let digest = upload_blob(&client, &registry.url(), "counted/repo", b"counted").await;
    for tag in ["a", "b", "c"] {
        let url = format!("{}/v2/counted/repo/manifests/{tag}", registry.url());
        let response = client.get(url).send().await.expect("GET manifest");
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
    }
    for _ in 0..2 {
        blob_status(&client, &registry.url(), "counted/repo", &digest).await;
    }

    let log = registry.request_log().await.expect("request log");
    let count = |kind| log.iter().filter(|request| request.kind() == kind).count();
    assert_eq!(count(RequestKind::BlobUpload), 2, "POST and PUT");
    assert_eq!(count(RequestKind::Manifest), 3);
    assert_eq!(count(RequestKind::Blob), 2);
    assert_eq!(
        count(RequestKind::ApiVersionCheck),
        0,
        "the testkit's own probes are excluded"
    );
    assert!(
        log.iter()
            .filter(|request| request.kind() == RequestKind::Manifest)
            .all(|request| request.status == 404)
    );

    registry.clear_request_log();
    assert!(registry.request_log().await.expect("request log").is_empty());
}
