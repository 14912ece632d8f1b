//! Raw-socket HTTP/1.1 clients for testing a server's front door, shared by
//! the connection layer's tests (`http1-server`), the services' tests and
//! the reliability scenario that puts real proxies in front of them.
//!
//! - [`cases`]: the conformance cases, each naming the rule of RFC 9112 (or
//!   RFC 9110) it checks and what a server following it answers.
//! - [`run`]: a case sent over a socket, and the verdict on what came back.
//! - [`flood`]: a pipelining flood, and sockets that connect and never speak.
//! - [`wire`]: responses read off a raw socket.

pub mod cases;
pub mod flood;
pub mod run;
pub mod wire;
