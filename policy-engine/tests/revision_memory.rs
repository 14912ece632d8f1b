//! A revision costs what it holds. An engine chained to an engine keeps a
//! revision per feed (up to `max_feeds`, 1,024), most with an answer or two;
//! answer caches sized for `max_answers` (4,096) up front grew an engine
//! flooded with made-up channels by about 100 MiB
//! (`scripts/reliability/storm.sh`, docs/reliability.md). Its own test
//! binary, so that no other test allocates while it measures.

use std::time::SystemTime;

use cincinnati_core::Graph;
use policy_engine::Revision;

/// Resident memory of this process (`/proc/self/statm`, 4 KiB pages).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("Linux /proc");
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[test]
fn revisions_without_answers_reserve_no_room_for_them() {
    let before = resident_bytes();
    let revisions: Vec<Revision> = (0..1024)
        .map(|_| Revision::new(Graph::new(), SystemTime::now(), 4096))
        .collect();
    let grown = resident_bytes().saturating_sub(before);
    assert!(grown < 4 << 20, "1,024 empty revisions hold {} KiB", grown >> 10);
    drop(revisions);
}
