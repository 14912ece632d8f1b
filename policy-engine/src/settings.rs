//! The policy-engine's settings: upstream's TOML layout and flag names, with
//! defaults that do not turn load into refusals. The sections every service
//! shares (logging, the API and status listeners, connection tuning, the
//! rules of graph requests) come from service-kit.
//!
//! ```toml
//! verbosity = "vv"
//! [service]
//! address = "0.0.0.0"
//! port = 8081
//! path_prefix = "/api/upgrades_info"
//! mandatory_client_parameters = ["channel"]
//! [status]
//! port = 9081
//! [upstream.cincinnati]
//! url = "http://localhost:8080/api/upgrades_info/graph"
//! [[policy]]
//! name = "channel-filter"
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use cincinnati_core::stage::Pipeline;
use fleet_store::StoreKind;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use service_kit::secret::RedactedUrl;
use service_kit::settings::{
    ApiSettings, ConnectionSettings, Logging, Named, RequestSettings, SkeletonSettings, StatusSettings,
};

use crate::client::FeedLimits;
use crate::client::KindSetting;
use crate::client::Limits;
use crate::client::filters;
use crate::client::query::QueryRules;
use crate::client::request::PolicyRequest;
use crate::client::{InvalidUpstream, UpstreamClient};
use crate::cluster_policy::{GroupLookup, LookupSettings};
use crate::cluster_policy::{PolicySource, SourceError};
use crate::operator::ClusterKeys;
use crate::operator::Prometheus;
use crate::operator::Tokens;
use crate::operator::{Bounds, FleetPlan, Windows};
use crate::operator::{ControlPlan, Intervals};
use rollout_model::evidence::Evidence;
use rollout_model::time::SignedDuration;

/// The policy-engine's ports and caching default.
#[derive(Debug, Clone)]
pub enum PolicyEngineDefaults {}

impl service_kit::settings::Defaults for PolicyEngineDefaults {
    const API_PORT: u16 = 8081;
    const STATUS_PORT: u16 = 9081;
    /// `no-cache`: an HTTP cache between the engine and the clusters
    /// revalidates every time (a 304 from a precomputed ETag), so a blocked
    /// update stops being offered behind it as soon as the engine has the
    /// block; any max-age would add itself to that delay.
    const CACHE_MAX_AGE_SECS: u64 = 0;
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    #[serde(flatten)]
    pub logging: Logging,
    pub service: ServiceSettings,
    pub status: StatusSettings<PolicyEngineDefaults>,
    pub upstream: UpstreamSettings,
    /// Per-cluster policy (see `cluster_policy`).
    pub cluster_policy: ClusterPolicySettings,
    /// The fleet view, recorded from the update checks (see `fleet`).
    pub fleet: FleetSettings,
    /// Rollouts under run-time control (see `control`).
    pub rollouts: RolloutsSettings,
    /// Graph-data's phased rollouts, served per cluster (see `client::phased`).
    pub phased_rollouts: PhasedRolloutsSettings,
    /// Filter tables, in order; none means channel-filter then arch-filter
    /// (then cluster-policy with a policy file).
    pub policy: Vec<PolicyTable>,
}

/// `[cluster_policy]`: the policy file and how it is served.
#[derive(Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct ClusterPolicySettings {
    /// The policy file (YAML); none: every cluster is offered the same.
    pub file: Option<PathBuf>,
    /// Seconds between reads of the file (taken when changed and valid).
    pub reload_secs: u64,
    /// Deferral is decided per bucket of this many seconds, so one answer
    /// serves a group for the whole bucket.
    pub deferral_bucket_secs: u64,
    /// The lookup service asked `GET {lookup_url}/{id}` for a cluster's
    /// groups, besides the file's; none: the file's only.
    pub lookup_url: Option<RedactedUrl>,
    /// Milliseconds a request waits for a lookup (and a lookup may take).
    pub lookup_timeout_ms: u64,
    /// Seconds a looked-up answer is used before it is asked again.
    pub lookup_cache_ttl_secs: u64,
    /// Clusters whose looked-up groups are kept.
    pub lookup_cache_size: usize,
}

impl Default for ClusterPolicySettings {
    fn default() -> Self {
        Self {
            file: None,
            reload_secs: 10,
            deferral_bucket_secs: 3600,
            lookup_url: None,
            lookup_timeout_ms: 200,
            lookup_cache_ttl_secs: 300,
            lookup_cache_size: 100_000,
        }
    }
}

