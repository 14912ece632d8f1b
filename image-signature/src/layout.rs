//! Names in a signature tree: `<algo>/<hex digest>/signature-<N>`, the
//! layout `oc adm release mirror` and oc-mirror write under `signatures/`
//! in a graph-data image, and the files a metadata-helper serves as
//! `{prefix}/signatures/<algo>=<hex digest>/signature-<N>`.
//!
//! A [`SignatureName`] is valid by construction: a supported algorithm, a
//! digest of exactly the right number of lowercase hexadecimal digits, and
//! an index from 1 written without leading zeros. Its [`path`](SignatureName::path)
//! therefore never holds `..`, a `/` of its own, or anything else that could
//! lead out of the tree it is joined to.

use std::io;
use std::path::{Path, PathBuf};

use crate::digest::Digest;

/// The directory of a graph-data that holds its signature tree.
pub const SIGNATURES_DIR: &str = "signatures";

const SIGNATURE_PREFIX: &str = "signature-";

/// The digest algorithms a signature tree files signatures under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Algorithm {
    Sha256,
    /// Accepted because upstream's metadata-helper accepts it. No OCI digest
    /// algorithm is called `sha`, and every OpenShift release digest is a
    /// SHA-256 one, so it takes a SHA-256 digest (64 hexadecimal digits),
    /// looked up under `sha/`, as upstream looks it up.
    Sha,
}

impl Algorithm {
    pub const ALL: [Algorithm; 2] = [Algorithm::Sha256, Algorithm::Sha];

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|algorithm| algorithm.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::Sha256 => "sha256",
            Algorithm::Sha => "sha",
        }
    }

    /// The number of hexadecimal digits of a digest.
    pub fn hex_len(self) -> usize {
        match self {
            Algorithm::Sha256 | Algorithm::Sha => 64,
        }
    }
}

/// One signature's place in a tree: `<algo>/<hex>/signature-<index>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SignatureName {
    algorithm: Algorithm,
    digest: String,
    index: u32,
}

/// Why a name is not one of a signature tree. The part at fault tells a
/// request for a missing file (`Signature`) from a malformed one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("algorithm {0:?} is not supported (sha256, sha)")]
    Algorithm(String),
    #[error("digest {digest:?} is not {len} lowercase hexadecimal digits")]
    Digest { digest: String, len: usize },
    #[error("{0:?} is not signature-<N> with N from 1")]
    Signature(String),
    #[error("{0:?} is not <algorithm>/<digest>/signature-<N>")]
    Path(String),
}

impl SignatureName {
    pub fn new(algorithm: Algorithm, digest: &str, index: u32) -> Result<Self, NameError> {
        let well_formed = digest.len() == algorithm.hex_len()
            && digest
                .bytes()
                .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte));
        if !well_formed {
            return Err(NameError::Digest {
                digest: digest.to_owned(),
                len: algorithm.hex_len(),
            });
        }
        if index == 0 {
            return Err(NameError::Signature(file_name(index)));
        }
        Ok(Self {
            algorithm,
            digest: digest.to_owned(),
            index,
        })
    }

    /// The three parts as given (a request's, a path's), checked in that order.
    pub fn parse(algorithm: &str, digest: &str, signature: &str) -> Result<Self, NameError> {
        let algorithm =
            Algorithm::parse(algorithm).ok_or_else(|| NameError::Algorithm(algorithm.to_owned()))?;
        let index = parse_index(signature).ok_or_else(|| NameError::Signature(signature.to_owned()));
        // The digest is judged before the signature name.
        let name = Self::new(algorithm, digest, 1)?;
        Ok(Self {
            index: index?,
            ..name
        })
    }

    /// `<algo>/<hex>/signature-<N>`, relative to a tree's root.
    pub fn parse_path(path: &str) -> Result<Self, NameError> {
        let mut parts = path.split('/');
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some(algorithm), Some(digest), Some(signature), None) => {
                Self::parse(algorithm, digest, signature)
            }
            _ => Err(NameError::Path(path.to_owned())),
        }
    }

    /// Signature `index` of an image digest, when the tree can hold it.
    pub fn of(digest: &Digest, index: u32) -> Result<Self, NameError> {
        Self::parse(digest.algorithm(), digest.hex(), &file_name(index))
    }

    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The digest's hexadecimal digits.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    pub fn index(&self) -> u32 {
        self.index
    }

    /// `<algo>/<hex>/signature-<N>`, relative to the tree's root.
    pub fn path(&self) -> String {
        format!(
            "{}/{}/{}",
            self.algorithm.as_str(),
            self.digest,
            file_name(self.index)
        )
    }
}

