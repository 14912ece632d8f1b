//! The bearer tokens of the operator plane (`rollouts.token_file`, read
//! by `cincinnati_client::tokens`): each with a name (what the audit says
//! did a change) and a scope (what it may do). The file is read again when
//! it changes, so tokens rotate without a restart; a token removed is
//! refused from the next request on, and a file that cannot be read, or no
//! longer reads as tokens, refuses every token. Tokens are compared in
//! constant time and never logged. `Authorization`'s scheme is matched
//! without regard to case (RFC 9110 §11.1).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use cincinnati_client::tokens::{self, Scope};
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
    tokens: Vec<(String, SecretString, Scope)>,
}

/// Who a request's token says it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bearer {
    pub name: String,
    pub scope: Scope,
}

impl Tokens {
    /// Reads `path`; an error when it cannot be read, does not read as
    /// tokens, or holds none.
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
            .map_err(|error| format!("{}: {error}", path.display()))?;
        if count == 0 {
            return Err(format!("{} holds no token", path.display()));
        }
        Ok(tokens)
    }

    /// Who `authorization` (an `Authorization` header) is, if its token may
    /// do what `needed` allows: 401 without a bearer token, 403 for one the
    /// file does not hold or whose scope is too narrow.
    pub fn authorize(&self, authorization: Option<&str>, needed: Scope) -> Result<Bearer, ApiError> {
        let given = bearer_token(authorization)
            .ok_or_else(|| ApiError::new(ErrorKind::Unauthorized, "send Authorization: Bearer <token>"))?;
        if let Err(error) = self.fresh() {
            tracing::warn!(file = %self.path.display(), %error, "the token file cannot be read; every token is refused");
            self.state.lock().tokens.clear();
        }
        let state = self.state.lock();
        // Every token compared, whichever matches.
        let mut found = None;
        for (name, token, scope) in &state.tokens {
            if bool::from(token.expose_secret().as_bytes().ct_eq(given.as_bytes())) {
                found = Some(Bearer {
                    name: name.clone(),
                    scope: *scope,
                });
            }
        }
        let bearer = found.ok_or_else(|| {
            ApiError::new(
                ErrorKind::Forbidden,
                "the token is not one of rollouts.token_file's",
            )
        })?;
        if bearer.scope < needed {
            return Err(ApiError::new(
                ErrorKind::Forbidden,
                format_args!("the token's scope is {}; this needs {needed}", bearer.scope),
            ));
        }
        Ok(bearer)
    }

    /// Reads the file again if it changed; how many tokens it holds.
    fn fresh(&self) -> Result<usize, String> {
        let metadata = std::fs::metadata(&self.path).map_err(|error| error.to_string())?;
        let stamp = (
            metadata.modified().map_err(|error| error.to_string())?,
            metadata.len(),
        );
        let mut state = self.state.lock();
        if state.stamp != Some(stamp) {
            let text = std::fs::read_to_string(&self.path).map_err(|error| error.to_string())?;
            state.tokens = tokens::parse(&text)?
                .into_iter()
                .map(|line| (line.name, SecretString::from(line.token), line.scope))
                .collect();
            state.stamp = Some(stamp);
        }
        Ok(state.tokens.len())
    }
}

/// The token of a `Bearer` credential (the scheme in any case).
pub fn bearer_token(authorization: Option<&str>) -> Option<&str> {
    let (scheme, token) = authorization?.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("path", &self.path)
            .field("tokens", &self.state.lock().tokens.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_named_scoped_refused_when_unknown_and_taken_when_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tokens");
        std::fs::write(
            &file,
            "# operators\nops s3cret-one\n\nbare-token\nam am-token pause\n",
        )
        .unwrap();
        let tokens = Tokens::open(&file).unwrap();
        let name = |header: &str, needed| tokens.authorize(Some(header), needed).map(|bearer| bearer.name);
        assert_eq!(name("Bearer s3cret-one", Scope::Operate).unwrap(), "ops");
        assert_eq!(
            name("bearer s3cret-one", Scope::Operate).unwrap(),
            "ops",
            "any case"
        );
        assert_eq!(name("BEARER  bare-token", Scope::Read).unwrap(), "token-4");
        assert_eq!(name("Bearer am-token", Scope::Pause).unwrap(), "am");
        let kind = |header: Option<&str>, needed| tokens.authorize(header, needed).unwrap_err().kind;
        assert_eq!(
            kind(Some("Bearer am-token"), Scope::Operate),
            ErrorKind::Forbidden,
            "pause only"
        );
        assert_eq!(kind(None, Scope::Read), ErrorKind::Unauthorized);
        assert_eq!(
            kind(Some("Basic b3BzOnMzY3JldA=="), Scope::Read),
            ErrorKind::Unauthorized
        );
        assert_eq!(kind(Some("Bearer "), Scope::Read), ErrorKind::Unauthorized);
        assert_eq!(kind(Some("Bearer s3cret-on"), Scope::Read), ErrorKind::Forbidden);

        // Rotated: the old token is refused at once, the new one taken.
        std::fs::write(&file, "ops s3cret-two-longer\n").unwrap();
        assert_eq!(kind(Some("Bearer s3cret-one"), Scope::Read), ErrorKind::Forbidden);
        assert_eq!(name("Bearer s3cret-two-longer", Scope::Read).unwrap(), "ops");
        // No longer tokens (a scope misspelt): every token refused.
        std::fs::write(&file, "ops s3cret-two-longer operat\n").unwrap();
        assert_eq!(
            kind(Some("Bearer s3cret-two-longer"), Scope::Read),
            ErrorKind::Forbidden
        );
        std::fs::remove_file(&file).unwrap();
        assert_eq!(
            kind(Some("Bearer s3cret-two-longer"), Scope::Read),
            ErrorKind::Forbidden
        );
    }

    #[test]
    fn a_file_without_tokens_is_refused_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tokens");
        std::fs::write(&file, "# none yet\n").unwrap();
        assert!(Tokens::open(&file).unwrap_err().ends_with("holds no token"));
        assert!(Tokens::open(&dir.path().join("missing")).is_err());
        std::fs::write(&file, "gate t\n").unwrap();
        assert!(Tokens::open(&file).unwrap_err().contains("automation"));
    }
}
