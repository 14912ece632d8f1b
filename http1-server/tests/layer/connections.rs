//! The HTTP/1.1 connection layer against raw TCP clients on loopback: what
//! goes over the wire, byte for byte, for the cases HTTP clients produce.
//! (The cases of RFC 9112 a server must refuse are in `conformance.rs`;
//! floods, storms and stuck threads in `front_door.rs`.)

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::support::{LARGE_LEN, SMALL, TestServer, large_body};
use http1_probes::wire::{self, Response};

fn read_response(stream: &mut TcpStream, pending: &mut Vec<u8>, head_only: bool) -> Response {
    wire::read_response(stream, pending, head_only).unwrap()
}

/// Whether the server closed the connection (read returns end of file).
fn closed_by_server(stream: &mut TcpStream) -> bool {
    let mut byte = [0];
    matches!(stream.read(&mut byte), Ok(0))
}

fn exchange(server: &TestServer, request: &str) -> (Response, TcpStream) {
    let mut stream = server.connect();
    stream.write_all(request.as_bytes()).unwrap();
    let head_only = request.starts_with("HEAD");
    let response = read_response(&mut stream, &mut Vec::new(), head_only);
    (response, stream)
}

#[tokio::test(flavor = "multi_thread")]
async fn keep_alive_connections_take_request_after_request() {
    let server = TestServer::start(|_| {});
    let mut stream = server.connect();
    let mut pending = Vec::new();
    for _ in 0..3 {
        stream
            .write_all(b"GET /small HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let response = read_response(&mut stream, &mut pending, false);
        assert_eq!(response.status, 200);
        assert_eq!(response.body, SMALL.as_bytes());
        assert_eq!(response.header("content-length"), Some("14"));
        assert!(response.header("date").unwrap().ends_with(" GMT"));
        assert_eq!(response.header("connection"), None);
    }
    server.wait_for_open(1).await;
    drop(stream);
    server.wait_for_open(0).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pipelined_requests_are_answered_in_order() {
    let server = TestServer::start(|_| {});
    let mut stream = server.connect();
    stream
        .write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\nHEAD /small HTTP/1.1\r\nHost: x\r\n\r\nGET /small HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut pending = Vec::new();
    let statuses: Vec<u16> = [false, false, true, false]
        .into_iter()
        .map(|head_only| read_response(&mut stream, &mut pending, head_only).status)
        .collect();
    assert_eq!(statuses, [200, 404, 200, 200]);
    assert!(pending.is_empty(), "nothing but the four answers: {pending:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_head_sent_a_byte_at_a_time_is_answered() {
    let server = TestServer::start(|_| {});
    let mut stream = server.connect();
    for byte in b"GET /small HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n" {
        stream.write_all(&[*byte]).unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    let response = read_response(&mut stream, &mut Vec::new(), false);
    assert_eq!((response.status, &response.body[..]), (200, SMALL.as_bytes()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_is_answered_after_the_client_closes_its_side() {
    let server = TestServer::start(|_| {});
    let mut stream = server.connect();
    stream
        .write_all(b"GET /small HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let response = read_response(&mut stream, &mut Vec::new(), false);
    assert_eq!((response.status, &response.body[..]), (200, SMALL.as_bytes()));
    assert!(closed_by_server(&mut stream));
}

#[tokio::test(flavor = "multi_thread")]
async fn head_announces_the_length_and_sends_no_body() {
    let server = TestServer::start(|_| {});
    let mut stream = server.connect();
    stream
        .write_all(b"HEAD /large HTTP/1.1\r\nHost: x\r\n\r\nGET /small HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut pending = Vec::new();
    let head = read_response(&mut stream, &mut pending, true);
    assert_eq!(
        head.header("content-length"),
        Some(LARGE_LEN.to_string().as_str())
    );
    let next = read_response(&mut stream, &mut pending, false);
    assert_eq!(
        next.body,
        SMALL.as_bytes(),
        "no body came between the two answers"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_close_when_the_client_or_its_version_says_so() {
    let server = TestServer::start(|_| {});
    let (response, mut stream) = exchange(
        &server,
        "GET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(response.header("connection"), Some("close"));
    assert!(closed_by_server(&mut stream));

    let (response, mut stream) = exchange(&server, "GET /small HTTP/1.0\r\n\r\n");
    assert!(
        response
            .headers
            .iter()
            .all(|(name, _)| name != "transfer-encoding")
    );
    assert_eq!(response.header("connection"), Some("close"));
    assert!(closed_by_server(&mut stream));

    let (response, mut stream) = exchange(&server, "GET /small HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    assert_eq!(response.header("connection"), Some("keep-alive"));
    stream.write_all(b"GET /small HTTP/1.0\r\n\r\n").unwrap();
    assert_eq!(
        read_response(&mut stream, &mut Vec::new(), false).body,
        SMALL.as_bytes()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bodies_of_unknown_size_are_chunked_or_end_with_the_connection() {
    let server = TestServer::start(|_| {});
    let (chunked, _) = exchange(&server, "GET /chunked HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(chunked.header("transfer-encoding"), Some("chunked"));
    assert_eq!(chunked.body, b"one,two,three");

    let (old, mut stream) = exchange(&server, "GET /chunked HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    assert_eq!(old.header("transfer-encoding"), None);
    assert_eq!(old.header("connection"), Some("close"));
    assert_eq!(old.body, b"one,two,three");
    assert!(closed_by_server(&mut stream));

    let (sized, _) = exchange(&server, "GET /sized HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(sized.header("content-length"), Some("13"));
    assert_eq!(sized.body, b"one,two,three");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_large_body_reaches_a_slow_reader_whole() {
    let server = TestServer::start(|_| {});
    let mut stream = server.connect();
    stream
        .write_all(b"GET /large HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    // The kernel's buffers fill and the server waits for the reader.
    std::thread::sleep(Duration::from_millis(300));
    let response = read_response(&mut stream, &mut Vec::new(), false);
    assert_eq!(response.body.len(), LARGE_LEN);
    assert!(response.body == large_body());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_stops_reading_is_dropped_after_the_send_timeout() {
    let server = TestServer::start(|_| {});
    let mut stream = server.connect();
    stream
        .write_all(b"GET /large HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    server.wait_for_open(1).await;
    server.wait_for_open(0).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_and_silent_clients_are_cut_off() {
    let server = TestServer::start(|_| {});
    // A head that never ends (slowloris): 408 (when: `connection.rs`'s
    // tests, on tokio's clock).
    let mut slow = server.connect();
    slow.write_all(b"GET /small HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .unwrap();
    let response = read_response(&mut slow, &mut Vec::new(), false);
    assert_eq!(response.status, 408);

    // A connection that never says anything, and one idle after an answer.
    let mut silent = server.connect();
    let (_, mut idle) = exchange(&server, "GET /small HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(closed_by_server(&mut silent));
    assert!(closed_by_server(&mut idle));
    server.wait_for_open(0).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_accepts_no_more_than_its_connections() {
    let server = TestServer::start(|options| options.max_connections_per_worker = 2);
    let first = server.connect();
    let (_, _second) = exchange(&server, "GET /small HTTP/1.1\r\nHost: x\r\n\r\n");
    server.wait_for_open(2).await;

    let mut third = server.connect();
    third
        .write_all(b"GET /small HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    third.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    let mut byte = [0];
    assert!(third.read(&mut byte).is_err(), "not accepted while two are open");

    drop(first);
    third.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert_eq!(read_response(&mut third, &mut Vec::new(), false).status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_graceful_stop_closes_idle_connections_and_finishes_answers() {
    let mut server = TestServer::start(|_| {});
    let (_, mut idle) = exchange(&server, "GET /small HTTP/1.1\r\nHost: x\r\n\r\n");
    let mut busy = server.connect();
    busy.write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    server.wait_for_open(2).await;
    server.wait_for_slow_answers(1).await;

    let running = server.server.take().unwrap();
    let handle = running.handle();
    let stopped = tokio::spawn(running);
    handle.stop(true).await;
    stopped.await.unwrap().unwrap();

    assert!(closed_by_server(&mut idle));
    let response = read_response(&mut busy, &mut Vec::new(), false);
    assert_eq!((response.status, &response.body[..]), (200, SMALL.as_bytes()));
    assert_eq!(response.header("connection"), Some("close"));
    assert!(TcpStream::connect(server.address).is_err(), "no longer listening");
}
