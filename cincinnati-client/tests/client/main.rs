//! What a service offers clusters, through the library's public API: the
//! CVO's view of a graph (at a moment, with the releases phasing into a
//! channel), update paths, explanations, diffs, and signature checks
//! against a real store. One test binary, so the suite links once.

mod diff;
mod explain;
mod phasing;
mod planning;
mod signatures;
mod support;
mod updates;
