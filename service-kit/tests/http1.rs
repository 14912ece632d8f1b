//! The HTTP/1.1 connection layer against raw TCP clients on loopback: what
//! goes over the wire, byte for byte, for the cases HTTP clients and
//! attackers produce.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use actix_web::body::{MessageBody, SizedStream};
use actix_web::{App, HttpResponse, web};
use bytes::Bytes;
use service_kit::connections::ConnectionLimit;
use service_kit::errors::not_found;
use service_kit::http1::{self, Options, Server, Timeouts};
use service_kit::metrics::MetricRegistry;
use service_kit::routes::get_or_head;

const SMALL: &str = "a small answer";
const LARGE_LEN: usize = 4 << 20;

fn large_body() -> Bytes {
    (0..LARGE_LEN)
        .map(|n| (n % 251) as u8)
        .collect::<Vec<u8>>()
        .into()
}

/// A body whose size is unknown in advance: sent chunked in HTTP/1.1.
fn chunks() -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> {
    futures::stream::iter(["one,", "two,", "three"].map(|chunk| Ok(Bytes::from(chunk))))
}

fn app() -> App<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    App::new()
        .service(get_or_head("/small", || async { HttpResponse::Ok().body(SMALL) }))
        .service(get_or_head("/large", || async {
            HttpResponse::Ok().body(large_body())
        }))
        .service(get_or_head("/chunked", || async {
            HttpResponse::Ok().streaming(chunks())
        }))
        .service(get_or_head("/sized", || async {
            HttpResponse::Ok().body(SizedStream::new(13, chunks()))
        }))
        .service(get_or_head("/slow", || async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            HttpResponse::Ok().body(SMALL)
        }))
        .default_service(web::to(not_found))
}

struct TestServer {
    address: SocketAddr,
    server: Option<Server>,
    limit: ConnectionLimit,
}

