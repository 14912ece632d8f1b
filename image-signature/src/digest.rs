//! An image digest as signatures name it and stores file it.

use std::fmt;
use std::str::FromStr;

/// `<algorithm>:<hex>`, e.g. `sha256:4ab6…`: an algorithm of ASCII letters
/// and digits, and hexadecimal digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest {
    text: String,
    /// Where the `:` is.
    colon: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a digest of the form <algorithm>:<hex>{}", if *.pull_spec { " nor a pull spec ending in @<digest>" } else { "" })]
pub struct DigestError {
    text: String,
    pull_spec: bool,
}

impl Digest {
    pub fn parse(text: &str) -> Result<Self, DigestError> {
        let error = || DigestError {
            text: text.to_owned(),
            pull_spec: false,
        };
        let (algorithm, hex) = text.split_once(':').ok_or_else(error)?;
        let well_formed = !algorithm.is_empty()
            && algorithm.bytes().all(|byte| byte.is_ascii_alphanumeric())
            && !hex.is_empty()
            && hex.bytes().all(|byte| byte.is_ascii_hexdigit());
        if !well_formed {
            return Err(error());
        }
        Ok(Self {
            text: text.to_owned(),
            colon: algorithm.len(),
        })
    }

    /// The digest of a pull spec (`quay.io/openshift-release-dev/ocp-release@sha256:…`),
    /// or a digest on its own.
    pub fn from_pull_spec(spec: &str) -> Result<Self, DigestError> {
        let digest = spec.rsplit_once('@').map_or(spec, |(_, digest)| digest);
        Self::parse(digest).map_err(|_| DigestError {
            text: spec.to_owned(),
            pull_spec: true,
        })
    }

    pub fn algorithm(&self) -> &str {
        &self.text[..self.colon]
    }

    pub fn hex(&self) -> &str {
        &self.text[self.colon + 1..]
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// `<algorithm>=<hex>`: where a signature store keeps its signatures.
    pub fn store_segment(&self) -> String {
        format!("{}={}", self.algorithm(), self.hex())
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for Digest {
    type Err = DigestError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "4ab6f4a3e18df3e7c0b2be6cda44b6e1f6e8a0dba1b8a35b1b3a2bb0f5b6c7d8";

    #[test]
    fn a_digest_splits_into_algorithm_and_hex() {
        let digest = Digest::parse(&format!("sha256:{HEX}")).unwrap();
        assert_eq!((digest.algorithm(), digest.hex()), ("sha256", HEX));
        assert_eq!(digest.store_segment(), format!("sha256={HEX}"));
    }

    #[test]
    fn malformed_digests_are_refused() {
        for text in [
            "",
            "sha256",
            "sha256:",
            ":abc",
            "sha256:xyz",
            "sha-256:ab",
            "sha256:ab/../x",
        ] {
            assert!(Digest::parse(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn a_pull_spec_gives_its_digest() {
        let spec = format!("quay.io/openshift-release-dev/ocp-release@sha256:{HEX}");
        assert_eq!(Digest::from_pull_spec(&spec).unwrap().hex(), HEX);
        assert_eq!(
            Digest::from_pull_spec(&format!("sha256:{HEX}")).unwrap().hex(),
            HEX
        );
        let error = Digest::from_pull_spec("quay.io/openshift-release-dev/ocp-release:4.18.1").unwrap_err();
        assert!(error.to_string().contains("pull spec"), "{error}");
    }
}
