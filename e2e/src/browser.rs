//! A headless Chromium driven over WebDriver: Debian's `chromium` and its
//! `chromedriver` (scripts/install-test-deps.sh installs both), for the
//! explorer page's tests. The driver and the Chromium it started are killed
//! when the browser is dropped, also when a test panics, and when the test
//! process dies (`process_testkit::command_with_descendants`: killing
//! chromedriver alone would leave Chromium running).
//!
//! The few W3C WebDriver commands the tests use, over the workspace's
//! reqwest: fantoccini brings an MPL-2.0 protocol crate and a second cookie
//! and ICU stack, which `cargo deny` refuses.

use std::net::TcpListener;
use std::process::Stdio;

use anyhow::{Context as _, anyhow, bail};
use process_testkit::TestChild;
use serde_json::{Value, json};

use crate::poll;

/// The size of the page's window, in CSS pixels, as a device shows it.
#[derive(Clone, Copy, Debug)]
pub struct Viewport {
    pub name: &'static str,
    pub width: u32,
    pub height: u32,
    /// A phone: the page's `viewport` meta tag applies, scroll bars
    /// overlay, and screenshots are taken at twice the pixels.
    pub mobile: bool,
}

/// A desktop monitor.
pub const DESKTOP: Viewport = Viewport {
    name: "desktop",
    width: 1600,
    height: 1000,
    mobile: false,
};

/// A phone (an iPhone 12 to 15's CSS pixels).
pub const PHONE: Viewport = Viewport {
    name: "phone",
    width: 390,
    height: 844,
    mobile: true,
};

/// The window the browser opens (the page's size is its [`Viewport`]).
const WINDOW_SIZE: &str = "--window-size=1600,1000";

/// What the explorer page sets on `<body>` once everything asked of it is
/// drawn and answered.
const READY: &str = "body[data-state=\"ready\"]";

/// The key W3C WebDriver gives every element reference.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Keys as WebDriver types them (code points of its own).
pub mod keys {
    pub const ENTER: &str = "\u{e007}";
    pub const ARROW_UP: &str = "\u{e013}";
}

pub struct Browser {
    session: Session,
    /// Last: the session is gone before its driver. Its process group:
    /// chromedriver and the Chromium processes it started.
    driver: TestChild,
}

/// One browser session: where its commands go.
#[derive(Clone)]
struct Session {
    http: reqwest::Client,
    url: String,
}

/// An element of the page.
pub struct Element {
    session: Session,
    id: String,
}

