//! How a run ends: the exit code and its one-line reason.

use std::process::ExitCode;

use cincinnati_client::FetchError;

/// A command that answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Exit 0.
    Yes,
    /// Exit 1: the answer is "no" (no update, no path, ...), and why.
    No(String),
}

/// A command that could not answer.
#[derive(Debug)]
pub struct Failure {
    pub kind: FailureKind,
    pub error: anyhow::Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// Exit 2: bad arguments or unreadable local input.
    Input,
    /// Exit 3: the server failed or could not be reached.
    Service,
}

impl Failure {
    pub fn input(error: impl Into<anyhow::Error>) -> Self {
        Self {
            kind: FailureKind::Input,
            error: error.into(),
        }
    }
}

impl From<FetchError> for Failure {
    fn from(error: FetchError) -> Self {
        let kind = if error.is_local() {
            FailureKind::Input
        } else {
            FailureKind::Service
        };
        Self {
            kind,
            error: error.into(),
        }
    }
}

impl From<std::io::Error> for Failure {
    fn from(error: std::io::Error) -> Self {
        Failure::input(error)
    }
}

/// The exit code of a run, after printing its reason on stderr.
pub fn exit(result: Result<Answer, Failure>) -> ExitCode {
    let (code, reason) = match result {
        Ok(Answer::Yes) => return ExitCode::SUCCESS,
        Ok(Answer::No(reason)) => (1, reason),
        Err(Failure { kind, error }) => {
            let code = match kind {
                FailureKind::Input => 2,
                FailureKind::Service => 3,
            };
            (code, causes_once(&error))
        }
    };
    eprintln!("cincinnati: {}", one_line(&reason));
    ExitCode::from(code)
}

/// An error and its causes, each said once. Most errors name their cause
/// in their own message ("cannot read x: No such file or directory") and
/// give it as their source too; `{error:#}` would print it again after
/// each error naming it. A cause the text so far already says is left out.
fn causes_once(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain().map(ToString::to_string) {
        if text.contains(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    text
}

fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use anyhow::Context as _;

    use super::*;

    /// An error around `source` that names it in its own message (as
    /// thiserror's `"...: {source}"`), or not (as anyhow's `context`).
    #[derive(Debug)]
    struct Wrapped {
        what: String,
        naming: bool,
        source: Option<Box<Wrapped>>,
    }

    impl fmt::Display for Wrapped {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match (&self.source, self.naming) {
                (Some(source), true) => write!(f, "{}: {source}", self.what),
                _ => f.write_str(&self.what),
            }
        }
    }

    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.source.as_deref().map(|source| source as _)
        }
    }

    /// Every chain of up to five errors, each naming its cause or not,
    /// with and without a context: each message is said once, outermost
    /// first.
    #[test]
    fn every_cause_is_said_once_whichever_errors_name_theirs() {
        for layers in 0..5 {
            for naming in 0..1u32 << layers {
                for context in [false, true] {
                    let leaf = "No such file or directory (os error 2)";
                    let chain = (0..layers).rev().fold(
                        Wrapped {
                            what: leaf.to_owned(),
                            naming: false,
                            source: None,
                        },
                        |inner, layer| Wrapped {
                            what: format!("layer {layer} of {layers}"),
                            naming: naming & (1 << layer) != 0,
                            source: Some(Box::new(inner)),
                        },
                    );
                    let mut error = anyhow::Error::new(chain);
                    let mut said: Vec<String> = (0..layers)
                        .map(|layer| format!("layer {layer} of {layers}"))
                        .collect();
                    if context {
                        error = error.context("reading the graph");
                        said.insert(0, "reading the graph".to_owned());
                    }
                    said.push(leaf.to_owned());
                    assert_eq!(causes_once(&error), said.join(": "), "naming {naming:b}");
                }
            }
        }
    }

    #[test]
    fn a_cause_named_by_its_error_is_not_repeated() {
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        let error = Err::<(), _>(missing)
            .context("reading --cacert ca.pem")
            .unwrap_err();
        assert_eq!(causes_once(&error), "reading --cacert ca.pem: entity not found");
    }
}
