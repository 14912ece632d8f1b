//! A per-service Prometheus registry. Metric names are what upstream's
//! dashboards and alerts query, so they are spelled out exactly: the registry
//! adds the service prefix (`cincinnati_pe`, `cincinnati_gb`) and nothing else.

use prometheus::{Encoder, IntCounterVec, Opts, Registry, TextEncoder};

/// A registry whose metric names all start with `{prefix}_`.
pub fn registry(prefix: &str) -> prometheus::Result<Registry> {
    Registry::new_custom(Some(prefix.to_owned()), None)
}

/// `build_info{git_commit}`, a counter set to 1 as upstream does.
pub fn register_build_info(registry: &Registry, git_commit: &str) -> prometheus::Result<()> {
    let build_info = IntCounterVec::new(
        Opts::new("build_info", "Build information of this service"),
        &["git_commit"],
    )?;
    registry.register(Box::new(build_info.clone()))?;
    build_info.with_label_values(&[git_commit]).inc();
    Ok(())
}

/// The registry in the Prometheus text format (version 0.0.4).
pub fn encode(registry: &Registry) -> Vec<u8> {
    let mut text = Vec::new();
    TextEncoder::new()
        .encode(&registry.gather(), &mut text)
        .expect("encoding gathered metrics into memory cannot fail");
    text
}

/// The content type of [`encode`]'s output.
pub const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_prefix_exactly() {
        let registry = registry("cincinnati_pe").unwrap();
        register_build_info(&registry, "abc123").unwrap();
        let text = String::from_utf8(encode(&registry)).unwrap();
        assert!(
            text.contains("cincinnati_pe_build_info{git_commit=\"abc123\"} 1"),
            "{text}"
        );
    }
}
