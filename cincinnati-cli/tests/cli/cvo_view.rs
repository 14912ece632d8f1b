//! `cincinnati updates` against the e2e suite's own account of what a
//! cluster is offered: a registry, the graph-builder and two chained
//! engines as processes, and, for every release of several channels and
//! every architecture, the updates and risks the suite works out from what
//! it pushed (sharing no code with the client).

use e2e::graph_builder::GraphBuilderOptions;
use e2e::scenario::{ARCHITECTURES, CANDIDATE};
use e2e::stack::Stack;

use crate::support::{offered, updates};

const CLUSTER_ID: &str = "5b6f1e2a-9c3d-4e8f-a1b2-c3d4e5f60718";

#[tokio::test]
async fn updates_are_what_the_e2e_suite_works_out_for_every_release() {
    let stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    let url = stack.engines.graph_url();
    let mut asked = 0;
    for channel in [CANDIDATE, "fast-4.17", "stable-4.17", "stable-4.16"] {
        for arch in ARCHITECTURES {
            let expected = stack.expected(channel, arch);
            stack.engines.await_graph(channel, arch, &expected).await.unwrap();
            for version in &stack.published().graph_data.channels[channel] {
                let run = updates(
                    &["--url", &url, "--arch", arch],
                    channel,
                    version,
                    &["--id", CLUSTER_ID, "--include-not-recommended"],
                );
                let cluster = format!("a {arch} cluster at {version} on {channel}");
                match expected.updates_from(version) {
                    Some(updates) => {
                        assert!(run.code < 2, "{cluster}: {run:?}");
                        assert_eq!(offered(&run.json()), updates, "{cluster}");
                    }
                    None => {
                        assert_eq!(run.code, 1, "{cluster}: {run:?}");
                        assert!(
                            run.stderr.contains("is not in channel"),
                            "{cluster}: {}",
                            run.stderr
                        );
                    }
                }
                asked += 1;
            }
        }
    }
    assert!(asked >= 60, "only {asked} clusters asked");
}
