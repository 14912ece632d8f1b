//! The testkit's promises, checked against the real server with a real
//! client: it answers queries, keeps committed data across a kill and a
//! restart, runs side by side with others, and is gone after its test —
//! dropped, or with the test process killed.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use postgres_testkit::PostgresServer;
use process_testkit::processes::Process;
use sqlx::{Connection, PgConnection};

/// Bounds a wait for the system to reach a state; never a measurement.
const WAIT_BOUND: Duration = Duration::from_secs(60);
const POLL_INTERVAL: Duration = Duration::from_millis(20);

async fn connect(url: &str) -> PgConnection {
    PgConnection::connect(url)
        .await
        .unwrap_or_else(|error| panic!("connecting to {url}: {error}"))
}

/// What the server answers to `SELECT 1`.
async fn select_one(connection: &mut PgConnection) -> i32 {
    sqlx::query_scalar("SELECT 1")
        .fetch_one(connection)
        .await
        .unwrap()
}

fn refuses_connections(port: u16) -> bool {
    matches!(
        TcpStream::connect(("127.0.0.1", port)),
        Err(error) if error.kind() == std::io::ErrorKind::ConnectionRefused
    )
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < WAIT_BOUND, "timed out waiting until {what}");
        std::thread::sleep(POLL_INTERVAL);
    }
}

#[tokio::test]
async fn a_started_server_answers_queries_at_its_url() {
    let server = PostgresServer::start().await.unwrap();
    assert_eq!(
        server.url(),
        format!("postgres://postgres@127.0.0.1:{}/test", server.port())
    );
    let mut connection = connect(&server.url()).await;

    assert_eq!(select_one(&mut connection).await, 1);
    let (database, encoding): (String, String) =
        sqlx::query_as("SELECT current_database()::text, pg_client_encoding()::text")
            .fetch_one(&mut connection)
            .await
            .unwrap();
    assert_eq!((database.as_str(), encoding.as_str()), ("test", "UTF8"));
}

#[tokio::test]
async fn databases_created_on_one_server_are_separate() {
    let server = PostgresServer::start().await.unwrap();
    let other_url = server.create_database("other_test").await.unwrap();
    assert_eq!(other_url, server.database_url("other_test"));

    let mut first = connect(&server.url()).await;
    sqlx::query("CREATE TABLE only_here (id integer)")
        .execute(&mut first)
        .await
        .unwrap();
    let mut other = connect(&other_url).await;
    let tables: i64 = sqlx::query_scalar("SELECT count(*) FROM pg_tables WHERE tablename = 'only_here'")
        .fetch_one(&mut other)
        .await
        .unwrap();
    assert_eq!(tables, 0);

    assert!(server.create_database("other_test").await.is_err());
    assert!(server.create_database("no; DROP").await.is_err());
}

#[tokio::test]
async fn a_killed_server_restarts_on_the_same_port_with_its_committed_data() {
    let mut server = PostgresServer::start().await.unwrap();
    let (port, url) = (server.port(), server.url());
    let mut connection = connect(&url).await;
    sqlx::query("CREATE TABLE kept (id integer)")
        .execute(&mut connection)
        .await
        .unwrap();
    for id in 0..100 {
        sqlx::query("INSERT INTO kept VALUES ($1)")
            .bind(id)
            .execute(&mut connection)
            .await
            .unwrap();
    }

    server.kill().unwrap();
    assert!(!server.is_running());
    assert!(refuses_connections(port));
    assert!(sqlx::query("SELECT 1").execute(&mut connection).await.is_err());

    server.restart().await.unwrap();
    assert!(server.is_running());
    assert_eq!((server.port(), server.url()), (port, url.clone()));
    let mut connection = connect(&url).await;
    let (count, sum): (i64, i64) = sqlx::query_as("SELECT count(*), sum(id) FROM kept")
        .fetch_one(&mut connection)
        .await
        .unwrap();
    assert_eq!((count, sum), (100, (0..100).sum()));
    assert!(
        server.log_tail().contains("not properly shut down"),
        "{}",
        server.log_tail()
    );

    // A clean stop and a restart of a running server keep the data too.
    server.stop().unwrap();
    assert!(refuses_connections(port));
    server.restart().await.unwrap();
    server.restart().await.unwrap();
    let mut connection = connect(&url).await;
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM kept")
        .fetch_one(&mut connection)
        .await
        .unwrap();
    assert_eq!(count, 100);
}