/// `[phased_rollouts]`: graph-data's phased rollouts, as the graph-builder's
/// full graph carries them.
#[derive(Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct PhasedRolloutsSettings {
    /// Whether each cluster is offered a phased update from its own moment
    /// in the window; off: a phasing release enters its channel when the
    /// graph lists it (the end of its longest window), for every cluster.
    pub enabled: bool,
}

impl Default for PhasedRolloutsSettings {
    fn default() -> Self {
        Self { enabled: true }
    }
}

/// `[rollouts]`: the policy file's rollouts under run-time control.
#[derive(Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct RolloutsSettings {
    /// The bearer tokens of `{prefix}/v1/rollouts` on the status port, one
    /// a line (`name token`); none: rollouts follow the file alone. Needs
    /// `fleet.store` (where the state is kept) and `cluster_policy.file`.
    pub token_file: Option<PathBuf>,
    /// Milliseconds between reads of the rollouts' state from the store:
    /// how soon a change made on another engine is in force here.
    pub refresh_ms: u64,
    /// Seconds between checks of the rollouts' `halt_when` criteria.
    pub halt_check_secs: u64,
    /// Bytes an Alertmanager notification (`{prefix}/v1/alerts/alertmanager`)
    /// may take; a larger one is answered 413.
    pub max_alert_bytes: usize,
    /// The Prometheus the rollouts' `halt_when: {promql, above}` queries are
    /// asked of (`http://prometheus:9090`); none: those criteria are not
    /// checked.
    pub prometheus_url: Option<RedactedUrl>,
    /// Seconds between evaluations of the rollouts' Prometheus queries.
    pub prometheus_check_secs: u64,
}

impl Default for RolloutsSettings {
    fn default() -> Self {
        Self {
            token_file: None,
            refresh_ms: 2_000,
            halt_check_secs: 60,
            max_alert_bytes: 1024 * 1024,
            prometheus_url: None,
            prometheus_check_secs: 300,
        }
    }
}

/// `[fleet]`: recording the update checks and what the fleet answers look
/// back on.
#[derive(Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct FleetSettings {
    /// `sqlite:///var/lib/cincinnati/fleet.db` (one engine) or
    /// `postgres://user:password@host/db` (engines sharing a fleet); none:
    /// nothing is recorded.
    pub store: Option<RedactedUrl>,
    /// A file holding the store's password (PostgreSQL), instead of the
    /// URL; read whenever the store is opened.
    pub store_password_file: Option<PathBuf>,
    /// Stores a keyed hash of each cluster id instead of the id.
    pub hash_ids: bool,
    /// The hash key (at least 16 bytes); the same on every engine sharing a
    /// store. Required with `hash_ids`.
    pub hash_key_file: Option<PathBuf>,
    /// Clusters not seen and changes older than this many days are pruned
    /// (hourly); 0: kept for ever.
    pub retention_days: u64,
    /// Update checks waiting to be written at most; beyond, new ones are
    /// dropped (counted).
    pub queue_capacity: usize,
    /// Update checks written per transaction at most.
    pub batch_size: usize,
    /// Milliseconds between writing rounds.
    pub flush_interval_ms: u64,
    /// Seconds: a cluster whose checks say nothing new (same channel,
    /// architecture, version) is written again only once its stored
    /// `last_seen` is this old; 0 writes every check.
    pub seen_step_secs: u64,
    /// Seconds between counts of the fleet, which the versions, rollouts
    /// and stuck answers of the whole fleet are made of; 0 counts at every
    /// question.
    pub count_interval_secs: u64,
    /// Hours within which a cluster counts as active in the answers.
    pub active_hours: u64,
    /// Hours without a check after arriving at a rollout's target that make
    /// a cluster silent.
    pub silent_hours: u64,
    /// Days on a version with an update offered that make a cluster stuck.
    pub stuck_days: u64,
    /// Hours a cluster must have been recorded over (its last check that
    /// long after its first) before it steers a rollout: is chosen as a
    /// canary, admitted by a rate, counted by a halt (see the rollout
    /// model's evidence rules).
    pub established_after_hours: u64,
    /// Minutes a cluster must have reported a new version over before the
    /// version counts (a canary's arrival, a halt's).
    pub settled_after_minutes: u64,
    /// Clusters the store keeps at most; beyond, new ones are not recorded
    /// (counted as refused).
    pub max_clusters: u64,
    /// New clusters this engine records an hour at most (a burst of as many
    /// at once); beyond, new ones are not recorded (counted as refused).
    pub new_clusters_per_hour: u64,
}

