//! Every service reports the commit it was built from (`build_info`), as git
//! tells it for this checkout: dashboards and the upstream SLO check refuse
//! `unknown`.

use std::process::Command;

use e2e::graph_builder::GraphBuilderOptions;
use e2e::process::ServiceProcess;
use e2e::stack::Stack;

fn head_commit() -> String {
    let output = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running git");
    assert!(output.status.success(), "the tests run in a git checkout");
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

async fn reported_commit(service: &ServiceProcess, metric: &str) -> String {
    let text = reqwest::get(service.status_url("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let prefix = format!("{metric}{{git_commit=\"");
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("{} reports no {metric}:\n{text}", service.name()));
    line.split('"').next().unwrap().to_owned()
}

#[tokio::test]
async fn every_service_reports_the_commit_it_was_built_from() {
    let stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    let head = head_commit();
    let services = [
        (&stack.graph_builder, "cincinnati_gb_build_info"),
        (&stack.engines.engine_a, "cincinnati_pe_build_info"),
    ];
    for (service, metric) in services {
        let commit = reported_commit(service, metric).await;
        assert!(
            commit == head || commit == format!("{head}-dirty"),
            "{} reports {commit}, the checkout is at {head}",
            service.name()
        );
    }
}
