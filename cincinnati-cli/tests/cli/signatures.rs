//! `cincinnati signatures verify` against a real metadata-helper serving the
//! demo's signatures, as a disconnected cluster's signature store.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use e2e::metadata_helper::{self, SignatureSource};
use e2e::process::ServiceProcess;
use release_set_generator::signatures::demo_key;

use crate::support::{EVERY_DOCUMENT, Run, cincinnati, documented_fields, keys};

fn demo_signatures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/demo/signatures")
}

fn demo_keyring() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/demo/signing-key.asc")
}

/// A release the demo signed twice.
fn twice_signed_digest() -> String {
    let sha256 = demo_signatures().join("sha256");
    let hex = std::fs::read_dir(&sha256)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .find(|hex| sha256.join(hex).join("signature-2").is_file())
        .expect("the demo signs some releases twice");
    format!("sha256:{hex}")
}

fn verify(store: &str, keyring: &Path, release: &str) -> Run {
    cincinnati(&[
        "-o",
        "json",
        "signatures",
        "verify",
        "--store",
        store,
        "--keyring",
        keyring.to_str().unwrap(),
        "--release",
        release,
    ])
}

async fn helper(workdir: &Path) -> ServiceProcess {
    metadata_helper::start(workdir, "cli", &SignatureSource::Directory(demo_signatures()))
        .await
        .expect("the metadata-helper starts")
}

#[tokio::test]
async fn a_signed_release_verifies_and_every_signature_is_reported() {
    let workdir = tempfile::tempdir().unwrap();
    let helper = helper(workdir.path()).await;
    let store = metadata_helper::store_url(&helper);
    let digest = twice_signed_digest();
    let release = format!("quay.io/openshift-release-dev/ocp-release@{digest}");

    let run = verify(&store, &demo_keyring(), &release);
    assert_eq!(run.code, 0, "{run:?}");
    let answer = run.json();
    assert_eq!(answer["kind"], "Signatures");
    let mut documented = documented_fields("`Signatures`");
    documented.extend(EVERY_DOCUMENT.map(str::to_owned));
    assert_eq!(keys(&answer), documented, "docs/cli.md's fields of Signatures");
    assert_eq!(answer["digest"], digest.as_str());
    assert_eq!(answer["verified"], true);
    let signatures = answer["signatures"].as_array().unwrap();
    assert_eq!(signatures.len(), 2, "{answer:#}");
    for (signature, index) in signatures.iter().zip(1..) {
        assert_eq!(signature["index"], index);
        assert_eq!(signature["status"], "verified", "{signature:#}");
        assert_eq!(signature["signer"], demo_key().fingerprint().as_str());
        assert!(
            signature["identity"]
                .as_str()
                .is_some_and(|identity| identity.starts_with("quay.io/openshift-release-dev/ocp-release")),
            "{signature:#}"
        );
        assert_eq!(
            signature["url"],
            format!("{store}/sha256={}/signature-{index}", &digest[7..]).as_str()
        );
    }

    // The same, for people: one row per signature.
    let table = cincinnati(&[
        "signatures",
        "verify",
        "--store",
        &store,
        "--keyring",
        demo_keyring().to_str().unwrap(),
        "--release",
        &digest,
    ]);
    assert_eq!(table.code, 0, "{table:?}");
    assert!(table.stdout.contains(": verified"), "{}", table.stdout);
    assert_eq!(table.stdout.matches("signature-").count(), 2, "{}", table.stdout);
}

#[tokio::test]
async fn an_unsigned_release_or_another_key_is_a_no_and_a_dead_store_a_service_failure() {
    let workdir = tempfile::tempdir().unwrap();
    let helper = helper(workdir.path()).await;
    let store = metadata_helper::store_url(&helper);

    let unsigned = format!("sha256:{}", "0".repeat(64));
    let run = verify(&store, &demo_keyring(), &unsigned);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.json()["verified"], false);
    assert!(run.stderr.contains("has no signature of"), "{}", run.stderr);

    // Signed, but not by a key the keyring trusts.
    let other_keyring = workdir.path().join("other.asc");
    std::fs::write(
        &other_keyring,
        release_images::signature::SigningKey::from_seed(7).public_key_armored(),
    )
    .unwrap();
    let run = verify(&store, &other_keyring, &twice_signed_digest());
    assert_eq!(run.code, 1, "{run:?}");
    let answer = run.json();
    assert!(
        answer["signatures"]
            .as_array()
            .unwrap()
            .iter()
            .all(|signature| signature["status"] == "rejected"
                && signature["reason"] == "not signed by a trusted key"),
        "{answer:#}"
    );
    assert!(run.stderr.contains("none of the 2 signatures"), "{}", run.stderr);

    // A keyring directory, as the CVO's ConfigMap is mounted, works too.
    let keyring_dir = workdir.path().join("keyring");
    std::fs::create_dir(&keyring_dir).unwrap();
    std::fs::copy(demo_keyring(), keyring_dir.join("demo.asc")).unwrap();
    assert_eq!(verify(&store, &keyring_dir, &twice_signed_digest()).code, 0);

    let dead_store = verify(
        "http://127.0.0.1:9/signatures",
        &demo_keyring(),
        &twice_signed_digest(),
    );
    assert_eq!(dead_store.code, 3, "{dead_store:?}");

    let no_keyring = verify(&store, &workdir.path().join("missing.asc"), &unsigned);
    assert_eq!(no_keyring.code, 2, "{no_keyring:?}");
    assert!(no_keyring.stderr.contains("missing.asc"), "{}", no_keyring.stderr);
    let not_a_digest = verify(&store, &demo_keyring(), "quay.io/ocp-release:4.18.1");
    assert_eq!(not_a_digest.code, 2, "{not_a_digest:?}");
}

/// A store that accepts connections and closes them unanswered: the
/// request fails as an unreachable store's does, and every attempt is
/// counted.
fn hanging_up_store() -> (String, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/signatures", listener.local_addr().unwrap());
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    std::thread::spawn(move || {
        for connection in listener.incoming() {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(connection);
        }
    });
    (url, connections)
}

#[test]
fn a_store_that_cannot_be_reached_is_said_once_and_asked_once() {
    let digest = twice_signed_digest();
    let (hanging_up, connections) = hanging_up_store();
    let refusing = "http://127.0.0.1:9/signatures";
    for store in [hanging_up.as_str(), refusing] {
        let run = verify(store, &demo_keyring(), &digest);
        assert_eq!(run.code, 3, "{run:?}");
        assert!(run.stdout.is_empty(), "{}", run.stdout);
        let expected = format!(
            "cincinnati: the signature store {store} cannot be reached: request to \
             {store}/sha256={}/signature-1 failed: ",
            &digest[7..]
        );
        assert!(run.stderr.starts_with(&expected), "{}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert_eq!(run.stderr.matches(store).count(), 2, "{}", run.stderr);
    }
    assert_eq!(connections.load(Ordering::SeqCst), 1, "signature-1 only");
}
