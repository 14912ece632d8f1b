//! The settings the engine's allocator (mimalloc, set in `main.rs`) needs
//! for memory to go back to the system, applied by the binary itself.
//!
//! Measured on the demo graph, every (channel, arch) answered once
//! (docs/benchmarks-policy-engine.md): 101 MiB with mimalloc's defaults, 50
//! MiB with these (glibc's malloc: 78 MiB); the live heap is about 20 MiB.
//!
//! mimalloc reads its options from the environment when the process is
//! loaded, before `main`, and the first allocations already use them; the
//! crate offers no safe way to change them later. So the binary, started
//! without them, executes itself again (same process, same arguments) with
//! them in its environment: however it is run (a package, systemd,
//! `cargo install`), it gets the figures above. A variable already set is
//! left as it is, for experiments.

use std::ffi::OsString;
use std::os::unix::process::CommandExt as _;
use std::process::Command;

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

/// The settings missing from `environment`.
fn missing(environment: impl Fn(&str) -> Option<OsString>) -> Vec<(&'static str, &'static str)> {
    SETTINGS
        .iter()
        .filter(|(variable, _, _)| environment(variable).is_none())
        .map(|&(variable, value, _)| (variable, value))
        .collect()
}

/// Executes this binary again with the settings the environment lacks; an
/// environment that has them all is left alone. Returns only when there is
/// nothing to do, or when executing failed (then the engine runs on with
/// mimalloc's defaults, and says so). Call first thing in `main`, before
/// any thread starts.
pub fn apply() {
    let missing = missing(|variable| std::env::var_os(variable));
    if missing.is_empty() {
        return;
    }
    let mut arguments = std::env::args_os();
    let mut command = Command::new("/proc/self/exe");
    if let Some(name) = arguments.next() {
        command.arg0(name);
    }
    let error = command.args(arguments).envs(missing).exec();
    eprintln!(
        "policy-engine: could not execute itself with its allocator settings ({error}); \
         memory freed by answers and closed connections returns to the system later"
    );
}

/// Logs the settings the environment overrides.
pub fn log_overrides() {
    for (variable, value, why) in SETTINGS {
        if let Ok(set) = std::env::var(variable)
            && set != value
        {
            tracing::info!("{variable}={set} from the environment, not {value} ({why})");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_settings_the_environment_lacks_are_added() {
        assert_eq!(missing(|_| None).len(), SETTINGS.len());
        assert!(missing(|_| Some("5".into())).is_empty());
        let only_delay_set = missing(|variable| (variable == "MIMALLOC_PURGE_DELAY").then(|| "10".into()));
        assert_eq!(only_delay_set, [("MIMALLOC_ARENA_EAGER_COMMIT", "0")]);
    }
}
