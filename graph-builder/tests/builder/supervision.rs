//! The refresh tasks run supervised: a build that panics is started again
//! and the graph is served, with the death in `/status`'s `tasks` and
//! `task_restarts_total`. The panic comes from a stage of the test's own,
//! handed to the real refresh tasks with a real release source (the
//! service's configuration cannot name such a stage).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use cincinnati_core::stage::{Pipeline, Stage};
use cincinnati_core::{ApiError, Graph};
use graph_builder::metrics::Metrics;
use graph_builder::pipeline::BuildContext;
use graph_builder::plan::Plan;
use graph_builder::refresh::{self, Shared};
use graph_builder::schedule::Schedule;
use graph_builder::sources::releases::ReleaseSource;
use graph_builder::state::{Health, State};
use openshift_graph_data::Strictness;
use registry_testkit::poll::eventually;
use service_kit::metrics::{MetricRegistry, ServiceMetrics as _};
use service_kit::supervisor::{Backoff, Supervisor};

/// Panics the first time it is applied, as a bug would on some input.
#[derive(Debug, Default)]
struct PanicsOnce {
    panicked: AtomicBool,
}

impl Stage<BuildContext> for PanicsOnce {
    fn name(&self) -> &'static str {
        "panics-once"
    }

    fn apply(&self, _: &mut Graph, _: &BuildContext) -> Result<(), ApiError> {
        assert!(self.panicked.swap(true, Ordering::SeqCst), "a bug in a stage");
        Ok(())
    }
}

#[tokio::test]
async fn a_build_that_panics_is_started_again_and_the_graph_is_served() {
    let registry = MetricRegistry::new("cincinnati_gb").unwrap();
    let metrics = Metrics::register(&registry).unwrap();
    let state = State::new(Health::default());
    let backoff = Backoff {
        initial: Duration::from_millis(10),
        max: Duration::from_millis(100),
    };
    let mut supervisor = Supervisor::new(&registry, backoff).unwrap();
    let graph = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/fixtures/secondary-metadata/20200319.204124/graph-gb-with-quay-metadata.json");
    let schedule = Schedule {
        releases: Duration::from_secs(3600),
        graph_data: Duration::from_secs(3600),
        scrape_timeout: None,
        release_check: None,
        graph_data_check: None,
    };
    let shared = Shared {
        state: state.clone(),
        metrics: metrics.clone(),
    };
    let plan = Plan {
        releases: ReleaseSource::GraphFile(graph),
        graph_data: None,
        strictness: Strictness::default(),
        pipeline: Pipeline::new(vec![Box::new(PanicsOnce::default())]),
        schedule,
    };
    refresh::spawn(plan, shared, &mut supervisor);

    eventually(
        "a graph after the build panicked",
        Duration::from_secs(60),
        || async { state.is_ready() },
    )
    .await;
    let tasks = supervisor.liveness().tasks();
    let build = tasks.iter().find(|task| task.name == "graph build").unwrap();
    assert_eq!(build.restarts, 1, "{tasks:?}");
    let death = build.last_death.as_deref().unwrap();
    assert!(death.contains("building the graph does not panic"), "{death}");
    let releases = tasks.iter().find(|task| task.name == "releases").unwrap();
    assert_eq!(releases.restarts, 0);
    assert!(releases.last_round.is_some(), "{tasks:?}");
    assert!(supervisor.liveness().is_live());
    let text = String::from_utf8(registry.encode()).unwrap();
    assert!(
        text.contains("cincinnati_gb_task_restarts_total{task=\"graph build\"} 1"),
        "{text}"
    );
    supervisor.shutdown().await;
}
