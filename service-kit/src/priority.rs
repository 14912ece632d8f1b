//! Answers before bulk work: work that may wait (the fleet store's writes
//! and counts, and the threads they start, such as SQLite's) runs on a
//! runtime of its own at a lower scheduling priority than everything
//! else, so that on a busy node a burst of it (a batch of 5,000 checks
//! written, a count of a million clusters) delays the next write rather
//! than the answers in flight. Work whose delay clients would see stays at
//! the process's priority: upstream polls and the revisions they bring (a
//! risk declared upstream must reach clients while the engine is
//! saturated). The
//! scheduler still gives a thread [`BACKGROUND_NICENESS`] steps lower
//! about a tenth of the share of one at the default, and all the idle
//! time: under load that never ends, bulk work falls behind, and its own
//! bounds (a queue that drops and counts) say so.

use std::io;

/// How many nice steps below its process a background thread runs.
pub const BACKGROUND_NICENESS: i32 = 10;

/// The highest nice value (the lowest priority) Linux has.
const LOWEST: i32 = 19;

/// Lowers the calling thread's priority by [`BACKGROUND_NICENESS`]; the
/// threads it starts afterwards inherit it. For
/// [`background_runtime`]'s `on_thread_start`.
///
/// Linux keeps a nice value per thread: `setpriority(PRIO_PROCESS, 0)`
/// changes the caller's alone (setpriority(2), "Bugs"). Lowering one's own
/// priority needs no privilege; where it is refused all the same (a
/// seccomp profile), the thread keeps the process's priority, as before.
fn background_thread() {
    let _ = lower_this_thread(BACKGROUND_NICENESS);
}

/// A runtime for bulk work: one worker thread named `name` (and the
/// blocking threads it starts), all [`BACKGROUND_NICENESS`] steps lower.
pub fn background_runtime(name: &str) -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name(name)
        .enable_all()
        .on_thread_start(background_thread)
        .build()
}

fn lower_this_thread(steps: i32) -> io::Result<()> {
    let now = rustix::process::getpriority_process(None)?;
    rustix::process::setpriority_process(None, (now + steps).min(LOWEST))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn this_thread_niceness() -> io::Result<i32> {
        Ok(rustix::process::getpriority_process(None)?)
    }

    #[test]
    fn a_background_thread_and_the_threads_it_starts_run_lower_and_others_do_not() {
        let process = this_thread_niceness().unwrap();
        let (background, started) = std::thread::spawn(|| {
            background_thread();
            let started = std::thread::spawn(|| this_thread_niceness().unwrap());
            (this_thread_niceness().unwrap(), started.join().unwrap())
        })
        .join()
        .unwrap();
        let expected = (process + BACKGROUND_NICENESS).min(LOWEST);
        assert_eq!(background, expected);
        assert_eq!(started, expected, "a thread inherits its starter's priority");
        assert_eq!(
            this_thread_niceness().unwrap(),
            process,
            "the caller's thread alone"
        );
        let sibling = std::thread::spawn(|| this_thread_niceness().unwrap())
            .join()
            .unwrap();
        assert_eq!(sibling, process);
    }
}
