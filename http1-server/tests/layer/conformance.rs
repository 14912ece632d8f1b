//! Every conformance case of `http1-probes` (each naming the rule of RFC
//! 9112 it checks) against the connection layer, over real sockets. The
//! services run the same cases against their own ports (e2e's
//! `front_door.rs`), and the reliability scenario through HAProxy and nginx.

use http1_probes::cases::{self, Server};
use http1_probes::run::{self, Target};
use http1_server::Gate;

use crate::support::TestServer;

#[tokio::test(flavor = "multi_thread")]
async fn every_case_is_answered_as_its_rule_says_by_a_server_that_takes_no_body() {
    let server = TestServer::start(|options| options.workers = 2);
    every_case_as_its_rule_says(Target::new(server.address, "/small")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_case_is_answered_as_its_rule_says_by_a_server_that_takes_bodies() {
    let server = TestServer::start(|options| {
        options.workers = 2;
        options.gate = Gate::taking(64 * 1024);
    });
    let server_takes = Server {
        takes_bodies: true,
        checks_host: false,
    };
    every_case_as_its_rule_says(Target::new(server.address, "/small").serving(server_takes)).await;
}

async fn every_case_as_its_rule_says(target: Target) {
    let cases = cases::all();
    let outcomes = tokio::task::spawn_blocking(move || {
        cases
            .iter()
            .map(|case| run::run(case, &target))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    let failures: Vec<String> = outcomes
        .iter()
        .filter_map(|outcome| {
            outcome
                .conforms()
                .err()
                .map(|error| format!("{} ({}): {error}", outcome.case.name, outcome.case.rule))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        outcomes.len(),
        failures.join("\n")
    );
}
