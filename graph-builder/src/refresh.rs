//! The refresh tasks: releases and graph-data each on their own schedule, and
//! a builder that rebuilds the served graph whenever either brings something
//! new, and at the moments graph-data's phased rollouts change it. Between
//! refreshes, each source's change check (when configured) looks at it
//! cheaply on a short interval and runs the source's round at once when it
//! may have changed: the refresh interval bounds how long a change the check
//! cannot see takes, the check interval how long the rest take. A failure
//! anywhere leaves the last good graph served and shows in the logs, the
//! metrics and the status document. The tasks run under a [`Supervisor`]:
//! one that panics is started again (the builder rebuilds from what the
//! sources last published), and a source's periodic task that stops
//! completing rounds makes the process not live (the builder waits for
//! changes, so it has no schedule to miss).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use cincinnati_core::stage::Pipeline;
use jiff::Timestamp;
use openshift_graph_data::{
    Diagnostic, GraphData, Loaded, Refused, Revision, Strictness, Tarball, write_tar_gz,
};
use service_kit::periodic::Every;
use service_kit::supervisor::Supervisor;
use service_kit::telemetry;
use service_kit::timestamp::rfc3339;
use tokio::sync::{Mutex as AsyncMutex, watch};
use tracing::Instrument as _;

use crate::found::DropReason;
use crate::metrics::Metrics;
use crate::pipeline::{BuildContext, build};
use crate::plan::Plan;
use crate::sources::graph_data::{GraphDataSource, GraphDataSourceError};
use crate::sources::releases::{Fetched, ReleaseSnapshot, ReleaseSource, SourceError};
use crate::state::{DroppedEntry, Health, PublishedGraphData, SourceHealth, State, unix_now};

/// Everything the tasks share.
#[derive(Clone)]
pub struct Shared {
    pub state: Arc<State>,
    pub metrics: Metrics,
}

/// What a source published, and when it found it (the start of the
/// `graph_change_to_serve_seconds` it is served in).
pub struct Stamped<T> {
    pub value: Arc<T>,
    pub found_at: SystemTime,
}

impl<T> Clone for Stamped<T> {
    fn clone(&self) -> Self {
        Self {
            value: Arc::clone(&self.value),
            found_at: self.found_at,
        }
    }
}

impl<T> Stamped<T> {
    fn now(value: T) -> Self {
        Self {
            value: Arc::new(value),
            found_at: SystemTime::now(),
        }
    }
}

/// The two sources, as the `source` label of metrics names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Releases,
    GraphData,
}

impl Source {
    fn label(self) -> &'static str {
        match self {
            Self::Releases => "releases",
            Self::GraphData => "graph_data",
        }
    }

    fn health(self, health: &mut Health) -> Option<&mut SourceHealth> {
        match self {
            Self::Releases => Some(&mut health.releases),
            Self::GraphData => health.graph_data.as_mut(),
        }
    }
}

