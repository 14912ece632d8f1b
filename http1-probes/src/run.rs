//! Running a case against a server over a real socket, and judging what
//! came back: exactly as the case expects ([`Outcome::conforms`]), or, for
//! a server behind a front end that answers some cases itself, safely
//! ([`Outcome::safe`]).

use std::io::{self, Write as _};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

use crate::cases::{After, Case, Expect, Server, Step};
use crate::wire::{self, Response};

/// How long a read waits before the case counts as unanswered: longer than
/// any server's client timeout (the slowloris case waits for it).
const READ_TIMEOUT: Duration = Duration::from_secs(15);

/// How long, behind a proxy, the client waits for bytes after the answers
/// (a request smuggled into a backend connection answers at once); the
/// proxy keeps the client's connection open whatever the server did.
const PROXIED_WAIT: Duration = Duration::from_secs(1);

/// Where the cases are sent.
#[derive(Debug, Clone)]
pub struct Target {
    pub address: SocketAddr,
    /// What `{host}` becomes: the authority clients use.
    pub host: String,
    /// What `{path}` becomes: a path (and query) the server answers 200 to
    /// a GET.
    pub path: String,
    /// What the server chose where the RFCs leave it a choice: by default,
    /// as the services' public ports, `{path}` takes no body and any host
    /// is answered.
    pub server: Server,
    /// How long to wait for the server to close after the answers.
    close_wait: Duration,
}

impl Target {
    pub fn new(address: SocketAddr, path: &str) -> Self {
        Self {
            address,
            host: address.to_string(),
            path: path.to_owned(),
            server: Server::default(),
            close_wait: READ_TIMEOUT,
        }
    }

    /// The same target, for a server that chose `server`.
    pub fn serving(self, server: Server) -> Self {
        Self { server, ..self }
    }

    /// A server behind a proxy at `address`: cases are judged by
    /// [`Outcome::safe`], and the client does not wait for a close the
    /// proxy would not pass on.
    pub fn proxied(address: SocketAddr, path: &str) -> Self {
        Self {
            close_wait: PROXIED_WAIT,
            ..Self::new(address, path)
        }
    }

    fn fill_in(&self, text: &str) -> String {
        text.replace("{path}", &self.path).replace("{host}", &self.host)
    }

    fn connect(&self) -> io::Result<TcpStream> {
        let stream = TcpStream::connect(self.address)?;
        stream.set_read_timeout(Some(READ_TIMEOUT))?;
        stream.set_write_timeout(Some(READ_TIMEOUT))?;
        Ok(stream)
    }

    /// A well-formed GET of `{path}` on a new connection: its status.
    pub fn well_formed_status(&self) -> io::Result<u16> {
        let mut stream = self.connect()?;
        stream.write_all(
            self.fill_in("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n")
                .as_bytes(),
        )?;
        Ok(wire::read_response(&mut stream, &mut Vec::new(), false)?.status)
    }
}

/// What a case came to.
#[derive(Debug)]
pub struct Outcome {
    pub case: Case,
    /// What the target's server answers if it follows the case's rule.
    pub expected: Expect,
    /// The responses read, in order.
    pub responses: Vec<Response>,
    /// Whether the connection was open after them (another request on it
    /// was answered), closed, or could not be told.
    pub after: Result<After, String>,
    /// What failed while sending or reading, if anything.
    pub error: Option<String>,
}

impl Outcome {
    pub fn statuses(&self) -> Vec<u16> {
        self.responses.iter().map(|response| response.status).collect()
    }

    /// Whether an answer is that of a request smuggled in a body.
    pub fn smuggled(&self) -> bool {
        self.responses
            .iter()
            .any(|response| String::from_utf8_lossy(&response.body).contains("/smuggled"))
    }

