//! What a service declares about itself to the skeleton: names, prefixes,
//! probe paths, and the settings it treats apart.

/// What a service is called and where things are.
#[derive(Debug, Clone, Copy)]
pub struct Declaration {
    /// The binary and OpenTelemetry `service.name`: `graph-builder`.
    pub name: &'static str,
    /// The service's crate, `env!("CARGO_CRATE_NAME")`: its spans are
    /// exported (with the shared crates').
    pub crate_name: &'static str,
    /// `env!("CARGO_PKG_VERSION")` of the service's crate.
    pub version: &'static str,
    /// One line for `--help`.
    pub about: &'static str,
    /// Environment variables are `{env_prefix}{SECTION}__{KEY}`.
    pub env_prefix: &'static str,
    /// Metric names are `{metric_prefix}_{name}`.
    pub metric_prefix: &'static str,
    /// The probe paths on the status port.
    pub liveness_path: &'static str,
    pub readiness_path: &'static str,
    pub flags: Flags,
    /// Settings accepted so existing configurations load, with what is
    /// logged when one is set.
    pub ignored: &'static [Ignored],
}

/// A setting that is read and ignored, with a warning when set.
#[derive(Debug, Clone, Copy)]
pub struct Ignored {
    pub key: &'static str,
    pub warning: &'static str,
}

/// What a service says about its flags besides its settings.
#[derive(Debug, Clone, Copy)]
pub struct Flags {
    /// `(key, alias)`: `--alias` sets `key` too.
    pub aliases: &'static [(&'static str, &'static str)],
    /// Keys that have no flag.
    pub without: &'static [&'static str],
}

impl Flags {
    pub const NONE: Flags = Flags {
        aliases: &[],
        without: &[],
    };
}