#[tokio::test]
async fn a_restart_on_a_taken_port_fails_with_the_servers_reason() {
    let mut server = PostgresServer::start().await.unwrap();
    server.stop().unwrap();
    let _taken = std::net::TcpListener::bind(("127.0.0.1", server.port())).unwrap();

    let error = server.restart().await.unwrap_err();
    assert!(
        matches!(error, postgres_testkit::Error::ExitedEarly { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("could not bind"), "{error}");
    assert!(!server.is_running());
}

#[test]
fn a_server_outlives_the_thread_that_started_it() {
    // As a server shared by several tests would be: started on one test's
    // thread, used after that thread has ended.
    let server = std::thread::spawn(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(PostgresServer::start())
            .unwrap()
    })
    .join()
    .unwrap();

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let one = runtime.block_on(async { select_one(&mut connect(&server.url()).await).await });
    assert_eq!(one, 1);
}

#[tokio::test]
async fn two_servers_at_once_listen_on_different_ports() {
    let (first, second) = tokio::join!(PostgresServer::start(), PostgresServer::start());
    let (first, second) = (first.unwrap(), second.unwrap());
    assert_ne!(first.port(), second.port());
    assert_ne!(first.directory(), second.directory());
    for server in [&first, &second] {
        let mut connection = connect(&server.url()).await;
        let port: String = sqlx::query_scalar("SHOW port")
            .fetch_one(&mut connection)
            .await
            .unwrap();
        assert_eq!(port, server.port().to_string());
    }
}

#[tokio::test]
async fn a_dropped_server_refuses_connections_and_leaves_no_directory() {
    let server = PostgresServer::start().await.unwrap();
    let (port, directory) = (server.port(), server.directory().to_path_buf());
    let _connection = connect(&server.url()).await;

    drop(server);
    assert!(refuses_connections(port));
    assert!(!directory.exists());
}

/// What the helper process reports: its server's port, the postmaster's
/// pid, and the directory it could not remove.
struct OrphanReport {
    port: u16,
    postmaster_pid: u32,
    directory: PathBuf,
}

#[tokio::test]
async fn a_server_dies_with_the_test_process_that_started_it_and_the_next_start_removes_its_directory() {
    let parent = tempfile::tempdir().unwrap();
    let mut helper = Command::new(env!("CARGO_BIN_EXE_postgres-testkit-orphan"))
        .arg(parent.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = helper.stdout.take().unwrap();
    let mut report = OrphanReport {
        port: 0,
        postmaster_pid: 0,
        directory: PathBuf::new(),
    };
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if let Some(port) = line.strip_prefix("port=") {
            report.port = port.parse().unwrap();
        } else if let Some(pid) = line.strip_prefix("postmaster_pid=") {
            report.postmaster_pid = pid.parse().unwrap();
        } else if let Some(directory) = line.strip_prefix("directory=") {
            report.directory = PathBuf::from(directory);
            break;
        }
    }
    assert_ne!(report.port, 0, "the helper reported no server");
    assert!(!refuses_connections(report.port));

    helper.kill().unwrap();
    helper.wait().unwrap();

    wait_until("the orphaned server stops", || {
        refuses_connections(report.port) && !process_runs(report.postmaster_pid)
    });
    assert!(report.directory.join("data").is_dir(), "nothing removed it yet");

    let next = PostgresServer::start_in(parent.path()).await.unwrap();
    assert!(
        !report.directory.exists(),
        "the next start removes what the dead one left"
    );
    assert!(next.directory().join("data").is_dir());
}

#[tokio::test]
async fn a_start_leaves_the_directory_of_a_live_server_beside_it() {
    let parent = tempfile::tempdir().unwrap();
    let first = PostgresServer::start_in(parent.path()).await.unwrap();
    let second = PostgresServer::start_in(parent.path()).await.unwrap();

    assert_eq!(select_one(&mut connect(&first.url()).await).await, 1);
    assert_ne!(first.directory(), second.directory());
}

/// Whether `pid` is a process that has not exited (a zombie has: a container's
/// init may not reap orphans promptly).
fn process_runs(pid: u32) -> bool {
    Process::read(pid).is_some_and(|process| process.runs())
}