    /// Whether the server answered exactly as the case expects.
    pub fn conforms(&self) -> Result<(), String> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        if self.smuggled() {
            return Err("a request smuggled in a body was answered".to_owned());
        }
        let (statuses, after) = match &self.expected {
            Expect::Refused(status) => (vec![*status], After::Closed),
            Expect::Answered(statuses, after) => (statuses.clone(), *after),
        };
        if self.statuses() != statuses {
            return Err(format!("answered {:?}, expected {statuses:?}", self.statuses()));
        }
        match &self.after {
            Ok(seen) if *seen == after => Ok(()),
            Ok(seen) => Err(format!(
                "connection {seen:?} after the answers, expected {after:?}"
            )),
            Err(error) => Err(error.clone()),
        }
    }

    /// Whether the exchange was safe through a front end that answers some
    /// cases its own way: nothing smuggled, and a well-formed case answered
    /// with the statuses expected.
    pub fn safe(&self) -> Result<(), String> {
        if self.smuggled() {
            return Err("a request smuggled in a body was answered".to_owned());
        }
        if self.case.well_formed {
            let statuses = match &self.expected {
                Expect::Answered(statuses, _) => statuses.clone(),
                Expect::Refused(status) => vec![*status],
            };
            if self.statuses() != statuses {
                return Err(format!(
                    "a well-formed case answered {:?} ({}), expected {statuses:?}",
                    self.statuses(),
                    self.error.as_deref().unwrap_or("no error")
                ));
            }
        }
        Ok(())
    }
}

/// Sends `case` to `target` and reads what comes back.
pub fn run(case: &Case, target: &Target) -> Outcome {
    let mut outcome = Outcome {
        case: case.clone(),
        expected: case.expected(target.server).clone(),
        responses: Vec::new(),
        after: Err("not reached".to_owned()),
        error: None,
    };
    if let Err(error) = exchange(target, &mut outcome) {
        outcome.error = Some(format!("{error}"));
    }
    outcome
}

fn exchange(target: &Target, outcome: &mut Outcome) -> io::Result<()> {
    let case = outcome.case.clone();
    let mut stream = target.connect()?;
    for step in &case.steps {
        match step {
            Step::Send(text) => {
                let text = target.fill_in(text);
                // A server that refuses a head may close before the rest is
                // written: what it answered is still read.
                if let Err(error) = stream.write_all(text.as_bytes())
                    && !matches!(
                        error.kind(),
                        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
                    )
                {
                    return Err(error);
                }
            }
            Step::Pause(pause) => std::thread::sleep(*pause),
            Step::CloseWrite => stream.shutdown(Shutdown::Write)?,
        }
    }
    let expected = match &outcome.expected {
        Expect::Refused(_) => 1,
        Expect::Answered(statuses, _) => statuses.len(),
    };
    let mut pending = Vec::new();
    for index in 0..expected {
        // Only a case's first request is ever a HEAD.
        let head_only = index == 0 && case.starts_with_head();
        let response = wire::read_response(&mut stream, &mut pending, head_only)?;
        let closes = response.closes();
        outcome.responses.push(response);
        if closes {
            break;
        }
    }
    outcome.after = Ok(after_answers(
        &mut stream,
        &mut pending,
        target,
        &outcome.expected,
    )?);
    Ok(())
}

/// Whether the connection stays open after the answers: another request
/// on it is answered 200 (open), or the server closes it with nothing more
/// (closed). A case expected to leave it closed is only read from: sending
/// more could be answered by a server that wrongly kept it open.
fn after_answers(
    stream: &mut TcpStream,
    pending: &mut Vec<u8>,
    target: &Target,
    expected: &Expect,
) -> io::Result<After> {
    let expects_open = matches!(expected, Expect::Answered(_, After::Open));
    if expects_open {
        let request = target.fill_in("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n");
        if stream.write_all(request.as_bytes()).is_err() {
            return Ok(After::Closed);
        }
        return match wire::read_response(stream, pending, false) {
            Ok(response) if response.status == 200 => Ok(After::Open),
            Ok(response) => Err(io::Error::other(format!(
                "the request after the answers was answered {}",
                response.status
            ))),
            Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => Ok(After::Closed),
            Err(error) if error.kind() == io::ErrorKind::ConnectionReset => Ok(After::Closed),
            Err(error) => Err(error),
        };
    }
    stream.set_read_timeout(Some(target.close_wait))?;
    let rest = wire::read_until_closed(stream, pending)?;
    if rest.is_empty() {
        Ok(After::Closed)
    } else {
        Err(io::Error::other(format!(
            "{} more bytes before the close: {:?}",
            rest.len(),
            String::from_utf8_lossy(&rest[..rest.len().min(200)])
        )))
    }
}
