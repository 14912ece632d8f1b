//! Closing a connection the client may still be sending on. Closing a
//! socket with unread bytes makes the kernel answer with a reset, which can
//! destroy the response before the client reads it (RFC 9112 §9.6): the
//! sending side is closed first, and what the client still sends is read
//! and discarded for a while.

use std::io;
use std::time::Duration;

use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;

/// Closes the sending side, then reads and discards what the client still
/// sends for up to `grace`, then closes.
pub async fn linger(mut stream: TcpStream, grace: Duration) {
    if stream.shutdown().await.is_err() {
        return;
    }
    let mut discard = [0; 1024];
    let reading = async {
        loop {
            if stream.readable().await.is_err() {
                return;
            }
            match stream.try_read(&mut discard) {
                Ok(0) => return,
                Ok(_) => {}
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => return,
            }
        }
    };
    let _ = tokio::time::timeout(grace, reading).await;
}