impl Session {
    /// Sends one command; its answer's `value`, or its error.
    async fn command(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<Value> {
        let mut request = self.http.request(method, format!("{}{path}", self.url));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer: Value = request.send().await?.json().await?;
        match answer["value"].get("error") {
            Some(error) => bail!("WebDriver {path}: {error}: {}", answer["value"]["message"]),
            None => Ok(answer["value"].clone()),
        }
    }

    async fn get(&self, path: &str) -> anyhow::Result<Value> {
        self.command(reqwest::Method::GET, path, None).await
    }

    async fn post(&self, path: &str, body: Value) -> anyhow::Result<Value> {
        self.command(reqwest::Method::POST, path, Some(body)).await
    }

    fn element(&self, reference: &Value) -> anyhow::Result<Element> {
        let id = reference[ELEMENT_KEY]
            .as_str()
            .ok_or_else(|| anyhow!("not an element: {reference}"))?;
        Ok(Element {
            session: self.clone(),
            id: id.to_owned(),
        })
    }
}

impl Browser {
    /// Starts `chromedriver` on a free loopback port and a headless
    /// session in it, its pages `viewport`'s size, that keeps the page's
    /// console messages.
    pub async fn start(viewport: Viewport) -> anyhow::Result<Self> {
        const INSTALL: &str = "scripts/install-test-deps.sh installs it";
        if process_testkit::find_program("chromedriver").is_none() {
            bail!("no chromedriver on PATH ({INSTALL})");
        }
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let mut command = process_testkit::command_with_descendants("chromedriver");
        command
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let driver =
            TestChild::spawn(command).with_context(|| format!("starting chromedriver ({INSTALL})"))?;
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
        let capabilities = json!({"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                // Root in a container: no sandbox. Nothing of the browser's
                // own (updates, sync, safe browsing) goes out either.
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--disable-background-networking", "--disable-component-update",
                         "--disable-sync", "--no-first-run", WINDOW_SIZE],
            },
            "goog:loggingPrefs": {"browser": "ALL"},
        }});
        let driver_session = Session {
            http,
            url: driver_url,
        };
        let created = driver_session
            .post("/session", json!({"capabilities": capabilities}))
            .await
            .context("opening a Chromium session")?;
        let id = created["sessionId"]
            .as_str()
            .ok_or_else(|| anyhow!("no session id in {created}"))?;
        let browser = Self {
            session: Session {
                url: format!("{}/session/{id}", driver_session.url),
                http: driver_session.http,
            },
            driver,
        };
        // The page's size exactly, whatever the window's frame takes (the
        // DevTools protocol, through chromedriver: WebDriver sizes windows).
        browser
            .session
            .post(
                "/goog/cdp/execute",
                json!({"cmd": "Emulation.setDeviceMetricsOverride", "params": {
                    "width": viewport.width,
                    "height": viewport.height,
                    "deviceScaleFactor": if viewport.mobile { 2 } else { 1 },
                    "mobile": viewport.mobile,
                }}),
            )
            .await
            .with_context(|| format!("sizing the page as a {}", viewport.name))?;
        Ok(browser)
    }

    /// The process group of chromedriver and the Chromium it started,
    /// gone once this is dropped.
    pub fn process_group(&self) -> u32 {
        self.driver.id()
    }

    pub async fn open(&self, url: &str) -> anyhow::Result<()> {
        self.session
            .post("/url", json!({"url": url}))
            .await
            .with_context(|| format!("opening {url}"))?;
        Ok(())
    }

    pub async fn reload(&self) -> anyhow::Result<()> {
        self.session.post("/refresh", json!({})).await?;
        Ok(())
    }

    pub async fn current_url(&self) -> anyhow::Result<String> {
        Ok(self
            .session
            .get("/url")
            .await?
            .as_str()
            .unwrap_or_default()
            .to_owned())
    }

    /// Every element `css` selects now.
    pub async fn all(&self, css: &str) -> anyhow::Result<Vec<Element>> {
        let found = self
            .session
            .post("/elements", json!({"using": "css selector", "value": css}))
            .await?;
        found
            .as_array()
            .into_iter()
            .flatten()
            .map(|reference| self.session.element(reference))
            .collect()
    }

    /// The first element `css` selects, once there is one.
    pub async fn wait_for(&self, css: &str) -> anyhow::Result<Element> {
        let (element, _) = poll::until(&format!("an element {css}"), poll::CHANGE_TIMEOUT, async || {
            self.all(css)
                .await?
                .into_iter()
                .next()
                .ok_or_else(|| anyhow!("none yet"))
        })
        .await?;
        Ok(element)
    }

    /// Clicks the first element `css` selects, once there is one.
    pub async fn click_on(&self, css: &str) -> anyhow::Result<()> {
        self.wait_for(css).await?.click().await
    }

    /// Waits until the page has drawn and answered everything asked of it
    /// (the explorer's ready marker).
    pub async fn wait_ready(&self) -> anyhow::Result<()> {
        self.wait_for(READY).await?;
        Ok(())
    }

    /// `attribute` of every element `css` selects now, read in one
    /// script: a drawing replaced between two commands (laid out again
    /// for a resize) cannot leave a stale element reference.
    pub async fn attributes(&self, css: &str, attribute: &str) -> anyhow::Result<Vec<String>> {
        self.read_all(css, "element.getAttribute(arguments[1]) ?? ''", attribute)
            .await
    }

    /// The text of every element `css` selects now, read in one script.
    pub async fn texts(&self, css: &str) -> anyhow::Result<Vec<String>> {
        self.read_all(css, "element.textContent", "").await
    }

    /// `read` (a JavaScript expression of `element` and `arguments[1]`)
    /// of every element `css` selects.
    async fn read_all(&self, css: &str, read: &str, argument: &str) -> anyhow::Result<Vec<String>> {
        let script = format!("return [...document.querySelectorAll(arguments[0])].map((element) => {read});");
        let values = self
            .session
            .post(
                "/execute/sync",
                json!({"script": script, "args": [css, argument]}),
            )
            .await?;
        serde_json::from_value(values).with_context(|| format!("reading {css}"))
    }

    /// The element that has the focus.
    pub async fn focused(&self) -> anyhow::Result<Element> {
        let reference = self.session.get("/element/active").await?;
        self.session.element(&reference)
    }

    /// Runs `script` in the page and returns what it returns.
    pub async fn run(&self, script: &str) -> anyhow::Result<Value> {
        self.session
            .post("/execute/sync", json!({"script": script, "args": []}))
            .await
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
        let log = self.session.post("/se/log", json!({"type": "browser"})).await?;
        Ok(log
            .as_array()
            .into_iter()
            .flatten()
            .filter(|entry| entry["level"] == "SEVERE")
            .map(|entry| entry["message"].as_str().unwrap_or_default().to_owned())
            .collect())
    }

    /// A PNG of the window.
    pub async fn screenshot(&self) -> anyhow::Result<Vec<u8>> {
        use base64::Engine as _;

        let encoded = self.session.get("/screenshot").await?;
        Ok(base64::engine::general_purpose::STANDARD.decode(encoded.as_str().unwrap_or_default())?)
    }

    pub async fn close(self) -> anyhow::Result<()> {
        self.session.command(reqwest::Method::DELETE, "", None).await?;
        Ok(())
    }
}

impl Element {
    fn path(&self, command: &str) -> String {
        format!("/element/{}/{command}", self.id)
    }

    pub async fn attr(&self, name: &str) -> anyhow::Result<Option<String>> {
        let value = self.session.get(&self.path(&format!("attribute/{name}"))).await?;
        Ok(value.as_str().map(str::to_owned))
    }

    pub async fn prop(&self, name: &str) -> anyhow::Result<Option<String>> {
        let value = self.session.get(&self.path(&format!("property/{name}"))).await?;
        Ok(value.as_str().map(str::to_owned))
    }

    pub async fn click(&self) -> anyhow::Result<()> {
        self.session.post(&self.path("click"), json!({})).await?;
        Ok(())
    }

    /// Types `text` into the element (focusing it first).
    pub async fn send_keys(&self, text: &str) -> anyhow::Result<()> {
        self.session
            .post(&self.path("value"), json!({"text": text}))
            .await?;
        Ok(())
    }
}
