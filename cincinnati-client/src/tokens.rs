//! The operator token file of a policy-engine (`rollouts.token_file`),
//! read by the engine to authenticate and by `cincinnati rollout` to send
//! one: one token a line, `name token [scope]` (the name is what the audit
//! says did a change), or a token alone (named `token-N`, N its line);
//! blank lines and `#` comments skipped.
//!
//! A scope says what a token may do; each includes those before it:
//!
//! | scope | may |
//! |---|---|
//! | `read` | read the rollouts and the fleet answers |
//! | `pause` | pause a rollout, and send Alertmanager's notifications |
//! | `operate` (the default) | resume, hold, release |

use std::fmt;

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    Read,
    Pause,
    Operate,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Pause => "pause",
            Self::Operate => "operate",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        [Self::Read, Self::Pause, Self::Operate]
            .into_iter()
            .find(|scope| scope.as_str() == text)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One token of the file.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenLine {
    pub name: String,
    pub token: String,
    pub scope: Scope,
}

impl fmt::Debug for TokenLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenLine")
            .field("name", &self.name)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// Names automation writes in the audit: no token may carry them.
pub const RESERVED_NAMES: [&str; 4] = ["fleet-signal", "canary", "prometheus", "gate"];

/// The tokens of a file's `text`; the first problem (with its line) when a
/// line is not one.
pub fn parse(text: &str) -> Result<Vec<TokenLine>, String> {
    let mut tokens = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let (name, token, scope) = match words[..] {
            [token] => (format!("token-{number}"), token, Scope::Operate),
            [name, token] => (name.to_owned(), token, Scope::Operate),
            [name, token, scope] => {
                let scope = Scope::parse(scope)
                    .ok_or_else(|| format!("line {number}: scope {scope:?} is not read, pause or operate"))?;
                (name.to_owned(), token, scope)
            }
            _ => return Err(format!("line {number}: not `name token [scope]`")),
        };
        if RESERVED_NAMES.contains(&name.as_str()) || name.starts_with("alertmanager:") {
            return Err(format!(
                "line {number}: the name {name:?} is what automation writes in the audit"
            ));
        }
        tokens.push(TokenLine {
            name,
            token: token.to_owned(),
            scope,
        });
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_have_names_and_scopes() {
        let tokens = parse("# operators\nops s3cret\n\nbare\nam am-token pause\nviewer v read\n").unwrap();
        let summary: Vec<(&str, &str, Scope)> = tokens
            .iter()
            .map(|token| (token.name.as_str(), token.token.as_str(), token.scope))
            .collect();
        assert_eq!(
            summary,
            [
                ("ops", "s3cret", Scope::Operate),
                ("token-4", "bare", Scope::Operate),
                ("am", "am-token", Scope::Pause),
                ("viewer", "v", Scope::Read),
            ]
        );
        assert!(Scope::Read < Scope::Pause && Scope::Pause < Scope::Operate);
        assert!(!format!("{:?}", tokens[0]).contains("s3cret"));
    }

    #[test]
    fn a_line_that_is_not_a_token_is_refused_by_its_number() {
        assert_eq!(
            parse("ops t admin").unwrap_err(),
            "line 1: scope \"admin\" is not read, pause or operate"
        );
        assert_eq!(
            parse("\na b c d").unwrap_err(),
            "line 2: not `name token [scope]`"
        );
        assert!(parse("canary t").unwrap_err().contains("automation"));
        assert!(parse("alertmanager:x t").unwrap_err().contains("automation"));
    }
}
