//! A cluster group lookup service for the policy-engine's benchmark
//! (`MODE=cluster-policy scripts/bench-policy-engine.sh`): answers
//! `GET /{anything}/{id}` with `{"groups": ["gNN"]}` after a fixed latency,
//! the group a stable function of the id. Threads answer in parallel, so the
//! latency is per request, not a queue.
//!
//!     lookup-service --port 18183 --latency-ms 5 --groups 20

use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;

#[derive(Parser)]
struct Args {
    #[arg(long)]
    port: u16,
    /// Added to every answer.
    #[arg(long, default_value_t = 5)]
    latency_ms: u64,
    /// Groups `g00`.. the ids are spread over.
    #[arg(long, default_value_t = 20)]
    groups: u64,
    /// Requests answered at once.
    #[arg(long, default_value_t = 128)]
    threads: usize,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let server = tiny_http::Server::http(("127.0.0.1", args.port))
        .map_err(|error| anyhow::anyhow!("{error}"))
        .context("binding the lookup service")?;
    let latency = Duration::from_millis(args.latency_ms);
    std::thread::scope(|scope| {
        for _ in 0..args.threads {
            scope.spawn(|| {
                for request in server.incoming_requests() {
                    std::thread::sleep(latency);
                    let id = request.url().rsplit('/').next().unwrap_or_default();
                    let mut hasher = DefaultHasher::new();
                    id.hash(&mut hasher);
                    let body = format!(r#"{{"groups": ["g{:02}"]}}"#, hasher.finish() % args.groups);
                    let header = tiny_http::Header::from_bytes("Content-Type", "application/json")
                        .expect("a valid header");
                    // A client that went away is no concern of the benchmark's.
                    let _ = request.respond(tiny_http::Response::from_string(body).with_header(header));
                }
            });
        }
    });
    Ok(())
}
