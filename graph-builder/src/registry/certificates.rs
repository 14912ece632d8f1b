//! Extra CA certificates from `root_certificate_dir`.
//!
//! Every `*.pem` and `*.crt` file up to two levels deep is read. A file that
//! holds no usable certificate (a key, an OpenSSL `TRUSTED CERTIFICATE`
//! bundle, garbage) is skipped with a warning instead of failing start-up:
//! upstream users saw pods crash-loop on exactly such files.

use std::path::{Path, PathBuf};

/// A PEM-encoded certificate and the file it came from.
#[derive(Debug, Clone)]
pub struct PemCertificate {
    pub path: PathBuf,
    pub pem: Vec<u8>,
}

/// What reading the directory found.
#[derive(Debug, Default)]
pub struct LoadedCertificates {
    pub certificates: Vec<PemCertificate>,
    /// Files skipped, with the reason.
    pub skipped: Vec<(PathBuf, String)>,
}

const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
const END: &str = "-----END CERTIFICATE-----";

/// Reads the certificates under `dir`. A missing directory yields none.
pub fn load(dir: &Path) -> LoadedCertificates {
    let mut loaded = LoadedCertificates::default();
    for path in candidate_files(dir, 2) {
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let blocks = certificate_blocks(&text);
                if blocks.is_empty() {
                    loaded.skipped.push((path, "no PEM CERTIFICATE block".to_owned()));
                    continue;
                }
                for pem in blocks {
                    loaded.certificates.push(PemCertificate {
                        path: path.clone(),
                        pem: pem.into_bytes(),
                    });
                }
            }
            Err(error) => loaded.skipped.push((path, error.to_string())),
        }
    }
    loaded
}

/// Certificate files in `dir` and, while `levels` > 1, in its subdirectories.
fn candidate_files(dir: &Path, levels: usize) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if levels > 1 {
                files.extend(candidate_files(&path, levels - 1));
            }
        } else if path.extension().is_some_and(|ext| ext == "pem" || ext == "crt") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// Each `BEGIN CERTIFICATE` … `END CERTIFICATE` block, as its own PEM text.
fn certificate_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(BEGIN) {
        let Some(length) = rest[start..].find(END) else {
            break;
        };
        let end = start + length + END.len();
        blocks.push(format!("{}\n", &rest[start..end]));
        rest = &rest[end..];
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    const CERT: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----";

    #[test]
    fn reads_bundles_and_skips_unusable_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bundle.pem"), format!("{CERT}\n{CERT}\n")).unwrap();
        std::fs::create_dir_all(dir.path().join("extracted/pem")).unwrap();
        std::fs::write(dir.path().join("extracted/pem/ca.crt"), CERT).unwrap();
        std::fs::write(
            dir.path().join("ca-bundle.trust.crt"),
            "-----BEGIN TRUSTED CERTIFICATE-----\nMIIB\n-----END TRUSTED CERTIFICATE-----\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("notes.txt"), CERT).unwrap();
        let loaded = load(dir.path());
        assert_eq!(
            loaded.certificates.len(),
            2,
            "two from the bundle; ca.crt is three levels deep"
        );
        assert_eq!(loaded.skipped.len(), 1);
        assert!(loaded.skipped[0].0.ends_with("ca-bundle.trust.crt"));
    }

    #[test]
    fn two_levels_deep_are_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pem")).unwrap();
        std::fs::write(dir.path().join("pem/ca.pem"), CERT).unwrap();
        assert_eq!(load(dir.path()).certificates.len(), 1);
    }

    #[test]
    fn a_missing_directory_is_empty() {
        let loaded = load(Path::new("/nonexistent/certs"));
        assert!(loaded.certificates.is_empty() && loaded.skipped.is_empty());
    }
}
