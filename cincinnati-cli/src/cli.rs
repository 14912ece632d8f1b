//! The command line: common flags, subcommands and their examples.

use std::path::PathBuf;

use cincinnati_client::Tier;
use cincinnati_core::Version;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::parser::ValueSource;
use clap::{Args, CommandFactory as _, FromArgMatches as _, Parser, Subcommand, ValueEnum};
use image_signature::store::SignatureStore;

/// The Graph API clusters ask unless told otherwise.
pub const PUBLIC_URL: &str = "https://api.openshift.com/api/upgrades_info/graph";

const EXIT_CODES: &str = "\
Exit codes: 0 answered; 1 the answer is \"no\" (no update, no path, not offered, a difference, \
invalid graph-data, a cluster the fleet does not know, a rollout the engine does not have), with the \
reason on stderr; 2 usage or input \
error; 3 server or network error.";

#[derive(Debug, Parser)]
#[command(
    name = "cincinnati",
    version,
    about = "Ask a Cincinnati update service (or a saved graph) what clusters are offered, how to get \
             from one release to another, and why an update is or is not offered.",
    after_help = EXIT_CODES
)]
pub struct Cli {
    #[command(flatten)]
    pub common: Common,
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// The command line, noting which common flags were given rather than
    /// left to their defaults (as `Cli::try_parse`, which cannot tell).
    pub fn try_parse_noting_defaults() -> Result<Self, clap::Error> {
        let matches = Self::command().try_get_matches()?;
        let mut cli = Self::from_arg_matches(&matches).map_err(|error| error.format(&mut Self::command()))?;
        let given = |id| {
            matches!(
                matches.value_source(id),
                Some(ValueSource::CommandLine | ValueSource::EnvVariable)
            )
        };
        cli.common.given = Given {
            url: given("url"),
            arch: given("arch"),
        };
        Ok(cli)
    }
}

/// Flags every command takes.
#[derive(Debug, Args)]
pub struct Common {
    /// A Graph API endpoint: a graph-builder, a policy-engine, api.openshift.com
    #[arg(long, global = true, env = "CINCINNATI_URL", default_value = PUBLIC_URL)]
    pub url: String,
    /// A saved Graph API document (full graph or one channel's answer; gzip
    /// allowed) to read instead of asking --url
    #[arg(long, global = true, value_name = "FILE")]
    pub graph: Option<PathBuf>,
    /// The architecture clusters run: amd64, arm64, ppc64le, s390x, multi
    #[arg(long, global = true, default_value = "amd64")]
    pub arch: String,
    /// How to print the answer
    #[arg(short, long, global = true, value_enum, default_value_t = Format::Table)]
    pub output: Format,
    /// CA certificates (PEM) to trust besides the system's, for every URL
    /// asked (an update service behind a private CA)
    #[arg(long, global = true, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// Which of the flags above were given (on the command line or in the
    /// environment), rather than defaulted.
    #[arg(skip)]
    pub given: Given,
}

/// The common flags given rather than defaulted: a default is a cluster's
/// view (the public service, amd64), and a fleet question asks about every
/// architecture unless one is named.
#[derive(Debug, Clone, Copy, Default)]
pub struct Given {
    pub url: bool,
    pub arch: bool,
}

