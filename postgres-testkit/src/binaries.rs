//! Where the PostgreSQL programs are, and which user runs the server.

use std::ffi::OsStr;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::Error;
use crate::process;

/// Debian installs each major version's programs in `DEBIAN_ROOT/<version>/bin`.
const DEBIAN_ROOT: &str = "/usr/lib/postgresql";
/// The user Debian's `postgresql` package creates, which runs the server when
/// the tests run as root (initdb and postgres refuse root).
const SYSTEM_USER: &str = "postgres";

/// The directory holding `initdb`, `postgres`, `pg_isready` and `createdb` of
/// one PostgreSQL version.
#[derive(Debug, Clone)]
pub(crate) struct Binaries {
    dir: PathBuf,
}

impl Binaries {
    /// The newest version under `/usr/lib/postgresql`, else what `pg_config
    /// --bindir` names (other distributions install there, e.g. `/usr/bin`).
    pub(crate) fn find() -> Result<Self, Error> {
        newest_versioned_bin_dir(Path::new(DEBIAN_ROOT))
            .or_else(pg_config_bin_dir)
            .map(|dir| Self { dir })
            .ok_or(Error::BinariesNotFound)
    }

    pub(crate) fn path(&self, program: &str) -> PathBuf {
        self.dir.join(program)
    }
}

/// The `bin` directory with an `initdb` under the highest-numbered version
/// directory of `root` (`17` above `15` above `9.6`).
fn newest_versioned_bin_dir(root: &Path) -> Option<PathBuf> {
    std::fs::read_dir(root)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let version = version_key(&entry.file_name())?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .max_by(|(left, _), (right, _)| left.cmp(right))
        .map(|(_, bin)| bin)
}

/// `"9.6"` as `[9, 6]`; `None` for names that are not versions.
fn version_key(name: &OsStr) -> Option<Vec<u32>> {
    name.to_str()?.split('.').map(|part| part.parse().ok()).collect()
}

fn pg_config_bin_dir() -> Option<PathBuf> {
    let output = Command::new("pg_config").arg("--bindir").output().ok()?;
    let dir = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    (output.status.success() && dir.join("initdb").is_file()).then_some(dir)
}

/// Who runs `initdb` and `postgres`.
#[derive(Debug, Clone)]
pub(crate) enum ServerUser {
    /// The user running the tests, when it is not root.
    Current,
    /// The `postgres` system user, when the tests run as root.
    System { uid: u32, gid: u32 },
}

impl ServerUser {
    pub(crate) fn detect() -> Result<Self, Error> {
        if !rustix::process::geteuid().is_root() {
            return Ok(Self::Current);
        }
        // getent rather than /etc/passwd: the user may come from any NSS source.
        let output = Command::new("getent")
            .args(["passwd", SYSTEM_USER])
            .output()
            .map_err(|error| Error::NoServerUser {
                detail: format!("`getent passwd {SYSTEM_USER}` could not run: {error}"),
            })?;
        let entry = String::from_utf8_lossy(&output.stdout);
        parse_passwd_ids(&entry).ok_or_else(|| Error::NoServerUser {
            detail: format!("`getent passwd {SYSTEM_USER}` found none ({})", output.status),
        })
    }

    /// Gives `path` to the server user, so the server can write there.
    pub(crate) fn hand_over(&self, path: &Path) -> Result<(), Error> {
        match self {
            Self::Current => Ok(()),
            Self::System { uid, gid } => {
                std::os::unix::fs::chown(path, Some(*uid), Some(*gid)).map_err(|source| Error::Filesystem {
                    path: path.to_path_buf(),
                    source,
                })
            }
        }
    }

    /// `program` run as this user, and sent `death_signal` by the kernel as
    /// soon as the thread that spawns it ends (`PR_SET_PDEATHSIG`), which it
    /// does at the latest when the test process dies, however it dies.
    ///
    /// util-linux's `setpriv` sets both and then execs `program`, so the
    /// process we spawn *is* the program: no wrapper stays between (as
    /// `runuser` would), and signals we send reach it. It sets the death
    /// signal after changing the user, which would otherwise clear it. (The
    /// workspace forbids `unsafe`, which a `pre_exec` doing the same needs.)
    pub(crate) fn command(&self, program: &Path, death_signal: &str) -> Command {
        let mut command = process::clean_command("setpriv");
        command.arg(format!("--pdeathsig={death_signal}"));
        if let Self::System { .. } = self {
            command.args([
                format!("--reuid={SYSTEM_USER}"),
                format!("--regid={SYSTEM_USER}"),
                "--init-groups".to_owned(),
            ]);
        }
        command.arg("--").arg(program);
        // A group of its own, as every `process_testkit` child: killed whole.
        command.process_group(0);
        command
    }
}

/// The user and group ids of a `name:password:uid:gid:...` line.
fn parse_passwd_ids(entry: &str) -> Option<ServerUser> {
    let mut fields = entry.lines().next()?.split(':').skip(2);
    let uid = fields.next()?.parse().ok()?;
    let gid = fields.next()?.parse().ok()?;
    Some(ServerUser::System { uid, gid })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_version_with_an_initdb_is_chosen() {
        let root = tempfile::tempdir().unwrap();
        for (version, has_initdb) in [
            ("9.6", true),
            ("15", true),
            ("17", false),
            ("13", true),
            ("common", true),
        ] {
            let bin = root.path().join(version).join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            if has_initdb {
                std::fs::write(bin.join("initdb"), "").unwrap();
            }
        }
        assert_eq!(
            newest_versioned_bin_dir(root.path()),
            Some(root.path().join("15").join("bin"))
        );
    }

    #[test]
    fn no_version_directory_means_none() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(newest_versioned_bin_dir(root.path()), None);
        assert_eq!(newest_versioned_bin_dir(&root.path().join("missing")), None);
    }

    #[test]
    fn versions_compare_as_numbers() {
        assert!(version_key(OsStr::new("10")) > version_key(OsStr::new("9.6")));
        assert_eq!(version_key(OsStr::new("15")), Some(vec![15]));
        assert_eq!(version_key(OsStr::new("15beta")), None);
    }

    #[test]
    fn a_passwd_entry_gives_the_user_and_group_ids() {
        let ids = parse_passwd_ids(
            "postgres:x:101:104:PostgreSQL administrator,,,:/var/lib/postgresql:/bin/bash\n",
        );
        assert!(
            matches!(ids, Some(ServerUser::System { uid: 101, gid: 104 })),
            "{ids:?}"
        );
        assert!(parse_passwd_ids("").is_none());
        assert!(parse_passwd_ids("postgres:x:abc:104:::").is_none());
    }
}
