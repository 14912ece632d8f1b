use std::io::Write as _;

use anyhow::Context as _;
use clap::Parser as _;
use graph_builder::Application;
use graph_builder::cli::Cli;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    service_kit::build_info::record_git_commit(service_kit::source_commit!());
    let cli = Cli::parse();
    let settings = cli.settings()?;
    let _telemetry = service_kit::logging::init("graph-builder", settings.verbosity, settings.log_format)?;
    if cli.check_config {
        settings.validate()?;
        graph_builder::plan::Plan::from_settings(&settings)?;
        println!("{}", settings.printable());
        return Ok(());
    }
    if cli.once {
        let graph = graph_builder::app::build_once(&settings).await?;
        let mut stdout = std::io::stdout().lock();
        graph
            .write_identity(&mut stdout)
            .and_then(|()| stdout.write_all(b"\n"))
            .context("writing the graph")?;
        return Ok(());
    }
    let application = Application::build(&settings).context("starting the graph-builder")?;
    tracing::info!(
        api = %application.api_address,
        public = %application.public_address,
        status = %application.status_address,
        "graph-builder listening"
    );
    application.run_until_stopped().await
}