impl Common {
    /// `--arch` when given: a filter for fleet questions.
    pub fn arch_given(&self) -> Option<&str> {
        self.given.arch.then_some(self.arch.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For people; coloured on a terminal
    Table,
    /// The documented, stable schema (docs/cli.md)
    Json,
    /// The same document as YAML
    Yaml,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Updates(UpdatesArgs),
    Path(PathArgs),
    Explain(ExplainArgs),
    Channels(ChannelsArgs),
    Render(RenderArgs),
    Diff(DiffArgs),
    /// Graph-data: check it before it merges, preview what a change does
    #[command(subcommand, name = "graph-data")]
    GraphData(GraphDataCommand),
    /// Release signatures: would a cluster accept this release
    #[command(subcommand)]
    Signatures(SignaturesCommand),
    Fleet(FleetArgs),
    Rollout(RolloutArgs),
    Completions(CompletionsArgs),
}

/// What the cluster-version operator offers a cluster at VERSION on CHANNEL
///
/// Asked exactly as the CVO asks (arch, channel, id and version), read by its
/// rules: recommended updates newest first; with --include-not-recommended the
/// conditional ones, with each risk's name, message, URL and matching rules.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati updates --channel stable-4.18 --version 4.18.20
  cincinnati updates --channel stable-4.18 --version 4.18.20 --include-not-recommended
  cincinnati --graph graph.json -o json updates --channel fast-4.17 --version 4.17.3")]
pub struct UpdatesArgs {
    /// The channel the cluster is on (stable-4.18, fast-4.17, eus-4.16, ...)
    #[arg(long)]
    pub channel: String,
    /// The version the cluster runs (4.18.20)
    #[arg(long)]
    pub version: Version,
    /// Also list conditional updates and their risks
    #[arg(long)]
    pub include_not_recommended: bool,
    /// The cluster's ID, sent as the CVO sends it
    #[arg(long)]
    pub id: Option<String>,
    /// The architecture of the release the cluster runs (default: --arch); a
    /// single-arch cluster asking --arch multi is migrating to multi-arch
    #[arg(long, value_name = "ARCH")]
    pub cluster_arch: Option<String>,
}

/// How to update from one release to another, across minor versions
///
/// Each update is taken on the tier's channel of its target's minor
/// (stable-4.17 for 4.17.z; on EUS, eus-4.16 for both 4.15.z and 4.16.z), has
/// the fewest updates, then the newest releases on the way. Conditional
/// updates are taken only when all their risks are accepted. From one EUS
/// minor to a later one (--tier eus), the plan comes with the runbook of a
/// Control Plane Only update: channel, paused worker pools, each hop's `oc`
/// command and release image. When there is no path, the answer shows how
/// far updates reach, where they break, and what the other tiers offer. A
/// downgrade is refused without asking any service.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati path --from 4.14.38 --to 4.18.20
  cincinnati path --from 4.14.38 --to 4.16.40 --tier eus
  cincinnati path --from 4.16.3 --to 4.17.20 --accept-risk AuthOAuthProxyLeakedConnections --all")]
pub struct PathArgs {
    /// The version the cluster runs
    #[arg(long, value_name = "VERSION")]
    pub from: Version,
    /// The version to update to
    #[arg(long, value_name = "VERSION")]
    pub to: Version,
    /// The channels to update on: each update on the tier's channel of its
    /// target's minor
    #[arg(long, default_value = "stable", value_parser = tiers())]
    pub tier: Tier,
    /// Take conditional updates with this risk (repeat for more)
    #[arg(long = "accept-risk", value_name = "NAME")]
    pub accept_risks: Vec<String>,
    /// Also list, for each update, the releases that may be taken instead
    /// of its target (the plan as short); JSON also lists other whole plans
    #[arg(long)]
    pub all: bool,
    /// With --all, at most this many releases per update (and other plans)
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
}

/// Why an update is, or is not, offered on a channel
///
/// The reasons in the order that decides: the cluster's per-cluster policy
/// (with --id: asked as that cluster, the engine's explain endpoint on its
/// status port says which rule withholds the update — a phased rollout and
/// when the cluster is inside, a deferral, a pin, its groups' blocked edges
/// and risks, with their lines in the policy file), then graph-data (the
/// blocked-edges file and line of a block or risk, its reasons and fixedIn,
/// with --graph-data), then release metadata. Also: not in the channel (and
/// where each release is), conditional (not recommended where its risks
/// apply, as the CVO says), dropped by the cluster, another architecture.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati explain --channel stable-4.16 --from 4.16.3 --to 4.16.20
  cincinnati explain --channel stable-4.16 --from 4.16.3 --to 4.16.20 \\
      --graph-data http://127.0.0.1:8090/api/upgrades_info/graph-data
  cincinnati --url http://127.0.0.1:8082/api/upgrades_info/graph explain --channel stable-4.18 \\
      --from 4.18.40 --to 4.18.46 --id 5ca1ab1e-0000-4000-8000-00000000d0e5")]
pub struct ExplainArgs {
    /// The channel the cluster is on
    #[arg(long)]
    pub channel: String,
    /// The version the cluster runs
    #[arg(long, value_name = "VERSION")]
    pub from: Version,
    /// The version it would update to
    #[arg(long, value_name = "VERSION")]
    pub to: Version,
    /// The graph-data the graph was built with: a directory, a tarball, or a
    /// graph-builder's {prefix}/graph-data URL
    #[arg(long, value_name = "DIR|FILE|URL")]
    pub graph_data: Option<String>,
    /// The cluster's ID: ask as that cluster, and ask the policy-engine why
    /// it sees what it sees
    #[arg(long)]
    pub id: Option<String>,
    /// With --id, the engine's explain endpoint (on its status port).
    /// Default: --url with the port 1000 higher (8082 → 9082) and
    /// {prefix}/v1/explain-cluster for {prefix}/graph
    #[arg(long, value_name = "URL", requires = "id")]
    pub explain_url: Option<String>,
}

/// The channels the graph holds, or those holding a version
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati --url http://127.0.0.1:8080/api/upgrades_info/graph channels
  cincinnati channels --version 4.16.30")]
pub struct ChannelsArgs {
    /// Only the channels holding this version (works against services that
    /// answer one channel at a time, too)
    #[arg(long)]
    pub version: Option<Version>,
}

/// A channel's releases and updates as a drawing (Graphviz DOT or Mermaid)
///
/// Recommended updates are solid, conditional ones dashed and labelled with
/// their risks; releases are grouped by minor version. -o does not apply.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati render --channel stable-4.18 --from 4.18.40 | dot -Tsvg > stable-4.18.svg
  cincinnati render --channel stable-4.18 --from 4.18.45 --format mermaid")]
pub struct RenderArgs {
    /// The channel to draw
    #[arg(long)]
    pub channel: String,
    /// Only what a cluster at this version can reach
    #[arg(long, value_name = "VERSION")]
    pub from: Option<Version>,
    /// The drawing's language
    #[arg(long, value_enum, default_value_t = Drawing::Dot)]
    pub format: Drawing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Drawing {
    /// Graphviz (`dot -Tsvg`), with errata links
    Dot,
    /// Mermaid flowchart (drawn up to 500 edges, unless the page rendering
    /// it raises maxEdges)
    Mermaid,
}

/// What differs between two Graph API documents, per channel
///
/// Releases, updates, and risks of conditional updates added and removed on
/// each channel both documents hold. Exits 1 when they differ, as diff(1).
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati diff before.json after.json
  cincinnati diff http://gb-old:8080/api/upgrades_info/graph http://gb-new:8080/api/upgrades_info/graph
  cincinnati diff --channel stable-4.18 stable-4.18-monday.json https://api.openshift.com/api/upgrades_info/graph")]
pub struct DiffArgs {
    /// A file or URL
    pub old: String,
    /// A file or URL
    pub new: String,
    /// Compare this channel only (needed for services answering one channel
    /// at a time and for saved answers of one channel)
    #[arg(long)]
    pub channel: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum GraphDataCommand {
    Check(CheckArgs),
    Preview(PreviewArgs),
}

/// Validates a graph-data directory as the graph-builder does
///
/// Prints each problem as FILE:LINE: severity[kind]: message, and exits 1 when
/// any refuses the graph-data: usable as a pre-commit hook.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati graph-data check .
  cincinnati graph-data check testdata/graph-data -o json
  cincinnati graph-data check . --against ../graph-data-main")]
pub struct CheckArgs {
    /// A graph-data directory (a checkout of openshift/cincinnati-graph-data)
    pub dir: PathBuf,
    /// Also check the graph-data against these releases (a Graph API
    /// document of releases, a file or URL): a blocked edge's `to`, a `from`
    /// or a channel's version that names none of them is refused
    #[arg(long, value_name = "FILE|URL")]
    pub releases: Option<String>,
    /// The graph-data this change replaces (a directory): a change that
    /// moves a phased rollout under way, or brings back one that is over, is
    /// refused unless its version entry says `locked: true`
    #[arg(long, value_name = "DIR")]
    pub against: Option<PathBuf>,
    /// With --against: judge rollouts as of this time (RFC 3339, such as
    /// 2025-06-02T09:00:00Z) instead of now
    #[arg(long, value_name = "TIME", requires = "against")]
    pub at: Option<jiff::Timestamp>,
}

/// What a graph-data change does to what clusters see, before it merges
///
/// Applies the graph-data in DIR to the releases (a Graph API document of
/// releases before graph-data, as the graph-builder reads them) and compares
/// the result with what the server serves (--url or --graph), per channel;
/// then lists, per channel, the updates it phases (schema 2.0.0) and their
/// windows. Exits 1 when anything changes, as diff(1), or when, against
/// --base, an update is phased anew or its window moved.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati --url http://127.0.0.1:8080/api/upgrades_info/graph \\
      graph-data preview ~/cincinnati-graph-data --releases testdata/demo/releases.json.gz")]
pub struct PreviewArgs {
    /// The changed graph-data directory
    pub dir: PathBuf,
    /// The releases the server builds its graph from (a file or URL)
    #[arg(long, value_name = "FILE|URL")]
    pub releases: String,
    /// Compare this channel only
    #[arg(long)]
    pub channel: Option<String>,
    /// The graph-data before the change (a directory, e.g. a checkout of
    /// the branch the change is for): warnings it had already are listed
    /// apart from those the change brings, and phased updates are marked
    /// new or moved
    #[arg(long, value_name = "DIR")]
    pub base: Option<PathBuf>,
    /// Preview as of this time (RFC 3339, such as 2025-06-02T09:00:00Z)
    /// instead of now: the graph as the graph-builder builds it then, and
    /// where each phased update's window stands
    #[arg(long, value_name = "TIME")]
    pub at: Option<jiff::Timestamp>,
}

#[derive(Debug, Subcommand)]
pub enum SignaturesCommand {
    Verify(VerifyArgs),
}

/// Checks a release's signatures as the cluster-version operator does
///
/// Fetches signature-1, signature-2, ... of the release's digest from a
/// signature store (a metadata-helper, or the public mirror) until the first
/// one missing, and checks each against the keyring. The release is verified
/// when one signature checks out; exits 1 when none does. --url, --graph and
/// --arch do not apply.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati signatures verify --keyring /etc/release-keys \\
      --release quay.io/openshift-release-dev/ocp-release@sha256:<hex>
  cincinnati signatures verify --keyring testdata/demo/signing-key.asc \\
      --store http://127.0.0.1:8083/api/upgrades_info/signatures --release sha256:<hex>")]
pub struct VerifyArgs {
    /// A release pull spec by digest (`repository@sha256:...`) or the digest
    #[arg(long, value_name = "PULLSPEC")]
    pub release: String,
    /// The trusted public keys: an ASCII-armored file, or a directory of them
    #[arg(long, value_name = "FILE|DIR")]
    pub keyring: PathBuf,
    /// The signature store's base URL
    #[arg(long, value_name = "URL", default_value = SignatureStore::DEFAULT_BASE_URL)]
    pub store: String,
}

/// The fleet a policy-engine has recorded: who runs what, who took which update
///
/// Asks a policy-engine with a fleet store (`fleet.store` in its settings)
/// on its status port ({prefix}/v1/fleet/...): every update check with a
/// cluster id is recorded there (channel, architecture, version, when), and
/// each change of a cluster's version. --arch filters only when given:
/// without it, every architecture is counted. --graph does not apply.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati --url http://127.0.0.1:8082/api/upgrades_info/graph fleet versions
  cincinnati --url http://127.0.0.1:8082/api/upgrades_info/graph fleet adoption --version 4.18.52
  cincinnati fleet --fleet-url http://engine:9081/api/upgrades_info/v1/fleet stuck --channel stable-4.18")]
pub struct FleetArgs {
    /// The engine's fleet answers (on its status port). Default: --url
    /// with the port 1000 higher (8082 → 9082) and {prefix}/v1/fleet for
    /// {prefix}/graph
    #[arg(long, global = true, value_name = "URL")]
    pub fleet_url: Option<String>,
    /// With rollout control (`rollouts.token_file`), the fleet answers
    /// need a token of any scope
    #[command(flatten)]
    pub token: TokenArgs,
    #[command(subcommand)]
    pub question: FleetCommand,
}

#[derive(Debug, Subcommand)]
pub enum FleetCommand {
    Versions(FleetVersionsArgs),
    Adoption(AdoptionArgs),
    Rollouts(RolloutsArgs),
    Stuck(StuckArgs),
    Cluster(ClusterArgs),
}

/// Clusters per channel, architecture and version, active in the window
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati fleet versions
  cincinnati fleet versions --channel stable-4.18 --arch arm64 --active-hours 168")]
pub struct FleetVersionsArgs {
    /// Only clusters on this channel
    #[arg(long)]
    pub channel: Option<String>,
    /// Clusters that checked for updates within this many hours (the
    /// engine's fleet.active_hours by default, 24)
    #[arg(long, value_name = "HOURS", value_parser = clap::value_parser!(u64).range(1..))]
    pub active_hours: Option<u64>,
}

/// Clusters arriving at a version, hour by hour
///
/// A cluster arrives when it reports the version after reporting another:
/// it took the update.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati fleet adoption --version 4.18.52
  cincinnati fleet adoption --version 4.18.52 --hours 24 -o json")]
pub struct AdoptionArgs {
    /// The version clusters arrive at
    #[arg(long)]
    pub version: Version,
    /// How many hours back to look
    #[arg(long, default_value_t = 168, value_parser = clap::value_parser!(u64).range(1..))]
    pub hours: u64,
}

/// How the policy file's phased rollouts move the fleet
///
/// Each rollout where the engine says it is (as `cincinnati rollout list`
/// shows it), then its clusters: those in its scope, those offered the
/// target (placed below its progress, or named by its gates), those that
/// arrived at it after being offered, how long they took, and those silent
/// after arriving (not seen since: the nearest sign of a failed update an
/// update service gets).
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati fleet rollouts
  cincinnati fleet rollouts -o json")]
pub struct RolloutsArgs {}

/// Clusters with nowhere to go, and clusters that do not take their update
///
/// Versions with no recommended update to a newer release in their channel
/// (and why), and versions with one whose clusters have been on them for
/// longer than the engine's fleet.stuck_days, with the newest release
/// offered and the clusters longest on the version.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati fleet stuck
  cincinnati fleet stuck --channel stable-4.18 --arch amd64")]
pub struct StuckArgs {
    /// Only clusters on this channel
    #[arg(long)]
    pub channel: Option<String>,
    /// Clusters that checked for updates within this many hours (the
    /// engine's fleet.active_hours by default, 24)
    #[arg(long, value_name = "HOURS", value_parser = clap::value_parser!(u64).range(1..))]
    pub active_hours: Option<u64>,
}

/// One cluster's history: where it is, since when, and its changes of version
///
/// Exits 1 when the engine has stored no update check of the cluster.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati fleet cluster 5ca1ab1e-0000-4000-8000-00000000d0e5")]
pub struct ClusterArgs {
    /// The cluster's id (or, when the engine stores hashed ids, the stored
    /// hash)
    pub id: String,
}

/// Rollouts under run-time control: pause, resume, hold, who did what and why
///
/// Asks a policy-engine with rollout control (`rollouts.token_file` in its
/// settings, with `fleet.store` and `cluster_policy.file`) on its status
/// port ({prefix}/v1/rollouts), with a bearer token of its token file. A
/// change needs a reason; the engine audits it under the token's name, and
/// every engine sharing its fleet store takes it. --graph and --arch do not
/// apply.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  export CINCINNATI_TOKEN=...   # a token of the engine's rollouts.token_file
  cincinnati --url http://127.0.0.1:8082/api/upgrades_info/graph rollout list
  cincinnati --url http://127.0.0.1:8082/api/upgrades_info/graph rollout pause 4.18.52 \\
      --reason 'storage alarms on clusters that took 4.18.52'
  cincinnati rollout --rollouts-url http://engine:9081/api/upgrades_info/v1/rollouts \\
      --token-file ~/.config/cincinnati/token history 4.18.52")]
pub struct RolloutArgs {
    /// The engine's rollout control (on its status port). Default: --url
    /// with the port 1000 higher (8082 → 9082) and {prefix}/v1/rollouts for
    /// {prefix}/graph
    #[arg(long, global = true, value_name = "URL")]
    pub rollouts_url: Option<String>,
    #[command(flatten)]
    pub token: TokenArgs,
    #[command(subcommand)]
    pub action: RolloutCommand,
}

/// The token sent to an engine's status port.
#[derive(Debug, Args)]
pub struct TokenArgs {
    /// A file holding the token to send: its first line that is not blank
    /// or a `#` comment, `name token [scope]` (as in the engine's
    /// rollouts.token_file) or the token alone. Default: the environment
    /// variable CINCINNATI_TOKEN. The token is never printed
    #[arg(long, global = true, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum RolloutCommand {
    List(RolloutListArgs),
    History(RolloutHistoryArgs),
    /// Stops a rollout's clock: no cluster not already inside is offered its target
    #[command(after_help = "Examples:
  cincinnati rollout pause 4.18.52 --reason 'storage alarms on clusters that took 4.18.52'")]
    Pause(RolloutChangeArgs),
    /// Starts a paused rollout's clock again where it stopped
    ///
    /// Its schedule then runs later by the time it stood still: nobody is
    /// offered at once what the pause held back.
    #[command(after_help = "Examples:
  cincinnati rollout resume 4.18.52 --reason 'firmware 7.2 shipped'")]
    Resume(RolloutChangeArgs),
    Hold(RolloutHoldArgs),
    /// Lets a held rollout's progress follow its schedule again
    #[command(after_help = "Examples:
  cincinnati rollout release 4.18.52 --reason 'back to the schedule'")]
    Release(RolloutChangeArgs),
}

/// Each rollout of the engine's policy file: progress, schedule, state, and the last changes
///
/// Progress is the share of clusters offered the target now; the schedule
/// is what the policy file alone would give. The state is who changed the
/// rollout last, when and why.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati rollout list
  cincinnati rollout list -o json")]
pub struct RolloutListArgs {}

/// Every change made to the rollouts at run time, oldest first: who, what, when, why
///
/// The changes the engine answers with (its last hundred), of every
/// rollout or of TARGET's. Exits 1 when the engine has neither a rollout
/// nor a change of TARGET.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati rollout history
  cincinnati rollout history 4.18.52 -o json")]
pub struct RolloutHistoryArgs {
    /// Only this rollout's changes (its target, as in the policy file)
    pub target: Option<String>,
}

/// A change of a rollout: its target and why
#[derive(Debug, Args)]
pub struct RolloutChangeArgs {
    /// The rollout's target, as in the policy file (4.18.52)
    pub target: String,
    /// Why, for the audit (with the token's name and the time)
    #[arg(long, value_parser = reason)]
    pub reason: String,
}

/// Holds a rollout's progress at a percentage, whatever its schedule
///
/// More or fewer clusters are then inside (offered the target); `release`
/// lets the schedule decide again.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati rollout hold 4.18.52 --percent 10 --reason 'only the first tenth until the fix'")]
pub struct RolloutHoldArgs {
    #[command(flatten)]
    pub change: RolloutChangeArgs,
    /// The share of clusters offered the target, from 0 to 100
    #[arg(long, value_parser = percent)]
    pub percent: f64,
}

/// A reason with something in it: the audit says why.
fn reason(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err("a reason says why, for the audit: it cannot be blank".to_owned());
    }
    Ok(text.to_owned())
}

/// A percentage from 0 to 100.
fn percent(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|percent| (0.0..=100.0).contains(percent))
        .ok_or_else(|| "a number from 0 to 100".to_owned())
}

/// Prints a shell completion script
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cincinnati completions bash > /etc/bash_completion.d/cincinnati
  cincinnati completions zsh > \"${fpath[1]}/_cincinnati\"")]
