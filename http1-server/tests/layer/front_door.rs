//! What the front door guarantees under abuse: a pipelining flood does not
//! keep other clients waiting, connections admitted at the limit are served
//! for as long as they stay open, a stuck thread shows, and a route that
//! would read a body fails loudly.

use std::io::Write as _;
use std::time::Duration;

use http1_probes::flood::{Flood, SilentSockets};
use http1_probes::wire;
use registry_testkit::poll;

use crate::support::{SMALL, TestServer};

const REQUEST: &str = "GET /small HTTP/1.1\r\nHost: x\r\n\r\n";

/// Asks `/small` `times` times on new connections and `times` times on one
/// kept-alive connection; returns the statuses.
fn other_client(address: std::net::SocketAddr, times: usize) -> Vec<u16> {
    let connect = || {
        let stream = std::net::TcpStream::connect(address).unwrap();
        // Bounds a hung test; an answer that waits for the flood to end waits
        // this long and fails.
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        stream
    };
    let mut statuses = Vec::new();
    for _ in 0..times {
        let mut stream = connect();
        stream.write_all(REQUEST.as_bytes()).unwrap();
        statuses.push(
            wire::read_response(&mut stream, &mut Vec::new(), false).map_or(0, |response| response.status),
        );
    }
    let mut kept = connect();
    let mut pending = Vec::new();
    for _ in 0..times {
        kept.write_all(REQUEST.as_bytes()).unwrap();
        statuses
            .push(wire::read_response(&mut kept, &mut pending, false).map_or(0, |response| response.status));
    }
    statuses
}

/// Issue 26, defect 1: a client that always has its next request buffered
/// held its worker (and the acceptor, which ran on worker 0) for as long as
/// it kept sending.
#[tokio::test(flavor = "multi_thread")]
async fn a_pipelining_flood_does_not_keep_other_clients_waiting() {
    // One worker: the flood and the other client share it.
    let server = TestServer::start(|_| {});
    let flood = Flood::start(server.address, "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", 1, 2000).unwrap();
    poll::eventually("the flood answered", Duration::from_secs(30), || {
        let read = flood.bytes_read();
        async move { read > 1 << 20 }
    })
    .await;

    let address = server.address;
    let statuses = tokio::task::spawn_blocking(move || other_client(address, 10))
        .await
        .unwrap();
    let answered_to_flood = flood.bytes_read();
    assert_eq!(statuses, vec![200; 20]);
    // The other client was answered while the flood was being answered.
    poll::eventually("the flood still answered", Duration::from_secs(30), || {
        let read = flood.bytes_read();
        async move { read > answered_to_flood }
    })
    .await;
    // The worker turns its loop between the flood's answers: its probe is
    // green (the skeleton's threshold is 5 s; a thread that yields every few
    // answers turns within milliseconds).
    let stalled_for = server.handle().stalled_for();
    assert!(stalled_for < Duration::from_secs(2), "{stalled_for:?}");
    flood.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thread_stuck_in_a_handler_shows_as_stalled_until_it_turns_again() {
    let server = TestServer::start(|_| {});
    let address = server.address;
    let blocked = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        stream
            .write_all(b"GET /block HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        wire::read_response(&mut stream, &mut Vec::new(), false)
            .unwrap()
            .status
    });
    let handle = server.handle();
    poll::eventually("the worker stalled", Duration::from_secs(10), || {
        let stalled_for = handle.stalled_for();
        async move { stalled_for >= Duration::from_secs(1) }
    })
    .await;
    assert_eq!(blocked.await.unwrap(), 200);
    poll::eventually("the worker turning again", Duration::from_secs(10), || {
        let stalled_for = handle.stalled_for();
        async move { stalled_for < Duration::from_secs(1) }
    })
    .await;
}

/// A handler that blocks its thread holds up that worker's connections,
/// not the ones that arrive after it: the acceptor passes over a worker
/// whose loop has stopped turning (probes on the status port, say).
#[tokio::test(flavor = "multi_thread")]
async fn new_connections_go_to_a_worker_that_turns_while_another_is_stuck() {
    let server = TestServer::start(|options| {
        options.workers = 2;
        options.timeouts.keep_alive = Duration::from_secs(60);
    });
    let ask = |stream: &mut std::net::TcpStream, path: &str| {
        let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n");
        stream.write_all(request.as_bytes()).unwrap();
    };
    // By load alone, the next connection would go to the stuck worker:
    // an idle connection on worker 0, the stuck one on worker 1, another
    // idle one on worker 0.
    let mut idle = vec![server.connect()];
    ask(&mut idle[0], "/small");
    server.wait_for_open(1).await;
    let mut stuck = server.connect();
    ask(&mut stuck, "/hold");
    let hold = server.hold.clone();
    poll::eventually("the handler holding its thread", Duration::from_secs(10), || {
        let holding = hold.holding();
        async move { holding }
    })
    .await;
    idle.push(server.connect());
    ask(&mut idle[1], "/small");
    server.wait_for_open(3).await;
    let handle = server.handle();
    poll::eventually("the worker stuck", Duration::from_secs(10), || {
        let stalled_for = handle.stalled_for();
        async move { stalled_for >= Duration::from_secs(1) }
    })
    .await;

    let address = server.address;
    let fresh = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        stream.write_all(REQUEST.as_bytes()).unwrap();
        wire::read_response(&mut stream, &mut Vec::new(), false).map(|response| response.status)
    })
    .await
    .unwrap();
    server.hold.release();
    assert_eq!(fresh.unwrap(), 200, "answered while the other worker is stuck");
    let held = tokio::task::spawn_blocking(move || {
        wire::read_response(&mut stuck, &mut Vec::new(), false)
            .unwrap()
            .status
    });
    assert_eq!(held.await.unwrap(), 200);
}

