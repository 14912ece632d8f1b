//! Graceful shutdown: the signal that starts it.

/// Resolves on SIGTERM (what Kubernetes sends) or SIGINT (Ctrl-C).
pub async fn termination_signal() -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = terminate.recv() => tracing::info!("SIGTERM received, shutting down"),
        _ = interrupt.recv() => tracing::info!("SIGINT received, shutting down"),
    }
    Ok(())
}
