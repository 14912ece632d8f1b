//! What the helper's tests share: release digests, signature names, a
//! signatures directory written and read, and a helper with every metric.

pub mod every_metric;

use std::path::Path;

use image_signature::layout::SignatureName;
use metadata_helper::directory::DirectorySource;

/// Digests (hex) of releases the tests sign.
pub const A: &str = "4ab6f4a3e18df3e7c0b2be6cda44b6e1f6e8a0dba1b8a35b1b3a2bb0f5b6c7d8";
pub const B: &str = "1111111111111111111111111111111111111111111111111111111111111111";

/// `sha256=<hex>/signature-<index>`.
pub fn name(hex: &str, index: u32) -> SignatureName {
    SignatureName::parse("sha256", hex, &format!("signature-{index}")).unwrap()
}

/// Writes a signature where a signatures directory keeps it.
pub fn write(root: &Path, hex: &str, index: u32, content: &[u8]) {
    let dir = root.join("sha256").join(hex);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("signature-{index}")), content).unwrap();
}

/// A directory source over `root`, scanned once.
pub fn directory_source(root: &Path) -> DirectorySource {
    let source = DirectorySource::new(root.to_path_buf());
    source.refresh().unwrap();
    source
}
