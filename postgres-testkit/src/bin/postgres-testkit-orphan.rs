//! Starts a server, reports it on stdout and waits for ever: the process a
//! test kills to show that a server dies with the process that started it
//! (`tests/server.rs`).

use postgres_testkit::PostgresServer;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), postgres_testkit::Error> {
    let server = PostgresServer::start().await?;
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
