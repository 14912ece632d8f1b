use std::io::Write as _;

use anyhow::Context as _;
use graph_builder::GraphBuilder;
use graph_builder::service::{ONCE, build_once};
use service_kit::Service as _;
use service_kit::cli::Invocation;
use service_kit::service;
use service_kit::settings::SkeletonSettings as _;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    service_kit::build_info::record_git_commit(service_kit::source_commit!());
    let invocation = Invocation::parse(
        service::command::<GraphBuilder>(),
        GraphBuilder::DECLARATION.env_prefix,
    );
    if !invocation.flag(ONCE) {
        return service::run::<GraphBuilder>(&invocation).await;
    }
    let settings = service::settings::<GraphBuilder>(&invocation)?;
    let logging = settings.logging();
    let _telemetry =
        service_kit::logging::init(&GraphBuilder::DECLARATION, logging.verbosity, logging.log_format)?;
    let graph = build_once(&settings).await?;
    let mut stdout = std::io::stdout().lock();
    graph
        .write_identity(&mut stdout)
        .and_then(|()| stdout.write_all(b"\n"))
        .context("writing the graph")
}