/// `signature-<index>`.
pub fn file_name(index: u32) -> String {
    format!("{SIGNATURE_PREFIX}{index}")
}

/// N of `signature-<N>`: digits only, no leading zero, from 1.
fn parse_index(name: &str) -> Option<u32> {
    let digits = name.strip_prefix(SIGNATURE_PREFIX)?;
    let canonical =
        !digits.is_empty() && !digits.starts_with('0') && digits.bytes().all(|byte| byte.is_ascii_digit());
    canonical.then(|| digits.parse().ok()).flatten()
}

/// One thing found walking a signature tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A signature file (links followed), with its size.
    Signature {
        name: SignatureName,
        path: PathBuf,
        len: u64,
    },
    /// Anything else, by its path relative to the root, and why it does not
    /// belong. What is below a misplaced directory is not looked at.
    Misplaced { path: String, reason: String },
    /// A directory or file that could not be looked at.
    Unreadable { path: String, reason: String },
}

/// Walks the tree under `root` (which must be a readable directory),
/// reporting every entry in path order. Symbolic links are followed, as the
/// graph-builder's upstream linked `signatures/` to where it kept them.
pub fn walk(root: &Path, visit: &mut impl FnMut(Found)) -> io::Result<()> {
    for (name, path) in sorted_entries(root)? {
        match Algorithm::parse(&name) {
            Some(algorithm) if path.is_dir() => walk_algorithm(algorithm, &name, &path, visit),
            _ => visit(Found::Misplaced {
                path: name,
                reason: "not a directory named after a digest algorithm (sha256, sha)".to_owned(),
            }),
        }
    }
    Ok(())
}

fn walk_algorithm(algorithm: Algorithm, relative: &str, dir: &Path, visit: &mut impl FnMut(Found)) {
    let entries = match sorted_entries(dir) {
        Ok(entries) => entries,
        Err(error) => return unreadable(relative, &error, visit),
    };
    for (digest, path) in entries {
        let relative = format!("{relative}/{digest}");
        match SignatureName::new(algorithm, &digest, 1) {
            Ok(_) if path.is_dir() => walk_digest(algorithm, &digest, &relative, &path, visit),
            Ok(_) => visit(Found::Misplaced {
                path: relative,
                reason: "not a directory".to_owned(),
            }),
            Err(error) => visit(Found::Misplaced {
                path: relative,
                reason: error.to_string(),
            }),
        }
    }
}

fn walk_digest(
    algorithm: Algorithm,
    digest: &str,
    relative: &str,
    dir: &Path,
    visit: &mut impl FnMut(Found),
) {
    let entries = match sorted_entries(dir) {
        Ok(entries) => entries,
        Err(error) => return unreadable(relative, &error, visit),
    };
    for (file, path) in entries {
        let relative = format!("{relative}/{file}");
        let name = SignatureName::parse(algorithm.as_str(), digest, &file);
        match (name, std::fs::metadata(&path)) {
            (Ok(name), Ok(metadata)) if metadata.is_file() => visit(Found::Signature {
                name,
                path,
                len: metadata.len(),
            }),
            (Ok(_), Ok(_)) => visit(Found::Misplaced {
                path: relative,
                reason: "not a file".to_owned(),
            }),
            (Ok(_), Err(error)) => unreadable(&relative, &error, visit),
            (Err(error), _) => visit(Found::Misplaced {
                path: relative,
                reason: error.to_string(),
            }),
        }
    }
}

fn unreadable(relative: &str, error: &io::Error, visit: &mut impl FnMut(Found)) {
    visit(Found::Unreadable {
        path: relative.to_owned(),
        reason: error.to_string(),
    });
}

