//! A store on a filesystem that fills, then gets space back: what the
//! store acknowledged is what it holds, before and after a restart, on a
//! SQLite file (a connection whose transaction failed is closed, never
//! handed back to the pool still inside it) and on a PostgreSQL server
//! whose data directory fills. The filesystem is a small tmpfs, mounted by
//! the test (which runs as root, as the test suite does).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use std::time::Duration;

use fleet_store::changes::Changes;
use fleet_store::{Check, FleetStore};
use postgres_testkit::PostgresServer;
use rollout_model::control::{Actor, Pause};

use crate::support::{at, check};

/// A tmpfs of `size` mounted on a fresh directory, unmounted when dropped.
struct Tmpfs {
    mount: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mount = dir.path().join("fs");
        std::fs::create_dir(&mount).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&mount)
            .status()
            .expect("mount runs");
        assert!(
            status.success(),
            "mounting a tmpfs needs root (the test suite runs as root)"
        );
        Self { mount, _dir: dir }
    }

    fn path(&self) -> &Path {
        &self.mount
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
    }
}

/// `count` checks of new clusters named from `first`.
fn batch(first: usize, count: usize) -> Vec<Check> {
    (first..first + count)
        .map(|number| check(&format!("cluster-{number:06}"), "4.18.1", 1.0, 100))
        .collect()
}

#[tokio::test]
async fn what_a_full_store_acknowledged_it_holds_once_it_has_room_again() {
    // The store fills about 2 MiB; freeing the filler gives it 14 MiB
    // back, room for the write-ahead log to grow even while a reader
    // keeps a checkpoint from resetting it.
    let disk = Tmpfs::mount("16m");
    let url = format!("sqlite://{}", disk.path().join("fleet.db").display());
    let store = FleetStore::open(&url, &url).await.unwrap();
    let filler = disk.path().join("filler");
    std::fs::write(&filler, vec![0_u8; 14 * 1024 * 1024]).unwrap();
    let (acknowledged, next) = fill_up(&store).await;
    std::fs::remove_file(&filler).unwrap();
    let acknowledged = acknowledged + room_again(&store, next).await;
    pause(&store).await;
    assert_eq!(
        store.cluster_count().await.unwrap(),
        acknowledged,
        "read now, on any connection"
    );
    store.close().await;

    let reopened = FleetStore::open(&url, &url).await.unwrap();
    holds(&reopened, acknowledged, "after a clean stop").await;
}

#[tokio::test]
async fn what_a_full_postgresql_acknowledged_it_holds_once_it_has_room_again() {
    let disk = Tmpfs::mount("128m");
    let mut server = PostgresServer::start_in(disk.path()).await.unwrap();
    let url = server.url();
    let store = FleetStore::open(&url, &url).await.unwrap();
    // Every byte left taken, a mebibyte at a time.
    let filler = disk.path().join("filler");
    let mut file = std::fs::File::create(&filler).unwrap();
    while std::io::Write::write_all(&mut file, &[0_u8; 1024 * 1024]).is_ok() {}
    drop(file);
    let (acknowledged, next) = fill_up(&store).await;
    std::fs::remove_file(&filler).unwrap();
    // A server that could not write its log may have restarted itself.
    let acknowledged = acknowledged + room_again(&store, next).await;
    pause(&store).await;
    holds(&store, acknowledged, "read now").await;
    store.close().await;

    server.stop().unwrap();
    server.restart().await.unwrap();
    let reopened = FleetStore::open(&url, &url).await.unwrap();
    holds(&reopened, acknowledged, "after the server restarted").await;
}

/// Records batches of new clusters until five fail (the disk full): the
/// clusters acknowledged, and the next number.
async fn fill_up(store: &FleetStore) -> (u64, usize) {
    let (mut acknowledged, mut next, mut failures) = (0_u64, 0, 0);
    while failures < 5 {
        match store.record(&batch(next, 300), u64::MAX).await {
            Ok(recorded) => acknowledged += recorded.clusters,
            Err(_) => failures += 1,
        }
        next += 300;
    }
    (acknowledged, next)
}

/// Five batches recorded once the disk has room (the first waited for, as
/// a server restarting after a failed log write takes a moment): the
/// clusters acknowledged.
async fn room_again(store: &FleetStore, mut next: usize) -> u64 {
    let mut acknowledged = 0;
    let mut attempts = 0;
    let mut recorded_batches = 0;
    while recorded_batches < 5 {
        match store.record(&batch(next, 300), u64::MAX).await {
            Ok(recorded) => {
                acknowledged += recorded.clusters;
                recorded_batches += 1;
            }
            Err(error) => {
                attempts += 1;
                assert!(attempts < 60, "no room again: {error}");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
        next += 300;
    }
    acknowledged
}

/// A rollout paused through the store's one path of change.
async fn pause(store: &FleetStore) {
    let paused = store
        .change_rollout(
            "4.18.52",
            || at(1_000),
            |locked| {
                let mut control = locked.control.clone();
                control.pause = Some(Pause {
                    at: locked.now,
                    progress: 30.0,
                    by: Actor::operator("ops"),
                });
                (
                    Changes {
                        control: Some(control),
                        ..Changes::default()
                    },
                    (),
                )
            },
        )
        .await;
    assert!(paused.is_ok(), "{paused:?}");
}

/// `store` holds the `acknowledged` clusters and the pause.
async fn holds(store: &FleetStore, acknowledged: u64, when: &str) {
    assert_eq!(store.cluster_count().await.unwrap(), acknowledged, "{when}");
    let run_time = store.run_time(&[], &BTreeMap::new()).await.unwrap();
    assert!(
        run_time.controls["4.18.52"].pause.is_some(),
        "the pause acknowledged is kept, {when}"
    );
}