impl Default for FleetSettings {
    fn default() -> Self {
        Self {
            store: None,
            store_password_file: None,
            hash_ids: false,
            hash_key_file: None,
            retention_days: 90,
            queue_capacity: 100_000,
            batch_size: 5_000,
            flush_interval_ms: 1_000,
            seen_step_secs: 3_600,
            count_interval_secs: 60,
            active_hours: 24,
            silent_hours: 6,
            stuck_days: 14,
            established_after_hours: 24,
            settled_after_minutes: 10,
            max_clusters: 2_000_000,
            new_clusters_per_hour: 100_000,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct ServiceSettings {
    #[serde(flatten)]
    pub api: ApiSettings<PolicyEngineDefaults>,
    #[serde(flatten)]
    pub requests: RequestSettings<PolicyEngineDefaults>,
    #[serde(flatten)]
    pub connections: ConnectionSettings,
    /// Bytes of identity (not gzip) answers kept for clients without gzip.
    pub identity_cache_bytes: usize,
    /// Serves the update graph explorer page at `{prefix}/`.
    pub explorer: bool,
    /// Answers graph requests whose answer is made already from their
    /// head, beside actix-web's routing and middleware (the same answers).
    pub answers_at_hand: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct UpstreamSettings {
    /// Upstream's deprecated `[upstream] method`; accepted and ignored.
    pub method: Option<String>,
    pub cincinnati: CincinnatiUpstream,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct CincinnatiUpstream {
    pub url: RedactedUrl,
    pub kind: KindSetting,
    pub interval_secs: u64,
    pub timeout_secs: u64,
    pub max_body_bytes: usize,
    /// CAs trusted besides the system's, for an HTTPS upstream.
    pub root_certificate_dir: PathBuf,
    /// Parameters forwarded to an engine upstream besides channel and arch.
    #[serde(deserialize_with = "service_kit::config::string_list")]
    pub forward_parameters: Vec<String>,
    /// Parameter sets kept (each with its graph) for an engine upstream.
    pub max_feeds: usize,
    /// (channel, arch) answers kept per upstream revision.
    pub max_answers: usize,
    /// Whether to ask the upstream to hold a fetch until its graph changes
    /// (`wait_for_change`), so a new revision arrives at once; an upstream
    /// that does not wait is polled every `interval_secs` either way.
    pub wait_for_change: bool,
}

impl Default for ServiceSettings {
    fn default() -> Self {
        Self {
            api: ApiSettings::default(),
            requests: RequestSettings::default(),
            connections: ConnectionSettings::default(),
            identity_cache_bytes: 8 * 1024 * 1024,
            explorer: true,
            answers_at_hand: true,
        }
    }
}

impl Default for CincinnatiUpstream {
    fn default() -> Self {
        Self {
            url: "http://localhost:8080/graph"
                .parse()
                .expect("the default URL is valid"),
            kind: KindSetting::Auto,
            interval_secs: 30,
            timeout_secs: 30,
            max_body_bytes: 128 * 1024 * 1024,
            root_certificate_dir: PathBuf::from(http_fetch::trust::DEFAULT_ROOT_CERTIFICATE_DIR),
            forward_parameters: Vec::new(),
            max_feeds: 1024,
            max_answers: 4096,
            wait_for_change: true,
        }
    }
}

impl SkeletonSettings for Settings {
    fn logging(&self) -> &Logging {
        &self.logging
    }

    fn status_address(&self) -> SocketAddr {
        self.status.socket_address()
    }

    fn api_addresses(&self) -> Vec<SocketAddr> {
        vec![self.service.api.socket_address()]
    }
}

pub const GRAPH_FETCH: &str = "cincinnati-graph-fetch";

/// Every `name` a `[[policy]]` table may have: the filter catalogue's, and
/// `cincinnati-graph-fetch`.
pub fn known_policies() -> std::collections::BTreeSet<&'static str> {
    filters::catalog().names().chain([GRAPH_FETCH]).collect()
}

/// One `[[policy]]` table: upstream's way to set the upstream
/// (`cincinnati-graph-fetch`, typed where it is read, its URL a secret-aware
/// URL), or a filter, handed to the filter catalogue as given.
#[derive(Debug, Clone)]
pub enum PolicyTable {
    GraphFetch(GraphFetchSettings),
    Filter(toml::Table),
}

/// `[[policy]] name = "cincinnati-graph-fetch"`: it configures the fetcher,
/// not a filter; its values win over `[upstream.cincinnati]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphFetchSettings {
    pub upstream: Option<RedactedUrl>,
    pub timeout: Option<u64>,
}

impl<'de> Deserialize<'de> for PolicyTable {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut table = toml::Table::deserialize(deserializer)?;
        if table.get("name").and_then(toml::Value::as_str) != Some(GRAPH_FETCH) {
            return Ok(Self::Filter(table));
        }
        table.remove("name");
        toml::Value::Table(table)
            .try_into()
            .map(Self::GraphFetch)
            .map_err(|error| serde::de::Error::custom(format_args!("[[policy]] {GRAPH_FETCH}: {error}")))
    }
}

impl Serialize for PolicyTable {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Filter(table) => table.serialize(serializer),
            Self::GraphFetch(settings) => Named(GRAPH_FETCH, settings).serialize(serializer),
        }
    }
}

