//! Checking a release's signatures before updating to it, the way the
//! cluster-version operator (CVO) checks them: `signature-1`,
//! `signature-2`, … from a signature store (a metadata-helper in a
//! disconnected site, the public mirror otherwise) until the first 404, each
//! checked against a keyring. The release is verified when one signature
//! checks out, as for the CVO; every signature found is reported, with who
//! signed it and the identity it names, or why it does not count.

use http_fetch::Url;
use image_signature::store::{FetchError, SignatureStore};
use image_signature::{Digest, DigestError, Rejection, TrustedKeys, Verified, verify_release};

/// What the store holds for one release, checked.
#[derive(Debug)]
pub struct ReleaseSignatures {
    pub digest: Digest,
    /// In store order; empty when the store has none.
    pub signatures: Vec<CheckedSignature>,
}

#[derive(Debug)]
pub struct CheckedSignature {
    /// N of `signature-N`.
    pub index: u32,
    pub url: Url,
    pub outcome: Outcome,
}

#[derive(Debug)]
pub enum Outcome {
    /// Signed by a trusted key, naming the release.
    Verified(Verified),
    /// Found, but it does not count.
    Rejected(Rejection),
    /// The store failed to answer for this one; the search went on.
    Unavailable(FetchError),
}

impl ReleaseSignatures {
    /// Whether the CVO would accept the release: one signature checks out.
    pub fn is_verified(&self) -> bool {
        self.verified().next().is_some()
    }

    pub fn verified(&self) -> impl Iterator<Item = &Verified> {
        self.signatures
            .iter()
            .filter_map(|signature| match &signature.outcome {
                Outcome::Verified(verified) => Some(verified),
                _ => None,
            })
    }
}

/// Fetches and checks the signatures of `release`: a pull spec
/// (`quay.io/openshift-release-dev/ocp-release@sha256:…`) or a digest.
pub async fn check_release(
    store: &SignatureStore,
    keys: &TrustedKeys,
    release: &str,
) -> Result<ReleaseSignatures, DigestError> {
    let digest = Digest::from_pull_spec(release)?;
    let signatures = store
        .search(&digest)
        .await
        .into_iter()
        .map(|fetched| CheckedSignature {
            index: fetched.index,
            url: fetched.url,
            outcome: match fetched.signature {
                Ok(bytes) => match verify_release(&bytes, &digest, keys) {
                    Ok(verified) => Outcome::Verified(verified),
                    Err(rejection) => Outcome::Rejected(rejection),
                },
                Err(error) => Outcome::Unavailable(error),
            },
        })
        .collect();
    Ok(ReleaseSignatures { digest, signatures })
}
