//! The client side of the protocol, for the command line and the relay: one request, one response line.
//! Blocking std I/O: a client makes one round trip and needs no async runtime.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::protocol::{Asking, ErrorResponse, FireResponse};

/// A response as received: the line, to print as is, and to read as the protocol's type.
pub struct Response {
    pub line: String,
}

impl Response {
    /// A fire's response, read as [`crate::protocol::read_fire_response`] reads it (a refusal is heard
    /// even in a shape this hookd does not write).
    pub fn read_fire(&self) -> Result<Result<FireResponse, ErrorResponse>, ClientError> {
        crate::protocol::read_fire_response(&self.line).map_err(|why| self.unreadable(&why))
    }

    fn unreadable(&self, why: &str) -> ClientError {
        ClientError::Other(format!(
            "hookd sent a response hookd cannot read ({why}): {}",
            self.line
        ))
    }

    /// The response as the protocol's `T` (`"ok":true`) or its error response (`"ok":false`).
    pub fn read<T: serde::de::DeserializeOwned>(
        &self,
    ) -> Result<Result<T, ErrorResponse>, ClientError> {
        crate::protocol::read_response(&self.line).map_err(|why| self.unreadable(&why))
    }
}

/// Why a request got no response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// Nothing listens on the socket.
    NotRunning(String),
    /// The daemon took longer than the caller's timeout.
    TimedOut(String),
    /// Anything else: a broken connection, an unreadable response.
    Other(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::NotRunning(m) | ClientError::TimedOut(m) | ClientError::Other(m) => {
                f.write_str(m)
            }
        }
    }
}

impl From<ClientError> for String {
    fn from(error: ClientError) -> String {
        error.to_string()
    }
}

/// Sends one request and reads its response. `timeout` bounds the wait for it (none for a fire, whose
/// hooks may legitimately take their time).
pub fn request(
    socket: &Path,
    request: &Asking,
    timeout: Option<Duration>,
) -> Result<Response, ClientError> {
    request_line(socket, request.to_line(), timeout)
}

/// [`request`] with the request already encoded, as one line with its `\n`.
pub fn request_line(
    socket: &Path,
    line: Vec<u8>,
    timeout: Option<Duration>,
) -> Result<Response, ClientError> {
    // One deadline for the whole round trip: connecting (a daemon whose backlog is full, or a socket
    // someone else bound and never accepts on), sending (a daemon that does not read) and the answer.
    let deadline = timeout.map(|timeout| Instant::now() + timeout);
    let stream = send(socket, &line, deadline)?;
    let mut reader = BufReader::new(stream);
    read_response(&mut reader, socket)
}

/// [`request_line`] sent to the first of `places` where a daemon of this user accepts, within
/// `timeout`. Where none does but a daemon has served at one of them (it was stopped or killed, and is
/// coming back), they are all tried again for up to `patience` (within `timeout`): the relay waits so
/// for a daemon that restarts without socket activation ([`RELAY_DAEMON_PATIENCE`]).
///
/// [`RELAY_DAEMON_PATIENCE`]: crate::limits::RELAY_DAEMON_PATIENCE
pub fn request_line_from(
    places: &[PathBuf],
    line: Vec<u8>,
    timeout: Duration,
    patience: Duration,
) -> Result<Response, ClientError> {
    let deadline = Some(Instant::now() + timeout);
    let (mut stream, socket) = open_first(places, deadline, patience)?;
    write_line(&mut stream, socket, &line, deadline)?;
    let mut reader = BufReader::new(stream);
    read_response(&mut reader, socket)
}

/// The socket of a running daemon of this user: the first place it may listen
/// ([`crate::paths::socket_places`]: `$HOOKD_SOCKET` alone when set) where a daemon of this user, or
/// root's, accepts a connection. `None` when none does: then no agent's call reaches a guard, and
/// `setup` and `install` say so.
pub fn find_daemon_socket() -> Option<PathBuf> {
    let deadline = Instant::now() + FIND_TIMEOUT;
    crate::paths::socket_places()
        .into_iter()
        .find(|place| open(place, Some(deadline)).is_ok())
}

