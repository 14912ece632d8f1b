//! The graph-builder as a service on loopback ports: the Graph API, the
//! graph-data tarball, status and metrics, and staying calm when a source
//! goes bad.

use std::io::Read as _;
use std::path::Path;
use std::time::Duration;

use graph_builder::settings::Settings;
use registry_testkit::poll;
use serde_json::Value;

use crate::support::fixture;
use crate::support::{Running, StatusExt as _};

/// Settings for a graph-builder on free ports, refreshing every second.
fn settings(extra_toml: &str) -> Settings {
    let text = format!(
        "[service]\nport = 0\npublic_port = 0\npause_secs = 1\npath_prefix = \"/api/upgrades_info\"\n\
         [status]\nport = 0\n{extra_toml}"
    );
    toml::from_str(&text).unwrap()
}

fn graph_file_plan(graph: &Path, graph_data: &Path) -> String {
    format!(
        "[[plugin_settings]]\nname = \"release-graph-file\"\npath = {:?}\n\
         [[plugin_settings]]\nname = \"openshift-secondary-metadata-parse\"\ndata_directory = {:?}\n\
         [[plugin_settings]]\nname = \"edge-add-remove\"\n",
        graph.display().to_string(),
        graph_data.display().to_string()
    )
}

/// A graph-builder under the production path prefix.
async fn spawn(settings: Settings) -> Running {
    crate::support::spawn(&settings, "/api/upgrades_info").await
}