/// Settings that do not fit together.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("[[policy]]: {0}")]
    Policy(#[from] cincinnati_core::stage::ConfigError),
    #[error(transparent)]
    Upstream(#[from] InvalidUpstream),
    #[error("cluster_policy.file: {0}")]
    ClusterPolicy(#[from] SourceError),
    #[error(
        "cluster_policy.file is set, but no [[policy]] table names {}",
        filters::cluster_policy::NAME
    )]
    ClusterPolicyNotApplied,
    #[error("[[policy]]: {0}")]
    DefaultArch(String),
    #[error("cluster_policy.lookup_url needs cluster_policy.file, where the groups are defined")]
    LookupWithoutFile,
    #[error("cluster_policy.lookup_url {url}: {reason}")]
    InvalidLookup { url: String, reason: String },
    #[error("fleet.store {0}: neither sqlite: nor postgres://")]
    FleetStoreKind(String),
    #[error("fleet.{setting} {path}: {reason}")]
    FleetFile {
        setting: &'static str,
        path: String,
        reason: String,
    },
    #[error("fleet.hash_ids needs fleet.hash_key_file, the key every engine sharing the store hashes with")]
    FleetHashWithoutKey,
    #[error(
        "rollouts.prometheus_url needs rollouts.token_file (rollout control, which pauses what a query halts)"
    )]
    PrometheusWithoutControl,
    #[error("rollouts.prometheus_url {url}: {reason}")]
    InvalidPrometheus { url: String, reason: String },
    #[error(
        "rollouts.token_file needs fleet.store (where the rollouts' run-time state is kept) and cluster_policy.file (where they are declared)"
    )]
    ControlWithoutStore,
    #[error("rollouts.token_file: {0}")]
    Tokens(String),
}

/// What the settings resolve to once `[[policy]]` is read: everything the
/// engine needs, built without contacting anything.
#[derive(Debug)]
pub struct Resolved {
    pub pipeline: Pipeline<PolicyRequest>,
    pub upstream_url: RedactedUrl,
    pub upstream_timeout: Duration,
    pub client: UpstreamClient,
    pub rules: QueryRules,
    pub limits: Limits,
    /// The policy file, read; none without one.
    pub cluster_policy: Option<Arc<PolicySource>>,
    /// The fleet store and its keys; none without one.
    pub fleet: Option<FleetPlan>,
    /// The operator tokens of rollout control, how often it reads the
    /// store, and the Prometheus its queries are asked of; none without
    /// control.
    pub control: Option<ControlPlan>,
}