/// The socket a command talks to: the one it was told (`--socket`), else the running daemon's
/// ([`find_daemon_socket`]), else where the daemon would bind ([`crate::paths::default_socket`]), for
/// the error to name.
pub fn daemon_socket(told: Option<PathBuf>) -> PathBuf {
    told.or_else(find_daemon_socket)
        .unwrap_or_else(crate::paths::default_socket)
}

/// How long [`find_daemon_socket`] lets each place take to accept (a daemon whose backlog is full).
const FIND_TIMEOUT: Duration = Duration::from_secs(2);

/// The first pause between two rounds of [`open_first`], doubled each round up to [`LONGEST_PAUSE`]: a
/// daemon restarting by itself is back within milliseconds, one restarted by systemd after its
/// `RestartSec` (1 s).
const FIRST_PAUSE: Duration = Duration::from_millis(10);
const LONGEST_PAUSE: Duration = Duration::from_millis(200);

/// Connects to the first of `places` where a daemon of this user accepts (see [`request_line_from`]),
/// by `deadline`; while none does and a daemon has served at one of them ([`served_at`]), tries again
/// for up to `patience`. A place that does not answer by the deadline ends the search: the connection
/// is queued there, so a daemon is there.
fn open_first(
    places: &[PathBuf],
    deadline: Option<Instant>,
    patience: Duration,
) -> Result<(UnixStream, &Path), ClientError> {
    let started = Instant::now();
    let give_up = deadline.map_or(started + patience, |d| d.min(started + patience));
    let mut pause = FIRST_PAUSE;
    let mut waited = false;
    loop {
        // What a place said other than "nothing listens" (a daemon of another user's, a folder that
        // cannot be entered): said when no place answers.
        let mut other = None;
        for place in places {
            match open(place, deadline) {
                Ok(stream) => return Ok((stream, place)),
                Err(ClientError::NotRunning(_)) => {}
                Err(late @ ClientError::TimedOut(_)) => return Err(late),
                Err(error) => {
                    other.get_or_insert(error);
                }
            }
        }
        let now = Instant::now();
        let coming_back = || places.iter().any(|place| served_at(place));
        if now >= give_up || !coming_back() {
            let waited = waited.then(|| now - started);
            return Err(other.unwrap_or_else(|| not_running(places, waited)));
        }
        std::thread::sleep(pause.min(give_up - now));
        waited = true;
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
}

/// Whether a daemon has served at `socket` since the runtime folder was made (since boot, for
/// `/run/user`): its lock file `<socket>.lock`, which the daemon keeps when it stops, is there and is
/// this user's. Nothing listening there then means a daemon stopped or killed, which systemd or the
/// user may be restarting; without it, no daemon runs here at all, and waiting would only slow every
/// call down.
fn served_at(socket: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let mut lock = socket.as_os_str().to_owned();
    lock.push(".lock");
    std::fs::symlink_metadata(lock).is_ok_and(|metadata| {
        metadata.is_file() && metadata.uid() == nix::unistd::getuid().as_raw()
    })
}

/// Nothing listens at any of `places`, waited for so long, if at all.
fn not_running(places: &[PathBuf], waited: Option<Duration>) -> ClientError {
    let shown: Vec<String> = places.iter().map(|p| p.display().to_string()).collect();
    let mut said = match shown.as_slice() {
        [one] => format!("hookd is not running on {one} ("),
        [first @ .., last] => format!(
            "hookd is not running (looked on {} and {last}; ",
            first.join(", ")
        ),
        [] => "hookd is not running (".to_string(),
    };
    if let Some(waited) = waited {
        said.push_str(&format!(
            "waited {:.1}s for it to come back; ",
            waited.as_secs_f64()
        ));
    }
    said.push_str("start it with `hookd serve`)");
    ClientError::NotRunning(said)
}

/// A request whose answer goes on after its first line (`watch`): the first line, and the connection
/// to read the rest from, with no timeout left on it.
pub struct Stream {
    pub first: Response,
    pub reader: BufReader<UnixStream>,
}

/// Sends `request` and reads its first line within `timeout`; the lines after it come when they come.
pub fn stream(socket: &Path, request: &Asking, timeout: Duration) -> Result<Stream, ClientError> {
    let deadline = Some(Instant::now() + timeout);
    let stream = send(socket, &request.to_line(), deadline)?;
    let mut reader = BufReader::new(stream);
    let first = read_response(&mut reader, socket)?;
    reader
        .get_ref()
        .set_read_timeout(None)
        .map_err(|e| ClientError::Other(format!("cannot set up the connection: {e}")))?;
    Ok(Stream { first, reader })
}

/// Connects to `socket`, checks that the daemon is ours and sends `line`, by `deadline`; the
/// connection's reads are left bounded by it too.
fn send(socket: &Path, line: &[u8], deadline: Option<Instant>) -> Result<UnixStream, ClientError> {
    let mut stream = open(socket, deadline)?;
    write_line(&mut stream, socket, line, deadline)?;
    Ok(stream)
}

/// Connects to `socket` by `deadline` and checks that the daemon is ours.
fn open(socket: &Path, deadline: Option<Instant>) -> Result<UnixStream, ClientError> {
    let shown = socket.display();
    let stream = connect(socket, deadline).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
            not_running(&[socket.to_path_buf()], None)
        }
        std::io::ErrorKind::TimedOut => {
            ClientError::TimedOut(format!("hookd on {shown} did not answer in time"))
        }
        _ => ClientError::Other(format!("cannot connect to hookd on {shown}: {e}")),
    })?;
    check_daemon_is_ours(&stream, socket)?;
    Ok(stream)
}

