//! How a transport error is told: with every cause behind it.

/// An error with its sources, which hold what actually went wrong
/// ("connection refused", "certificate verify failed") behind reqwest's
/// generic message.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
