//! Extra CA certificates from a `root_certificate_dir`, upstream's way to
//! add CAs: every `*.pem` and `*.crt` file up to two levels deep.
//!
//! A file (or a block in it) that holds no usable certificate — a key, an
//! OpenSSL `TRUSTED CERTIFICATE` bundle, a damaged certificate, garbage — is
//! skipped with a warning instead of failing start-up: upstream users saw
//! pods crash-loop on exactly such files.

use std::path::{Path, PathBuf};

/// Where RHEL and OpenShift put the trusted CAs, upstream's default
/// `root_certificate_dir`.
pub const DEFAULT_ROOT_CERTIFICATE_DIR: &str = "/etc/pki/ca-trust/extracted/";

const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
const END: &str = "-----END CERTIFICATE-----";

/// A PEM-encoded certificate that OpenSSL parses, and where it came from.
#[derive(Debug, Clone)]
pub struct PemCertificate {
    pub path: PathBuf,
    pub pem: Vec<u8>,
}

/// CA certificates to trust besides the system's.
#[derive(Debug, Clone, Default)]
pub struct ExtraRoots {
    certificates: Vec<PemCertificate>,
}

/// What reading a directory found.
#[derive(Debug, Default)]
pub struct LoadedRoots {
    pub roots: ExtraRoots,
    /// What was skipped (a file, or a certificate in it), with the reason.
    pub skipped: Vec<(PathBuf, String)>,
}

/// A PEM text held no certificate OpenSSL could use.
#[derive(Debug, thiserror::Error)]
#[error("{source_name}: {reason}")]
pub struct RootsError {
    source_name: String,
    reason: String,
}

impl ExtraRoots {
    /// None: the system's CAs only.
    pub const EMPTY: Self = Self {
        certificates: Vec::new(),
    };

    /// The certificates under `root_certificate_dir`; what is skipped is
    /// logged. A missing directory yields none.
    pub fn from_dir(dir: &Path) -> Self {
        let loaded = Self::load(dir);
        for (path, why) in &loaded.skipped {
            tracing::warn!(path = %path.display(), %why, "skipping a file in root_certificate_dir");
        }
        loaded.roots
    }

    /// [`ExtraRoots::from_dir`] without logging, telling what was skipped.
    pub fn load(dir: &Path) -> LoadedRoots {
        let mut loaded = LoadedRoots::default();
        for path in candidate_files(dir, 2) {
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(error) => {
                    loaded.skipped.push((path, error.to_string()));
                    continue;
                }
            };
            let blocks = certificate_blocks(&text);
            if blocks.is_empty() {
                loaded.skipped.push((path, "no PEM CERTIFICATE block".to_owned()));
                continue;
            }
            for (position, block) in blocks.into_iter().enumerate() {
                match usable(block) {
                    Ok(pem) => loaded.roots.certificates.push(PemCertificate {
                        path: path.clone(),
                        pem,
                    }),
                    Err(reason) => loaded
                        .skipped
                        .push((path.clone(), format!("certificate {}: {reason}", position + 1))),
                }
            }
        }
        loaded
    }

    /// Every certificate of a PEM text (`source_name` names it in errors);
    /// an error if one is unusable or there is none.
    pub fn from_pem(source_name: &str, text: &str) -> Result<Self, RootsError> {
        let error = |reason: String| RootsError {
            source_name: source_name.to_owned(),
            reason,
        };
        let blocks = certificate_blocks(text);
        if blocks.is_empty() {
            return Err(error("no PEM CERTIFICATE block".to_owned()));
        }
        let certificates = blocks
            .into_iter()
            .map(|block| {
                usable(block).map(|pem| PemCertificate {
                    path: PathBuf::from(source_name),
                    pem,
                })
            })
            .collect::<Result<_, _>>()
            .map_err(error)?;
        Ok(Self { certificates })
    }

    pub fn certificates(&self) -> &[PemCertificate] {
        &self.certificates
    }

    pub fn is_empty(&self) -> bool {
        self.certificates.is_empty()
    }

    /// Each certificate as reqwest takes it.
    pub(crate) fn reqwest_certificates(&self) -> impl Iterator<Item = reqwest::Certificate> + '_ {
        self.certificates.iter().map(|certificate| {
            reqwest::Certificate::from_pem(&certificate.pem).expect("checked when it was loaded")
        })
    }
}

/// The block's bytes, if OpenSSL reads a certificate from them.
fn usable(block: String) -> Result<Vec<u8>, String> {
    let pem = block.into_bytes();
    reqwest::Certificate::from_pem(&pem)
        .map(|_| pem)
        .map_err(|error| format!("not a certificate OpenSSL reads ({error})"))
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

    /// A real certificate (the text is irrelevant; OpenSSL must parse it).
    const CERT: &str = include_str!("../tests/data/ca.pem");

    fn write(dir: &Path, name: &str, text: &str) {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn reads_bundles_and_skips_unusable_files() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "bundle.pem", &format!("{CERT}\n{CERT}\n"));
        write(dir.path(), "extracted/pem/ca.crt", CERT);
        write(
            dir.path(),
            "ca-bundle.trust.crt",
            "-----BEGIN TRUSTED CERTIFICATE-----\nMIIB\n-----END TRUSTED CERTIFICATE-----\n",
        );
        write(dir.path(), "notes.txt", CERT);
        let loaded = ExtraRoots::load(dir.path());
        assert_eq!(
            loaded.roots.certificates().len(),
            2,
            "two from the bundle; ca.crt is three levels deep"
        );
        assert_eq!(loaded.skipped.len(), 1);
        assert!(loaded.skipped[0].0.ends_with("ca-bundle.trust.crt"));
    }

    #[test]
    fn a_damaged_certificate_is_skipped_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "damaged.pem",
            &format!("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n{CERT}"),
        );
        let loaded = ExtraRoots::load(dir.path());
        assert_eq!(loaded.roots.certificates().len(), 1, "the good one is kept");
        let (path, why) = &loaded.skipped[0];
        assert!(
            path.ends_with("damaged.pem") && why.starts_with("certificate 1:"),
            "{why}"
        );
        assert!(
            ExtraRoots::from_pem(
                "damaged",
                "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"
            )
            .is_err()
        );
    }

    #[test]
    fn two_levels_deep_are_read() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "pem/ca.pem", CERT);
        assert_eq!(ExtraRoots::from_dir(dir.path()).certificates().len(), 1);
    }

    #[test]
    fn a_missing_directory_is_empty() {
        let loaded = ExtraRoots::load(Path::new("/nonexistent/certs"));
        assert!(loaded.roots.is_empty() && loaded.skipped.is_empty());
    }
}