#[tokio::test]
async fn serves_the_graph_with_caching_headers_and_graph_data() {
    let app = spawn(settings(&graph_file_plan(
        &fixture("graph-gb-raw.json"),
        &fixture("cincinnati-graph-data"),
    )))
    .await;
    let status = app.wait_until_ready().await;
    assert_eq!(status.graph().releases, 1085);

    let response = app.get(&format!("{}/graph", app.api)).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    let etag = response.headers()["etag"].to_str().unwrap().to_owned();
    let graph: Value = response.json().await.unwrap();
    assert!(
        graph.get("version").is_none(),
        "the graph-builder emits no version key"
    );
    assert_eq!(graph["nodes"].as_array().unwrap().len(), 1085);
    let with_channels = |graph: &Value| {
        graph["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|node| node["metadata"]["io.openshift.upgrades.graph.release.channels"].is_string())
            .count()
    };
    let expected: Value =
        serde_json::from_slice(&std::fs::read(fixture("graph-gb-with-quay-metadata.json")).unwrap()).unwrap();
    assert_eq!(
        with_channels(&graph),
        with_channels(&expected),
        "graph-data channels were applied"
    );

    let v1 = app.get(&format!("{}/v1/graph", app.api)).await;
    assert_eq!(v1.headers()["etag"].to_str().unwrap(), etag);

    let not_modified = app
        .http
        .get(format!("{}/graph", app.api))
        .header("If-None-Match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(not_modified.status(), 304);

    let gzipped = reqwest::Client::builder().no_gzip().build().unwrap();
    let compressed = gzipped
        .get(format!("{}/graph", app.api))
        .header("Accept-Encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(compressed.headers()["content-encoding"], "gzip");
    let mut inflated = Vec::new();
    flate2::read::GzDecoder::new(compressed.bytes().await.unwrap().as_ref())
        .read_to_end(&mut inflated)
        .unwrap();

    // The graph is kept compressed only; a client without gzip gets it
    // inflated as it is sent, with its length announced.
    let identity = gzipped.get(format!("{}/graph", app.api)).send().await.unwrap();
    assert!(identity.headers().get("content-encoding").is_none());
    let length: usize = identity.headers()["content-length"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let identity = identity.bytes().await.unwrap();
    assert_eq!((identity.len(), identity.as_ref()), (length, inflated.as_slice()));
    let head = gzipped.head(format!("{}/graph", app.api)).send().await.unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(
        head.headers()["content-length"].to_str().unwrap(),
        length.to_string()
    );
    assert!(head.bytes().await.unwrap().is_empty());

    let tarball = app.get(&format!("{}/graph-data", app.public)).await;
    assert_eq!(tarball.status(), 200);
    assert_eq!(tarball.headers()["content-type"], "application/gzip");
    let bytes = tarball.bytes().await.unwrap();
    let files = openshift_graph_data::GraphDataFiles::from_tar_gz(bytes.as_ref()).unwrap();
    assert!(files.get("version").is_some(), "the tarball is graph-data");
}

/// Signature `index` of the release with digest `sha256:<hex>`, as `oc adm
/// release mirror` files it in graph-data.
fn write_signature(graph_data: &Path, hex: &str, index: u32, content: &[u8]) {
    let dir = graph_data.join("signatures/sha256").join(hex);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("signature-{index}")), content).unwrap();
}

#[tokio::test]
async fn release_signatures_in_graph_data_are_published_and_followed() {
    let (first, second) = ("a".repeat(64), "b".repeat(64));
    let graph_data = tempfile::tempdir().unwrap();
    copy_dir(&fixture("cincinnati-graph-data"), graph_data.path());
    write_signature(graph_data.path(), &first, 1, b"first, signed once");
    write_signature(graph_data.path(), &first, 2, b"first, signed again");
    std::fs::write(graph_data.path().join("signatures/README"), "not a signature").unwrap();
    let app = spawn(settings(&graph_file_plan(
        &fixture("graph-gb-raw.json"),
        graph_data.path(),
    )))
    .await;
    let status = app.wait_until_ready().await;
    assert_eq!(status.graph_data.as_ref().map(|data| data.signatures), Some(2));
    let warnings = status.sources.graph_data_warnings.join("\n");
    assert!(warnings.contains("signatures/README"), "{warnings}");

    let tarball_url = format!("{}/graph-data", app.public);
    let published = app.get(&tarball_url).await;
    let etag = published.headers()["etag"].to_str().unwrap().to_owned();
    let files =
        openshift_graph_data::GraphDataFiles::from_tar_gz(published.bytes().await.unwrap().as_ref()).unwrap();
    let signatures: Vec<(String, Vec<u8>)> = files
        .signatures()
        .map(|(name, content)| (name.path(), content.to_vec()))
        .collect();
    assert_eq!(
        signatures,
        [
            (
                format!("sha256/{first}/signature-1"),
                b"first, signed once".to_vec()
            ),
            (
                format!("sha256/{first}/signature-2"),
                b"first, signed again".to_vec()
            ),
        ]
    );

    write_signature(graph_data.path(), &second, 1, b"second");
    app.wait_for("the new signature", |status| {
        status
            .graph_data
            .as_ref()
            .is_some_and(|data| data.signatures == 3)
    })
    .await;
    let conditional = |etag: String| app.http.get(&tarball_url).header("if-none-match", etag).send();
    let changed = conditional(etag).await.unwrap();
    assert_eq!(changed.status(), 200, "a new signature is a new tarball");
    let new_etag = changed.headers()["etag"].to_str().unwrap().to_owned();
    let files =
        openshift_graph_data::GraphDataFiles::from_tar_gz(changed.bytes().await.unwrap().as_ref()).unwrap();
    assert_eq!(files.signatures().count(), 3);
    assert_eq!(conditional(new_etag).await.unwrap().status(), 304);
}

#[tokio::test]
async fn errors_are_json_with_upstream_kinds() {
    let mut settings = settings(&graph_file_plan(
        &fixture("graph-gb-raw.json"),
        &fixture("cincinnati-graph-data"),
    ));
    settings.service.requests.mandatory_client_parameters = vec!["channel".into()];
    let app = spawn(settings).await;
    app.wait_until_ready().await;

    let cases = [
        (format!("{}/graph", app.api), None, 400, "missing_params"),
        // Another spelling of the route's path, counted as the route's.
        (format!("{}/gr%61ph", app.api), None, 400, "missing_params"),
        (
            format!("{}/graph?channel=a", app.api),
            Some("text/html"),
            406,
            "invalid_content_type",
        ),
        (format!("{}/nowhere", app.api), None, 404, "does_not_exist"),
    ];
    for (url, accept, status, kind) in cases {
        let mut request = app.http.get(&url);
        if let Some(accept) = accept {
            request = request.header("Accept", accept);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), status, "{url}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["kind"], kind, "{url}");
    }
    let post = app.http.post(format!("{}/graph", app.api)).send().await.unwrap();
    assert_eq!(post.status(), 405);

    let metrics = app
        .get(&format!("{}/metrics", app.status))
        .await
        .text()
        .await
        .unwrap();
    for name in [
        "cincinnati_gb_build_info",
        "cincinnati_gb_graph_final_releases 1085",
        "cincinnati_gb_graph_last_successful_refresh_timestamp",
        "cincinnati_gb_graph_upstream_scrapes_total",
        "cincinnati_gb_graph_upstream_errors_total 0",
        "cincinnati_gb_graph_upstream_raw_releases 1085",
        "cincinnati_gb_graph_incoming_requests_total{uri_path=\"/api/upgrades_info/graph\"} 3",
        "cincinnati_gb_graph_response_errors_total{code=\"400\",kind=\"missing_params\"} 2",
        "cincinnati_gb_graph_data_revision_info",
        "cincinnati_gb_graph_age_seconds",
        "cincinnati_gb_http_request_duration_seconds_bucket",
    ] {
        assert!(metrics.contains(name), "{name} missing from\n{metrics}");
    }
    assert!(!metrics.contains("gr%61ph"), "{metrics}");
    assert_eq!(app.get(&format!("{}/liveness", app.status)).await.status(), 200);
    assert_eq!(app.get(&format!("{}/readiness", app.status)).await.status(), 200);
}

#[tokio::test]
async fn bad_graph_data_is_refused_and_the_last_good_graph_kept() {
    let graph_data = tempfile::tempdir().unwrap();
    copy_dir(&fixture("cincinnati-graph-data"), graph_data.path());
    let app = spawn(settings(&graph_file_plan(
        &fixture("graph-gb-raw.json"),
        graph_data.path(),
    )))
    .await;
    let first = app.wait_until_ready().await;
    let etag = first.graph().etag.clone();

    std::fs::write(
        graph_data.path().join("channels/broken.yaml"),
        "name: [unclosed\n",
    )
    .unwrap();
    let status = app
        .wait_for("the graph-data error", |status| {
            status.graph_data_error().is_some()
        })
        .await;
    let error = status.graph_data_error().unwrap();
    assert!(error.contains("channels/broken.yaml"), "{error}");
    assert_eq!(status.graph().etag, etag, "the last good graph is still served");
    let response = app.get(&format!("{}/graph", app.api)).await;
    assert_eq!(response.status(), 200);

    std::fs::remove_file(graph_data.path().join("channels/broken.yaml")).unwrap();
    app.wait_for("recovery", |status| status.graph_data_error().is_none())
        .await;
}

/// Settings for a graph-builder on free ports whose graph-data directory is
/// re-read every hour but checked every second.
fn checked_settings(graph: &Path, graph_data: &Path) -> Settings {
    let text = format!(
        "[service]\nport = 0\npublic_port = 0\npause_secs = 3600\ngraph_data_check_secs = 1\n\
         path_prefix = \"/api/upgrades_info\"\n\
         [status]\nport = 0\n{}",
        graph_file_plan(graph, graph_data)
    );
    toml::from_str(&text).unwrap()
}

#[tokio::test]
async fn a_graph_data_change_is_served_by_its_check_and_wakes_a_request_waiting_for_it() {
    let graph_data = tempfile::tempdir().unwrap();
    copy_dir(&fixture("cincinnati-graph-data"), graph_data.path());
    let app = spawn(checked_settings(&fixture("graph-gb-raw.json"), graph_data.path())).await;
    let first = app.wait_until_ready().await;
    let graph_url = format!("{}/graph", app.api);
    let response = app.get(&graph_url).await;
    assert_eq!(response.status(), 200, "{:?}", response.text().await);
    let etag = response.headers()["etag"].clone();

    // Held until the graph changes: once the server has the request (it
    // counted it), the graph-data changes; a 304 would be the old graph.
    let counted = || async {
        let metrics = app
            .get(&format!("{}/metrics", app.status))
            .await
            .text()
            .await
            .unwrap();
        metrics
            .lines()
            .find(|line| {
                line.starts_with(
                    "cincinnati_gb_graph_incoming_requests_total{uri_path=\"/api/upgrades_info/graph\"}",
                )
            })
            .and_then(|line| line.rsplit(' ').next()?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let before = counted().await;
    let waiting = app
        .http
        .get(&graph_url)
        .query(&[("wait_for_change", etag.to_str().unwrap())])
        .header("If-None-Match", etag.clone())
        .send();
    let waiting = tokio::spawn(waiting);
    poll::eventually("the waiting request arrived", Duration::from_secs(60), || async {
        counted().await > before
    })
    .await;
    std::fs::write(
        graph_data.path().join("channels/freshness-test.yaml"),
        "name: freshness-test\nversions:\n- 4.9.0\n",
    )
    .unwrap();
    let answer = waiting.await.unwrap().unwrap();
    assert_eq!(answer.status(), 200);
    assert_ne!(answer.headers()["etag"], etag);
    assert_eq!(answer.headers()["cincinnati-wait-for-change"], "25");

    let status = app
        .wait_for("the change served", |status| {
            status.graph().graph_data_revision != first.graph().graph_data_revision
        })
        .await;
    let source = status.sources.graph_data.as_ref().unwrap();
    assert!(
        source.last_change_served.is_some() && source.change_check.is_some(),
        "{source:?}"
    );
}

#[tokio::test]
async fn a_missing_release_source_keeps_the_service_up_but_not_ready() {
    let app = spawn(settings(&graph_file_plan(
        Path::new("/nonexistent/graph.json"),
        &fixture("cincinnati-graph-data"),
    )))
    .await;
    let status = app
        .wait_for("the release error", |status| {
            status.sources.releases.freshness.is_stale()
        })
        .await;
    assert!(!status.ready);
    let response = app.get(&format!("{}/graph", app.api)).await;
    assert_eq!(response.status(), 503);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["kind"], "service_unavailable");
    assert_eq!(app.get(&format!("{}/readiness", app.status)).await.status(), 503);
}

#[test]
fn once_prints_the_graph_and_fails_loudly() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gb.toml");
    std::fs::write(
        &config,
        graph_file_plan(&fixture("graph-gb-raw.json"), &fixture("cincinnati-graph-data")),
    )
    .unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_graph-builder"))
        .args(["--once", "-c"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let graph: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(graph["nodes"].as_array().unwrap().len(), 1085);

    std::fs::write(
        &config,
        graph_file_plan(Path::new("/nonexistent.json"), &fixture("cincinnati-graph-data")),
    )
    .unwrap();
    let failed = std::process::Command::new(env!("CARGO_BIN_EXE_graph-builder"))
        .args(["--once", "-c"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(!failed.status.success());
    assert!(failed.stdout.is_empty());
    assert!(String::from_utf8_lossy(&failed.stderr).contains("/nonexistent.json"));
}

#[test]
fn unknown_configuration_keys_are_refused_with_their_name() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gb.toml");
    std::fs::write(&config, "[service]\npause_sec = 3\n").unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_graph-builder"))
        .args(["--check-config", "-c"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("pause_sec") && stderr.contains("gb.toml"),
        "{stderr}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[tokio::test]
async fn sigterm_stops_the_service_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gb.toml");
    let plan = graph_file_plan(&fixture("graph-gb-raw.json"), &fixture("cincinnati-graph-data"));
    std::fs::write(
        &config,
        format!("[service]\nport = 0\npublic_port = 0\n[status]\nport = 0\n{plan}"),
    )
    .unwrap();
    // Killed if the test fails before the graph-builder exits.
    let mut command = process_testkit::command(env!("CARGO_BIN_EXE_graph-builder"));
    command
        .args(["-v", "-c"])
        .arg(&config)
        .stderr(std::process::Stdio::piped());
    let mut child = process_testkit::TestChild::spawn(command).unwrap();
    // The listening line says the servers are bound and signals are handled;
    // the rest of the log is drained so the child never blocks on a full pipe.
    let stderr = child.take_stderr().unwrap();
    let (listening, heard) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)).map_while(Result::ok) {
            if line.contains("graph-builder listening") {
                let _ = listening.send(());
            }
        }
    });
    heard
        .recv_timeout(Duration::from_secs(30))
        .expect("the graph-builder never said it was listening");
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let (exit, _) = poll::until("the exit after SIGTERM", Duration::from_secs(30), async || {
        child.try_wait()?.ok_or_else(|| anyhow::anyhow!("still running"))
    })
    .await
    .unwrap();
    assert!(exit.success(), "exit status after SIGTERM: {exit}");
}
