//! A child process that dies with its test.

use std::ffi::OsStr;
use std::io;
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, ChildStderr, ChildStdout, Command, ExitStatus};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process, kill_process_group};

use crate::processes;

/// How long the rest of a killed group may take to exit; `SIGKILL` cannot
/// be caught, so this bounds only a machine too busy to schedule the exits.
const GROUP_EXIT_TIMEOUT: Duration = Duration::from_secs(10);
const GROUP_EXIT_POLL_INTERVAL: Duration = Duration::from_millis(5);

/// `program` under `setpriv --pdeathsig=KILL`, in a process group of its
/// own: add arguments, environment and standard streams, then
/// [`TestChild::spawn`] it.
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut command = Command::new("setpriv");
    command.arg("--pdeathsig=KILL").arg("--").arg(program);
    command.process_group(0);
    command
}

/// [`command`] for a program that starts processes of its own which would
/// outlive it (chromedriver's Chromium stays when chromedriver is killed):
/// a shell starts `program` and, sent `TERM` when the test process dies,
/// kills the whole process group, the shell included. Dropping the
/// [`TestChild`] kills the group as for any child.
pub fn command_with_descendants(program: impl AsRef<OsStr>) -> Command {
    let mut command = Command::new("setpriv");
    command
        .arg("--pdeathsig=TERM")
        .arg("--")
        .arg("sh")
        .arg("-c")
        // `wait` returns when a trapped signal arrives, and the trap runs.
        .arg("trap 'kill -KILL 0' TERM; \"$@\" & wait $!")
        .arg("sh")
        .arg(program);
    command.process_group(0);
    command
}

/// Where `program` is on `PATH`: the programs are started through
/// `setpriv` (and a shell), which start even when the program is missing
/// and only then fail to run it, so a test checks first to say so.
pub fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// A running child of the test, leader of its own process group; the
/// group is killed when this is dropped, and by the kernel when the test
/// process dies.
#[derive(Debug)]
pub struct TestChild {
    child: Child,
    /// Never sent on: dropping it (after the child is reaped) lets the
    /// thread that spawned the child end.
    _keeper: mpsc::Sender<()>,
}

impl TestChild {
    /// Spawns `command` from a thread that lives until this value is
    /// dropped. Made by [`command`] or [`command_with_descendants`], it is
    /// the leader of a process group and dies with the test process; a
    /// testkit that needs another `setpriv` (another user, another death
    /// signal) makes its own and sets `process_group(0)`.
    pub fn spawn(mut command: Command) -> io::Result<Self> {
        let (spawned_sender, spawned) = mpsc::sync_channel(1);
        let (keeper, released) = mpsc::channel::<()>();
        thread::Builder::new()
            .name("process-testkit-keeper".to_owned())
            .spawn(move || {
                let child = command.spawn();
                let started = child.is_ok();
                if let Err(mpsc::SendError(Ok(mut child))) = spawned_sender.send(child) {
                    // Nobody waits for it: do not leave it running.
                    let _ = child.kill();
                    let _ = child.wait();
                } else if started {
                    // Returns once `keeper` is dropped.
                    let _ = released.recv();
                }
            })?;
        let child = spawned
            .recv()
            .map_err(|_| io::Error::other("the thread spawning the child ended first"))??;
        Ok(Self {
            child,
            _keeper: keeper,
        })
    }

    /// The child's process id, which is also its process group's.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    /// `Some` once the child has exited (what it started may still run).
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Sends `signal` to the child alone, as an operator would.
    pub fn signal(&mut self, signal: Signal) -> io::Result<()> {
        if self.child.try_wait()?.is_some() {
            return Ok(());
        }
        // Not reaped yet (we are its only waiter), so the pid is still ours.
        kill_process(pid(&self.child), signal)?;
        Ok(())
    }

    /// Kills the child and everything in its process group with `SIGKILL`,
    /// as a crash or the OOM killer would, reaps the child, and returns once
    /// nothing of the group runs (or after [`GROUP_EXIT_TIMEOUT`]).
    pub fn kill(&mut self) -> io::Result<()> {
        // The group outlives its leader while any member runs, and its id
        // is not reused until every member is gone: this reaches only what
        // the child started. (ESRCH: nothing left.)
        let _ = kill_process_group(pid(&self.child), Signal::KILL);
        // The child itself, should a command have left it in the test's group.
        if self.child.try_wait()?.is_none() {
            self.child.kill()?;
        }
        self.child.wait()?;
        let deadline = Instant::now() + GROUP_EXIT_TIMEOUT;
        while Instant::now() < deadline && !processes::running_in_group(self.id()).is_empty() {
            thread::sleep(GROUP_EXIT_POLL_INTERVAL);
        }
        Ok(())
    }
}

fn pid(child: &Child) -> Pid {
    Pid::from_child(child)
}

impl Drop for TestChild {
    fn drop(&mut self) {
        // A destructor cannot report errors; killing fails only for a
        // group that is already gone.
        let _ = self.kill();
    }
}
