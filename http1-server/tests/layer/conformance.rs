//! Every conformance case of `http1-probes` (each naming the rule of RFC
//! 9112 it checks) against the connection layer, over real sockets. The
//! services run the same cases against their own ports (e2e's
//! `front_door.rs`), and the reliability scenario through HAProxy and nginx.

use crate::support::TestServer;
use http1_probes::cases;
use http1_probes::run::{self, Target};

#[tokio::test(flavor = "multi_thread")]
async fn every_case_is_answered_as_its_rule_says() {
    let server = TestServer::start(|options| options.workers = 2);
    let target = Target::new(server.address, "/small");
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