impl TestServer {
    fn start(configure: impl FnOnce(&mut Options)) -> Self {
        let registry = MetricRegistry::new("test").unwrap();
        let limit = ConnectionLimit::new(1000, &registry).unwrap();
        let mut options = Options::new("test");
        options.workers = 1;
        options.timeouts = Timeouts {
            keep_alive: Duration::from_secs(2),
            client_request: Duration::from_secs(1),
            send: Duration::from_secs(1),
        };
        options.limit = Some(limit.clone());
        configure(&mut options);
        let (server, address) = http1::bind("127.0.0.1:0".parse().unwrap(), app, options).unwrap();
        Self {
            address,
            server: Some(server),
            limit,
        }
    }

    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(self.address).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        stream
    }

    /// Waits until the server counts `open` connections.
    fn wait_for_open(&self, open: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.limit.open() != open {
            assert!(
                Instant::now() < deadline,
                "{} connections open, not {open}",
                self.limit.open()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// A response as read off the wire.
#[derive(Debug)]
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// Reads one response, framed as its head says (`head_only` for HEAD).
fn read_response(stream: &mut TcpStream, pending: &mut Vec<u8>, head_only: bool) -> Response {
    let (status, headers, head_len) = loop {
        let mut parsed_headers = [httparse::EMPTY_HEADER; 32];
        let mut response = httparse::Response::new(&mut parsed_headers);
        if let httparse::Status::Complete(len) = response.parse(pending).unwrap() {
            let headers = response
                .headers
                .iter()
                .map(|header| {
                    (
                        header.name.to_owned(),
                        String::from_utf8(header.value.to_vec()).unwrap(),
                    )
                })
                .collect::<Vec<_>>();
            break (response.code.unwrap(), headers, len);
        }
        fill(stream, pending);
    };
    pending.drain(..head_len);
    let mut response = Response {
        status,
        headers,
        body: Vec::new(),
    };
    if head_only || status == 304 || status == 204 {
        return response;
    }
    if let Some(length) = response.header("content-length") {
        let length: usize = length.parse().unwrap();
        while pending.len() < length {
            fill(stream, pending);
        }
        response.body = pending.drain(..length).collect();
    } else if response.header("transfer-encoding") == Some("chunked") {
        loop {
            let line_end = loop {
                if let Some(end) = pending.windows(2).position(|pair| pair == b"\r\n") {
                    break end;
                }
                fill(stream, pending);
            };
            let size = usize::from_str_radix(std::str::from_utf8(&pending[..line_end]).unwrap(), 16).unwrap();
            while pending.len() < line_end + 2 + size + 2 {
                fill(stream, pending);
            }
            response
                .body
                .extend_from_slice(&pending[line_end + 2..line_end + 2 + size]);
            pending.drain(..line_end + 2 + size + 2);
            if size == 0 {
                break;
            }
        }
    } else {
        stream.read_to_end(pending).unwrap();
        response.body = std::mem::take(pending);
    }
    response
}

fn fill(stream: &mut TcpStream, pending: &mut Vec<u8>) {
    let mut buffer = [0; 65536];
    let read = stream.read(&mut buffer).unwrap();
    assert!(
        read > 0,
        "the server closed the connection mid-response: {pending:?}"
    );
    pending.extend_from_slice(&buffer[..read]);
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
    server.wait_for_open(1);
    drop(stream);
    server.wait_for_open(0);
}

#[tokio::test(flavor = "multi_thread")]
async fn pipelined_requests_are_answered_in_order() {
    let server = TestServer::start(|_| {});
    let mut stream = server.connect();
    stream
        .write_all(b"GET /slow HTTP/1.1\r\n\r\nGET /nope HTTP/1.1\r\n\r\nHEAD /small HTTP/1.1\r\n\r\nGET /small HTTP/1.1\r\n\r\n")
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
    for byte in b"GET /small HTTP/1.1\r\nAccept: */*\r\n\r\n" {
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
    stream.write_all(b"GET /small HTTP/1.1\r\n\r\n").unwrap();
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
        .write_all(b"HEAD /large HTTP/1.1\r\n\r\nGET /small HTTP/1.1\r\n\r\n")
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
    let (response, mut stream) = exchange(&server, "GET /small HTTP/1.1\r\nConnection: close\r\n\r\n");
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
    let (chunked, _) = exchange(&server, "GET /chunked HTTP/1.1\r\n\r\n");
    assert_eq!(chunked.header("transfer-encoding"), Some("chunked"));
    assert_eq!(chunked.body, b"one,two,three");

    let (old, mut stream) = exchange(&server, "GET /chunked HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    assert_eq!(old.header("transfer-encoding"), None);
    assert_eq!(old.header("connection"), Some("close"));
    assert_eq!(old.body, b"one,two,three");
    assert!(closed_by_server(&mut stream));

    let (sized, _) = exchange(&server, "GET /sized HTTP/1.1\r\n\r\n");
    assert_eq!(sized.header("content-length"), Some("13"));
    assert_eq!(sized.body, b"one,two,three");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_large_body_reaches_a_slow_reader_whole() {
    let server = TestServer::start(|_| {});
    let mut stream = server.connect();
    stream.write_all(b"GET /large HTTP/1.1\r\n\r\n").unwrap();
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
    stream.write_all(b"GET /large HTTP/1.1\r\n\r\n").unwrap();
    server.wait_for_open(1);
    let started = Instant::now();
    server.wait_for_open(0);
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn heads_the_app_never_sees_get_their_bare_status() {
    let server = TestServer::start(|_| {});
    let many_headers: String = (0..100).map(|n| format!("X-{n}: 1\r\n")).collect();
    let cases = [
        ("GET /small HTTP/1.1\r\nBad Header: x\r\n\r\n".to_owned(), 400),
        ("\u{16}\u{3}\u{1}not a request\r\n\r\n".to_owned(), 400),
        (format!("GET /small HTTP/1.1\r\n{many_headers}\r\n"), 431),
        (
            format!("GET /small HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(40_000)),
            431,
        ),
        (
            "GET /small HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n".to_owned(),
            400,
        ),
    ];
    for (request, status) in cases {
        let (response, mut stream) = exchange(&server, &request);
        assert_eq!(response.status, status, "{request:.60?}");
        assert_eq!(response.header("connection"), Some("close"));
        assert!(response.body.is_empty());
        assert!(closed_by_server(&mut stream));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_with_a_body_is_answered_and_its_connection_closed() {
    let server = TestServer::start(|_| {});
    // The body is a request: it must never be answered as one.
    let smuggled = "GET /small HTTP/1.1\r\n\r\n";
    let request = format!(
        "POST /small HTTP/1.1\r\nContent-Length: {}\r\n\r\n{smuggled}",
        smuggled.len()
    );
    let (response, mut stream) = exchange(&server, &request);
    assert_eq!(response.status, 405);
    assert_eq!(response.header("connection"), Some("close"));
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_and_silent_clients_are_cut_off() {
    let server = TestServer::start(|_| {});
    // A head that never ends (slowloris): 408 after the client timeout.
    let mut slow = server.connect();
    slow.write_all(b"GET /small HTTP/1.1\r\nX-Slow: ").unwrap();
    let started = Instant::now();
    let response = read_response(&mut slow, &mut Vec::new(), false);
    assert_eq!(response.status, 408);
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );

    // A connection that never says anything, and one idle after an answer.
    let mut silent = server.connect();
    let (_, mut idle) = exchange(&server, "GET /small HTTP/1.1\r\n\r\n");
    let started = Instant::now();
    assert!(closed_by_server(&mut silent));
    assert!(
        started.elapsed() < Duration::from_millis(1900),
        "the first byte is due within the client timeout"
    );
    assert!(closed_by_server(&mut idle));
    assert!(
        started.elapsed() >= Duration::from_millis(1500),
        "idle connections last the keep-alive timeout: {:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_accepts_no_more_than_its_connections() {
    let server = TestServer::start(|options| options.max_connections_per_worker = 2);
    let first = server.connect();
    let (_, _second) = exchange(&server, "GET /small HTTP/1.1\r\n\r\n");
    server.wait_for_open(2);

    let mut third = server.connect();
    third.write_all(b"GET /small HTTP/1.1\r\n\r\n").unwrap();
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
    let (_, mut idle) = exchange(&server, "GET /small HTTP/1.1\r\n\r\n");
    let mut busy = server.connect();
    busy.write_all(b"GET /slow HTTP/1.1\r\n\r\n").unwrap();
    server.wait_for_open(2);
    tokio::time::sleep(Duration::from_millis(100)).await;

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
