//! Processes started by tests stop with the test that started them, and a
//! test suite can be checked for processes it left running.
//!
//! [`TestChild`] starts a program the way every testkit and the e2e harness
//! start theirs:
//!
//! - under util-linux's `setpriv --pdeathsig`, so the kernel signals it
//!   when the test process dies, however it dies (a panic that skips
//!   destructors, nextest's timeout, `kill -9`). `setpriv` sets the signal
//!   and then execs the program, so the process spawned *is* the program.
//!   (The workspace forbids `unsafe`, which a `pre_exec` calling
//!   `prctl(PR_SET_PDEATHSIG)` itself would need.)
//! - from a thread of its own that lives as long as the child: the kernel
//!   sends the parent-death signal when the *thread* that spawned a process
//!   ends, and a test's runtime worker or blocking thread may end before
//!   the test does.
//! - in a process group of its own, killed whole when the `TestChild` is
//!   dropped (also during a panic), so whatever the program started goes
//!   with it. For a program whose own children would outlive it when the
//!   test process dies (chromedriver starts Chromium),
//!   [`command_with_descendants`] puts a shell between that kills the
//!   whole group on the parent-death signal.
//!
//! [`leftovers`] is the check `scripts/test.sh` runs after the suite (the
//! `leftover-processes` binary): which processes started during the suite
//! still run, told from everything that ran before by process id and start
//! time. [`processes`] reads `/proc`, for that check and for tests that
//! assert nothing of theirs is left.
//!
//! Linux only, as the rest of the test support.

mod child;
pub mod leftovers;
pub mod processes;

pub use child::{TestChild, command, command_with_descendants, find_program};

/// The environment variable `scripts/test.sh` gives the suite a value of
/// its own in, which every process the suite starts inherits unless it
/// clears its environment.
pub const RUN_MARKER: &str = "CINCINNATI_TEST_RUN";
