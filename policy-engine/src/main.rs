use anyhow::Context as _;
use clap::Parser as _;
use policy_engine::Application;
use policy_engine::cli::Cli;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let settings = Cli::parse().settings()?;
    service_kit::logging::init(settings.verbosity, settings.log_format)?;
    let application = Application::build(&settings).context("starting the policy-engine")?;
    tracing::info!(
        api = %application.address(),
        status = %application.status_address(),
        upstream = %settings.upstream.cincinnati.url,
        "policy-engine listening"
    );
    application.run_until_stopped().await
}