impl Settings {
    /// Checks the settings, builds the filter pipeline and the upstream client.
    pub fn resolve(&self) -> Result<Resolved, SettingsError> {
        let upstream = &self.upstream.cincinnati;
        let mut upstream_url = upstream.url.clone();
        let mut upstream_timeout = Duration::from_secs(upstream.timeout_secs);
        let mut filter_tables = Vec::new();
        for table in &self.policy {
            match table {
                PolicyTable::GraphFetch(fetch) => {
                    upstream_url = fetch.upstream.clone().unwrap_or(upstream_url);
                    upstream_timeout = fetch.timeout.map_or(upstream_timeout, Duration::from_secs);
                }
                PolicyTable::Filter(table) => filter_tables.push(table.clone()),
            }
        }
        let policy_settings = &self.cluster_policy;
        if filter_tables.is_empty() {
            filter_tables = filters::default_tables(policy_settings.file.is_some());
        }
        let pipeline = filters::catalog().pipeline(&filter_tables)?;
        let cluster_policy = match &policy_settings.file {
            Some(_)
                if !pipeline
                    .stage_names()
                    .any(|name| name == filters::cluster_policy::NAME) =>
            {
                return Err(SettingsError::ClusterPolicyNotApplied);
            }
            Some(path) => Some(Arc::new(PolicySource::open(
                path,
                SignedDuration::from_secs(
                    i64::try_from(policy_settings.deferral_bucket_secs.max(1)).unwrap_or(i64::MAX),
                ),
                self.group_lookup()?,
            )?)),
            None if policy_settings.lookup_url.is_some() => return Err(SettingsError::LookupWithoutFile),
            None => None,
        };
        let client = UpstreamClient::new(
            &upstream_url,
            upstream_timeout,
            upstream.max_body_bytes,
            &upstream.root_certificate_dir,
        )?;
        Ok(Resolved {
            rules: self.query_rules(&pipeline, &filter_tables)?,
            limits: self.limits(),
            pipeline,
            upstream_url,
            upstream_timeout,
            client,
            cluster_policy,
            fleet: self.fleet.plan()?,
            control: self.control_plan()?,
        })
    }

    /// The lookup service's client, if one is configured.
    fn group_lookup(&self) -> Result<Option<GroupLookup>, SettingsError> {
        let settings = &self.cluster_policy;
        let Some(url) = &settings.lookup_url else {
            return Ok(None);
        };
        let invalid = |reason: String| SettingsError::InvalidLookup {
            url: url.to_string(),
            reason,
        };
        if !matches!(url.expose().scheme(), "http" | "https") {
            return Err(invalid("not an http(s) URL".to_owned()));
        }
        GroupLookup::new(LookupSettings {
            url: url.clone(),
            timeout: Duration::from_millis(settings.lookup_timeout_ms.max(1)),
            ttl: Duration::from_secs(settings.lookup_cache_ttl_secs),
            cache_size: settings.lookup_cache_size,
            roots: http_fetch::ExtraRoots::from_dir(&self.upstream.cincinnati.root_certificate_dir),
        })
        .map(Some)
        .map_err(|error| invalid(error.to_string()))
    }

    /// The configured mandatory parameters, plus `channel` when the channel
    /// filter runs, so every missing parameter is named in one answer.
    fn query_rules(
        &self,
        pipeline: &Pipeline<PolicyRequest>,
        filter_tables: &[toml::Table],
    ) -> Result<QueryRules, SettingsError> {
        let mut required = self.service.requests.required();
        if pipeline.stage_names().any(|name| name == filters::channel::NAME) {
            required = required.and("channel");
        }
        Ok(QueryRules {
            default_arch: filters::arch::default_arch(filter_tables).map_err(SettingsError::DefaultArch)?,
            keyed_by_version: pipeline
                .stage_names()
                .any(|name| name == filters::version_prune::NAME),
            required,
            forwarded: self
                .upstream
                .cincinnati
                .forward_parameters
                .iter()
                .cloned()
                .collect(),
        })
    }

    fn limits(&self) -> Limits {
        let upstream = &self.upstream.cincinnati;
        let interval = Duration::from_secs(upstream.interval_secs.max(1));
        Limits {
            feeds: FeedLimits {
                interval,
                max_answers: upstream.max_answers,
                max_feeds: upstream.max_feeds,
                idle_feed_after: (interval * 10).max(Duration::from_secs(600)),
                follow: upstream.wait_for_change,
            },
            identity_cache_bytes: self.service.identity_cache_bytes,
            cache_max_age: Duration::from_secs(self.service.requests.cache_max_age_secs),
            policy_reload_interval: Duration::from_secs(self.cluster_policy.reload_secs.max(1)),
        }
    }
}

