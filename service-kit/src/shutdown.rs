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

    /// Resolves once the service is stopping.
    pub async fn stopping(&self) {
        self.0.cancelled().await;
    }

    /// Handles SIGTERM (what Kubernetes sends) and SIGINT (Ctrl-C) from
    /// now on, rather than letting them end the process: the returned future
    /// resolves on either or on [`StopHandle::stop`], and every clone of the
    /// handle is stopped then.
    pub fn until_stopped(&self) -> std::io::Result<impl Future<Output = ()> + use<>> {
        use tokio::signal::unix::{SignalKind, signal};
        let mut terminate = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        let handle = self.clone();
        Ok(async move {
            tokio::select! {
                _ = terminate.recv() => tracing::info!("SIGTERM received, shutting down"),
                _ = interrupt.recv() => tracing::info!("SIGINT received, shutting down"),
                () = handle.0.cancelled() => {}
            }
            handle.stop();
        })
    }
}
