//! Which processes a test suite left running.
//!
//! A process is left over when it runs (a zombie does not), did not run
//! before the suite (no process had its pid *and* start time then, so
//! nothing that ran before the suite counts, whatever its name), and
//! either
//!
//! 1. carries the suite's marker ([`crate::RUN_MARKER`] set to a value of
//!    the suite's own), which every process the suite started inherits
//!    unless it clears its environment; or
//! 2. is in the session the suite ran in and was orphaned: going up its
//!    parents while they are in that session and started during the suite,
//!    the last one's parent is gone, outside the session or init (pid 1,
//!    which adopts orphans and, in a container whose first process runs
//!    the suite, is in the suite's session itself). Chromium's
//!    renderers clear their environment but keep the session; a process
//!    started during the suite by anything still running from before it (a
//!    shell, the checker itself) is not orphaned.

use std::collections::{HashMap, HashSet};

use crate::processes::Process;

/// Longest chain of parents followed (pids do not form cycles, but a
/// process read while another exits might).
const MAX_DEPTH: usize = 4096;

/// The process orphans are given to.
const INIT: u32 = 1;

/// What is known of the suite.
#[derive(Debug)]
pub struct Suite {
    /// `(pid, start time)` of every process that ran before the suite.
    pub before: HashSet<(u32, u64)>,
    /// The session the suite ran in.
    pub session: u32,
}

/// A process now, and whether it carries the suite's marker.
#[derive(Debug, Clone)]
pub struct Seen {
    pub process: Process,
    pub marked: bool,
}

impl Suite {
    fn ran_before(&self, process: &Process) -> bool {
        self.before.contains(&(process.pid, process.start_time))
    }

    /// The processes of `now` the suite left running.
    pub fn left_over<'a>(&self, now: &'a [Seen]) -> Vec<&'a Seen> {
        let by_pid: HashMap<u32, &Process> =
            now.iter().map(|seen| (seen.process.pid, &seen.process)).collect();
        now.iter()
            .filter(|seen| !seen.process.zombie && !self.ran_before(&seen.process))
            .filter(|seen| seen.marked || self.orphaned_in_session(&seen.process, &by_pid))
            .collect()
    }

    fn orphaned_in_session(&self, process: &Process, by_pid: &HashMap<u32, &Process>) -> bool {
        if process.session != self.session {
            return false;
        }
        let mut current = process;
        for _ in 0..MAX_DEPTH {
            match by_pid.get(&current.parent) {
                None => return true,
                Some(parent) if parent.session != self.session || parent.pid == INIT => return true,
                Some(parent) if self.ran_before(parent) => return false,
                Some(parent) => current = parent,
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SESSION: u32 = 100;

    /// A process: pid, parent, session, start time, zombie, marked.
    fn seen(pid: u32, parent: u32, session: u32, start_time: u64, zombie: bool, marked: bool) -> Seen {
        Seen {
            process: Process {
                pid,
                parent,
                group: pid,
                session,
                start_time,
                zombie,
                name: format!("p{pid}"),
            },
            marked,
        }
    }

    fn left_over(before: &[(u32, u64)], now: &[Seen]) -> Vec<u32> {
        let suite = Suite {
            before: before.iter().copied().collect(),
            session: SESSION,
        };
        let mut pids: Vec<u32> = suite.left_over(now).iter().map(|seen| seen.process.pid).collect();
        pids.sort();
        pids
    }

    /// init (1), the shell that ran the suite (100, the session's leader)
    /// and a browser someone had open before (50, another session).
    fn machine() -> Vec<Seen> {
        vec![
            seen(1, 0, 1, 1, false, false),
            seen(100, 1, SESSION, 10, false, false),
            seen(50, 1, 50, 5, false, false),
        ]
    }

    const BEFORE: [(u32, u64); 3] = [(1, 1), (100, 10), (50, 5)];

    #[test]
    fn nothing_is_left_over_when_only_what_ran_before_runs() {
        assert_eq!(left_over(&BEFORE, &machine()), Vec::<u32>::new());
    }

    #[test]
    fn a_marked_process_is_left_over_wherever_it_is() {
        let mut now = machine();
        // A registry the suite started, reparented to init, in a session
        // of its own (it called setsid).
        now.push(seen(200, 1, 200, 20, false, true));
        assert_eq!(left_over(&BEFORE, &now), [200]);
    }

    #[test]
    fn an_unmarked_orphan_in_the_session_and_its_children_are_left_over() {
        let mut now = machine();
        // Chromium orphaned by a killed chromedriver, and its renderer,
        // which cleared its environment.
        now.push(seen(300, 1, SESSION, 30, false, true));
        now.push(seen(301, 300, SESSION, 31, false, false));
        now.push(seen(302, 301, SESSION, 32, false, false));
        assert_eq!(left_over(&BEFORE, &now), [300, 301, 302]);
    }

    #[test]
    fn an_orphan_is_left_over_when_init_shares_the_suites_session() {
        // A container whose first process runs the suite: init is the
        // session's leader and adopts every orphan.
        let mut now = vec![
            seen(1, 0, SESSION, 1, false, false),
            seen(100, 1, SESSION, 10, false, false),
        ];
        now.push(seen(700, 1, SESSION, 70, false, false));
        now.push(seen(701, 100, SESSION, 71, false, false));
        assert_eq!(left_over(&[(1, 1), (100, 10)], &now), [700]);
    }

    #[test]
    fn a_process_of_something_that_ran_before_is_not_left_over() {
        let mut now = machine();
        // The checker, started by the shell after the suite, and a build
        // another command of that shell started meanwhile.
        now.push(seen(400, 100, SESSION, 40, false, false));
        now.push(seen(401, 100, SESSION, 41, false, false));
        now.push(seen(402, 401, SESSION, 42, false, false));
        assert_eq!(left_over(&BEFORE, &now), Vec::<u32>::new());
    }

    #[test]
    fn processes_of_other_sessions_count_only_with_the_marker() {
        let mut now = machine();
        // Someone else's test run, orphans included, in their own session.
        now.push(seen(500, 1, 77, 50, false, false));
        now.push(seen(501, 500, 77, 51, false, false));
        assert_eq!(left_over(&BEFORE, &now), Vec::<u32>::new());
    }

    #[test]
    fn a_zombie_is_not_left_over_but_its_running_children_are() {
        let mut now = machine();
        now.push(seen(600, 1, SESSION, 60, true, true));
        now.push(seen(601, 600, SESSION, 61, false, false));
        assert_eq!(left_over(&BEFORE, &now), [601]);
    }

    #[test]
    fn a_pid_reused_during_the_suite_is_a_new_process() {
        let mut now = machine();
        // pid 50 ended and was given to a process the suite started.
        now.retain(|seen| seen.process.pid != 50);
        now.push(seen(50, 1, SESSION, 70, false, false));
        assert_eq!(left_over(&BEFORE, &now), [50]);
    }
}
