//! The raw files of a graph-data, read from a directory or a gzip tarball,
//! and the content revision that tells whether anything changed.
//!
//! Only the parts of a graph-data repository that graph-data consumers read
//! are kept: `version`, `LICENSE`, `raw/metadata.json`, the files directly
//! in `channels/` and `blocked-edges/` (any extension, so that stray files can
//! be reported), and the release signatures under `signatures/` that `oc adm
//! release mirror` and oc-mirror write (`<algo>/<digest>/signature-<N>`,
//! names checked by `image_signature::layout`; anything else there is
//! reported, not kept). Everything else (README, hack/, OWNERS at the top) is
//! ignored.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::ops::Bound;
use std::path::{Component, Path};

use image_signature::MAX_SIGNATURE_BYTES;
use image_signature::layout::{self, Found, SIGNATURES_DIR, SignatureName};
use rayon::prelude::*;
use sha2::{Digest, Sha256};

pub const VERSION_FILE: &str = "version";
pub const LICENSE_FILE: &str = "LICENSE";
pub const RAW_METADATA_FILE: &str = "raw/metadata.json";
pub const CHANNELS_DIR: &str = "channels";
pub const BLOCKED_EDGES_DIR: &str = "blocked-edges";

/// A tarball whose files add up to more than this is refused: graph-data is
/// a few megabytes, and a tarball from the network must not exhaust memory.
const MAX_TOTAL_BYTES: u64 = 256 * 1024 * 1024;

/// The graph-data files, by path relative to the graph-data root.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct GraphDataFiles {
    files: BTreeMap<String, Vec<u8>>,
    /// Files that exist but could not be read, with the reason.
    unreadable: BTreeMap<String, String>,
    /// Entries under `signatures/` that are not signatures, with the reason.
    misplaced_signatures: BTreeMap<String, String>,
}

/// Why no graph-data could be read at all.
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    #[error("cannot read graph-data directory {path}: {source}")]
    Directory { path: String, source: std::io::Error },
    #[error("cannot read graph-data tarball: {0}")]
    Tarball(std::io::Error),
    #[error("graph-data tarball has no `version` file")]
    NoVersionFile,
    #[error("graph-data tarball is larger than {MAX_TOTAL_BYTES} bytes")]
    TooLarge,
}

/// A digest of the graph-data content, `sha256:<hex>`. Equal revisions mean
/// equal graph-data, whatever it was read from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Revision(String);

impl Revision {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Paths and sizes only: graph-data is megabytes of YAML.
impl fmt::Debug for GraphDataFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GraphDataFiles")
            .field("files", &self.files.len())
            .field("signatures", &self.signatures().count())
            .field("bytes", &self.files.values().map(Vec::len).sum::<usize>())
            .field("unreadable", &self.unreadable)
            .field("misplaced_signatures", &self.misplaced_signatures)
            .finish()
    }
}

impl GraphDataFiles {
    /// Reads the graph-data under `root` (what the OpenShift Update Service
    /// operator's init container leaves in a directory).
    pub fn from_dir(root: &Path) -> Result<Self, FilesError> {
        let directory_error = |source| FilesError::Directory {
            path: root.display().to_string(),
            source,
        };
        std::fs::metadata(root).map_err(directory_error)?;
        let mut files = Self::default();
        for single in [VERSION_FILE, LICENSE_FILE, RAW_METADATA_FILE] {
            let path = root.join(single);
            if path.exists() {
                files.read_file(single.to_owned(), &path);
            }
        }
        let mut listed = Vec::new();
        for dir in [CHANNELS_DIR, BLOCKED_EDGES_DIR] {
            let entries = match std::fs::read_dir(root.join(dir)) {
                Ok(entries) => entries,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
                Err(error) => return Err(directory_error(error)),
            };
            for entry in entries {
                let entry = entry.map_err(directory_error)?;
                let Ok(name) = entry.file_name().into_string() else {
                    continue;
                };
                // The directory listing knows most entries' type: a stat
                // for each of over a thousand files only for links.
                let is_file = match entry.file_type() {
                    Ok(kind) if !kind.is_symlink() => kind.is_file(),
                    _ => entry.path().is_file(),
                };
                if is_file {
                    listed.push((format!("{dir}/{name}"), entry.path()));
                }
            }
        }
        // Over a thousand small files: read side by side.
        let contents: Vec<_> = listed
            .into_par_iter()
            .map(|(relative, path)| (relative, std::fs::read(path)))
            .collect();
        for (relative, content) in contents {
            files.keep_read(relative, content);
        }
        files.read_signatures(&root.join(SIGNATURES_DIR));
        Ok(files)
    }

