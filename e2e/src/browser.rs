//! A headless Chromium driven over WebDriver: Debian's `chromium` and its
//! `chromedriver` (scripts/install-test-deps.sh installs both), for the
//! explorer page's tests. The driver process is killed when the browser is
//! dropped, also when a test panics.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};

use anyhow::{Context as _, bail};
use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

use crate::poll;

/// The window the page is drawn in (and screenshots taken at).
const WINDOW_SIZE: &str = "--window-size=1400,900";

pub struct Browser {
    client: Client,
    http: reqwest::Client,
    driver_url: String,
    /// Last: the session is gone before its driver.
    _driver: Driver,
}

/// `chromedriver`, killed on drop.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

impl Browser {
    /// Starts `chromedriver` on a free loopback port and a headless
    /// session in it that keeps the page's console messages.
    pub async fn start() -> anyhow::Result<Self> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let driver = Driver(
            Command::new("chromedriver")
                .arg(format!("--port={port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .context("starting chromedriver (scripts/install-test-deps.sh installs it)")?,
        );
        let driver_url = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        poll::until("chromedriver to answer", poll::STARTUP_TIMEOUT, async || {
            http.get(format!("{driver_url}/status"))
                .send()
                .await?
                .error_for_status()?;
            Ok(())
        })
        .await?;
        let capabilities = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                // Root in a container: no sandbox. Nothing of the browser's
                // own (updates, sync, safe browsing) goes out either.
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--disable-background-networking", "--disable-component-update",
                         "--disable-sync", "--no-first-run", WINDOW_SIZE],
            },
            "goog:loggingPrefs": {"browser": "ALL"},
        });
        let Value::Object(capabilities) = capabilities else {
            unreachable!("capabilities are an object")
        };
        let client = ClientBuilder::native()
            .capabilities(capabilities)
            .connect(&driver_url)
            .await
            .context("opening a Chromium session")?;
        Ok(Self {
            client,
            http,
            driver_url,
            _driver: driver,
        })
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub async fn open(&self, url: &str) -> anyhow::Result<()> {
        self.client
            .goto(url)
            .await
            .with_context(|| format!("opening {url}"))
    }

    /// The first element `css` selects, once there is one.
    pub async fn wait_for(&self, css: &str) -> anyhow::Result<Element> {
        self.client
            .wait()
            .at_most(poll::CHANGE_TIMEOUT)
            .for_element(Locator::Css(css))
            .await
            .with_context(|| format!("waiting for {css}"))
    }

    /// Every element `css` selects now.
    pub async fn all(&self, css: &str) -> anyhow::Result<Vec<Element>> {
        Ok(self.client.find_all(Locator::Css(css)).await?)
    }

    /// `attribute` of every element `css` selects now.
    pub async fn attributes(&self, css: &str, attribute: &str) -> anyhow::Result<Vec<String>> {
        let mut values = Vec::new();
        for element in self.all(css).await? {
            values.push(element.attr(attribute).await?.unwrap_or_default());
        }
        Ok(values)
    }

    /// Runs `script` in the page and returns what it returns.
    pub async fn run(&self, script: &str) -> anyhow::Result<Value> {
        Ok(self.client.execute(script, Vec::new()).await?)
    }

    /// The URLs the page loaded (documents, scripts, styles, fetches).
    pub async fn requested_urls(&self) -> anyhow::Result<Vec<String>> {
        let urls = self
            .run("return [location.href, ...performance.getEntriesByType('resource').map((entry) => entry.name)];")
            .await?;
        Ok(serde_json::from_value(urls)?)
    }

    /// The console's errors since the last call (chromedriver's log
    /// endpoint: WebDriver itself has none).
    pub async fn console_errors(&self) -> anyhow::Result<Vec<String>> {
        let Some(session) = self.client.session_id().await? else {
            bail!("the browser has no session");
        };
        let log: Value = self
            .http
            .post(format!("{}/session/{session}/se/log", self.driver_url))
            .json(&json!({"type": "browser"}))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        Ok(log["value"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|entry| entry["level"] == "SEVERE")
            .map(|entry| entry["message"].as_str().unwrap_or_default().to_owned())
            .collect())
    }

    /// A PNG of the window.
    pub async fn screenshot(&self) -> anyhow::Result<Vec<u8>> {
        Ok(self.client.screenshot().await?)
    }

    pub async fn close(self) -> anyhow::Result<()> {
        Ok(self.client.close().await?)
    }
}
