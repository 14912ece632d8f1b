//! Logging setup: `tracing` events to stderr, as text or JSON lines, and
//! spans to an OpenTelemetry collector when one is configured ([`telemetry`]).
//!
//! The log level comes from the verbosity (`-v` count or the configuration's
//! `verbosity`) unless `RUST_LOG` is set, which wins so an operator can turn
//! up one module without a restart of the configuration. It filters the log
//! lines only: spans are exported whatever the log level.

use std::fmt;
use std::io::IsTerminal as _;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

use crate::declaration::Declaration;
use crate::telemetry::{self, Telemetry, TelemetryError};

/// How much to log: 0 warnings and errors, 1 info, 2 debug, 3 or more trace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Verbosity(pub u8);

impl Verbosity {
    fn level(self) -> &'static str {
        match self.0 {
            0 => "warn",
            1 => "info",
            2 => "debug",
            _ => "trace",
        }
    }
}

/// Written as the number.
impl Serialize for Verbosity {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u8(self.0)
    }
}

/// Accepts a number (`2`), a count of `v`s (`"vv"`) or a level name (`"debug"`).
impl<'de> Deserialize<'de> for Verbosity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct VerbosityVisitor;

        impl Visitor<'_> for VerbosityVisitor {
            type Value = Verbosity;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number, a run of `v`s or a level name (warn, info, debug, trace)")
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<Verbosity, E> {
                Ok(Verbosity(value.min(u64::from(u8::MAX)) as u8))
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Verbosity, E> {
                u64::try_from(value)
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(value), &self))
                    .and_then(|value| self.visit_u64(value))
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<Verbosity, E> {
                let count = match value.trim().to_ascii_lowercase().as_str() {
                    "" | "error" | "warn" => 0,
                    "info" => 1,
                    "debug" => 2,
                    "trace" => 3,
                    vs if vs.bytes().all(|byte| byte == b'v') => vs.len().min(3),
                    other => {
                        return other
                            .parse::<u64>()
                            .map_err(|_| E::invalid_value(de::Unexpected::Str(value), &self))
                            .and_then(|number| self.visit_u64(number));
                    }
                };
                Ok(Verbosity(count as u8))
            }
        }

        deserializer.deserialize_any(VerbosityVisitor)
    }
}

/// The shape of log lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Installs the global subscriber for the service `declaration` describes
/// (its name is the OpenTelemetry `service.name`). Fails if one is
/// installed already (a second service in the same process, or a test that
/// set one up). Keep the returned guard until the service stops: dropping
/// it flushes the spans.
pub fn init(
    declaration: &Declaration,
    verbosity: Verbosity,
    format: LogFormat,
) -> Result<Telemetry, LoggingError> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(verbosity.level()));
    // Coloured only on a terminal (and without NO_COLOR): a log
    // redirected to a file or a collector reads as plain text.
    let ansi =
        std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    let lines = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(ansi);
    let lines = match format {
        LogFormat::Text => lines.boxed(),
        LogFormat::Json => lines.json().boxed(),
    };
    let (spans, telemetry) = telemetry::export_layer(declaration)?;
    tracing_subscriber::registry()
        .with(lines.with_filter(filter))
        .with(spans)
        .try_init()
        .map_err(|error| LoggingError::Subscriber(error.into()))?;
    Ok(telemetry)
}

#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    #[error("cannot install the log subscriber: {0}")]
    Subscriber(Box<dyn std::error::Error + Send + Sync>),
    #[error(transparent)]
    Telemetry(#[from] TelemetryError),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(toml_value: &str) -> Result<Verbosity, toml::de::Error> {
        #[derive(Deserialize)]
        struct File {
            verbosity: Verbosity,
        }
        toml::from_str::<File>(&format!("verbosity = {toml_value}")).map(|file| file.verbosity)
    }

    #[test]
    fn verbosity_reads_numbers_vs_and_level_names() {
        assert_eq!(parse("2").unwrap(), Verbosity(2));
        assert_eq!(parse("\"vv\"").unwrap(), Verbosity(2));
        assert_eq!(parse("\"info\"").unwrap(), Verbosity(1));
        assert_eq!(parse("\"3\"").unwrap(), Verbosity(3));
        assert_eq!(Verbosity(7).level(), "trace");
        assert!(parse("\"loud\"").is_err());
        assert!(parse("-1").is_err());
    }
}
