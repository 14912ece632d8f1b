//! Rollouts halted by a Prometheus query (`halt_when: {promql, above}` in
//! the policy file, with `rollouts.prometheus_url`).
//!
//! Every `rollouts.prometheus_check_secs` each rollout on its schedule with
//! a query is asked of Prometheus's instant query API (`GET
//! {url}/api/v1/query?query=`). Its value is the sample of a scalar, or the
//! largest sample of a vector; an empty vector is no value (nothing to
//! judge: the rollout goes on). A value above `above` halts the rollout (as
//! `prometheus`), with the query and the value as the reason: audited,
//! shared, explained and resumed like any pause. A query that fails (an
//! unreachable Prometheus, a query it refuses) is logged and shown in
//! `/status`, and pauses nothing: a broken analysis does not stop updates.

use std::time::{Duration, SystemTime};

use http_fetch::ExtraRoots;
use http_fetch::{ClientSettings, FetchError, HttpClient, Request};
use parking_lot::Mutex;
use serde::Deserialize;
use serde::de::IgnoredAny;
use service_kit::freshness::Freshness;
use service_kit::secret::RedactedUrl;

use rollout_model::change::Request as Change;
use rollout_model::control::{Actor, HALT_PROMETHEUS};
use rollout_model::{Rollout, RunState};

use super::Control;
/// How long one query may take.
const QUERY_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest answer read.
const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// The Prometheus the queries are asked of.
pub struct Prometheus {
    url: RedactedUrl,
    http: HttpClient,
    interval: Duration,
    freshness: Mutex<Freshness>,
}

impl std::fmt::Debug for Prometheus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prometheus")
            .field("url", &self.url.to_string())
            .finish_non_exhaustive()
    }
}

/// Why a query has no value.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error("Prometheus answered {status}: {body}")]
    Status { status: u16, body: String },
    #[error("not an instant query answer of Prometheus: {0}")]
    Answer(String),
}

/// `GET /api/v1/query`'s answer, as far as it is read.
#[derive(Deserialize)]
struct Answer {
    status: String,
    #[serde(default)]
    data: Option<Data>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
#[serde(tag = "resultType", content = "result", rename_all = "lowercase")]
enum Data {
    Scalar(Sample),
    Vector(Vec<Series>),
    Matrix(IgnoredAny),
    String(IgnoredAny),
}

#[derive(Deserialize)]
struct Series {
    value: Sample,
}

/// `[unix time, "value"]`.
#[derive(Deserialize)]
struct Sample(IgnoredAny, String);

impl Prometheus {
    pub fn new(
        url: RedactedUrl,
        roots: ExtraRoots,
        interval: Duration,
    ) -> Result<Self, http_fetch::ClientError> {
        let http = HttpClient::new(ClientSettings {
            user_agent: concat!("cincinnati-rs-policy-engine/", env!("CARGO_PKG_VERSION")).to_owned(),
            timeout: QUERY_TIMEOUT,
            roots,
            gzip: true,
        })?;
        Ok(Self {
            url,
            http,
            interval,
            freshness: Mutex::new(Freshness::default()),
        })
    }

    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// When a query last succeeded, and the failure since.
    pub fn freshness(&self) -> Freshness {
        self.freshness.lock().clone()
    }

    /// The value of `promql` now; `None` for an empty vector.
    pub async fn value(&self, promql: &str) -> Result<Option<f64>, QueryError> {
        let mut url = self.url.expose();
        {
            let mut path = url.path().trim_end_matches('/').to_owned();
            path.push_str("/api/v1/query");
            url.set_path(&path);
        }
        url.query_pairs_mut().clear().append_pair("query", promql);
        let response = self
            .http
            .send(Request::get("prometheus query", &url, MAX_ANSWER_BYTES).accept("application/json"))
            .await?;
        let answer: Answer = serde_json::from_slice(&response.body).map_err(|error| {
            if response.status.is_success() {
                QueryError::Answer(error.to_string())
            } else {
                QueryError::Status {
                    status: response.status.as_u16(),
                    body: String::from_utf8_lossy(&response.body)
                        .chars()
                        .take(200)
                        .collect(),
                }
            }
        })?;
        if answer.status != "success" {
            return Err(QueryError::Status {
                status: response.status.as_u16(),
                body: answer.error.unwrap_or(answer.status),
            });
        }
        let number = |sample: &Sample| {
            sample
                .1
                .parse::<f64>()
                .map_err(|_| QueryError::Answer(format!("the sample {:?} is not a number", sample.1)))
        };
        match answer.data {
            Some(Data::Scalar(sample)) => number(&sample).map(Some),
            Some(Data::Vector(series)) => series.iter().map(|series| number(&series.value)).try_fold(
                None,
                |largest: Option<f64>, value| {
                    let value = value?;
                    Ok(Some(largest.map_or(value, |largest| largest.max(value))))
                },
            ),
            Some(Data::Matrix(_) | Data::String(_)) => Err(QueryError::Answer(
                "a range vector or a string: halt_when's query must give a scalar or an instant vector"
                    .to_owned(),
            )),
            None => Err(QueryError::Answer("no data".to_owned())),
        }
    }
}

impl Control {
    /// Halts every rollout on its schedule whose `halt_when` query is
    /// above its figure (see the module documentation).
    pub async fn check_queries(&self) {
        let Some(prometheus) = &self.prometheus else {
            return;
        };
        for rollout in self
            .policy
            .rollouts()
            .iter()
            .filter(|rollout| is_running(rollout))
        {
            let Some(halt) = &rollout.declaration().halts.query else {
                continue;
            };
            let target = rollout.declaration().target.to_string();
            let value = match prometheus.value(&halt.promql).await {
                Ok(value) => {
                    prometheus.freshness.lock().succeeded(SystemTime::now());
                    value
                }
                Err(error) => {
                    let message = format!("{:#}", anyhow::Error::new(error));
                    tracing::warn!(target, query = %halt.promql, error = %message, "a rollout's halt query cannot be evaluated");
                    prometheus.freshness.lock().failed(SystemTime::now(), message);
                    continue;
                }
            };
            let Some(value) = value.filter(|value| *value > halt.above) else {
                continue;
            };
            let reason = format!(
                "halted: {} = {value} (halt_when: above {})",
                halt.promql, halt.above
            );
            let by = Actor::automation(HALT_PROMETHEUS);
            if let Err(error) = self.change(&target, Change::Halt, (&by, &reason)).await {
                tracing::warn!(target, error = %error.value, "a halted rollout could not be paused");
            }
        }
    }
}

/// Whether `rollout`'s state is known and it runs on its schedule: only
/// then is a halt criterion judged.
pub(super) fn is_running(rollout: &Rollout) -> bool {
    matches!(rollout.state(), RunState::Read(_)) && rollout.control().is_on_schedule()
}
