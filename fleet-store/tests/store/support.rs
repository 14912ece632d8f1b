//! The stores every property runs on, and the checks and rollouts they
//! write.

use std::sync::{Arc, Mutex, OnceLock};

use fleet_store::{Check, FleetStore};
use postgres_testkit::PostgresServer;
use rollout_model::Declaration;
use rollout_model::declaration::{Origin, Schedule};
use rollout_model::time::{SignedDuration, Timestamp};
use tempfile::TempDir;

pub const HOUR: i64 = 3600;

/// A store under test: two handles on it (two engines sharing it), and
/// what keeps it alive.
pub struct Store {
    pub first: FleetStore,
    pub second: FleetStore,
    /// Where it is, to look at its rows directly.
    pub url: String,
    _dir: Option<TempDir>,
}

impl Store {
    /// The rows of `table`, counted directly.
    pub async fn rows(&self, table: &str) -> i64 {
        let pool = sqlx::AnyPool::connect(&self.url).await.unwrap();
        let count = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
            .fetch_one(&pool)
            .await
            .unwrap();
        pool.close().await;
        count
    }
}

/// One PostgreSQL server for the whole binary (a database per test): its
/// URL.
fn postgres() -> &'static str {
    static SERVER: OnceLock<(Mutex<PostgresServer>, String)> = OnceLock::new();
    &SERVER
        .get_or_init(|| {
            // Its own runtime: the server's processes outlive any one test's.
            let server = std::thread::spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap()
                    .block_on(PostgresServer::start())
                    .expect("a throw-away PostgreSQL starts")
            })
            .join()
            .unwrap();
            let url = server.url();
            (Mutex::new(server), url)
        })
        .1
}

/// A fresh SQLite file.
pub async fn sqlite() -> Store {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("fleet.db").display());
    Store {
        first: FleetStore::open(&url, &url).await.unwrap(),
        second: FleetStore::open(&url, &url).await.unwrap(),
        url,
        _dir: Some(dir),
    }
}

/// A fresh database `name` on the shared PostgreSQL server.
pub async fn postgresql(name: &str) -> Store {
    let server = postgres();
    sqlx::any::install_default_drivers();
    let admin = sqlx::AnyPool::connect(server).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&admin)
        .await
        .unwrap();
    admin.close().await;
    let url = format!("{}/{name}", server.rsplit_once('/').unwrap().0);
    Store {
        first: FleetStore::open(&url, &url).await.unwrap(),
        second: FleetStore::open(&url, &url).await.unwrap(),
        url,
        _dir: None,
    }
}

/// Runs `property` on a SQLite file and on a PostgreSQL database named
/// after it.
macro_rules! on_both_stores {
    ($name:ident, $property:expr) => {
        mod $name {
            use super::*;

            #[tokio::test]
            async fn on_sqlite() {
                ($property)(crate::support::sqlite().await).await;
            }

            #[tokio::test]
            async fn on_postgresql() {
                ($property)(crate::support::postgresql(stringify!($name)).await).await;
            }
        }
    };
}
pub(crate) use on_both_stores;

pub fn check(cluster: &str, version: &str, place: f64, at: i64) -> Check {
    Check {
        cluster: cluster.into(),
        channel: "stable-4.18".into(),
        arch: "amd64".into(),
        version: version.into(),
        place,
        at,
    }
}

pub fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(seconds).unwrap()
}

/// A rollout of `target` from Unix second 0 over ten hours, from 0%.
pub fn declared(target: &str) -> Arc<Declaration> {
    Arc::new(Declaration::new(
        target.parse().unwrap(),
        Origin::PolicyFile { line: 1 },
        Schedule {
            start: Timestamp::UNIX_EPOCH,
            duration: SignedDuration::from_hours(10),
            starting_percentage: 0.0,
        },
    ))
}
