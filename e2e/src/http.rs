//! The few kinds of HTTP request the harness makes.

use anyhow::{Context as _, bail};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::Value;

/// A response as a test looks at it.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as JSON, if the status is a success.
    pub fn json(&self) -> anyhow::Result<Value> {
        if !(200..300).contains(&self.status) {
            bail!(
                "answered {}: {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            );
        }
        serde_json::from_slice(&self.body).context("the body is not JSON")
    }
}

pub async fn get(client: &reqwest::Client, url: &str, accept: Option<&str>) -> anyhow::Result<Answer> {
    let mut request = client.get(url);
    if let Some(accept) = accept {
        request = request.header(ACCEPT, accept);
    }
    let response = request.send().await.with_context(|| format!("GET {url}"))?;
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let body = response
        .bytes()
        .await
        .with_context(|| format!("reading GET {url}"))?;
    Ok(Answer {
        status,
        content_type,
        body: body.to_vec(),
    })
}

pub async fn get_json(client: &reqwest::Client, url: &str) -> anyhow::Result<Value> {
    get(client, url, None)
        .await?
        .json()
        .with_context(|| format!("GET {url}"))
}