impl Settings {
    /// Rollout control's tokens, read, and its interval; none without a
    /// token file.
    fn control_plan(&self) -> Result<Option<ControlPlan>, SettingsError> {
        let Some(path) = &self.rollouts.token_file else {
            if self.rollouts.prometheus_url.is_some() {
                return Err(SettingsError::PrometheusWithoutControl);
            }
            return Ok(None);
        };
        if self.fleet.store.is_none() || self.cluster_policy.file.is_none() {
            return Err(SettingsError::ControlWithoutStore);
        }
        let tokens = Tokens::open(path).map_err(SettingsError::Tokens)?;
        let intervals = Intervals {
            refresh: Duration::from_millis(self.rollouts.refresh_ms.max(100)),
            halt_check: Duration::from_secs(self.rollouts.halt_check_secs.max(1)),
        };
        let prometheus = match &self.rollouts.prometheus_url {
            Some(url) if !matches!(url.expose().scheme(), "http" | "https") => {
                return Err(SettingsError::InvalidPrometheus {
                    url: url.to_string(),
                    reason: "not an http(s) URL".to_owned(),
                });
            }
            Some(url) => Some(
                Prometheus::new(
                    url.clone(),
                    http_fetch::ExtraRoots::from_dir(&self.upstream.cincinnati.root_certificate_dir),
                    Duration::from_secs(self.rollouts.prometheus_check_secs.max(1)),
                )
                .map_err(|error| SettingsError::InvalidPrometheus {
                    url: url.to_string(),
                    reason: error.to_string(),
                })?,
            ),
            None => None,
        };
        Ok(Some(ControlPlan {
            tokens,
            intervals,
            prometheus,
        }))
    }
}

