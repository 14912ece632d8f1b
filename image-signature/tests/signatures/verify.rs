//! One signature, checked by the CVO's rules (`verify_release`) and by
//! upstream graph-builder's (`verify_digest_claim`), with keys made by
//! `release-images` and, when the machine has it, by GnuPG.

use image_signature::{
    CVO_READ_LIMIT, Digest, Document, KeysError, MAX_CONTENT_BYTES, Rejection, TrustedKeys,
    verify_digest_claim, verify_release,
};
use release_images::signature::{SIGNED_AT, SigningKey};

use crate::support::{DIGEST, digest};

const OTHER_DIGEST: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
const REFERENCE: &str = "quay.io/openshift-release-dev/ocp-release:4.18.1-x86_64";

fn trusted(key: &SigningKey) -> TrustedKeys {
    TrustedKeys::from_armored(&key.public_key_armored()).unwrap()
}

/// `document` with one change made to its JSON.
fn edited(change: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let mut json: serde_json::Value =
        serde_json::from_slice(&Document::new(REFERENCE, DIGEST).to_json()).unwrap();
    change(&mut json);
    serde_json::to_vec(&json).unwrap()
}

#[test]
fn a_release_signature_by_a_trusted_key_verifies_and_says_who_and_what() {
    let key = SigningKey::from_seed(1);
    let verified = verify_release(&key.sign(REFERENCE, DIGEST), &digest(), &trusted(&key)).unwrap();
    assert_eq!(verified.document.docker_reference(), REFERENCE);
    assert_eq!(verified.document.manifest_digest(), DIGEST);
    assert_eq!(
        verified.document.optional.creator.as_deref(),
        Some("release-images")
    );
    assert_eq!(verified.signer, key.fingerprint());
    assert_eq!(
        verified.signed_at,
        Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(SIGNED_AT.into()))
    );
}

#[test]
fn each_rule_of_the_cvo_rejects_what_breaks_it() {
    let key = SigningKey::from_seed(1);
    let keys = trusted(&key);
    let rejection = |signature: Vec<u8>| verify_release(&signature, &digest(), &keys).unwrap_err();

    assert_eq!(
        rejection(SigningKey::from_seed(2).sign(REFERENCE, DIGEST)),
        Rejection::Untrusted
    );
    assert_eq!(
        rejection(key.sign(REFERENCE, OTHER_DIGEST)),
        Rejection::OtherDigest {
            signed: OTHER_DIGEST.to_owned(),
            expected: DIGEST.to_owned()
        }
    );
    let wrong_type = edited(|json| json["critical"]["type"] = "cosign container image signature".into());
    assert_eq!(
        rejection(key.sign_content(&wrong_type, None)),
        Rejection::WrongType("cosign container image signature".to_owned())
    );
    let no_identity = edited(|json| json["critical"]["identity"]["docker-reference"] = "".into());
    assert_eq!(
        rejection(key.sign_content(&no_identity, None)),
        Rejection::NoIdentity
    );
    let unknown_key = edited(|json| json["optional"]["comment"] = "hello".into());
    assert!(
        matches!(rejection(key.sign_content(&unknown_key, None)), Rejection::NotADocument(why) if why.contains("comment"))
    );
    assert!(matches!(
        rejection(b"not a signature".to_vec()),
        Rejection::NotOpenPgp(_)
    ));
}

#[test]
fn an_expired_signature_is_rejected_and_a_lasting_one_is_not() {
    let key = SigningKey::from_seed(1);
    let document = Document::new(REFERENCE, DIGEST);
    let expired = key.sign_expiring(&document, 60);
    assert_eq!(
        verify_release(&expired, &digest(), &trusted(&key)).unwrap_err(),
        Rejection::Expired(u64::from(SIGNED_AT) + 60)
    );
    let lasting = key.sign_expiring(&document, u32::MAX);
    assert!(verify_release(&lasting, &digest(), &trusted(&key)).is_ok());
}

