//! Pushes real images to a real `docker-registry` (see
//! scripts/install-test-deps.sh) and reads them back over plain HTTP requests.

mod auth_and_tls;
mod blob_reuse;
mod cli;
mod content;
mod formats;
mod support;
