//! `release-images`: push OpenShift-style release images or a graph-data
//! directory to a registry, e.g. to prepare a local end-to-end run.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};
use release_images::{Image, ImageList, ManifestFormat, PushOptions, Pushable, Pusher, ReleaseMetadata};

#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Push one release image, or a multi-architecture release with --multi.
    Push(PushRelease),
    /// Push a directory tree (e.g. a graph-data checkout) as a single-layer image.
    PushDir(PushDirectory),
}

#[derive(Args)]
struct RegistryArgs {
    /// `http://host:port` for plain HTTP; `https://host:port` or `host:port` for TLS.
    #[arg(long)]
    registry: String,
    #[arg(long)]
    repository: String,
    /// PEM file with a CA certificate to trust.
    #[arg(long)]
    ca_file: Option<PathBuf>,
    #[arg(long, requires = "password")]
    username: Option<String>,
    #[arg(long, requires = "username")]
    password: Option<String>,
}

#[derive(Args)]
struct PushRelease {
    #[command(flatten)]
    registry: RegistryArgs,
    #[arg(long)]
    version: String,
    /// Defaults to `<version>-<arch>`, or `<version>-multi` with --multi.
    #[arg(long)]
    tag: Option<String>,
    #[arg(long, default_value = "amd64", conflicts_with = "multi")]
    arch: String,
    /// Comma-separated versions this release updates from.
    #[arg(long, value_delimiter = ',')]
    previous: Vec<String>,
    /// Comma-separated versions this release updates to.
    #[arg(long, value_delimiter = ',')]
    next: Vec<String>,
    /// The errata URL, stored as the `url` metadata key.
    #[arg(long)]
    url: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Docker)]
    format: Format,
    /// Comma-separated architectures: push a manifest list (OCI index with
    /// --format oci) with one image per architecture.
    #[arg(long, value_delimiter = ',')]
    multi: Vec<String>,
}

#[derive(Args)]
struct PushDirectory {
    #[command(flatten)]
    registry: RegistryArgs,
    #[arg(long, default_value = "latest")]
    tag: String,
    #[arg(long, value_enum, default_value_t = Format::Docker)]
    format: Format,
    directory: PathBuf,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Docker,
    Oci,
}

impl From<Format> for ManifestFormat {
    fn from(format: Format) -> Self {
        match format {
            Format::Docker => Self::Docker,
            Format::Oci => Self::Oci,
        }
    }
}

impl RegistryArgs {
    fn pusher(&self) -> anyhow::Result<Pusher> {
        let ca_pem = self
            .ca_file
            .as_ref()
            .map(|path| std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display())))
            .transpose()?;
        let options = PushOptions {
            ca_pem,
            basic_auth: self.username.clone().zip(self.password.clone()),
            ..PushOptions::default()
        };
        Pusher::new(&self.registry, options).context("configuring the registry client")
    }

    async fn push(&self, tag: &str, item: Pushable) -> anyhow::Result<()> {
        let pusher = self.pusher()?;
        let digest = pusher
            .push(&self.repository, tag, item)
            .await
            .with_context(|| format!("pushing {}:{tag}", self.repository))?;
        println!("{}/{}@{digest}", pusher.registry(), self.repository);
        Ok(())
    }
}

impl PushRelease {
    fn tag_and_item(&self) -> (String, Pushable) {
        let mut metadata = ReleaseMetadata::new(&self.version)
            .previous(self.previous.clone())
            .next(self.next.clone());
        if let Some(url) = &self.url {
            metadata = metadata.metadata("url", url);
        }
        let format = ManifestFormat::from(self.format);
        if self.multi.is_empty() {
            let tag = self
                .tag
                .clone()
                .unwrap_or_else(|| format!("{}-{}", self.version, self.arch));
            (tag, Image::release(&metadata, &self.arch).format(format).into())
        } else {
            let tag = self
                .tag
                .clone()
                .unwrap_or_else(|| format!("{}-multi", self.version));
            (
                tag,
                ImageList::multi_release(&metadata, &self.multi, format).into(),
            )
        }
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Push(release) => {
            let (tag, item) = release.tag_and_item();
            release.registry.push(&tag, item).await
        }
        Command::PushDir(directory) => {
            let image = Image::graph_data(&directory.directory)
                .with_context(|| format!("packing {}", directory.directory.display()))?
                .format(directory.format.into());
            directory.registry.push(&directory.tag, image.into()).await
        }
    }
}
