//! Graceful shutdown: what starts it (a signal, or a [`StopHandle`]).

use tokio_util::sync::CancellationToken;

/// Stops a running service from elsewhere (tests, an embedding program).
/// Clones stop the same service.
#[derive(Debug, Clone, Default)]
pub struct StopHandle(CancellationToken);

impl StopHandle {
    pub fn stop(&self) {
        self.0.cancel();
    }

    /// Resolves on SIGTERM (what Kubernetes sends), SIGINT (Ctrl-C) or
    /// [`StopHandle::stop`]; every clone of the handle is stopped then.
    pub async fn until_stopped(&self) -> std::io::Result<()> {
        use tokio::signal::unix::{SignalKind, signal};
        let mut terminate = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        tokio::select! {
            _ = terminate.recv() => tracing::info!("SIGTERM received, shutting down"),
            _ = interrupt.recv() => tracing::info!("SIGINT received, shutting down"),
            () = self.0.cancelled() => {}
        }
        self.stop();
        Ok(())
    }
}
