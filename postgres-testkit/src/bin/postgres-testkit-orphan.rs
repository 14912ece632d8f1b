//! Starts a server in the directory named by its argument, reports it on
//! stdout and waits for ever: the process a test kills to show that a server
//! dies with the process that started it, and that the next server started
//! beside it removes what it left (`tests/server.rs`).

use postgres_testkit::PostgresServer;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), postgres_testkit::Error> {
    let parent = std::env::args_os()
        .nth(1)
        .expect("usage: postgres-testkit-orphan PARENT_DIRECTORY");
    let server = PostgresServer::start_in(parent.as_ref()).await?;
    let pid_file =
        std::fs::read_to_string(server.directory().join("data/postmaster.pid")).map_err(|source| {
            postgres_testkit::Error::Filesystem {
                path: server.directory().join("data/postmaster.pid"),
                source,
            }
        })?;
    println!("port={}", server.port());
    println!("postmaster_pid={}", pid_file.lines().next().unwrap_or_default());
    println!("directory={}", server.directory().display());
    std::future::pending::<()>().await;
    Ok(())
}
