//! The rollout model tested from outside: rollouts as tables of cases
//! (`test_data/*.rollout`: a declaration, run-time control, gates and the
//! clock in, where the rollout is and whom it offers its target out), and
//! the invariants the documentation promises as properties.

mod properties;
mod support;
mod tables;