/// Starts the tasks of `plan` under `supervisor`.
pub fn spawn(plan: Plan, shared: Shared, supervisor: &mut Supervisor) {
    let Plan {
        releases,
        graph_data,
        strictness,
        pipeline,
        schedule,
    } = plan;
    let (releases_tx, releases_rx) = watch::channel(None);
    let (graph_data_tx, graph_data_rx) = watch::channel(None);
    let needs_graph_data = graph_data.is_some();
    let release_check = schedule.release_check.filter(|_| releases.can_check());
    // Sources keep state between rounds (the scrape cache): a restarted task
    // takes over the same source.
    let releases = Arc::new(AsyncMutex::new(ReleaseRounds {
        source: releases,
        interrupted: false,
    }));
    let round = {
        let shared = shared.clone();
        move |check: bool| {
            let (releases, shared, publish) = (releases.clone(), shared.clone(), releases_tx.clone());
            async move {
                if !check || shared.checked(Source::Releases, releases.lock().await.source.changed().await) {
                    refresh_releases(releases, schedule.scrape_timeout, shared, publish).await;
                }
            }
        }
    };
    spawn_with_check(
        supervisor,
        ("releases", schedule.releases),
        ("releases check", release_check),
        schedule.round_allowance(),
        round,
    );
    if let Some(source) = graph_data {
        let source = Arc::new(AsyncMutex::new(GraphDataRounds {
            source,
            refused: false,
        }));
        let strictness = Arc::new(strictness);
        let shared = shared.clone();
        let round = move |check: bool| {
            let (source, strictness, shared, publish) = (
                source.clone(),
                strictness.clone(),
                shared.clone(),
                graph_data_tx.clone(),
            );
            async move {
                if !check || shared.checked(Source::GraphData, source.lock().await.source.changed().await) {
                    refresh_graph_data(source, strictness, shared, publish).await;
                }
            }
        };
        spawn_with_check(
            supervisor,
            ("graph-data", schedule.graph_data),
            ("graph-data check", schedule.graph_data_check),
            schedule.round_allowance(),
            round,
        );
    }
    let pipeline = Arc::new(pipeline);
    supervisor.spawn("graph build", move || {
        rebuild_on_change(
            pipeline.clone(),
            needs_graph_data,
            shared.clone(),
            releases_rx.clone(),
            graph_data_rx.clone(),
        )
    });
}

