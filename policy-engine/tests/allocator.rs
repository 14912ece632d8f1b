//! The binary applies its allocator settings itself, however it is started
//! (the image sets them; a package or `cargo install` would not), and keeps
//! those the environment sets.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use registry_testkit::poll;

/// The engine, started with `environment` and without the allocator
/// settings otherwise; ports chosen by the kernel, an upstream that is
/// not there.
fn start(environment: &[(&str, &str)]) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_policy-engine"));
    command
        .args(["--service.port", "0", "--status.port", "0"])
        .args(["--upstream.cincinnati.url", "http://127.0.0.1:9/graph"])
        .env_remove("MIMALLOC_PURGE_DELAY")
        .env_remove("MIMALLOC_ARENA_EAGER_COMMIT")
        .envs(environment.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command.spawn().expect("the engine starts")
}

/// The environment of process `pid` as `NAME=value` entries.
fn environment_of(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .unwrap_or_default()
        .split(|byte| *byte == 0)
        .map(|entry| String::from_utf8_lossy(entry).into_owned())
        .collect()
}

async fn wait_for_environment(child: &Child, expected: &[&str]) {
    let pid = child.id();
    poll::eventually("the engine's allocator settings", Duration::from_secs(30), || {
        let environment = environment_of(pid);
        let found = expected
            .iter()
            .all(|entry| environment.iter().any(|set| set == entry));
        async move { found }
    })
    .await;
}

#[tokio::test]
async fn a_binary_started_without_the_settings_applies_them() {
    let mut engine = start(&[]);
    wait_for_environment(
        &engine,
        &["MIMALLOC_PURGE_DELAY=0", "MIMALLOC_ARENA_EAGER_COMMIT=0"],
    )
    .await;
    assert!(engine.try_wait().unwrap().is_none(), "the engine runs on");
    engine.kill().unwrap();
    engine.wait().unwrap();
}

#[tokio::test]
async fn a_setting_of_the_environment_is_kept() {
    let mut engine = start(&[("MIMALLOC_PURGE_DELAY", "10")]);
    wait_for_environment(
        &engine,
        &["MIMALLOC_PURGE_DELAY=10", "MIMALLOC_ARENA_EAGER_COMMIT=0"],
    )
    .await;
    engine.kill().unwrap();
    engine.wait().unwrap();
}