/// Issue 26, defect 2: the limit counted silent sockets on every request,
/// so a client admitted before them got 503 for its next request.
#[tokio::test(flavor = "multi_thread")]
async fn connections_admitted_at_the_limit_are_served_while_they_stay_open() {
    let server = TestServer::start_with_limit(5, |_| {});
    let mut admitted = server.connect();
    let mut pending = Vec::new();
    admitted.write_all(REQUEST.as_bytes()).unwrap();
    assert_eq!(
        wire::read_response(&mut admitted, &mut pending, false)
            .unwrap()
            .status,
        200
    );

    let silent: Vec<_> = (0..6).map(|_| server.connect()).collect();
    server.wait_for_open(5).await;
    poll::eventually("two refused", Duration::from_secs(10), || {
        let refused = server.refused.get();
        async move { refused == 2 }
    })
    .await;
    admitted.write_all(REQUEST.as_bytes()).unwrap();
    let response = wire::read_response(&mut admitted, &mut pending, false).unwrap();
    assert_eq!((response.status, &response.body[..]), (200, SMALL.as_bytes()));

    // A connection beyond the limit hears why, and is closed.
    let mut beyond = server.connect();
    beyond.write_all(REQUEST.as_bytes()).unwrap();
    let refusal = wire::read_response(&mut beyond, &mut Vec::new(), false).unwrap();
    assert_eq!(
        (refusal.status, refusal.header("connection")),
        (503, Some("close"))
    );
    assert_eq!(refusal.body, b"too many connections");

    // Silent sockets are closed by the client timeout, which makes room.
    drop(silent);
    server.wait_for_open(1).await;
    let mut later = server.connect();
    later.write_all(REQUEST.as_bytes()).unwrap();
    assert_eq!(
        wire::read_response(&mut later, &mut Vec::new(), false)
            .unwrap()
            .status,
        200
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_storm_of_silent_sockets_at_the_limit_costs_admitted_clients_nothing() {
    let server = TestServer::start_with_limit(20, |_| {});
    let address = server.address;
    let mut admitted = server.connect();
    let storm = SilentSockets::start(address, 200, Duration::from_millis(300));
    poll::eventually("the storm at the limit", Duration::from_secs(30), || {
        let (refused, opened) = (server.refused.get(), storm.opened());
        async move { refused > 0 && opened > 400 }
    })
    .await;
    let statuses = tokio::task::spawn_blocking(move || {
        let mut pending = Vec::new();
        (0..200)
            .map(|_| {
                admitted.write_all(REQUEST.as_bytes()).unwrap();
                wire::read_response(&mut admitted, &mut pending, false)
                    .unwrap()
                    .status
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    storm.stop();
    assert_eq!(statuses, vec![200; 200]);
}

/// A route that takes a body gets it whole, however it was framed, and the
/// connection goes on; a body beyond the server's bound is answered 413
/// before it is read.
#[tokio::test(flavor = "multi_thread")]
async fn a_route_that_takes_a_body_gets_it_within_the_bound() {
    let server = TestServer::start(|options| options.gate = http1_server::Gate::taking(10));
    let mut stream = server.connect();
    stream
        .write_all(
            b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello\
              POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n6\r\nefghij\r\n0\r\n\r\n\
              POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n",
        )
        .unwrap();
    let mut pending = Vec::new();
    let mut answers = Vec::new();
    for _ in 0..3 {
        let response = wire::read_response(&mut stream, &mut pending, false).unwrap();
        answers.push((
            response.status,
            String::from_utf8_lossy(&response.body).into_owned(),
        ));
    }
    assert_eq!(
        answers[..2],
        [(200, "5 bytes".to_owned()), (200, "10 bytes".to_owned())]
    );
    assert_eq!(answers[2].0, 413);
}
