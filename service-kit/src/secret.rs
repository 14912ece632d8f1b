//! Secrets in settings: readable where they are used, never printed.
//!
//! One scheme for every secret the services are configured with: the value
//! is a [`secrecy::SecretString`] (the registry client keeps its passwords
//! the same way), whose `Debug` says `[REDACTED]`; serialising it (what
//! `--check-config` prints) gives [`REDACTED`]. A URL may carry a password
//! (`https://user:password@host/`): a [`RedactedUrl`] keeps it as a secret
//! too and shows the rest of the URL, and so do query parameters that carry
//! credentials (libpq's `?password=`, `?sslpassword=`; any naming a token
//! or a secret).

use std::fmt;
use std::str::FromStr;

use secrecy::{ExposeSecret as _, SecretString};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use url::Url;

/// What is printed in place of a secret.
pub const REDACTED: &str = "<redacted>";

/// What is printed in place of a password in a URL (where `<>` would be
/// percent-encoded).
pub const REDACTED_IN_URL: &str = "redacted";

/// A secret setting, a password or a token.
#[derive(Clone)]
pub struct Secret(SecretString);

impl Secret {
    pub fn new(value: &str) -> Self {
        Self(SecretString::from(value))
    }

    /// The value, for the one place that sends it.
    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }

    pub fn secret_string(&self) -> &SecretString {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|value| Self::new(&value))
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(REDACTED)
    }
}

/// A URL setting, parsed where it is read, whose password (if any) is a
/// [`Secret`]: shown as `https://user:<redacted>@host/path`.
#[derive(Clone)]
pub struct RedactedUrl {
    /// The URL without its password, secret query values redacted.
    shown: Url,
    password: Option<SecretString>,
    /// The whole query, when one of its parameters is secret.
    query: Option<SecretString>,
}

impl RedactedUrl {
    /// The URL with its password, for the client that sends it.
    pub fn expose(&self) -> Url {
        let mut url = self.shown.clone();
        if let Some(password) = &self.password {
            // Cannot fail: the URL had a password, so it has a host.
            let _ = url.set_password(Some(password.expose_secret()));
        }
        if let Some(query) = &self.query {
            url.set_query(Some(query.expose_secret()));
        }
        url
    }

    /// This URL with `password` (read from a file, say) in place of its
    /// own; an error for a URL that cannot have one (no host).
    pub fn with_password(&self, password: &str) -> Result<Self, String> {
        let mut probe = self.shown.clone();
        probe
            .set_password(Some(password))
            .map_err(|()| format!("{} cannot carry a password", self.redacted()))?;
        Ok(Self {
            shown: self.shown.clone(),
            password: Some(SecretString::from(password)),
            query: self.query.clone(),
        })
    }

    /// The URL as printed: the password replaced.
    pub fn redacted(&self) -> Url {
        let mut url = self.shown.clone();
        if self.password.is_some() {
            let _ = url.set_password(Some(REDACTED_IN_URL));
        }
        url
    }
}

impl FromStr for RedactedUrl {
    type Err = url::ParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut shown = Url::parse(text)?;
        let password = shown.password().map(SecretString::from);
        if password.is_some() {
            let _ = shown.set_password(None);
        }
        let query = shown
            .query()
            .filter(|_| shown.query_pairs().any(|(name, _)| is_secret_parameter(&name)))
            .map(SecretString::from);
        if query.is_some() {
            let redacted: Vec<(String, String)> = shown
                .query_pairs()
                .map(|(name, value)| {
                    let value = if is_secret_parameter(&name) {
                        REDACTED_IN_URL.to_owned()
                    } else {
                        value.into_owned()
                    };
                    (name.into_owned(), value)
                })
                .collect();
            shown.query_pairs_mut().clear().extend_pairs(redacted);
        }
        Ok(Self {
            shown,
            password,
            query,
        })
    }
}

/// Whether a query parameter named `name` carries a credential.
fn is_secret_parameter(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["password", "passwd", "secret", "token"]
        .iter()
        .any(|word| name.contains(word))
}

impl fmt::Display for RedactedUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.redacted(), f)
    }
}

impl fmt::Debug for RedactedUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.redacted().as_str())
    }
}

impl<'de> Deserialize<'de> for RedactedUrl {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse()
            .map_err(|error| serde::de::Error::custom(format_args!("URL {text:?}: {error}")))
    }
}

impl Serialize for RedactedUrl {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.redacted().as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_never_shown() {
        let secret: Secret = serde_json::from_str("\"hunter2\"").unwrap();
        assert_eq!(secret.expose(), "hunter2");
        assert!(!format!("{secret:?}").contains("hunter2"));
        assert_eq!(serde_json::to_string(&secret).unwrap(), "\"<redacted>\"");
    }

    #[test]
    fn a_url_shows_everything_but_its_password() {
        let url: RedactedUrl = serde_json::from_str("\"https://user:hunter2@gb.example/graph\"").unwrap();
        assert_eq!(url.expose().as_str(), "https://user:hunter2@gb.example/graph");
        for shown in [
            url.to_string(),
            format!("{url:?}"),
            serde_json::to_string(&url).unwrap(),
        ] {
            assert!(
                shown.contains("https://user:redacted@gb.example/graph"),
                "{shown}"
            );
        }
        let plain: RedactedUrl = "http://gb:8080/graph".parse().unwrap();
        assert_eq!(plain.to_string(), "http://gb:8080/graph");
        assert_eq!(plain.expose(), plain.redacted());
    }

    #[test]
    fn a_password_from_elsewhere_is_as_secret_as_one_in_the_url() {
        let url: RedactedUrl = "postgres://fleet@db:5432/fleet".parse().unwrap();
        let with = url.with_password("hunter2").unwrap();
        assert_eq!(with.expose().as_str(), "postgres://fleet:hunter2@db:5432/fleet");
        assert_eq!(with.to_string(), "postgres://fleet:redacted@db:5432/fleet");
        let file: RedactedUrl = "sqlite:///var/lib/fleet.db".parse().unwrap();
        assert!(file.with_password("hunter2").is_err());
    }

    #[test]
    fn a_credential_in_the_query_is_as_secret_as_the_password() {
        let text = "postgres://fleet@db:5432/fleet?sslmode=require&password=hunter2&sslpassword=x%26y";
        let url: RedactedUrl = text.parse().unwrap();
        assert_eq!(url.expose().as_str(), text);
        for shown in [
            url.to_string(),
            format!("{url:?}"),
            serde_json::to_string(&url).unwrap(),
        ] {
            assert!(!shown.contains("hunter2") && !shown.contains("x%26y"), "{shown}");
            assert!(
                shown.contains(
                    "postgres://fleet@db:5432/fleet?sslmode=require&password=redacted&sslpassword=redacted"
                ),
                "{shown}"
            );
        }
        let with = url.with_password("pw").unwrap();
        assert_eq!(
            with.expose().as_str(),
            "postgres://fleet:pw@db:5432/fleet?sslmode=require&password=hunter2&sslpassword=x%26y"
        );
        let plain: RedactedUrl = "http://gb/graph?channel=stable-4.18".parse().unwrap();
        assert_eq!(plain.to_string(), "http://gb/graph?channel=stable-4.18");
    }

    #[test]
    fn an_invalid_url_is_refused_where_it_is_read() {
        let error = serde_json::from_str::<RedactedUrl>("\"not a url\"").unwrap_err();
        assert!(error.to_string().contains("not a url"), "{error}");
    }
}
