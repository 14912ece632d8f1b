//! Release image signatures, as OpenShift release tooling makes them and the
//! cluster-version operator (CVO) checks them.
//!
//! A signature is an OpenPGP signed message (usually compressed) whose
//! content is a JSON [`Document`], the "atomic container signature" of
//! containers/image: `critical.image.docker-manifest-digest` names the
//! image, `critical.identity.docker-reference` where it was published,
//! `critical.type` says what it is. Signatures are filed by image [`Digest`]:
//! a signature store answers `<base>/<algo>=<hex>/signature-<N>`, a
//! graph-data image and a metadata-helper keep them as
//! `signatures/<algo>/<hex>/signature-<N>` ([`layout`]).
//!
//! - [`verify_release`] checks a signature by the CVO's rules; it is what a
//!   fuzz target of signature parsing should call.
//! - [`verify_digest_claim`] checks only the signer and the digest, the rule
//!   upstream's graph-builder applies to graph-data images.
//! - [`store`] fetches signatures from a store over HTTP(S), searching them
//!   the way the CVO does.
//!
//! Signing lives with the test and demo tooling (`release-images`), which
//! builds its documents with [`Document::new`].

mod digest;
mod document;
mod keys;
pub mod layout;
pub mod store;
mod verify;

pub use digest::{Digest, DigestError};
pub use document::{ATOMIC_CONTAINER_SIGNATURE, Critical, Document, Identity, ImageClaim, Optional};
pub use keys::{KeysError, TrustedKeys};
pub use verify::{
    CVO_READ_LIMIT, MAX_CONTENT_BYTES, Rejection, Verified, verify_digest_claim, verify_release,
};

/// The largest signature fetched or kept. Real ones are under a kilobyte;
/// this bounds what a hostile or broken source can make a reader hold.
pub const MAX_SIGNATURE_BYTES: usize = 64 * 1024;