#[test]
fn sizes_are_bounded_before_and_after_decompression() {
    let key = SigningKey::from_seed(1);
    let oversized = [key.sign(REFERENCE, DIGEST), vec![0; CVO_READ_LIMIT]].concat();
    assert_eq!(
        verify_release(&oversized, &digest(), &trusted(&key)).unwrap_err(),
        Rejection::TooLarge {
            limit: CVO_READ_LIMIT
        }
    );
    // A few hundred compressed bytes that would inflate to a megabyte.
    let bomb = key.sign_content(&vec![b' '; 1024 * 1024], None);
    assert!(bomb.len() < 16 * 1024, "{} bytes", bomb.len());
    assert_eq!(
        verify_release(&bomb, &digest(), &trusted(&key)).unwrap_err(),
        Rejection::ContentTooLarge {
            limit: MAX_CONTENT_BYTES
        }
    );
}

#[test]
fn the_graph_data_rule_looks_at_the_signer_and_the_digest_only() {
    let key = SigningKey::from_seed(1);
    let loose = edited(|json| {
        json["critical"]["type"] = "something else".into();
        json["extra"] = true.into();
    });
    let signature = key.sign_content(&loose, None);
    assert!(verify_release(&signature, &digest(), &trusted(&key)).is_err());
    assert_eq!(verify_digest_claim(&signature, &digest(), &trusted(&key)), Ok(()));
    assert_eq!(
        verify_digest_claim(&signature, &digest(), &trusted(&SigningKey::from_seed(2))),
        Err(Rejection::Untrusted)
    );
    assert_eq!(
        verify_digest_claim(&key.sign_content(b"{}", None), &digest(), &trusted(&key)),
        Err(Rejection::NoDigest)
    );
}

#[test]
fn keys_are_read_from_every_file_of_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (SigningKey::from_seed(1), SigningKey::from_seed(2));
    for (name, key) in [("a.asc", &first), ("b.asc", &second)] {
        std::fs::write(dir.path().join(name), key.public_key_armored()).unwrap();
    }
    let keys = TrustedKeys::from_dir(dir.path()).unwrap();
    assert_eq!(keys.fingerprints(), [first.fingerprint(), second.fingerprint()]);
    assert!(verify_release(&second.sign(REFERENCE, DIGEST), &digest(), &keys).is_ok());

    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(
        TrustedKeys::from_dir(empty.path()),
        Err(KeysError::NoKeys(_))
    ));
}

/// Real release signatures are made by GnuPG; check one made by it, when
/// the machine has `gpg` (Debian does).
#[test]
fn a_gnupg_signature_verifies() {
    use std::process::Command;
    if Command::new("gpg").arg("--version").output().is_err() {
        eprintln!("gpg is not installed; GnuPG interoperability not checked");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    // gpg starts a gpg-agent for the home directory, which outlives gpg.
    let _agent = StopsAgent(home.path());
    let gpg = |arguments: &[&str]| {
        let output = Command::new("gpg")
            .env("GNUPGHOME", home.path())
            .args(["--batch", "--yes", "--passphrase", ""])
            .args(arguments)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "gpg {arguments:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output.stdout
    };
    gpg(&[
        "--quick-gen-key",
        "Release <release@example.com>",
        "ed25519",
        "sign",
        "never",
    ]);
    let document = home.path().join("signature.json");
    std::fs::write(&document, Document::new(REFERENCE, DIGEST).to_json()).unwrap();
    let signed = home.path().join("signature-1");
    gpg(&[
        "--output",
        signed.to_str().unwrap(),
        "--sign",
        document.to_str().unwrap(),
    ]);
    let public_key = String::from_utf8(gpg(&["--armor", "--export", "release@example.com"])).unwrap();

    let keys = TrustedKeys::from_armored(&public_key).unwrap();
    let signature = std::fs::read(&signed).unwrap();
    let verified = verify_release(&signature, &digest(), &keys).unwrap();
    assert_eq!(verified.signer, keys.fingerprints()[0]);
    assert!(verify_release(&signature, &Digest::parse(OTHER_DIGEST).unwrap(), &keys).is_err());
}

/// Stops the gpg-agent of a GnuPG home directory when dropped, also when
/// the test fails: a test leaves no process running.
struct StopsAgent<'a>(&'a std::path::Path);

impl Drop for StopsAgent<'_> {
    fn drop(&mut self) {
        // Nothing to stop if gpgconf cannot run or no agent started.
        let _ = std::process::Command::new("gpgconf")
            .env("GNUPGHOME", self.0)
            .args(["--kill", "all"])
            .output();
    }
}
