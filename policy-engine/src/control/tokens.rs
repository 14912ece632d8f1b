//! The bearer tokens of the operator API (`rollouts.token_file`): one a
//! line, `name token` (the name is what the audit says did a change) or a
//! token alone (named `token-N`, N its line); blank lines and `#` comments
//! skipped. The file is read again when it changes, so tokens rotate
//! without a restart; a token removed is refused from the next request on,
//! and a file that cannot be read refuses every token. Tokens are compared
//! in constant time and never logged.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use cincinnati_core::{ApiError, ErrorKind};
use parking_lot::Mutex;
use secrecy::{ExposeSecret as _, SecretString};
use subtle::ConstantTimeEq as _;

pub struct Tokens {
    path: PathBuf,
    state: Mutex<Read>,
}

/// The file as last read, and what it said.
struct Read {
    /// Its modification time and length when read: a change of either is
    /// read again.
    stamp: Option<(SystemTime, u64)>,
    tokens: Vec<(String, SecretString)>,
}

impl Tokens {
    /// Reads `path`; an error when it cannot be read or holds no token.
    pub fn open(path: &Path) -> Result<Self, String> {
        let tokens = Self {
            path: path.to_owned(),
            state: Mutex::new(Read {
                stamp: None,
                tokens: Vec::new(),
            }),
        };
        let count = tokens
            .fresh()
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        if count == 0 {
            return Err(format!("{} holds no token", path.display()));
        }
        Ok(tokens)
    }

    /// The name of the token `authorization` (an `Authorization` header)
    /// carries: 401 without a bearer token, 403 for one the file does not
    /// hold.
    pub fn authorize(&self, authorization: Option<&str>) -> Result<String, ApiError> {
        let given = authorization
            .and_then(|header| header.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|token| !token.is_empty())
            .ok_or_else(|| ApiError::new(ErrorKind::Unauthorized, "send Authorization: Bearer <token>"))?;
        if let Err(error) = self.fresh() {
            tracing::warn!(file = %self.path.display(), %error, "the token file cannot be read; every token is refused");
            self.state.lock().tokens.clear();
        }
        let state = self.state.lock();
        // Every token compared, whichever matches.
        let mut found = None;
        for (name, token) in &state.tokens {
            if bool::from(token.expose_secret().as_bytes().ct_eq(given.as_bytes())) {
                found = Some(name.clone());
            }
        }
        found.ok_or_else(|| {
            ApiError::new(
                ErrorKind::Forbidden,
                "the token is not one of rollouts.token_file's",
            )
        })
    }

    /// Reads the file again if it changed; how many tokens it holds.
    fn fresh(&self) -> std::io::Result<usize> {
        let metadata = std::fs::metadata(&self.path)?;
        let stamp = (metadata.modified()?, metadata.len());
        let mut state = self.state.lock();
        if state.stamp != Some(stamp) {
            let text = std::fs::read_to_string(&self.path)?;
            state.tokens = parse(&text);
            state.stamp = Some(stamp);
        }
        Ok(state.tokens.len())
    }
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("path", &self.path)
            .field("tokens", &self.state.lock().tokens.len())
            .finish()
    }
}

fn parse(text: &str) -> Vec<(String, SecretString)> {
    text.lines()
        .enumerate()
        .filter_map(|(index, line)| {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                return None;
            }
            let (name, token) = match line.split_once(char::is_whitespace) {
                Some((name, token)) => (name.to_owned(), token.trim()),
                None => (format!("token-{}", index + 1), line),
            };
            Some((name, SecretString::from(token.to_owned())))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_named_refused_when_unknown_and_taken_when_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tokens");
        std::fs::write(&file, "# operators\nops s3cret-one\n\nbare-token\n").unwrap();
        let tokens = Tokens::open(&file).unwrap();
        assert_eq!(tokens.authorize(Some("Bearer s3cret-one")).unwrap(), "ops");
        assert_eq!(tokens.authorize(Some("Bearer bare-token")).unwrap(), "token-4");
        let kind = |header: Option<&str>| tokens.authorize(header).unwrap_err().kind;
        assert_eq!(kind(None), ErrorKind::Unauthorized);
        assert_eq!(kind(Some("Basic b3BzOnMzY3JldA==")), ErrorKind::Unauthorized);
        assert_eq!(kind(Some("Bearer ")), ErrorKind::Unauthorized);
        assert_eq!(kind(Some("Bearer s3cret-on")), ErrorKind::Forbidden);

        // Rotated: the old token is refused at once, the new one taken.
        std::fs::write(&file, "ops s3cret-two-longer\n").unwrap();
        assert_eq!(kind(Some("Bearer s3cret-one")), ErrorKind::Forbidden);
        assert_eq!(tokens.authorize(Some("Bearer s3cret-two-longer")).unwrap(), "ops");
        std::fs::remove_file(&file).unwrap();
        assert_eq!(kind(Some("Bearer s3cret-two-longer")), ErrorKind::Forbidden);
    }

    #[test]
    fn a_file_without_tokens_is_refused_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tokens");
        std::fs::write(&file, "# none yet\n").unwrap();
        assert!(Tokens::open(&file).unwrap_err().ends_with("holds no token"));
        assert!(
            Tokens::open(&dir.path().join("missing"))
                .unwrap_err()
                .starts_with("cannot read")
        );
    }
}
