//! The fleet store as the engine holds it: opened on first use (and after
//! an outage), its password read at each opening. The recorder writes to
//! it; the fleet answers and the rollouts' run-time control read it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwapOption;
use fleet_store::{FleetStore, StoreError};
use rollout_model::evidence::Evidence;
use service_kit::secret::RedactedUrl;

/// The store, opened on first use and again after it was unreachable.
pub struct StoreHandle {
    url: RedactedUrl,
    password_file: Option<PathBuf>,
    /// See [`FleetStore::with_seen_step`] and [`FleetStore::with_evidence`].
    seen_step: Duration,
    evidence: Evidence,
    open: ArcSwapOption<FleetStore>,
    /// One opening at a time: two would apply the migrations twice.
    opening: tokio::sync::Mutex<()>,
}

impl StoreHandle {
    pub fn new(
        url: RedactedUrl,
        password_file: Option<PathBuf>,
        (seen_step, evidence): (Duration, Evidence),
    ) -> Self {
        Self {
            url,
            password_file,
            seen_step,
            evidence,
            open: ArcSwapOption::empty(),
            opening: tokio::sync::Mutex::new(()),
        }
    }

    /// The store as the logs and `/status` name it (no password).
    pub fn shown(&self) -> String {
        self.url.to_string()
    }

    /// The store if open (the recorder opens it).
    pub fn current(&self) -> Option<Arc<FleetStore>> {
        self.open.load_full()
    }

    /// The store, opened (and migrated) first if it is not.
    pub async fn get(&self) -> Result<Arc<FleetStore>, StoreError> {
        if let Some(store) = self.current() {
            return Ok(store);
        }
        let _opening = self.opening.lock().await;
        if let Some(store) = self.current() {
            return Ok(store);
        }
        let url = match &self.password_file {
            None => self.url.clone(),
            Some(path) => {
                let password = tokio::fs::read(path)
                    .await
                    .map_err(|error| StoreError::Password(format!("reading {}: {error}", path.display())))?;
                let password = String::from_utf8_lossy(password.trim_ascii()).into_owned();
                self.url.with_password(&password).map_err(StoreError::Password)?
            }
        };
        let store = FleetStore::open(url.expose().as_str(), &self.shown()).await?;
        let store = Arc::new(store.with_seen_step(self.seen_step).with_evidence(self.evidence));
        self.open.store(Some(store.clone()));
        Ok(store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_password_file_is_read_when_the_store_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("password");
        let handle = StoreHandle::new(
            "postgres://fleet@127.0.0.1:1/fleet".parse().unwrap(),
            Some(file.clone()),
            (Duration::ZERO, Evidence::default()),
        );
        let error = handle.get().await.unwrap_err().to_string();
        assert!(
            error.starts_with("the fleet store's password: reading "),
            "{error}"
        );
        std::fs::write(&file, "hunter2\n").unwrap();
        let error = format!("{:#}", anyhow::Error::new(handle.get().await.unwrap_err()));
        assert!(
            error.starts_with("connecting to the fleet store postgres://fleet@127.0.0.1:1/fleet"),
            "{error}"
        );
        assert!(!error.contains("hunter2"), "{error}");
    }

    #[tokio::test]
    async fn questions_and_the_recorder_opening_at_once_migrate_once() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("fleet.db").display());
        let handle = StoreHandle::new(url.parse().unwrap(), None, (Duration::ZERO, Evidence::default()));
        let (first, second) = tokio::join!(handle.get(), handle.get());
        assert!(Arc::ptr_eq(&first.unwrap(), &second.unwrap()));
    }
}
