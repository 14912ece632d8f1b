//! Open-loop load: each request is due at its own moment (a fixed rate's
//! `k / rate`, or the fleet's cadence), as a fleet's clusters ask on their
//! own clocks, and its latency counts from when it was due, so a server
//! that falls behind shows in the latency instead of slowing the load (wrk,
//! which the other benchmarks use, sends each connection's next request
//! only when the last one is answered, and has no schedule).
//!
//! `lanes` threads each keep a keep-alive connection per port and send
//! every `lanes`-th request (`Accept-Encoding: gzip`, as the CVO's Go
//! client sends), reading answers with http1-probes' framing: a few
//! microseconds of CPU a request, so the load generator leaves the cores
//! to the engine and the store (a tokio and reqwest client took about
//! 200 µs of CPU a request on the 2-core machine, as much as the engine).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::io::Write as _;
use std::net::{Ipv4Addr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::percentiles;

/// One request: when it is due (from the run's start), a port on
/// 127.0.0.1 and a path with its query.
#[derive(Debug, Clone)]
pub struct Request {
    pub due: Duration,
    pub port: u16,
    pub path: String,
}

/// Request `k` of a run, or `None`: the run ends. Due times never
/// decrease with `k`.
pub type Requests = Arc<dyn Fn(u64) -> Option<Request> + Send + Sync>;

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct RateResult {
    pub sent: u64,
    /// 2xx answers read whole.
    pub ok: u64,
    /// Other statuses, and connections that failed.
    pub failed: u64,
    /// Sent more than 10 ms after they were due: the lanes fell behind.
    pub late: u64,
    /// From the start to the last answer.
    pub seconds: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl RateResult {
    pub fn ok_per_second(&self) -> f64 {
        self.ok as f64 / self.seconds.max(f64::EPSILON)
    }
}

/// When request `number` is due at a fixed `rate` per second.
pub fn fixed_rate(rate: f64, number: u64) -> Duration {
    Duration::from_secs_f64(number as f64 / rate)
}

/// Sends `requests`, each when due, over `lanes` connections; blocks until
/// the last is answered.
pub fn drive(lanes: u64, requests: Requests) -> RateResult {
    let start = Instant::now() + Duration::from_millis(10);
    let handles: Vec<_> = (0..lanes)
        .map(|lane| {
            let requests = requests.clone();
            std::thread::spawn(move || run_lane(lane, lanes, start, &*requests))
        })
        .collect();
    let mut result = RateResult::default();
    let mut latencies = Vec::new();
    for handle in handles {
        let lane = handle.join().expect("a load lane does not panic");
        result.sent += lane.sent;
        result.failed += lane.failed;
        result.late += lane.late;
        latencies.extend(lane.latencies_ms);
    }
    result.seconds = start.elapsed().as_secs_f64();
    result.ok = latencies.len() as u64;
    (result.p50_ms, result.p99_ms, result.max_ms) = percentiles(&mut latencies);
    result
}

#[derive(Default)]
struct Lane {
    sent: u64,
    failed: u64,
    late: u64,
    latencies_ms: Vec<f64>,
}

fn run_lane(
    lane: u64,
    lanes: u64,
    start: Instant,
    requests: &(dyn Fn(u64) -> Option<Request> + Send + Sync),
) -> Lane {
    let mut connections: HashMap<u16, (TcpStream, Vec<u8>)> = HashMap::new();
    let mut result = Lane::default();
    for number in (lane..).step_by(lanes as usize) {
        let Some(request) = requests(number) else { break };
        let due = start + request.due;
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        } else if now - due > Duration::from_millis(10) {
            result.late += 1;
        }
        result.sent += 1;
        match exchange(&mut connections, &request) {
            Ok(true) => result.latencies_ms.push(due.elapsed().as_secs_f64() * 1e3),
            Ok(false) => result.failed += 1,
            Err(_) => {
                connections.remove(&request.port);
                result.failed += 1;
            }
        }
    }
    result
}

/// Sends `request` on its port's connection (opened if needed) and reads
/// the answer: whether it was a 2xx.
fn exchange(
    connections: &mut HashMap<u16, (TcpStream, Vec<u8>)>,
    request: &Request,
) -> std::io::Result<bool> {
    let (stream, pending) = match connections.entry(request.port) {
        Entry::Occupied(open) => open.into_mut(),
        Entry::Vacant(vacant) => {
            let stream = TcpStream::connect((Ipv4Addr::LOCALHOST, request.port))?;
            stream.set_nodelay(true)?;
            stream.set_read_timeout(Some(Duration::from_secs(10)))?;
            vacant.insert((stream, Vec::new()))
        }
    };
    write!(
        stream,
        "GET {} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nAccept-Encoding: gzip\r\n\r\n",
        request.path
    )?;
    let response = http1_probes::wire::read_response(stream, pending, false)?;
    if response.closes() {
        connections.remove(&request.port);
    }
    Ok((200..300).contains(&response.status))
}
