//! Why the operator plane could not answer a question or finish a
//! background round (counting the fleet, judging gates, checking halts).
//! Not the wire error: a route turns it into one (`From<OperatorError> for
//! ApiError`), a round logs it and counts it, and neither depends on the
//! other's shape.

use cincinnati_core::{ApiError, ErrorKind};
use http_answers::HttpError;

#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    /// The fleet store could not be opened or could not answer.
    #[error("{0:#}")]
    Store(anyhow::Error),
    /// The upstream's graph, which the question is asked of, is not there.
    #[error("{0}")]
    Upstream(String),
    /// The update graphs could not be built.
    #[error("building the update graphs failed: {0}")]
    Graphs(String),
}

impl From<OperatorError> for ApiError {
    fn from(error: OperatorError) -> Self {
        let kind = match error {
            OperatorError::Store(_) | OperatorError::Upstream(_) => ErrorKind::ServiceUnavailable,
            OperatorError::Graphs(_) => ErrorKind::FailedPluginExecution,
        };
        ApiError::new(kind, error)
    }
}

impl From<OperatorError> for HttpError {
    fn from(error: OperatorError) -> Self {
        ApiError::from(error).into()
    }
}
