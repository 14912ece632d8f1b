//! The processes of the machine, as `/proc` shows them.

use std::path::Path;

/// One process, from `/proc/<pid>/stat`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    pub pid: u32,
    pub parent: u32,
    pub group: u32,
    pub session: u32,
    /// When it started, in clock ticks since boot: with the pid, tells a
    /// process from a later one given the same pid.
    pub start_time: u64,
    /// Exited, not yet reaped (a container's init may never reap orphans):
    /// it runs no more.
    pub zombie: bool,
    /// Its command name (at most 15 bytes).
    pub name: String,
}

impl Process {
    /// The process `pid`, if it exists.
    pub fn read(pid: u32) -> Option<Self> {
        parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    /// Whether it still runs (and is the same process, not a later one
    /// given its pid).
    pub fn runs(&self) -> bool {
        Self::read(self.pid).is_some_and(|now| now.start_time == self.start_time && !now.zombie)
    }

    /// Its command line, arguments separated by spaces (empty for a
    /// kernel thread or a process gone meanwhile).
    pub fn command_line(&self) -> String {
        let raw = std::fs::read(format!("/proc/{}/cmdline", self.pid)).unwrap_or_default();
        raw.split(|byte| *byte == 0)
            .filter(|part| !part.is_empty())
            .map(String::from_utf8_lossy)
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Whether its environment holds `entry` (`NAME=value`); false when it
    /// cannot be read (another user's process, or gone).
    pub fn has_environment_entry(&self, entry: &str) -> bool {
        std::fs::read(format!("/proc/{}/environ", self.pid))
            .is_ok_and(|raw| raw.split(|byte| *byte == 0).any(|item| item == entry.as_bytes()))
    }
}

/// Every process now (those that exit while being read are left out).
pub fn all() -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir(Path::new("/proc")) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .filter_map(Process::read)
        .collect()
}

/// The running (not zombie) processes of process group `group`.
pub fn running_in_group(group: u32) -> Vec<Process> {
    all()
        .into_iter()
        .filter(|process| process.group == group && !process.zombie)
        .collect()
}

/// `pid (comm) state ppid pgrp session ... starttime ...`: the command name
/// may hold spaces and parentheses, so fields are counted after its last `)`.
fn parse_stat(stat: &str) -> Option<Process> {
    let (head, rest) = stat.rsplit_once(") ")?;
    let (pid, name) = head.split_once(" (")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(Process {
        pid: pid.parse().ok()?,
        zombie: matches!(*fields.first()?, "Z" | "X"),
        parent: fields.get(1)?.parse().ok()?,
        group: fields.get(2)?.parse().ok()?,
        session: fields.get(3)?.parse().ok()?,
        // The 22nd field of the line, the 20th after the name.
        start_time: fields.get(19)?.parse().ok()?,
        name: name.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_read_past_a_name_with_spaces_and_parentheses() {
        let stat = "4242 (Web Content (x)) S 17 4242 17 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1 2 3";
        assert_eq!(
            parse_stat(stat),
            Some(Process {
                pid: 4242,
                parent: 17,
                group: 4242,
                session: 17,
                start_time: 987654,
                zombie: false,
                name: "Web Content (x)".to_owned(),
            })
        );
        let zombie = stat.replace(") S ", ") Z ");
        assert!(parse_stat(&zombie).unwrap().zombie);
        assert_eq!(parse_stat("4242 (short) S 1 2"), None);
    }

    #[test]
    fn this_process_is_read_and_runs() {
        let me = Process::read(std::process::id()).unwrap();
        assert_eq!(me.pid, std::process::id());
        assert!(me.runs());
        assert!(!me.command_line().is_empty());
        assert!(all().contains(&me));
    }
}