/// Sends `line` on `stream` by `deadline`; the connection's reads are left bounded by it too.
fn write_line(
    stream: &mut UnixStream,
    socket: &Path,
    line: &[u8],
    deadline: Option<Instant>,
) -> Result<(), ClientError> {
    let shown = socket.display();
    let other = ClientError::Other;
    let late = || ClientError::TimedOut(format!("hookd on {shown} did not answer in time"));
    // Each write waits at most what is left of the deadline: a write timeout counts per call, and a
    // daemon that takes part of a large request and then stops reading would otherwise make every later
    // write wait a whole timeout again, past the agent's own limit.
    let mut rest = line;
    while !rest.is_empty() {
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return Err(late());
        }
        stream
            .set_write_timeout(left(deadline))
            .map_err(|e| other(format!("cannot set up the connection: {e}")))?;
        match stream.write(rest) {
            Ok(0) => {
                return Err(other(format!(
                    "cannot send the request to {shown}: the connection closed"
                )));
            }
            Ok(n) => rest = &rest[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(late());
            }
            Err(e) => return Err(other(format!("cannot send the request to {shown}: {e}"))),
        }
    }
    stream
        .set_read_timeout(left(deadline))
        .map_err(|e| other(format!("cannot set up the connection: {e}")))?;
    Ok(())
}

/// Reads one response line: JSON, or an error saying what came instead.
fn read_response(
    reader: &mut BufReader<UnixStream>,
    socket: &Path,
) -> Result<Response, ClientError> {
    let shown = socket.display();
    let other = ClientError::Other;
    let mut response = String::new();
    match reader.read_line(&mut response) {
        Ok(0) => Err(other(format!(
            "hookd on {shown} closed the connection without answering"
        ))),
        Ok(_) => {
            let line = response.trim_end().to_string();
            if serde_json::from_str::<serde::de::IgnoredAny>(&line).is_err() {
                return Err(other(format!("hookd sent an unreadable response: {line}")));
            }
            Ok(Response { line })
        }
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            Err(ClientError::TimedOut(format!(
                "hookd on {shown} did not answer in time"
            )))
        }
        Err(e) => Err(other(format!("cannot read hookd's response: {e}"))),
    }
}

/// What is left until `deadline` (at least a millisecond: a timeout of zero means none to the system).
fn left(deadline: Option<Instant>) -> Option<Duration> {
    deadline.map(|deadline| {
        deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
    })
}