    /// Reads a gzip tarball of graph-data: the `{prefix}/graph-data` format,
    /// or a repository snapshot whose files sit under a directory such as
    /// `<org>-<repo>-<sha>/`. The graph-data root is where the shallowest
    /// `version` file is.
    pub fn from_tar_gz(reader: impl Read) -> Result<Self, FilesError> {
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(reader));
        let mut all = BTreeMap::new();
        let mut not_files = Vec::new();
        let mut total = 0u64;
        for entry in archive.entries().map_err(FilesError::Tarball)? {
            let mut entry = entry.map_err(FilesError::Tarball)?;
            let Some(path) = normalized(&entry.path().map_err(FilesError::Tarball)?) else {
                continue;
            };
            // Links and devices are never graph-data; following them is unsafe.
            let kind = entry.header().entry_type();
            if !kind.is_file() {
                if !kind.is_dir() {
                    not_files.push(path);
                }
                continue;
            }
            total += entry.size();
            if total > MAX_TOTAL_BYTES {
                return Err(FilesError::TooLarge);
            }
            let mut content = Vec::with_capacity(entry.size() as usize);
            entry.read_to_end(&mut content).map_err(FilesError::Tarball)?;
            all.insert(path, content);
        }
        let root = all
            .keys()
            .filter_map(|path| path.strip_suffix(VERSION_FILE))
            .filter(|dir| dir.is_empty() || dir.ends_with('/'))
            .min_by_key(|dir| dir.matches('/').count())
            .ok_or(FilesError::NoVersionFile)?
            .to_owned();
        let mut files = Self::default();
        for (path, content) in all {
            if let Some(relative) = path.strip_prefix(&root) {
                files.insert(relative, content);
            }
        }
        for path in not_files {
            if let Some(relative) = path.strip_prefix(&root)
                && relative.starts_with(SIGNATURES_PREFIX)
            {
                files.misplace(relative.to_owned(), "not a regular file");
            }
        }
        Ok(files)
    }

    /// Adds one file by its path relative to the graph-data root (for
    /// sources that unpack graph-data themselves, such as image layers).
    /// Paths outside the graph-data layout are ignored, and what is not a
    /// signature under `signatures/` is recorded as misplaced; returns
    /// whether kept.
    pub fn insert(&mut self, path: &str, content: Vec<u8>) -> bool {
        if let Some(relative) = path.strip_prefix(SIGNATURES_PREFIX) {
            return match signature_problem(relative, content.len() as u64) {
                None => {
                    self.files.insert(path.to_owned(), content);
                    true
                }
                Some(reason) => {
                    self.misplace(path.to_owned(), reason);
                    false
                }
            };
        }
        let keep = is_candidate(path);
        if keep {
            self.files.insert(path.to_owned(), content);
        }
        keep
    }

    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }

    /// Files directly in `dir`, by path, in path order.
    pub fn in_dir<'a>(&'a self, dir: &'a str) -> impl Iterator<Item = (&'a str, &'a [u8])> + 'a {
        self.files
            .iter()
            .filter(move |(path, _)| parent(path) == Some(dir))
            .map(|(path, content)| (path.as_str(), content.as_slice()))
    }

    pub fn unreadable(&self) -> impl Iterator<Item = (&str, &str)> {
        self.unreadable
            .iter()
            .map(|(path, why)| (path.as_str(), why.as_str()))
    }

    /// The release signatures, by name, in path order.
    pub fn signatures(&self) -> impl Iterator<Item = (SignatureName, &[u8])> {
        self.files
            .range::<str, _>((Bound::Included(SIGNATURES_PREFIX), Bound::Unbounded))
            .take_while(|(path, _)| path.starts_with(SIGNATURES_PREFIX))
            .filter_map(|(path, content)| {
                let name = SignatureName::parse_path(&path[SIGNATURES_PREFIX.len()..]).ok()?;
                Some((name, content.as_slice()))
            })
    }

    /// Entries under `signatures/` that were not kept, with the reason.
    pub fn misplaced_signatures(&self) -> impl Iterator<Item = (&str, &str)> {
        self.misplaced_signatures
            .iter()
            .map(|(path, why)| (path.as_str(), why.as_str()))
    }

    /// The files graph-data consumers use, as served in the tarball: the
    /// single files, YAML files in `channels/` and `blocked-edges/`, and the
    /// signatures.
    pub fn published(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.files
            .iter()
            .filter(|(path, _)| {
                parent(path).is_none()
                    || *path == RAW_METADATA_FILE
                    || has_yaml_extension(path)
                    || path.starts_with(SIGNATURES_PREFIX)
            })
            .map(|(path, content)| (path.as_str(), content.as_slice()))
    }

    /// The revision of the published files: path and content, length-prefixed
    /// so no two different sets of files hash alike.
    pub fn revision(&self) -> Revision {
        let mut hasher = Sha256::new();
        for (path, content) in self.published() {
            hasher.update((path.len() as u64).to_be_bytes());
            hasher.update(path.as_bytes());
            hasher.update((content.len() as u64).to_be_bytes());
            hasher.update(content);
        }
        Revision(format!("sha256:{}", hex::encode(hasher.finalize())))
    }

    fn read_file(&mut self, relative: String, path: &Path) {
        self.keep_read(relative, std::fs::read(path));
    }

    /// The file at `relative`, or why it could not be read.
    fn keep_read(&mut self, relative: String, content: std::io::Result<Vec<u8>>) {
        match content {
            Ok(content) => {
                self.files.insert(relative, content);
            }
            Err(error) => {
                self.unreadable.insert(relative, error.to_string());
            }
        }
    }

    /// The signature tree at `dir`, if there is one.
    fn read_signatures(&mut self, dir: &Path) {
        if !dir.exists() {
            return;
        }
        if !dir.is_dir() {
            return self.misplace(SIGNATURES_DIR.to_owned(), "not a directory");
        }
        let walked = layout::walk(dir, &mut |found| match found {
            Found::Signature { name, path, len } => {
                let relative = format!("{SIGNATURES_PREFIX}{}", name.path());
                match signature_problem(&name.path(), len) {
                    None => self.read_file(relative, &path),
                    Some(reason) => self.misplace(relative, reason),
                }
            }
            Found::Misplaced { path, reason } => self.misplace(format!("{SIGNATURES_PREFIX}{path}"), reason),
            Found::Unreadable { path, reason } => {
                self.unreadable
                    .insert(format!("{SIGNATURES_PREFIX}{path}"), reason);
            }
        });
        if let Err(error) = walked {
            self.unreadable
                .insert(SIGNATURES_DIR.to_owned(), error.to_string());
        }
    }

    fn misplace(&mut self, path: String, reason: impl Into<String>) {
        self.misplaced_signatures.insert(path, reason.into());
    }
}

