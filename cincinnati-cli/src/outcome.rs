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
            (code, format!("{error:#}"))
        }
    };
    eprintln!("cincinnati: {}", one_line(&reason));
    ExitCode::from(code)
}

fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}
