//! Reading a directory tree into layer entries.

use std::path::Path;

use crate::error::Error;

/// Every regular file below `root` as `(relative/path, contents)`, sorted by
/// path. Symbolic links are skipped: they could loop.
pub(crate) fn read_files(root: &Path) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let mut entries = Vec::new();
    collect_files(root, root, &mut entries)?;
    entries.sort();
    Ok(entries)
}

fn collect_files(root: &Path, directory: &Path, entries: &mut Vec<(String, Vec<u8>)>) -> Result<(), Error> {
    let read_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::ReadDirectory { path, source }
    };
    for entry in std::fs::read_dir(directory).map_err(read_error(directory))? {
        let entry = entry.map_err(read_error(directory))?;
        let path = entry.path();
        let file_type = entry.file_type().map_err(read_error(&path))?;
        if file_type.is_dir() {
            collect_files(root, &path, entries)?;
        } else if file_type.is_file() {
            let contents = std::fs::read(&path).map_err(read_error(&path))?;
            entries.push((relative_name(root, &path)?, contents));
        }
    }
    Ok(())
}

fn relative_name(root: &Path, path: &Path) -> Result<String, Error> {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let components: Option<Vec<&str>> = relative
        .components()
        .map(|component| component.as_os_str().to_str())
        .collect();
    components
        .map(|components| components.join("/"))
        .ok_or_else(|| Error::NonUtf8Path {
            path: path.to_path_buf(),
        })
}
