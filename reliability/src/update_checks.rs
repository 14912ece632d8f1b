//! Update checks on an engine's public port, as a cluster (or anyone
//! pretending to be one) sends them: any id, channel, architecture and
//! version; and what an answer offers.

use std::time::Duration;

use anyhow::Context as _;
use e2e::process::ServiceProcess;
use serde_json::Value;

/// Requests in flight at once when many checks are sent.
const CONCURRENCY: usize = 64;

/// One update check: the parameters the cluster-version operator sends.
#[derive(Debug, Clone)]
pub struct Check {
    pub id: String,
    pub channel: String,
    pub arch: String,
    pub version: String,
}

impl Check {
    /// A check of `id` on `version` of the amd64 `channel`.
    pub fn of(id: &str, channel: &str, version: &str) -> Self {
        Self {
            id: id.to_owned(),
            channel: channel.to_owned(),
            arch: "amd64".to_owned(),
            version: version.to_owned(),
        }
    }
}

/// How many of a batch of checks were answered, by status.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sent {
    pub ok: usize,
    pub other_status: usize,
    pub failed: usize,
    pub seconds: f64,
}

impl Sent {
    pub fn total(&self) -> usize {
        self.ok + self.other_status + self.failed
    }
}

impl std::fmt::Display for Sent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} sent in {:.1} s: {} answered 200, {} another status, {} failed",
            self.total(),
            self.seconds,
            self.ok,
            self.other_status,
            self.failed
        )
    }
}

/// The public port of one engine.
#[derive(Clone)]
pub struct PublicPort {
    http: reqwest::Client,
    graph_url: String,
}

impl PublicPort {
    pub fn of(engine: &ServiceProcess) -> anyhow::Result<Self> {
        Ok(Self {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()?,
            graph_url: e2e::policy_engine::graph_url(engine),
        })
    }

    fn request(&self, check: &Check, question: bool) -> reqwest::RequestBuilder {
        let request = self
            .http
            .get(&self.graph_url)
            .query(&[
                ("channel", check.channel.as_str()),
                ("arch", check.arch.as_str()),
                ("version", check.version.as_str()),
                ("id", check.id.as_str()),
            ])
            .header("Accept", "application/json");
        if question {
            // An operator's question: answered as the cluster's own check,
            // not recorded.
            request.header("cincinnati-question", "1")
        } else {
            request
        }
    }

    /// The answer to `check` (as the cluster's own check, recorded, or as
    /// an operator's `question`, not): its status and its graph.
    pub async fn ask(&self, check: &Check, question: bool) -> anyhow::Result<(u16, Value)> {
        let answer = self.request(check, question).send().await?;
        let status = answer.status().as_u16();
        let body = answer.bytes().await?;
        let graph = if status == 200 {
            serde_json::from_slice(&body).context("an answer that is not JSON")?
        } else {
            Value::Null
        };
        Ok((status, graph))
    }

    /// Sends every check, [`CONCURRENCY`] at a time, reading no answer.
    pub async fn send_all(&self, checks: &[Check]) -> Sent {
        let started = std::time::Instant::now();
        let mut sent = Sent::default();
        let mut pending = tokio::task::JoinSet::new();
        let tally = |sent: &mut Sent, done: Result<Option<u16>, tokio::task::JoinError>| match done {
            Ok(Some(200)) => sent.ok += 1,
            Ok(Some(_)) => sent.other_status += 1,
            _ => sent.failed += 1,
        };
        for check in checks {
            if pending.len() >= CONCURRENCY
                && let Some(done) = pending.join_next().await
            {
                tally(&mut sent, done);
            }
            let request = self.request(check, false);
            pending.spawn(async move {
                let answer = request.send().await.ok()?;
                let status = answer.status().as_u16();
                answer.bytes().await.ok()?;
                Some(status)
            });
        }
        while let Some(done) = pending.join_next().await {
            tally(&mut sent, done);
        }
        sent.seconds = started.elapsed().as_secs_f64();
        sent
    }

