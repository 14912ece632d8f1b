//! Layered configuration: struct defaults < TOML file < environment < CLI.
//!
//! Settings types are plain serde structs with `#[serde(default)]` for their
//! defaults. A key the settings type does not have fails start-up, naming
//! the key and where it came from, e.g. ``unknown setting `service.prot`
//! (TOML file /etc/pe.toml)``: [`Layers::extract_known`] checks every key
//! given against the keys of the type ([`Schema`]).
//!
//! Environment variables are `{PREFIX}{KEY}` with `__` between nesting levels:
//! `CINCINNATI_PE_SERVICE__PATH_PREFIX=/api` sets `service.path_prefix`.
//! Every variable with the prefix must name a known key.
//!
//! CLI flags use upstream's dotted long options (`--service.address`); see
//! [`crate::cli`].

use std::fmt;
use std::path::Path;

use figment::providers::{Env, Format, Serialized, Toml};
use figment::value::{Dict, Value};
use figment::{Figment, Metadata, Profile, Provider as _};
use serde::Serialize;
use serde::de::{self, DeserializeOwned, Deserializer, SeqAccess, Visitor};

use crate::schema::Schema;

/// Configuration sources, later ones overriding earlier ones key by key.
#[derive(Debug, Default)]
pub struct Layers {
    figment: Figment,
}

/// The configuration cannot be read or does not fit the settings type.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("configuration file {0} does not exist")]
    MissingFile(String),
    #[error("invalid configuration: {0}")]
    Invalid(#[from] Box<figment::Error>),
    #[error("unknown setting `{key}` ({origin}); known in {table}: {known}")]
    UnknownKey {
        key: String,
        origin: String,
        table: String,
        known: String,
    },
}

impl Layers {
    pub fn new() -> Self {
        Self::default()
    }

    /// A TOML file, which must exist.
    pub fn file(self, path: &Path) -> Result<Self, ConfigError> {
        if !path.is_file() {
            return Err(ConfigError::MissingFile(path.display().to_string()));
        }
        Ok(Self {
            figment: self.figment.merge(Toml::file_exact(path)),
        })
    }

    /// Environment variables `{prefix}{KEY}` (see the module documentation).
    ///
    /// Only `{prefix}{SECTION}__{KEY}` and the top-level keys named in
    /// `top_level` are read: Kubernetes injects `{SERVICE}_PORT…` variables
    /// for every Service of the namespace, and a Service named like
    /// upstream's `cincinnati-gb-public` would otherwise be taken for an
    /// unknown setting and stop the service from starting.
    pub fn env(self, prefix: &str, top_level: Vec<String>) -> Self {
        let settings = Env::prefixed(prefix).split("__").filter(move |key| {
            let key = key.as_str();
            key.contains('.') || top_level.iter().any(|name| key.eq_ignore_ascii_case(name))
        });
        Self {
            figment: self.figment.merge(settings),
        }
    }

    /// One value at a dotted key (`service.port`), e.g. from a CLI flag.
    pub fn set(self, dotted_key: &str, value: impl Serialize) -> Self {
        Self {
            figment: self.figment.merge(Serialized::default(dotted_key, value)),
        }
    }

    /// [`Layers::set`] when the value was given.
    pub fn set_some(self, dotted_key: &str, value: Option<impl Serialize>) -> Self {
        match value {
            Some(value) => self.set(dotted_key, value),
            None => self,
        }
    }

    /// The merged settings.
    pub fn extract<T: DeserializeOwned>(&self) -> Result<T, ConfigError> {
        self.figment
            .extract()
            .map_err(|error| ConfigError::Invalid(Box::new(error)))
    }

    /// The merged settings, once every key given is one `schema` knows.
    pub fn extract_known<T: DeserializeOwned>(&self, schema: &Schema) -> Result<T, ConfigError> {
        let data = self
            .figment
            .data()
            .map_err(|error| ConfigError::Invalid(Box::new(error)))?;
        if let Some(given) = data.get(&Profile::Default)
            && let Some(key) = first_unknown(given, "", schema)
        {
            let table = key.rsplit_once('.').map_or("", |(table, _)| table);
            let known: Vec<&String> = schema
                .default_at(table)
                .and_then(serde_json::Value::as_object)
                .map(|fields| fields.keys().collect())
                .unwrap_or_default();
            return Err(ConfigError::UnknownKey {
                origin: self
                    .figment
                    .find_metadata(&key)
                    .map(|metadata| origin(metadata, &key))
                    .unwrap_or_else(|| "given".to_owned()),
                table: if table.is_empty() {
                    "the top level".to_owned()
                } else {
                    format!("[{table}]")
                },
                known: known
                    .into_iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(", "),
                key,
            });
        }
        self.extract()
    }
}

