//! The settings the engine's allocator (mimalloc, set in `main.rs`) needs
//! for memory to go back to the system, read from the environment before
//! `main` runs, so they are the launcher's to set: the image, the demo and
//! the benchmarks set them; a binary started without them is told.
//!
//! Measured on the demo graph, every (channel, arch) answered once
//! (docs/benchmarks-policy-engine.md): 101 MiB with mimalloc's defaults, 50
//! MiB with these (glibc's malloc: 78 MiB); the live heap is about 20 MiB.

/// Variable, value, and what it does.
pub const SETTINGS: [(&str, &str, &str); 2] = [
    (
        "MIMALLOC_PURGE_DELAY",
        "0",
        "an emptied page goes back at once, not at a later allocation of the same thread",
    ),
    (
        "MIMALLOC_ARENA_EAGER_COMMIT",
        "0",
        "arena memory is committed as it is used, so purging returns it",
    ),
];

/// Logs a warning for each setting the environment lacks.
pub fn warn_if_unset() {
    for (variable, value, why) in SETTINGS {
        if std::env::var(variable).as_deref() != Ok(value) {
            tracing::warn!(
                "{variable} is not {value}: memory freed by answers and closed connections returns to the system later ({why}); the image sets it"
            );
        }
    }
}
