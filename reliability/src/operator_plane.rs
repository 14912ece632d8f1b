//! An engine's operator plane on its status port, as an operator (or
//! Alertmanager, or a dashboard) reaches it with a bearer token: the
//! rollouts under run-time control, their changes, the fleet answers; and
//! its supervised tasks' rounds, from `/status`.

use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context as _, bail};
use e2e::graph_builder::PATH_PREFIX;
use e2e::process::ServiceProcess;
use serde_json::Value;

/// How long a scenario waits for something the engine does every round.
pub const ROUNDS_TIMEOUT: Duration = Duration::from_secs(60);

/// The status port of one engine, with one token.
#[derive(Clone)]
pub struct OperatorPlane {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl OperatorPlane {
    pub fn of(engine: &ServiceProcess, token: &str) -> anyhow::Result<Self> {
        Ok(Self {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(120))
                .build()?,
            base: engine.status_url(PATH_PREFIX),
            token: token.to_owned(),
        })
    }

    /// `GET {prefix}/v1/rollouts`.
    pub async fn rollouts(&self) -> anyhow::Result<Value> {
        self.get("/v1/rollouts").await.map(|(document, _)| document)
    }

    /// The rollout of `target` in `GET {prefix}/v1/rollouts`.
    pub async fn rollout(&self, target: &str) -> anyhow::Result<Value> {
        let document = self.rollouts().await?;
        document["rollouts"]
            .as_array()
            .and_then(|rollouts| rollouts.iter().find(|rollout| rollout["target"] == target))
            .cloned()
            .with_context(|| format!("no rollout of {target} in {document}"))
    }

    /// Polls the rollout of `target` until `done` says it is there.
    pub async fn await_rollout(
        &self,
        target: &str,
        what: &str,
        done: impl Fn(&Value) -> bool,
    ) -> anyhow::Result<(Value, Duration)> {
        let started = Instant::now();
        loop {
            let rollout = self.rollout(target).await.ok();
            if let Some(rollout) = rollout.as_ref().filter(|rollout| done(rollout)) {
                return Ok((rollout.clone(), started.elapsed()));
            }
            if started.elapsed() > ROUNDS_TIMEOUT {
                bail!("{target}: timed out waiting for {what}; last seen {rollout:?}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// `GET {prefix}{route}` with the token: its JSON and how long it took.
    pub async fn get(&self, route: &str) -> anyhow::Result<(Value, Duration)> {
        let started = Instant::now();
        let answer = self
            .http
            .get(format!("{}{route}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await?;
        let status = answer.status();
        let body = answer.text().await?;
        let took = started.elapsed();
        if !status.is_success() {
            bail!("{route} answered {status}: {body}");
        }
        Ok((serde_json::from_str(&body)?, took))
    }

    /// `{method} {prefix}/v1/rollouts/{target}/{action}?reason=`: the status,
    /// the answer and how long it took.
    pub async fn change(
        &self,
        method: reqwest::Method,
        target: &str,
        action: &str,
        reason: &str,
    ) -> anyhow::Result<(u16, String, Duration)> {
        let started = Instant::now();
        let answer = self
            .http
            .request(method, format!("{}/v1/rollouts/{target}/{action}", self.base))
            .bearer_auth(&self.token)
            .query(&[("reason", reason)])
            .send()
            .await?;
        let status = answer.status().as_u16();
        Ok((status, answer.text().await?, started.elapsed()))
    }
}

/// When the supervised task `task` (`rollout halts`: halts and gates) of
/// `engine` last completed a round, as `/status` says.
pub async fn last_round(engine: &ServiceProcess, task: &str) -> anyhow::Result<Option<SystemTime>> {
    let status = engine.status().await?;
    let round = status["tasks"].as_array().and_then(|tasks| {
        tasks
            .iter()
            .find(|status| status["name"] == task)
            .and_then(|status| status["last_round"].as_str())
            .map(str::to_owned)
    });
    Ok(round
        .and_then(|round| round.parse::<jiff::Timestamp>().ok())
        .map(SystemTime::from))
}

/// Waits until `engine`'s task `task` has completed `rounds` rounds after
/// `since`, one after the other (every one but the first began after it);
/// returns when the last one completed.
pub async fn await_rounds(
    engine: &ServiceProcess,
    task: &str,
    since: SystemTime,
    rounds: usize,
) -> anyhow::Result<SystemTime> {
    let mut after = since;
    let started = Instant::now();
    for _ in 0..rounds {
        loop {
            if let Some(round) = last_round(engine, task).await?
                && round > after
            {
                after = round;
                break;
            }
            if started.elapsed() > ROUNDS_TIMEOUT {
                bail!("{}: no round of {task} after {after:?}", engine.name());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    Ok(after)
}
