//! Writes the seed corpora of the fuzz targets (`fuzz/fuzz_targets/`), one
//! directory per target under the given directory: small real inputs from
//! `testdata/` and from the workspace's own image and signing tools, so the
//! fuzzers start from the shapes real upstreams send, and the connection
//! layer's conformance cases, the shapes clients send.
//!
//!     reliability-fuzz-seeds <directory>

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use http1_probes::cases::{self, Step};
use release_images::ReleaseMetadata;
use release_images::signature::SigningKey;
use reliability::demo::testdata;
use serde_json::{Value, json};

/// Must match `DIGEST` in fuzz/fuzz_targets/signature.rs.
const SIGNED_DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
/// Nodes kept of each fixture graph: libFuzzer mutates small inputs best.
const GRAPH_SIZES: [usize; 3] = [2, 8, 24];
/// YAML files taken from each graph-data directory.
const YAML_FILES: usize = 150;

fn main() -> anyhow::Result<()> {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .context("usage: reliability-fuzz-seeds <directory>")?,
    );
    let seeds = Seeds(out);
    graph_api(&seeds)?;
    release_metadata(&seeds)?;
    graph_data(&seeds)?;
    accept_header(&seeds)?;
    client_query(&seeds)?;
    registry_manifest(&seeds)?;
    signature(&seeds)?;
    http1_head(&seeds)?;
    Ok(())
}

struct Seeds(PathBuf);

impl Seeds {
    fn write(&self, target: &str, name: &str, content: impl AsRef<[u8]>) -> anyhow::Result<()> {
        let directory = self.0.join(target);
        std::fs::create_dir_all(&directory)?;
        let path = directory.join(name);
        std::fs::write(&path, content).with_context(|| format!("writing {}", path.display()))
    }
}

/// The graph-builder fixtures' graphs, cut to their first few releases.
fn graph_api(seeds: &Seeds) -> anyhow::Result<()> {
    let fixtures = testdata().join("fixtures/secondary-metadata");
    for snapshot in sorted_entries(&fixtures)? {
        for file in ["graph-gb-raw.json", "graph-gb-with-quay-metadata.json"] {
            let path = snapshot.join(file);
            let graph: Value = serde_json::from_slice(&std::fs::read(&path)?)?;
            for size in GRAPH_SIZES {
                let name = format!("{}-{file}-{size}", file_name(&snapshot));
                seeds.write(
                    "graph_api",
                    &name,
                    serde_json::to_vec(&first_releases(&graph, size))?,
                )?;
            }
        }
    }
    Ok(())
}

