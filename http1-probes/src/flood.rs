//! Clients that abuse a server's front door: a pipelining flood, and
//! sockets that connect and never speak.

use std::io::{self, Read as _, Write as _};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Connections that each write `request` `per_write` times per write, in a
/// loop, while reading the answers as fast as they come: a client that
/// always has its next request buffered at the server.
pub struct Flood {
    stop: Arc<AtomicBool>,
    read: Arc<AtomicU64>,
    connections: Vec<(TcpStream, JoinHandle<()>, JoinHandle<()>)>,
}

impl Flood {
    pub fn start(
        address: SocketAddr,
        request: &str,
        connections: usize,
        per_write: usize,
    ) -> io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let read = Arc::new(AtomicU64::new(0));
        let batch: Arc<[u8]> = request.repeat(per_write).into_bytes().into();
        let mut opened = Vec::new();
        for _ in 0..connections {
            let stream = TcpStream::connect(address)?;
            stream.set_nodelay(true)?;
            let mut writer = stream.try_clone()?;
            let mut reader = stream.try_clone()?;
            let (stop_writing, batch) = (stop.clone(), batch.clone());
            let writing = std::thread::spawn(move || {
                while !stop_writing.load(Ordering::Relaxed) {
                    if writer.write_all(&batch).is_err() {
                        return;
                    }
                }
            });
            let counted = read.clone();
            let reading = std::thread::spawn(move || {
                let mut buffer = vec![0; 1 << 20];
                while let Ok(bytes @ 1..) = reader.read(&mut buffer) {
                    counted.fetch_add(bytes as u64, Ordering::Relaxed);
                }
            });
            opened.push((stream, writing, reading));
        }
        Ok(Self {
            stop,
            read,
            connections: opened,
        })
    }

    /// Bytes of answers read so far, across connections.
    pub fn bytes_read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }

    /// Stops writing, closes the connections, and returns the bytes read.
    pub fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        for (stream, writing, reading) in self.connections {
            let _ = stream.shutdown(Shutdown::Both);
            let _ = writing.join();
            let _ = reading.join();
        }
        self.read.load(Ordering::Relaxed)
    }
}

/// Sockets that connect and send nothing, all closed and opened again every
/// `reopen_every` (clients that stall, then retry), until stopped.
pub struct SilentSockets {
    stop: Arc<AtomicBool>,
    opened: Arc<AtomicU64>,
    thread: JoinHandle<()>,
}

impl SilentSockets {
    pub fn start(address: SocketAddr, sockets: usize, reopen_every: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let opened = Arc::new(AtomicU64::new(0));
        let (stopping, counted) = (stop.clone(), opened.clone());
        let thread = std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                let mut held = Vec::with_capacity(sockets);
                for _ in 0..sockets {
                    if let Ok(stream) = TcpStream::connect_timeout(&address, Duration::from_secs(1)) {
                        held.push(stream);
                        counted.fetch_add(1, Ordering::Relaxed);
                    }
                }
                let mut waited = Duration::ZERO;
                while waited < reopen_every && !stopping.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(50));
                    waited += Duration::from_millis(50);
                }
                drop(held);
            }
        });
        Self { stop, opened, thread }
    }

    /// Sockets opened so far (every round's).
    pub fn opened(&self) -> u64 {
        self.opened.load(Ordering::Relaxed)
    }

    pub fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}