/// `signatures/`, the prefix of every path in the signature tree.
const SIGNATURES_PREFIX: &str = "signatures/";

/// Why a file at `relative` (inside `signatures/`) of `len` bytes is not a
/// signature to keep, if it is not.
fn signature_problem(relative: &str, len: u64) -> Option<String> {
    if let Err(error) = SignatureName::parse_path(relative) {
        return Some(error.to_string());
    }
    (len > MAX_SIGNATURE_BYTES as u64)
        .then(|| format!("larger than the {MAX_SIGNATURE_BYTES} bytes a signature may have"))
}

/// Whether a path (relative to the graph-data root) is part of the layout.
fn is_candidate(path: &str) -> bool {
    match parent(path) {
        None => path == VERSION_FILE || path == LICENSE_FILE,
        Some(dir) => dir == CHANNELS_DIR || dir == BLOCKED_EDGES_DIR || path == RAW_METADATA_FILE,
    }
}

pub(crate) fn has_yaml_extension(path: &str) -> bool {
    path.ends_with(".yaml") || path.ends_with(".yml")
}

fn parent(path: &str) -> Option<&str> {
    path.rsplit_once('/').map(|(dir, _)| dir)
}

/// A tarball path as `a/b/c`, or `None` for paths that climb out (`..`) or
/// are absolute, which a well-formed graph-data tarball never has.
fn normalized(path: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_graph_data_layout_is_kept() {
        let mut files = GraphDataFiles::default();
        assert!(files.insert("version", b"1.0.0\n".to_vec()));
        assert!(files.insert("channels/fast-4.1.yaml", Vec::new()));
        assert!(files.insert("blocked-edges/OWNERS", Vec::new()));
        assert!(!files.insert("README.md", Vec::new()));
        assert!(!files.insert("hack/util.py", Vec::new()));
        assert!(!files.insert("channels/sub/x.yaml", Vec::new()));
        assert!(!files.insert("raw/other.json", Vec::new()));

        let signature = format!("signatures/sha256/{}/signature-1", "0".repeat(64));
        assert!(files.insert(&signature, b"signed".to_vec()));
        assert!(!files.insert("signatures/sha256/0/signature-1", Vec::new()));
        assert!(!files.insert("signatures/OWNERS", Vec::new()));

        let published: Vec<_> = files.published().map(|(path, _)| path).collect();
        assert_eq!(
            published,
            ["channels/fast-4.1.yaml", signature.as_str(), "version"]
        );
        let misplaced: Vec<_> = files.misplaced_signatures().map(|(path, _)| path).collect();
        assert_eq!(
            misplaced,
            ["signatures/OWNERS", "signatures/sha256/0/signature-1"]
        );
    }

    #[test]
    fn revision_follows_content_not_stray_files() {
        let mut files = GraphDataFiles::default();
        files.insert("version", b"1.0.0\n".to_vec());
        let before = files.revision();
        files.insert("channels/OWNERS", b"approvers: []".to_vec());
        assert_eq!(files.revision(), before);
        files.insert("version", b"1.1.0\n".to_vec());
        assert_ne!(files.revision(), before);
        assert!(before.as_str().starts_with("sha256:") && before.as_str().len() == 71);
    }

    #[test]
    fn linked_files_are_read_and_directories_are_not() {
        let root = tempfile::tempdir().unwrap();
        let channels = root.path().join(CHANNELS_DIR);
        std::fs::create_dir_all(channels.join("sub.yaml")).unwrap();
        std::fs::write(root.path().join("fast-4.1.yaml"), "name: fast-4.1\n").unwrap();
        std::os::unix::fs::symlink(root.path().join("fast-4.1.yaml"), channels.join("fast-4.1.yaml"))
            .unwrap();
        std::fs::write(channels.join("stable-4.1.yaml"), "name: stable-4.1\n").unwrap();
        let files = GraphDataFiles::from_dir(root.path()).unwrap();
        let read: Vec<_> = files.in_dir(CHANNELS_DIR).map(|(path, _)| path).collect();
        assert_eq!(read, ["channels/fast-4.1.yaml", "channels/stable-4.1.yaml"]);
        assert_eq!(
            files.get("channels/fast-4.1.yaml"),
            Some(&b"name: fast-4.1\n"[..])
        );
    }

    #[test]
    fn tarball_paths_that_climb_out_are_refused() {
        assert_eq!(normalized(Path::new("./a/b")).as_deref(), Some("a/b"));
        assert_eq!(normalized(Path::new("a/../../etc/passwd")), None);
        assert_eq!(normalized(Path::new("/etc/passwd")), None);
    }
}
