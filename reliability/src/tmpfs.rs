//! A small tmpfs the scenario mounts (it runs as root, as the scenario
//! scripts do) to put a fleet store on a filesystem it can fill: a disk
//! that fills up is what makes a SQLite store refuse writes in
//! production, and root ignores file permissions, so a read-only file
//! would not.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, ensure};

/// A tmpfs mounted on a directory, unmounted (lazily) when dropped.
pub struct Tmpfs {
    mount: PathBuf,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size` (`16m`) on `mount` (created if missing).
    pub fn mount(mount: &Path, size: &str) -> anyhow::Result<Self> {
        std::fs::create_dir_all(mount).with_context(|| format!("creating {}", mount.display()))?;
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(mount)
            .status()
            .context("running mount")?;
        ensure!(
            status.success(),
            "mounting a tmpfs on {} failed ({status}): the scenario needs root, as the reliability scripts do",
            mount.display()
        );
        Ok(Self {
            mount: mount.to_owned(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.mount
    }

    /// Fills what is left of the filesystem with the file `name` (until
    /// the kernel says no space is left); returns the bytes written.
    pub fn fill(&self, name: &str) -> anyhow::Result<u64> {
        let mut file = std::fs::File::create(self.mount.join(name))?;
        let chunk = vec![0_u8; 64 * 1024];
        let mut written = 0_u64;
        loop {
            match file.write(&chunk) {
                Ok(0) => break,
                Ok(count) => written += count as u64,
                Err(error) if error.raw_os_error() == Some(ENOSPC) => break,
                Err(error) => return Err(error).context("filling the tmpfs"),
            }
        }
        // What a partial last write left unwritten: a byte at a time.
        while let Ok(1) = file.write(&[0]) {
            written += 1;
        }
        Ok(written)
    }

    /// Removes the file `name` that [`Tmpfs::fill`] wrote: the space is back.
    pub fn free(&self, name: &str) -> anyhow::Result<()> {
        std::fs::remove_file(self.mount.join(name)).context("removing the filler")
    }
}

/// `ENOSPC` on Linux: no space left on the device.
const ENOSPC: i32 = 28;

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
    }
}