/// The entries of `dir` as (name, path), by name; names that are not UTF-8
/// are given lossily (they are misplaced whatever they say).
fn sorted_entries(dir: &Path) -> io::Result<Vec<(String, PathBuf)>> {
    let mut entries = std::fs::read_dir(dir)?
        .map(|entry| entry.map(|entry| (entry.file_name().to_string_lossy().into_owned(), entry.path())))
        .collect::<io::Result<Vec<_>>>()?;
    entries.sort();
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "4ab6f4a3e18df3e7c0b2be6cda44b6e1f6e8a0dba1b8a35b1b3a2bb0f5b6c7d8";

    #[test]
    fn a_name_round_trips_through_its_path() {
        let name = SignatureName::parse("sha256", HEX, "signature-12").unwrap();
        assert_eq!(name.path(), format!("sha256/{HEX}/signature-12"));
        assert_eq!(SignatureName::parse_path(&name.path()).unwrap(), name);
        assert_eq!(name.index(), 12);
        let digest = Digest::parse(&format!("sha256:{HEX}")).unwrap();
        assert_eq!(SignatureName::of(&digest, 12).unwrap(), name);
    }

    #[test]
    fn the_algorithm_then_the_digest_then_the_signature_is_judged() {
        let bad_everything = SignatureName::parse("sha512", "ABC", "x").unwrap_err();
        assert_eq!(bad_everything, NameError::Algorithm("sha512".to_owned()));
        let bad_digest = SignatureName::parse("sha256", "ABC", "x").unwrap_err();
        assert!(matches!(bad_digest, NameError::Digest { len: 64, .. }));
        let bad_signature = SignatureName::parse("sha", HEX, "x").unwrap_err();
        assert_eq!(bad_signature, NameError::Signature("x".to_owned()));
    }

    #[test]
    fn digests_are_exactly_lowercase_hex_of_the_right_length() {
        let upper = HEX.to_uppercase();
        let short = &HEX[1..];
        let long = format!("{HEX}0");
        let climbing = format!("{}/../..", &HEX[..58]);
        let encoded = format!("{}%2F..", &HEX[..59]);
        for digest in [upper.as_str(), short, &long, &climbing, &encoded, "", ".."] {
            assert!(
                matches!(
                    SignatureName::parse("sha256", digest, "signature-1"),
                    Err(NameError::Digest { .. })
                ),
                "{digest:?}"
            );
        }
    }

    #[test]
    fn signature_names_are_canonical_and_count_from_one() {
        for good in [
            "signature-1",
            "signature-9",
            "signature-10",
            "signature-4294967295",
        ] {
            assert!(SignatureName::parse("sha256", HEX, good).is_ok(), "{good}");
        }
        for bad in [
            "signature-0",
            "signature-01",
            "signature-",
            "signature-+1",
            "signature-1 ",
            "signature-4294967296",
            "signature-1/../../etc",
            "signature-1%2F..",
            "Signature-1",
            "..",
        ] {
            assert_eq!(
                SignatureName::parse("sha256", HEX, bad),
                Err(NameError::Signature(bad.to_owned())),
                "{bad}"
            );
        }
    }

    #[test]
    fn paths_have_exactly_three_parts() {
        for bad in [
            format!("sha256/{HEX}"),
            format!("sha256/{HEX}/signature-1/x"),
            format!("/sha256/{HEX}/signature-1"),
            format!("sha256//{HEX}/signature-1"),
        ] {
            assert!(SignatureName::parse_path(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_walk_finds_signatures_and_reports_everything_else() {
        let root = tempfile::tempdir().unwrap();
        let digest_dir = root.path().join("sha256").join(HEX);
        std::fs::create_dir_all(&digest_dir).unwrap();
        std::fs::write(digest_dir.join("signature-1"), b"one").unwrap();
        std::fs::write(digest_dir.join("signature-02"), b"").unwrap();
        std::fs::create_dir(digest_dir.join("signature-3")).unwrap();
        std::fs::create_dir_all(root.path().join("sha256").join("not-hex")).unwrap();
        std::fs::create_dir_all(root.path().join("sha512")).unwrap();
        std::fs::write(root.path().join("README"), b"").unwrap();

        let mut found = Vec::new();
        walk(root.path(), &mut |entry| found.push(entry)).unwrap();
        let summary: Vec<String> = found
            .iter()
            .map(|entry| match entry {
                Found::Signature { name, len, .. } => format!("signature {} ({len} bytes)", name.path()),
                Found::Misplaced { path, .. } => format!("misplaced {path}"),
                Found::Unreadable { path, .. } => format!("unreadable {path}"),
            })
            .collect();
        assert_eq!(
            summary,
            [
                "misplaced README".to_owned(),
                format!("misplaced sha256/{HEX}/signature-02"),
                format!("signature sha256/{HEX}/signature-1 (3 bytes)"),
                format!("misplaced sha256/{HEX}/signature-3"),
                "misplaced sha256/not-hex".to_owned(),
                "misplaced sha512".to_owned(),
            ]
        );
    }
}
