//! The command line of a service, derived from its settings: one flag per
//! setting, named by its dotted key (`--service.port` sets `service.port`),
//! plus the flags every service shares (`-c`, `-v`, `--check-config`,
//! `-o`). Aliases (upstream's short forms, `--port`) and the settings
//! without a flag (lists of plugin tables) are declared in the service's
//! [`Flags`]; nothing else names a flag.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches, Command};
use figment::value::Value as ConfigValue;

use crate::config::{ConfigError, Layers};
use crate::declaration::Declaration;
use crate::schema::Schema;

/// How `--check-config` prints the effective settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The settings as TOML, then the plan.
    Text,
    /// `{"settings": {...}, "plan": {...}}`, for scripts.
    Json,
}

/// The flags that are not settings.
const CONFIG: &str = "config";
const CHECK_CONFIG: &str = "check_config";
const OUTPUT: &str = "output";
const VERBOSITY: &str = "verbosity";

/// The command line of the service `declaration` describes, with settings
/// `schema`; `extra` are flags of its own that are not settings (the
/// graph-builder's `--once`).
pub fn command(declaration: &Declaration, schema: &Schema, extra: Vec<Arg>) -> Command {
    let prefix = declaration.env_prefix;
    let mut command = Command::new(declaration.name)
        .version(declaration.version)
        .about(declaration.about)
        .after_help(format!(
            "Settings come from (later wins): defaults, the TOML file (-c), environment \
             variables {prefix}<SECTION>__<KEY> (e.g. {prefix}SERVICE__PORT), and these flags."
        ))
        .arg(
            Arg::new(CONFIG)
                .short('c')
                .long("config")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help("TOML configuration file"),
        )
        .arg(
            Arg::new(CHECK_CONFIG)
                .long("check-config")
                .action(ArgAction::SetTrue)
                .help(
                    "Validate the configuration as start-up would, print the effective settings \
                     (secrets redacted), and exit",
                ),
        )
        .arg(
            Arg::new(OUTPUT)
                .short('o')
                .long("output")
                .value_parser(["text", "json"])
                .default_value("text")
                .help("How --check-config prints: text, or json for scripts"),
        )
        .arg(
            Arg::new(VERBOSITY)
                .short('v')
                .action(ArgAction::Count)
                .help("More logging: -v info, -vv debug, -vvv trace (RUST_LOG wins)"),
        );
    for key in schema.keys() {
        if key == VERBOSITY || declaration.flags.without.contains(&key.as_str()) {
            continue;
        }
        let default = schema.default_at(&key).map(shown_default).unwrap_or_default();
        let mut argument = Arg::new(key.clone())
            .long(key.clone())
            .value_name("VALUE")
            .help(format!("Sets {key}{default}"));
        for (aliased, alias) in declaration.flags.aliases {
            if *aliased == key {
                argument = argument.visible_alias(*alias);
            }
        }
        command = command.arg(argument);
    }
    command.args(extra)
}

fn shown_default(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(text) if text.is_empty() => String::new(),
        serde_json::Value::Array(items) if items.is_empty() => String::new(),
        other => format!(" [default: {other}]"),
    }
}

/// A parsed command line.
#[derive(Debug)]
pub struct Invocation {
    matches: ArgMatches,
    env_prefix: &'static str,
}

impl Invocation {
    pub fn parse(command: Command, env_prefix: &'static str) -> Self {
        Self {
            matches: command.get_matches(),
            env_prefix,
        }
    }

    pub fn try_parse_from(
        command: Command,
        env_prefix: &'static str,
        arguments: impl IntoIterator<Item = impl Into<OsString> + Clone>,
    ) -> Result<Self, clap::Error> {
        Ok(Self {
            matches: command.try_get_matches_from(arguments)?,
            env_prefix,
        })
    }

    pub fn check_config(&self) -> bool {
        self.matches.get_flag(CHECK_CONFIG)
    }