    /// Of `ids`, each on `version` of `channel`, those whose answer offers
    /// `target`, asked as operators' questions (not recorded) unless
    /// `own`: as the clusters' own checks.
    pub async fn offered(
        &self,
        ids: &[String],
        (channel, version): (&str, &str),
        target: &str,
        own: bool,
    ) -> anyhow::Result<Vec<String>> {
        let mut each = self.offered_each(ids, (channel, version), &[target], own).await?;
        Ok(each.remove(0))
    }

    /// [`PublicPort::offered`] for each of `targets` at once (one answer a
    /// cluster): the ids offered each, in the order of `targets`.
    pub async fn offered_each(
        &self,
        ids: &[String],
        (channel, version): (&str, &str),
        targets: &[&str],
        own: bool,
    ) -> anyhow::Result<Vec<Vec<String>>> {
        let mut pending = tokio::task::JoinSet::new();
        let mut offered = vec![Vec::new(); targets.len()];
        let mut tally = |done: Result<anyhow::Result<(String, Vec<bool>)>, tokio::task::JoinError>| {
            let (id, each) = done??;
            for (offered, is) in offered.iter_mut().zip(each) {
                if is {
                    offered.push(id.clone());
                }
            }
            anyhow::Ok(())
        };
        for id in ids {
            if pending.len() >= CONCURRENCY / 4
                && let Some(done) = pending.join_next().await
            {
                tally(done)?;
            }
            let (port, check) = (self.clone(), Check::of(id, channel, version));
            let targets: Vec<String> = targets.iter().map(|target| (*target).to_owned()).collect();
            pending.spawn(async move {
                let (status, graph) = port.ask(&check, !own).await?;
                anyhow::ensure!(status == 200, "{} answered {status}", check.id);
                let each = targets
                    .iter()
                    .map(|target| offers(&graph, &check.version, target))
                    .collect();
                Ok((check.id, each))
            });
        }
        while let Some(done) = pending.join_next().await {
            tally(done)?;
        }
        Ok(offered)
    }
}

/// Whether `graph` (a Cincinnati answer) offers an update from `from` to
/// `to`, recommended or conditional.
pub fn offers(graph: &Value, from: &str, to: &str) -> bool {
    let versions: Vec<&str> = graph["nodes"]
        .as_array()
        .map(|nodes| {
            nodes
                .iter()
                .map(|node| release(node["version"].as_str().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    let at = |index: &Value| {
        index
            .as_u64()
            .and_then(|index| versions.get(index as usize).copied())
    };
    let recommended = graph["edges"].as_array().is_some_and(|edges| {
        edges
            .iter()
            .any(|edge| at(&edge[0]) == Some(from) && at(&edge[1]) == Some(to))
    });
    let conditional = graph["conditionalEdges"].as_array().is_some_and(|groups| {
        groups.iter().any(|group| {
            group["edges"].as_array().is_some_and(|edges| {
                edges.iter().any(|edge| {
                    edge["from"].as_str().map(release) == Some(from)
                        && edge["to"].as_str().map(release) == Some(to)
                })
            })
        })
    });
    recommended || conditional
}

/// `4.18.40` of `4.18.40+amd64`.
fn release(version: &str) -> &str {
    version.split('+').next().unwrap_or(version)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_update_is_offered_by_an_edge_or_a_conditional_edge() {
        let graph = json!({
            "nodes": [{"version": "4.18.40"}, {"version": "4.18.41+amd64"}, {"version": "4.18.42"}],
            "edges": [[0, 1]],
            "conditionalEdges": [{"edges": [{"from": "4.18.40", "to": "4.18.42"}], "risks": []}],
        });
        assert!(offers(&graph, "4.18.40", "4.18.41"));
        assert!(offers(&graph, "4.18.40", "4.18.42"));
        assert!(!offers(&graph, "4.18.41", "4.18.42"));
        assert!(!offers(&Value::Null, "4.18.40", "4.18.41"));
    }
}
