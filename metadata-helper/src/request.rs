//! `{prefix}/signatures/{algo}={digest}/{signature}`: the two path segments
//! after `signatures/`, checked before any file is touched.
//!
//! Upstream answers `invalid_params` (400) for an algorithm other than `sha`
//! and `sha256` and for a segment without `=`, and `does_not_exist` (404)
//! when no file answers. We also check the digest (lowercase hexadecimal,
//! 64 digits: 400) and the signature name (`signature-<N>`, N from 1: a file
//! of another name never exists, so 404). What passes is a
//! [`SignatureName`], whose path cannot leave the tree it is joined to: the
//! segments arrive here as received, so `..`, `/` and percent-encoded
//! slashes are refused as malformed digests or names of missing files.

use cincinnati_core::{ApiError, ErrorKind};
use image_signature::layout::{NameError, SignatureName};

/// The signature a request names, or the error to answer it with.
pub fn parse(algo_digest: &str, signature: &str) -> Result<SignatureName, ApiError> {
    let (algorithm, digest) = algo_digest.split_once('=').ok_or_else(|| {
        ApiError::new(
            ErrorKind::InvalidParams,
            format_args!("{algo_digest:?} is not <algorithm>=<digest>"),
        )
    })?;
    SignatureName::parse(algorithm, digest, signature).map_err(|error| {
        let kind = match error {
            NameError::Algorithm(_) | NameError::Digest { .. } | NameError::Path(_) => {
                ErrorKind::InvalidParams
            }
            NameError::Signature(_) => ErrorKind::DoesNotExist,
        };
        ApiError::new(kind, error)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "4ab6f4a3e18df3e7c0b2be6cda44b6e1f6e8a0dba1b8a35b1b3a2bb0f5b6c7d8";

    fn kind(algo_digest: &str, signature: &str) -> ErrorKind {
        parse(algo_digest, signature).unwrap_err().kind
    }

    #[test]
    fn both_algorithms_of_upstream_are_accepted() {
        let name = parse(&format!("sha256={HEX}"), "signature-3").unwrap();
        assert_eq!(name.path(), format!("sha256/{HEX}/signature-3"));
        let name = parse(&format!("sha={HEX}"), "signature-1").unwrap();
        assert_eq!(name.path(), format!("sha/{HEX}/signature-1"));
    }

    #[test]
    fn a_malformed_algorithm_or_digest_is_invalid_params() {
        let upper = HEX.to_uppercase();
        let cases = [
            format!("sha512={HEX}"),
            format!("SHA256={HEX}"),
            format!("sha256:{HEX}"),
            HEX.to_owned(),
            format!("sha256={upper}"),
            format!("sha256={}", &HEX[..63]),
            format!("sha256={HEX}0"),
            "sha256=..".to_owned(),
            format!("sha256={}/../x", &HEX[..58]),
            format!("sha256={}%2F..%2F", &HEX[..56]),
            format!("sha256=%2E%2E%2F{}", &HEX[..55]),
            format!("sha256={HEX}=x"),
            format!("..={HEX}"),
            "=".to_owned(),
        ];
        for algo_digest in cases {
            assert_eq!(
                kind(&algo_digest, "signature-1"),
                ErrorKind::InvalidParams,
                "{algo_digest}"
            );
        }
    }

    #[test]
    fn a_name_no_signature_file_has_is_does_not_exist() {
        let algo_digest = format!("sha256={HEX}");
        for signature in [
            "signature-0",
            "signature-01",
            "signature",
            "..",
            "signature-1%2F..%2F..%2Fetc%2Fpasswd",
            "signature-1/../../x",
            "%2e%2e",
            "",
        ] {
            let error = parse(&algo_digest, signature).unwrap_err();
            assert_eq!(error.kind, ErrorKind::DoesNotExist, "{signature}");
            assert_eq!(error.status_code(), 404);
        }
    }

    #[test]
    fn the_error_says_what_is_wrong() {
        let error = parse(&format!("sha1={HEX}"), "signature-1").unwrap_err();
        assert_eq!(error.status_code(), 400);
        assert!(error.value.contains("\"sha1\""), "{}", error.value);
    }
}
