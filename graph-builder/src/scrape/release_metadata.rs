//! Finds `release-manifests/release-metadata` in an image layer.
//!
//! A layer is read as a stream through the decompressor and the tar reader:
//! it is never held in memory, and reading stops as soon as the file is found.

use std::io::{BufRead, BufReader, Read};

use registry_client::release_image::RELEASE_METADATA_PATH;

/// No real release metadata is near this size; a larger file is refused
/// rather than read into memory.
pub const DEFAULT_SIZE_LIMIT: u64 = 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum LayerError {
    #[error("reading the layer failed: {0}")]
    Read(#[from] std::io::Error),
    #[error("{RELEASE_METADATA_PATH} is larger than {0} bytes")]
    TooLarge(u64),
}

/// Searches a layer (a tar archive, gzip-compressed or not) for the release
/// metadata file and returns its bytes, or `None` when the layer has none.
pub fn find_release_metadata(layer: impl Read, size_limit: u64) -> Result<Option<Vec<u8>>, LayerError> {
    let mut buffered = BufReader::new(layer);
    // The magic bytes decide, not the declared media type: registries and
    // build tools are not always truthful about compression.
    let is_gzip = buffered.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    if is_gzip {
        search_tar(flate2::bufread::MultiGzDecoder::new(buffered), size_limit)
    } else {
        search_tar(buffered, size_limit)
    }
}

fn search_tar(tar_stream: impl Read, size_limit: u64) -> Result<Option<Vec<u8>>, LayerError> {
    let mut archive = tar::Archive::new(tar_stream);
    for entry in archive.entries()? {
        let entry = entry?;
        if !is_release_metadata(&entry.path_bytes()) {
            continue;
        }
        if entry.header().entry_type().is_dir() {
            continue;
        }
        let mut content = Vec::new();
        entry.take(size_limit + 1).read_to_end(&mut content)?;
        if content.len() as u64 > size_limit {
            return Err(LayerError::TooLarge(size_limit));
        }
        return Ok(Some(content));
    }
    Ok(None)
}

/// `release-manifests/release-metadata`, also as `./…` or `/…`.
fn is_release_metadata(path: &[u8]) -> bool {
    let path = path
        .strip_prefix(b"./")
        .or_else(|| path.strip_prefix(b"/"))
        .unwrap_or(path);
    path == RELEASE_METADATA_PATH.as_bytes()
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::Compression;
    use flate2::write::GzEncoder;

    use super::*;

    fn tar_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (path, content) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(content.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            builder.append_data(&mut header, path, *content).unwrap();
        }
        builder.into_inner().unwrap()
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn finds_the_file_in_gzip_and_plain_layers() {
        let layer = tar_of(&[
            ("etc/hosts", b"x"),
            ("./release-manifests/release-metadata", b"{\"kind\":1}"),
        ]);
        for bytes in [gzip(&layer), layer] {
            let found = find_release_metadata(bytes.as_slice(), DEFAULT_SIZE_LIMIT).unwrap();
            assert_eq!(found.as_deref(), Some(b"{\"kind\":1}".as_slice()));
        }
    }

    #[test]
    fn a_layer_without_the_file_has_none() {
        let layer = gzip(&tar_of(&[("release-manifests/image-references", b"{}")]));
        assert_eq!(
            find_release_metadata(layer.as_slice(), DEFAULT_SIZE_LIMIT).unwrap(),
            None
        );
    }

    #[test]
    fn an_oversized_file_is_refused() {
        let layer = gzip(&tar_of(&[(RELEASE_METADATA_PATH, &[b'x'; 2048])]));
        let error = find_release_metadata(layer.as_slice(), 1024).unwrap_err();
        assert!(matches!(error, LayerError::TooLarge(1024)));
    }

    #[test]
    fn reading_stops_at_the_file() {
        // Everything after the file is garbage: it must never be read.
        let mut layer = tar_of(&[(RELEASE_METADATA_PATH, b"found")]);
        layer.truncate(layer.len() - 1024); // drop the end-of-archive blocks
        layer.extend_from_slice(&[0xff; 4096]);
        let found = find_release_metadata(layer.as_slice(), DEFAULT_SIZE_LIMIT).unwrap();
        assert_eq!(found.as_deref(), Some(b"found".as_slice()));
    }

    #[test]
    fn a_corrupt_layer_is_an_error() {
        assert!(find_release_metadata([0x1f, 0x8b, 0, 1, 2, 3].as_slice(), DEFAULT_SIZE_LIMIT).is_err());
    }
}