    pub fn output(&self) -> Output {
        match self.matches.get_one::<String>(OUTPUT).map(String::as_str) {
            Some("json") => Output::Json,
            _ => Output::Text,
        }
    }

    /// A flag of the service's own (`extra` in [`command`]).
    pub fn flag(&self, id: &str) -> bool {
        self.matches.get_flag(id)
    }

    /// The layers every setting comes from: the defaults, the file, the
    /// environment, then the flags given, each typed as its setting's
    /// default is (a string setting takes the text as given; others read it
    /// as the environment's values are read: `8080`, `true`, `[a, b]`).
    pub fn layers(&self, schema: &Schema) -> Result<Layers, ConfigError> {
        let file = self.matches.get_one::<PathBuf>(CONFIG);
        let verbosity = self.matches.get_count(VERBOSITY);
        let mut layers = Layers::new();
        if let Some(file) = file {
            layers = layers.file(file)?;
        }
        layers = layers
            .env(self.env_prefix, schema.top_level_values())
            .set_some(VERBOSITY, (verbosity > 0).then_some(verbosity));
        for key in schema.keys() {
            let Ok(Some(given)) = self.matches.try_get_one::<String>(&key) else {
                continue;
            };
            let value = match schema.default_at(&key) {
                Some(serde_json::Value::String(_) | serde_json::Value::Array(_)) => {
                    ConfigValue::from(given.clone())
                }
                _ => given.parse().expect("reading a value is infallible"),
            };
            layers = layers.set(&key, value);
        }
        Ok(layers)
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::declaration::Flags;

    #[derive(Debug, Default, Serialize, Deserialize)]
    #[serde(default)]
    struct Settings {
        verbosity: u8,
        service: Service,
        plugins: Vec<toml::Table>,
    }

    #[derive(Debug, Default, Serialize, Deserialize)]
    #[serde(default)]
    struct Service {
        port: u16,
        path_prefix: String,
        timeout_secs: Option<u64>,
    }

    const DECLARATION: Declaration = Declaration {
        name: "test-service",
        crate_name: env!("CARGO_CRATE_NAME"),
        version: "1",
        about: "a test",
        env_prefix: "SKCLI_",
        metric_prefix: "skcli",
        liveness_path: "/livez",
        readiness_path: "/readyz",
        ignored: &[],
        flags: Flags {
            aliases: &[
                ("service.port", "port"),
                ("service.timeout_secs", "service.timeout"),
            ],
            without: &["plugins"],
        },
    };

    fn parse(arguments: &[&str]) -> Result<Settings, String> {
        let schema = Schema::of::<Settings>();
        let command = command(&DECLARATION, &schema, Vec::new());
        let invocation = Invocation::try_parse_from(
            command,
            DECLARATION.env_prefix,
            [&["test-service"], arguments].concat(),
        )
        .map_err(|error| error.to_string())?;
        invocation
            .layers(&schema)
            .and_then(|layers| layers.extract_known(&schema))
            .map_err(|error| error.to_string())
    }

    #[test]
    fn every_setting_has_its_flag_typed_as_the_setting() {
        let settings = parse(&[
            "-vv",
            "--port",
            "8",
            "--service.path_prefix",
            "123",
            "--service.timeout",
            "7",
        ])
        .unwrap();
        assert_eq!(settings.verbosity, 2);
        assert_eq!(settings.service.port, 8);
        assert_eq!(
            settings.service.path_prefix, "123",
            "a string setting takes the text as given"
        );
        assert_eq!(settings.service.timeout_secs, Some(7));
        assert_eq!(parse(&["--service.port", "9"]).unwrap().service.port, 9);
    }

    #[test]
    fn flags_are_only_those_of_settings() {
        assert!(parse(&["--plugins", "x"]).unwrap_err().contains("--plugins"));
        assert!(
            parse(&["--service.prot", "1"])
                .unwrap_err()
                .contains("--service.prot")
        );
        let error = parse(&["--service.port", "many"]).unwrap_err();
        assert!(error.contains("service"), "{error}");
    }
}