/// Spawns a source's refresh task (`round(false)` every pause) and, when it
/// has one, its check task (`round(true)` every check interval: a round
/// only if the check says the source may have changed).
fn spawn_with_check<F, Fut>(
    supervisor: &mut Supervisor,
    (name, pause): (&'static str, Duration),
    (check_name, check): (&'static str, Option<Duration>),
    allowance: Duration,
    round: F,
) where
    F: Fn(bool) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let refresh = round.clone();
    supervisor.spawn_every(Every::new(name, pause).allowing(allowance), move || {
        refresh(false)
    });
    if let Some(check) = check {
        supervisor.spawn_every(Every::new(check_name, check).allowing(allowance), move || {
            round(true)
        });
    }
}

/// The release source, and whether a round was cut short in it.
struct ReleaseRounds {
    source: ReleaseSource,
    /// Set while a round runs: still set at the start of the next, the task
    /// died in the middle of one.
    interrupted: bool,
}

/// One round of the releases task: a scrape (a trace of its own), the
/// releases published when they are new.
async fn refresh_releases(
    rounds: Arc<AsyncMutex<ReleaseRounds>>,
    scrape_timeout: Option<Duration>,
    shared: Shared,
    publish: watch::Sender<Option<Stamped<ReleaseSnapshot>>>,
) {
    let mut rounds = rounds.lock().await;
    let ReleaseRounds { source, interrupted } = &mut *rounds;
    // A task that died mid-scrape may have left its source half-updated.
    if std::mem::replace(interrupted, true) {
        source.forget_previous();
    }
    let started = Instant::now();
    let scrape = async {
        shared.metrics.upstream_scrapes.inc();
        let fetched = fetch_releases(source, scrape_timeout).await;
        if let Some(counts) = source.request_counts() {
            shared.metrics.observe_registry_requests(&counts);
        }
        shared.record_releases(fetched)
    };
    let new = scrape
        .instrument(tracing::info_span!(
            "release scrape",
            releases = tracing::field::Empty
        ))
        .await;
    if let Some(snapshot) = new {
        // Rebuild only for new releases, not for every scrape.
        let changed = publish
            .borrow()
            .as_ref()
            .is_none_or(|published| published.value.graph != snapshot.graph);
        if changed {
            let stamped = Stamped::now(snapshot);
            shared.changed(Source::Releases, stamped.found_at);
            publish.send_replace(Some(stamped));
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    shared.metrics.scrape_duration.observe(elapsed);
    if shared.metrics.scrape_duration.get_sample_count() == 1 {
        shared.metrics.initial_scrape_duration.set(elapsed);
    }
    *interrupted = false;
}

/// One release refresh, abandoned (and its requests cancelled) after
/// `timeout`. After a failure, the source's next fetch reports every
/// release again: a scrape that timed out may have found releases it never
/// delivered.
pub async fn fetch_releases(
    source: &mut ReleaseSource,
    timeout: Option<Duration>,
) -> Result<Fetched, SourceError> {
    let fetched = match timeout {
        // Dropping the scrape future on timeout cancels its requests.
        Some(limit) => tokio::time::timeout(limit, source.fetch())
            .await
            .unwrap_or(Err(SourceError::TimedOut(limit))),
        None => source.fetch().await,
    };
    if fetched.is_err() {
        source.forget_previous();
    }
    fetched
}

impl Shared {
    /// Shows a release refresh in metrics, logs and status; the releases,
    /// when new.
    fn record_releases(&self, fetched: Result<Fetched, SourceError>) -> Option<ReleaseSnapshot> {
        let metrics = &self.metrics;
        let span = tracing::Span::current();
        let snapshot = match fetched {
            Ok(Fetched::Unchanged { raw_releases }) => {
                span.record("releases", raw_releases);
                metrics.raw_releases.set(raw_releases as i64);
                metrics.cache_hits.inc_by(raw_releases as u64);
                metrics.source_up.with_label_values(&["releases"]).set(1);
                self.state
                    .health()
                    .releases
                    .freshness
                    .succeeded(SystemTime::now());
                return None;
            }
            Ok(Fetched::New(snapshot)) => *snapshot,
            Err(error) => {
                tracing::warn!(%error, "release refresh failed; serving the last good graph");
                telemetry::mark_failed(&error);
                metrics.upstream_errors.inc();
                metrics.source_up.with_label_values(&["releases"]).set(0);
                self.state
                    .health()
                    .releases
                    .freshness
                    .failed(SystemTime::now(), &error);
                return None;
            }
        };
        span.record("releases", snapshot.raw_releases);
        metrics.raw_releases.set(snapshot.raw_releases as i64);
        metrics.cache_misses.inc_by(snapshot.downloaded as u64);
        metrics
            .cache_hits
            .inc_by(snapshot.raw_releases.saturating_sub(snapshot.downloaded) as u64);
        metrics.dropped.reset();
        for dropped in &snapshot.dropped {
            metrics.dropped.with_label_values(&[dropped.reason.label()]).inc();
        }
        metrics.source_up.with_label_values(&["releases"]).set(1);
        let unavailable = snapshot
            .dropped
            .iter()
            .filter(|dropped| matches!(dropped.reason, DropReason::Unavailable(_)))
            .count();
        let mut health = self.state.health();
        if unavailable == 0 {
            health.releases.freshness.succeeded(SystemTime::now());
        } else {
            // Served, but incomplete: say so until a scrape gets them all.
            health.releases.freshness.failed(
                SystemTime::now(),
                format_args!("{unavailable} release image(s) could not be fetched; see `dropped`"),
            );
        }
        // Component images are counted (the metric above), not listed: a
        // repository may hold tens of thousands.
        let dropped: Vec<DroppedEntry> = snapshot
            .dropped
            .iter()
            .filter(|dropped| dropped.reason != DropReason::ComponentImage)
            .map(DroppedEntry::from)
            .collect();
        // Each problem is logged when it first appears, not on every scrape.
        for entry in dropped.iter().filter(|entry| !health.dropped.contains(entry)) {
            tracing::warn!(subject = %entry.subject, reason = entry.reason, detail = %entry.detail, "left out of the graph");
        }
        health.dropped = dropped;
        Some(snapshot)
    }
}

/// The graph-data source, and whether what it offers was refused.
struct GraphDataRounds {
    source: GraphDataSource,
    /// While the source keeps offering content that was refused, it stays
    /// reported as failing.
    refused: bool,
}

/// One round of the graph-data task: a load (a trace of its own), the
/// graph-data published when it is new and valid.
async fn refresh_graph_data(
    rounds: Arc<AsyncMutex<GraphDataRounds>>,
    strictness: Arc<Strictness>,
    shared: Shared,
    publish: watch::Sender<Option<Stamped<GraphData>>>,
) {
    let mut rounds = rounds.lock().await;
    let GraphDataRounds { source, refused } = &mut *rounds;
    let current = publish
        .borrow()
        .as_ref()
        .map(|data| data.value.revision().clone());
    let load = async {
        match fetch_graph_data(source, &strictness, current.as_ref()).await {
            Ok(GraphDataUpdate::Unchanged) => {
                if !*refused {
                    shared.graph_data_up();
                }
            }
            Ok(GraphDataUpdate::InUse) => {
                *refused = false;
                shared.graph_data_up();
            }
            Ok(GraphDataUpdate::New(update)) => {
                *refused = false;
                let stamped = Stamped::now(shared.publish_graph_data(*update));
                shared.changed(Source::GraphData, stamped.found_at);
                publish.send_replace(Some(stamped));
            }
            Err(error) => {
                *refused = matches!(error, GraphDataError::Refused(_));
                shared.graph_data_failed(&error);
            }
        }
    };
    load.instrument(tracing::info_span!("graph-data load")).await;
}

/// What a graph-data refresh brought.
pub enum GraphDataUpdate {
    /// The source sent nothing new.
    Unchanged,
    /// The source offers the revision in use (again, after a refused one).
    InUse,
    New(Box<NewGraphData>),
}

/// Graph-data that passed validation.
pub struct NewGraphData {
    pub graph_data: GraphData,
    /// Problems that did not refuse it.
    pub warnings: Vec<Diagnostic>,
    /// The image it came from, when it came from an image.
    pub image_digest: Option<String>,
    /// Its files as `{prefix}/graph-data` publishes them.
    pub tarball: Tarball,
    /// How many release signatures (`signatures/`) it holds.
    pub signatures: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum GraphDataError {
    #[error(transparent)]
    Source(#[from] GraphDataSourceError),
    #[error(transparent)]
    Refused(#[from] Refused),
}

/// One graph-data refresh: new graph-data that passed validation, or what
/// the source said instead (`current`: the revision in use).
pub async fn fetch_graph_data(
    source: &mut GraphDataSource,
    strictness: &Arc<Strictness>,
    current: Option<&Revision>,
) -> Result<GraphDataUpdate, GraphDataError> {
    let Some(fetched) = source.fetch().await? else {
        return Ok(GraphDataUpdate::Unchanged);
    };
    if current == Some(&fetched.files.revision()) {
        return Ok(GraphDataUpdate::InUse);
    }
    let strictness = Arc::clone(strictness);
    let files = fetched.files;
    let (Loaded { graph_data, warnings }, tarball, signatures) = tokio::task::spawn_blocking(move || {
        let loaded = GraphData::load(&files, &strictness)?;
        // Graph-data to be served is published; then its files (signatures,
        // megabytes of them, included) are dropped: the tarball holds them once.
        Ok::<_, Refused>((loaded, write_tar_gz(&files), files.signatures().count()))
    })
    .await
    .expect("loading graph-data does not panic")?;
    Ok(GraphDataUpdate::New(Box::new(NewGraphData {
        graph_data,
        warnings,
        image_digest: fetched.image_digest,
        tarball,
        signatures,
    })))
}

impl Shared {
    /// Publishes new graph-data at `{prefix}/graph-data` and in metrics and
    /// status; the graph-data, for the builder.
    fn publish_graph_data(&self, update: NewGraphData) -> GraphData {
        let NewGraphData {
            graph_data,
            warnings,
            image_digest,
            tarball,
            signatures,
        } = update;
        let revision = graph_data.revision().to_string();
        tracing::info!(%revision, image = ?image_digest, warnings = warnings.len(), signatures, "graph-data loaded");
        self.state.graph_data.store(Some(Arc::new(PublishedGraphData {
            tarball: tarball.bytes.into(),
            tarball_digest: tarball.digest,
            revision: revision.clone(),
            image_digest: image_digest.clone(),
            signatures,
        })));
        let metrics = &self.metrics;
        metrics.graph_data_revision.reset();
        metrics
            .graph_data_revision
            .with_label_values(&[&revision, &image_digest.unwrap_or_default()])
            .set(1);
        self.graph_data_up();
        self.state.health().graph_data_warnings = warnings.iter().map(ToString::to_string).collect();
        graph_data
    }

    /// Shows a change check's outcome in metrics, logs and status; whether
    /// the source may have changed. A failing check is logged when it
    /// starts failing, not every few seconds, and changes nothing else.
    fn checked<E: std::fmt::Display>(&self, source: Source, outcome: Result<bool, E>) -> bool {
        let label = source.label();
        self.metrics.change_checks.with_label_values(&[label]).inc();
        let mut health = self.state.health();
        let check = source
            .health(&mut health)
            .and_then(|health| health.change_check.as_mut());
        match outcome {
            Ok(changed) => {
                if let Some(check) = check {
                    check.freshness.succeeded(SystemTime::now());
                }
                changed
            }
            Err(error) => {
                self.metrics.change_check_errors.with_label_values(&[label]).inc();
                let already_failing = check.as_ref().is_some_and(|check| check.freshness.is_stale());
                if already_failing {
                    tracing::debug!(source = label, %error, "change check failed");
                } else {
                    tracing::warn!(source = label, %error, "change check failed; the source is still refreshed on its schedule");
                }
                if let Some(check) = check {
                    check.freshness.failed(SystemTime::now(), &error);
                }
                false
            }
        }
    }

    /// Notes in status that `source` brought something new at `at`, not
    /// served yet.
    fn changed(&self, source: Source, at: SystemTime) {
        if let Some(health) = source.health(&mut self.state.health()) {
            health.last_change = Some(rfc3339(at));
            health.last_change_served = None;
        }
    }

    /// Notes that a graph built from what `source` found at `found_at` is
    /// served now.
    fn served(&self, source: Source, found_at: SystemTime) {
        let now = SystemTime::now();
        self.metrics
            .change_to_serve
            .with_label_values(&[source.label()])
            .observe(now.duration_since(found_at).unwrap_or_default().as_secs_f64());
        if let Some(health) = source.health(&mut self.state.health()) {
            health.last_change_served = Some(rfc3339(now));
        }
    }

    fn graph_data_up(&self) {
        self.metrics.source_up.with_label_values(&["graph_data"]).set(1);
        if let Some(health) = self.state.health().graph_data.as_mut() {
            health.freshness.succeeded(SystemTime::now());
        }
    }

    fn graph_data_failed(&self, error: &GraphDataError) {
        tracing::warn!(%error, "graph-data refresh failed; keeping the graph-data in use");
        telemetry::mark_failed(error);
        let metrics = &self.metrics;
        metrics.graph_data_errors.inc();
        metrics.upstream_errors.inc();
        metrics.source_up.with_label_values(&["graph_data"]).set(0);
        if let Some(health) = self.state.health().graph_data.as_mut() {
            health.freshness.failed(SystemTime::now(), error);
        }
    }
}

/// Builds the graph whenever a source publishes something new, and at the
/// next moment graph-data's phased rollouts change it (a release's `start`,
/// the end of its longest window): the graph changes then although no
/// source does.
async fn rebuild_on_change(
    pipeline: Arc<Pipeline<BuildContext>>,
    needs_graph_data: bool,
    shared: Shared,
    mut releases: watch::Receiver<Option<Stamped<ReleaseSnapshot>>>,
    mut graph_data: watch::Receiver<Option<Stamped<GraphData>>>,
) {
    // Started again after a death: build from what the sources last published.
    releases.mark_changed();
    // When what each source found was found, as last served.
    let mut served: [Option<SystemTime>; 2] = [None, None];
    // The next moment the graph last built goes out of date by itself.
    let mut phase_change: Option<Timestamp> = None;
    loop {
        let woken_for = tokio::select! {
            changed = releases.changed() => if changed.is_err() { return } else { None },
            changed = graph_data.changed(), if needs_graph_data => if changed.is_err() { return } else { None },
            () = sleep_until(phase_change), if phase_change.is_some() => phase_change,
        };
        let (Some(snapshot), data) = (
            releases.borrow_and_update().clone(),
            graph_data.borrow_and_update().clone(),
        ) else {
            continue;
        };
        // Without its graph-data, the graph would have no channels: wait.
        if needs_graph_data && data.is_none() {
            continue;
        }
        // The clock is read once per build, here; woken for a phase change,
        // it reads that moment or later (see `sleep_until`).
        let now = Timestamp::now();
        if let Some(moment) = woken_for {
            tracing::info!(%moment, "a phased rollout changes the graph now; rebuilding it");
        }
        phase_change = data.as_ref().and_then(|data| data.value.next_phase_change(now));
        let pipeline = Arc::clone(&pipeline);
        let found = [
            (Source::Releases, Some(snapshot.found_at)),
            (Source::GraphData, data.as_ref().map(|data| data.found_at)),
        ];
        let built = async {
            let built = tokio::task::spawn_blocking(move || {
                build(&snapshot.value, data.map(|data| data.value), &pipeline, now)
            })
            .await
            .expect("building the graph does not panic");
            let ok = built.is_ok();
            publish_built(built, &shared);
            ok
        }
        .instrument(tracing::info_span!("graph build"))
        .await;
        if built {
            for ((source, found_at), last) in found.into_iter().zip(&mut served) {
                if let Some(found_at) = found_at.filter(|found_at| *last != Some(*found_at)) {
                    shared.served(source, found_at);
                    *last = Some(found_at);
                }
            }
        }
    }
}

/// Waits until the wall clock reads `moment` (at once if it is past);
/// never, without one. A timer measures time by the monotonic clock, which
/// may run ahead of the wall clock (and tokio caps a wait at 30 years): woken
/// early, it waits the rest, so the graph is rebuilt once per moment and
/// never for a moment before it.
async fn sleep_until(moment: Option<Timestamp>) {
    let Some(moment) = moment else {
        return std::future::pending().await;
    };
    // Negative once the moment is past.
    while let Ok(wait) = Duration::try_from(moment.duration_since(Timestamp::now())) {
        if wait.is_zero() {
            return;
        }
        tokio::time::sleep(wait).await;
    }
}

/// Swaps in a built graph, or records why it could not be built.
pub fn publish_built(
    built: Result<crate::pipeline::Built, cincinnati_core::stage::PipelineError>,
    shared: &Shared,
) {
    let metrics = &shared.metrics;
    match built {
        Ok(built) => {
            let served = built.served;
            metrics.final_releases.set(served.releases as i64);
            metrics.final_edges.set(served.edges as i64);
            metrics
                .final_conditional_edges
                .set(served.conditional_edges as i64);
            metrics.last_successful_refresh.set(unix_now() as f64);
            tracing::info!(
                releases = served.releases,
                edges = served.edges,
                conditional_edges = served.conditional_edges,
                "serving a new graph"
            );
            shared.state.serve(served);
            let mut health = shared.state.health();
            health.build.freshness.succeeded(SystemTime::now());
            health.apply_warnings = built.warnings.iter().map(ToString::to_string).collect();
        }
        Err(error) => {
            tracing::warn!(%error, "the graph could not be built; serving the last good graph");
            telemetry::mark_failed(&error);
            metrics.build_errors.inc();
            metrics.upstream_errors.inc();
            shared
                .state
                .health()
                .build
                .freshness
                .failed(SystemTime::now(), &error);
        }
    }
}
