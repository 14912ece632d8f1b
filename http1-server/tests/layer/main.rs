//! The HTTP/1.1 connection layer against raw TCP clients on loopback.

mod conformance;
mod connections;
mod front_door;
mod support;