/// `graph` with its first `size` nodes and the edges among them.
fn first_releases(graph: &Value, size: usize) -> Value {
    let nodes: Vec<Value> = graph["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .take(size)
        .cloned()
        .collect();
    let versions: Vec<&str> = nodes.iter().filter_map(|node| node["version"].as_str()).collect();
    let edges: Vec<&Value> = graph["edges"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|edge| (0..2).all(|end| edge[end].as_u64().is_some_and(|index| (index as usize) < size)))
        .collect();
    let conditional: Vec<&Value> = graph["conditionalEdges"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|group| {
            group["edges"].as_array().into_iter().flatten().all(|edge| {
                ["from", "to"]
                    .iter()
                    .all(|end| edge[end].as_str().is_some_and(|v| versions.contains(&v)))
            })
        })
        .collect();
    json!({"nodes": nodes, "edges": edges, "conditionalEdges": conditional})
}

fn release_metadata(seeds: &Seeds) -> anyhow::Result<()> {
    let plain = ReleaseMetadata::new("4.16.2")
        .previous(["4.16.0", "4.16.1"])
        .next(["4.17.1"])
        .metadata("url", "https://access.redhat.com/errata/RHSA-2024:0001");
    seeds.write("release_metadata", "plain", plain.to_json())?;
    seeds.write("release_metadata", "multi", plain.multi_arch().to_json())?;
    seeds.write(
        "release_metadata",
        "bare",
        ReleaseMetadata::new("4.1.0-rc.0").to_json(),
    )?;
    Ok(())
}

/// YAML files of the repository's graph-data, and tarballs of a few of them.
fn graph_data(seeds: &Seeds) -> anyhow::Result<()> {
    let root = testdata().join("graph-data");
    let version = std::fs::read(root.join("version"))?;
    let mut tarballs: Vec<tar::Builder<Vec<u8>>> = (0..3).map(|_| tar::Builder::new(Vec::new())).collect();
    for tarball in &mut tarballs {
        append(tarball, "version", &version)?;
    }
    for directory in ["channels", "blocked-edges"] {
        for (position, path) in sorted_entries(&root.join(directory))?
            .into_iter()
            .take(YAML_FILES)
            .enumerate()
        {
            let content = std::fs::read(&path)?;
            let name = format!("{directory}/{}", file_name(&path));
            seeds.write("graph_data_yaml", &name.replace('/', "-"), &content)?;
            if position < 4 {
                append(&mut tarballs[position % 3], &name, &content)?;
            }
        }
    }
    for (number, tarball) in tarballs.into_iter().enumerate() {
        seeds.write(
            "graph_data_tarball",
            &format!("graph-data-{number}.tar"),
            tarball.into_inner()?,
        )?;
    }
    Ok(())
}

fn append(tarball: &mut tar::Builder<Vec<u8>>, path: &str, content: &[u8]) -> anyhow::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_size(content.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    tarball.append_data(&mut header, path, content)?;
    Ok(())
}

/// What real clients send: the cluster-version operator, curl, browsers, `oc`.
fn accept_header(seeds: &Seeds) -> anyhow::Result<()> {
    let values = [
        "application/json",
        "application/vnd.redhat.cincinnati.v1+json",
        "*/*",
        "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        "application/json;q=0.5, application/vnd.redhat.cincinnati.v1+json\ngzip, deflate, br",
        "application/*;q=0\ngzip;q=0, identity",
    ];
    for (number, value) in values.iter().enumerate() {
        seeds.write("accept_header", &format!("accept-{number}"), value)?;
    }
    Ok(())
}

fn client_query(seeds: &Seeds) -> anyhow::Result<()> {
    let queries = [
        "channel=stable-4.18&arch=amd64",
        "channel=stable-4.18&arch=multi&id=ceb3b0bb-c689-4db9-bb6a-0122237e33fd&version=4.18.1",
        "arch=s390x&channel=fast-4.17&channel=eus-4.16",
        "channel=candidate-4.19&version=4.19.0-ec.1&extra=%F0%9F%90%A2",
    ];
    for (number, query) in queries.iter().enumerate() {
        seeds.write("client_query", &format!("query-{number}"), query)?;
    }
    Ok(())
}

/// The four manifest formats the scraper reads, and an image config.
fn registry_manifest(seeds: &Seeds) -> anyhow::Result<()> {
    let digest = |n: u8| format!("sha256:{}", format!("{n:02x}").repeat(32));
    let descriptor =
        |media_type: &str, n: u8| json!({"mediaType": media_type, "digest": digest(n), "size": 1234});
    let platform = |architecture: &str| json!({"architecture": architecture, "os": "linux"});
    let docker_image = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": descriptor("application/vnd.docker.container.image.v1+json", 1),
        "layers": [descriptor("application/vnd.docker.image.rootfs.diff.tar.gzip", 2)],
    });
    let oci_image = json!({
        "schemaVersion": 2,
        "config": descriptor("application/vnd.oci.image.config.v1+json", 3),
        "layers": [descriptor("application/vnd.oci.image.layer.v1.tar+gzip", 4), descriptor("application/vnd.oci.image.layer.v1.tar+gzip", 5)],
    });
    let list = |media_type: &str| {
        json!({
            "schemaVersion": 2,
            "mediaType": media_type,
            "manifests": [
                {"mediaType": "application/vnd.docker.distribution.manifest.v2+json", "digest": digest(6), "size": 1, "platform": platform("amd64")},
                {"mediaType": "application/vnd.docker.distribution.manifest.v2+json", "digest": digest(7), "size": 1, "platform": platform("arm64")},
            ],
        })
    };
    seeds.write("registry_manifest", "docker-image", docker_image.to_string())?;
    seeds.write("registry_manifest", "oci-image", oci_image.to_string())?;
    seeds.write(
        "registry_manifest",
        "docker-list",
        list("application/vnd.docker.distribution.manifest.list.v2+json").to_string(),
    )?;
    seeds.write(
        "registry_manifest",
        "oci-index",
        list("application/vnd.oci.image.index.v1+json").to_string(),
    )?;
    seeds.write(
        "registry_manifest",
        "image-config",
        json!({"architecture": "amd64", "os": "linux", "config": {}}).to_string(),
    )?;
    Ok(())
}

/// A signature by the trusted test key over the target's digest, one over
/// another digest, and one by an untrusted key.
fn signature(seeds: &Seeds) -> anyhow::Result<()> {
    let reference = "quay.io/openshift-release-dev/ocp-release";
    let trusted = SigningKey::from_seed(1);
    seeds.write("signature", "trusted", trusted.sign(reference, SIGNED_DIGEST))?;
    seeds.write(
        "signature",
        "other-digest",
        trusted.sign(reference, &SIGNED_DIGEST.replace('0', "f")),
    )?;
    seeds.write(
        "signature",
        "untrusted",
        SigningKey::from_seed(2).sign(reference, SIGNED_DIGEST),
    )?;
    let mut armored = Vec::new();
    writeln!(
        armored,
        "-----BEGIN PGP MESSAGE-----\n\n-----END PGP MESSAGE-----"
    )?;
    seeds.write("signature", "armored-empty", armored)?;
    Ok(())
}

/// The connection layer's conformance cases (`http1_probes::cases`), each
/// the bytes its client sends, on one connection.
fn http1_head(seeds: &Seeds) -> anyhow::Result<()> {
    for case in cases::all() {
        let bytes: String = case
            .steps
            .iter()
            .filter_map(|step| match step {
                Step::Send(text) => Some(text.as_str()),
                Step::Pause(_) | Step::CloseWrite => None,
            })
            .collect();
        let bytes = bytes
            .replace("{path}", "/graph?channel=stable-4.18")
            .replace("{host}", "127.0.0.1:8080");
        seeds.write("http1_head", case.name, bytes)?;
    }
    Ok(())
}

fn sorted_entries(directory: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(directory)
        .with_context(|| format!("reading {}", directory.display()))?
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    Ok(entries)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}