/// Connects to `socket`, by `deadline` if there is one. A blocking connect to a listener whose backlog
/// is full waits for good; this one tries without blocking until the deadline.
fn connect(socket: &Path, deadline: Option<Instant>) -> std::io::Result<UnixStream> {
    use nix::errno::Errno;
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, UnixAddr};
    use std::os::fd::AsRawFd;
    let Some(deadline) = deadline else {
        return UnixStream::connect(socket);
    };
    let fd = nix::sys::socket::socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    let address = UnixAddr::new(socket)?;
    loop {
        match nix::sys::socket::connect(fd.as_raw_fd(), &address) {
            Ok(()) | Err(Errno::EISCONN) => break,
            Err(Errno::EAGAIN | Errno::EINPROGRESS | Errno::EALREADY) => {
                let now = Instant::now();
                if now >= deadline {
                    return Err(std::io::ErrorKind::TimedOut.into());
                }
                std::thread::sleep((deadline - now).min(Duration::from_millis(5)));
            }
            Err(e) => return Err(e.into()),
        }
    }
    let stream = UnixStream::from(fd);
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// The process listening on the socket must be this user's (or root's). Where the socket's folder is not
/// private (`/tmp/hookd-$UID`, one of the places every client looks, a folder another user may have
/// made first), another user could bind a socket of their own there and answer every fire "go ahead":
/// the refusals of the real daemon would be lost. Such a place is passed over ([`open_first`]).
fn check_daemon_is_ours(stream: &UnixStream, socket: &Path) -> Result<(), ClientError> {
    let credentials =
        nix::sys::socket::getsockopt(stream, nix::sys::socket::sockopt::PeerCredentials).map_err(
            |e| {
                ClientError::Other(format!(
                    "cannot tell who listens on {}: {e}",
                    socket.display()
                ))
            },
        )?;
    let me = nix::unistd::getuid().as_raw();
    if credentials.uid() != me && credentials.uid() != 0 {
        return Err(ClientError::Other(format!(
            "the process listening on {} belongs to uid {}, not to you (uid {me}) or root: it is not your \
             hookd; refusing to take its answers",
            socket.display(),
            credentials.uid()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    #[test]
    fn the_first_place_where_a_daemon_listens_is_the_one_taken() {
        let dir = tempfile::tempdir().unwrap();
        let nothing = dir.path().join("nothing/hookd.sock");
        let there = dir.path().join("there.sock");
        let _listener = UnixListener::bind(&there).unwrap();
        let places = [nothing, there.clone()];
        let (_, found) = open_first(&places, None, Duration::ZERO).unwrap();
        assert_eq!(found, there);
    }

    #[test]
    fn where_no_daemon_ever_served_the_client_does_not_wait() {
        let dir = tempfile::tempdir().unwrap();
        let places = [dir.path().join("a.sock"), dir.path().join("b.sock")];
        let error = open_first(&places, None, Duration::from_secs(600)).unwrap_err();
        let ClientError::NotRunning(said) = error else {
            panic!("{error:?}");
        };
        assert!(
            said.starts_with("hookd is not running (looked on "),
            "{said}"
        );
        assert!(!said.contains("waited"), "{said}");
    }

    #[test]
    fn where_a_daemon_served_the_client_waits_for_it_to_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("hookd.sock");
        // What a daemon that stopped leaves: its lock file, and (killed) its socket, refusing.
        std::fs::write(dir.path().join("hookd.sock.lock"), "").unwrap();
        drop(UnixListener::bind(&socket).unwrap());
        let places = [socket.clone()];
        let error = open_first(&places, None, Duration::from_millis(50)).unwrap_err();
        assert!(error.to_string().contains("waited"), "{error}");
        // Back while the client waits: taken.
        let back = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            std::fs::remove_file(&socket).unwrap();
            UnixListener::bind(&socket).unwrap()
        });
        let found = open_first(&places, None, Duration::from_secs(30));
        let _listener = back.join().unwrap();
        assert!(found.is_ok(), "{:?}", found.err());
    }
}
