//! The fleet store's promises, each a named property, each held by both
//! stores: a SQLite file in a temporary directory and a throw-away
//! PostgreSQL server, with two handles on one store where engines sharing
//! it would race.

mod control;
mod full_disk;
mod gates;
mod questions;
mod recording;
mod schema;
mod support;
