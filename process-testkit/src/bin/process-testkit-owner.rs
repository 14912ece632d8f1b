//! Starts two children the way tests do, reports their process groups on
//! stdout and waits for ever: the process a test kills to show that what
//! a test started dies with it (`tests/children.rs`).
//!
//! - `sleep`, started with [`process_testkit::command`];
//! - a shell that starts a `sleep` of its own in the background, started
//!   with [`process_testkit::command_with_descendants`] (as chromedriver
//!   starts Chromium).

use process_testkit::{TestChild, command, command_with_descendants};

fn main() -> std::io::Result<()> {
    let mut sleep = command("sleep");
    sleep.arg("600");
    let sleep = TestChild::spawn(sleep)?;
    let mut tree = command_with_descendants("sh");
    tree.args(["-c", "sleep 600 & wait"]);
    let tree = TestChild::spawn(tree)?;
    println!("groups={} {}", sleep.id(), tree.id());
    loop {
        std::thread::park();
    }
}