/// The first key in `given` (under `prefix`) that `schema` does not know.
/// What is inside a value setting (a list of plugin tables) is not judged
/// here.
fn first_unknown(given: &Dict, prefix: &str, schema: &Schema) -> Option<String> {
    given.iter().find_map(|(name, value)| {
        let key = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        match (schema.default_at(&key), value) {
            (None, _) => Some(key),
            (Some(default), Value::Dict(_, inner)) if default.is_object() => {
                first_unknown(inner, &key, schema)
            }
            (Some(_), _) => None,
        }
    })
}

/// Where a key came from: `TOML file /etc/pe.toml`, or the environment
/// variable's name.
fn origin(metadata: &Metadata, key: &str) -> String {
    let parts: Vec<&str> = key.split('.').collect();
    match &metadata.source {
        Some(source) => format!("{} {source}", metadata.name),
        None => format!(
            "{} {}",
            metadata.name,
            metadata.interpolate(&Profile::Default, &parts)
        ),
    }
}

/// Deserialises a list of strings from a list or from one comma-separated
/// string, so `--service.mandatory_client_parameters channel,version`, an
/// environment variable and a TOML array all work.
pub fn string_list<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    struct ListVisitor;

    impl<'de> Visitor<'de> for ListVisitor {
        type Value = Vec<String>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list of strings or a comma-separated string")
        }

        fn visit_str<E: de::Error>(self, value: &str) -> Result<Vec<String>, E> {
            Ok(value
                .split(',')
                .map(str::trim)
                .filter(|item| !item.is_empty())
                .map(str::to_owned)
                .collect())
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element::<String>()? {
                items.push(item);
            }
            Ok(items)
        }
    }

    deserializer.deserialize_any(ListVisitor)
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Default, Deserialize, Serialize, PartialEq)]
    #[serde(default)]
    struct Settings {
        service: Service,
    }

    #[derive(Debug, Deserialize, Serialize, PartialEq)]
    #[serde(default)]
    struct Service {
        address: String,
        port: u16,
        #[serde(deserialize_with = "string_list")]
        parameters: Vec<String>,
    }

    impl Default for Service {
        fn default() -> Self {
            Self {
                address: "127.0.0.1".into(),
                port: 8081,
                parameters: Vec::new(),
            }
        }
    }

    fn toml_file(text: &str) -> tempfile::NamedTempFile {
        let mut file = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
        file.write_all(text.as_bytes()).unwrap();
        file
    }

    #[test]
    fn later_layers_win_key_by_key() {
        let file = toml_file("[service]\naddress = \"0.0.0.0\"\nport = 1\nparameters = [\"a\"]\n");
        let settings: Settings = Layers::new()
            .file(file.path())
            .unwrap()
            .set("service.port", 2)
            .set_some("service.parameters", Some("channel, version"))
            .set_some("service.address", None::<String>)
            .extract()
            .unwrap();
        assert_eq!(settings.service.address, "0.0.0.0");
        assert_eq!(settings.service.port, 2);
        assert_eq!(settings.service.parameters, ["channel", "version"]);
    }

    #[test]
    fn defaults_fill_what_no_layer_sets() {
        let settings: Settings = Layers::new().extract().unwrap();
        assert_eq!(settings, Settings::default());
    }

    #[test]
    #[expect(
        clippy::result_large_err,
        reason = "the closure's error type is figment::Jail's"
    )]
    fn environment_overrides_the_file() {
        figment::Jail::expect_with(|jail| {
            jail.set_env("SKTEST_SERVICE__PORT", "9");
            // What Kubernetes injects for a Service named `sktest-public`.
            jail.set_env("SKTEST_PUBLIC_PORT", "tcp://10.0.0.1:8090");
            let settings: Settings = Layers::new()
                .env("SKTEST_", Vec::new())
                .extract_known(&Schema::of::<Settings>())
                .unwrap();
            assert_eq!(settings.service.port, 9);
            Ok(())
        });
    }

    #[test]
    fn unknown_keys_name_the_key_and_the_file() {
        let file = toml_file("[service]\nprot = 1\n");
        let error = Layers::new()
            .file(file.path())
            .unwrap()
            .extract_known::<Settings>(&Schema::of::<Settings>())
            .unwrap_err()
            .to_string();
        assert!(error.contains("service.prot"), "{error}");
        assert!(error.contains(&file.path().display().to_string()), "{error}");
        assert!(error.contains("address, parameters, port"), "{error}");
    }

    #[test]
    fn a_missing_file_is_an_error() {
        let error = Layers::new().file(Path::new("/nonexistent/pe.toml")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "configuration file /nonexistent/pe.toml does not exist"
        );
    }
}