impl FleetSettings {
    /// The fleet plan, its files read; none without a store.
    fn plan(&self) -> Result<Option<FleetPlan>, SettingsError> {
        let Some(store) = &self.store else {
            return Ok(None);
        };
        if StoreKind::of(store.expose().as_str()).is_none() {
            return Err(SettingsError::FleetStoreKind(store.to_string()));
        }
        let read = |setting: &'static str, path: &PathBuf| {
            std::fs::read(path).map_err(|error| SettingsError::FleetFile {
                setting,
                path: path.display().to_string(),
                reason: error.to_string(),
            })
        };
        let keys = match (self.hash_ids, &self.hash_key_file) {
            (false, _) => ClusterKeys::Ids,
            (true, None) => return Err(SettingsError::FleetHashWithoutKey),
            (true, Some(path)) => ClusterKeys::hashed(&read("hash_key_file", path)?).map_err(|reason| {
                SettingsError::FleetFile {
                    setting: "hash_key_file",
                    path: path.display().to_string(),
                    reason,
                }
            })?,
        };
        let hours = |hours: u64| Duration::from_secs(hours.max(1) * 3600);
        Ok(Some(FleetPlan {
            store: store.clone(),
            // Read when the store is opened: a Secret that is rotated is
            // taken at the next opening, and a missing one is an outage of
            // the store, not of the engine.
            password_file: self.store_password_file.clone(),
            keys,
            queue_capacity: self.queue_capacity.max(1),
            batch_size: self.batch_size.max(1),
            flush_interval: Duration::from_millis(self.flush_interval_ms.max(10)),
            seen_step: Duration::from_secs(self.seen_step_secs),
            count_interval: Duration::from_secs(self.count_interval_secs),
            retention: (self.retention_days > 0).then(|| Duration::from_secs(self.retention_days * 86_400)),
            windows: Windows {
                active: hours(self.active_hours),
                silent: hours(self.silent_hours),
                stuck: Duration::from_secs(self.stuck_days.max(1) * 86_400),
            },
            evidence: Evidence {
                established_after: SignedDuration::from_hours(
                    i64::try_from(self.established_after_hours).unwrap_or(i64::MAX / 3600),
                ),
                settled_after: SignedDuration::from_mins(
                    i64::try_from(self.settled_after_minutes).unwrap_or(i64::MAX / 60),
                ),
            },
            bounds: Bounds {
                max_clusters: self.max_clusters,
                new_per_hour: self.new_clusters_per_hour,
            },
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(toml_text: &str) -> Settings {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn no_policy_means_channel_then_arch() {
        let resolved = Settings::default().resolve().unwrap();
        assert_eq!(
            resolved.pipeline.stage_names().collect::<Vec<_>>(),
            ["channel-filter", "arch-filter"]
        );
        assert_eq!(resolved.upstream_url.to_string(), "http://localhost:8080/graph");
    }

    #[test]
    fn graph_fetch_configures_the_upstream_not_a_filter() {
        let resolved = settings(
            "[[policy]]\nname = \"cincinnati-graph-fetch\"\nupstream = \"http://gb:8080/g\"\ntimeout = 7\n\
             [[policy]]\nname = \"arch-filter\"\ndefault_arch = \"arm64\"\n",
        )
        .resolve()
        .unwrap();
        assert_eq!(
            resolved.pipeline.stage_names().collect::<Vec<_>>(),
            ["arch-filter"]
        );
        assert_eq!(resolved.upstream_url.to_string(), "http://gb:8080/g");
        assert_eq!(resolved.upstream_timeout, Duration::from_secs(7));
        assert_eq!(
            resolved.rules.default_arch.as_str(),
            "arm64",
            "the arch filter's default, for every filter"
        );
    }

    #[test]
    fn policy_errors_name_the_filter_and_key() {
        let error = settings("[[policy]]\nname = \"channel-filter\"\nkey_prefx = \"x\"\n")
            .resolve()
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("channel-filter") && error.contains("key_prefx"),
            "{error}"
        );
        let error = settings("[[policy]]\nname = \"arch-filter\"\ndefault_arch = \"x86-64\"\n")
            .resolve()
            .unwrap_err()
            .to_string();
        assert!(error.contains("default_arch"), "{error}");
        let error =
            toml::from_str::<Settings>("[[policy]]\nname = \"cincinnati-graph-fetch\"\nupstrem = \"x\"\n")
                .unwrap_err()
                .to_string();
        assert!(
            error.contains("cincinnati-graph-fetch") && error.contains("upstrem"),
            "{error}"
        );
    }

    #[test]
    fn a_fleet_store_is_sqlite_or_postgres_with_its_secrets_from_files() {
        assert!(
            Settings::default().resolve().unwrap().fleet.is_none(),
            "off by default"
        );
        let error = settings("[fleet]\nstore = \"mysql://fleet@db/fleet\"\n")
            .resolve()
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "fleet.store mysql://fleet@db/fleet: neither sqlite: nor postgres://"
        );
        let error = settings("[fleet]\nstore = \"sqlite:///f.db\"\nhash_ids = true\n")
            .resolve()
            .unwrap_err();
        assert!(matches!(error, SettingsError::FleetHashWithoutKey), "{error}");

        let dir = tempfile::tempdir().unwrap();
        let (password, key) = (dir.path().join("password"), dir.path().join("key"));
        std::fs::write(&password, "hunter2\n").unwrap();
        std::fs::write(&key, "0123456789abcdef\n").unwrap();
        let fleet = settings(&format!(
            "[fleet]\nstore = \"postgres://fleet@db/fleet\"\nstore_password_file = {password:?}\n\
             hash_ids = true\nhash_key_file = {key:?}\nretention_days = 0\n"
        ))
        .resolve()
        .unwrap()
        .fleet
        .unwrap();
        assert_eq!(fleet.password_file.as_deref(), Some(password.as_path()));
        assert!(matches!(fleet.keys, ClusterKeys::Hashed(_)));
        assert_eq!(fleet.retention, None, "0 days: kept for ever");

        let missing = settings(&format!(
            "[fleet]\nstore = \"sqlite:///f.db\"\nhash_ids = true\nhash_key_file = {:?}\n",
            dir.path().join("nope")
        ))
        .resolve()
        .unwrap_err()
        .to_string();
        assert!(missing.starts_with("fleet.hash_key_file "), "{missing}");
    }

    #[test]
    fn service_and_status_must_not_share_a_port() {
        let error = service_kit::settings::distinct_addresses(&settings(
            "[service]\nport = 9000\n[status]\nport = 9000\n",
        ))
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "two servers would listen on 127.0.0.1:9000: give each its own port"
        );
    }
}