pub struct CompletionsArgs {
    /// The shell to complete in
    pub shell: clap_complete::Shell,
}

/// `--tier`'s values, each with what its channels hold (as OpenShift's
/// documentation of update channels describes them).
fn tiers() -> impl TypedValueParser<Value = Tier> {
    let values = Tier::ALL.map(|tier| {
        let help = match tier {
            Tier::Stable => "stable-X.Y: releases that have proven themselves on fast",
            Tier::Fast => "fast-X.Y: every release as soon as it is generally available",
            Tier::Candidate => "candidate-X.Y: every release first, and release candidates (unsupported)",
            Tier::Eus => {
                "eus-X.Y: Extended Update Support, for even minors; eus-4.16 covers 4.15 too, \
                 so EUS-to-EUS updates stay on it"
            }
        };
        PossibleValue::new(tier.as_str()).help(help)
    });
    PossibleValuesParser::new(values).map(|name| name.parse::<Tier>().expect("a name from Tier::ALL"))
}

/// The first paragraph of clap's error message, on one line without its
/// `error:` label: what is wrong, without the usage that follows.
pub fn first_paragraph(message: &str) -> String {
    let words: Vec<&str> = message
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .flat_map(str::split_whitespace)
        .collect();
    words.join(" ").trim_start_matches("error: ").to_owned()
}
