//! The client side of the protocol, for the command line: one request, one response line. Blocking std
//! I/O: a client makes one round trip and needs no async runtime.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// A response as received: the line (to print as is) and its parsed form (to decide the exit status).
pub struct Response {
    pub line: String,
    pub value: Value,
}

/// Sends one request and reads its response. `timeout` bounds the whole wait (none for a fire, whose
/// hooks may legitimately take their time).
pub fn request(
    socket: &Path,
    request: &Value,
    timeout: Option<Duration>,
) -> Result<Response, String> {
    let shown = socket.display();
    let mut stream = UnixStream::connect(socket).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
            format!("hookd is not running on {shown} (start it with `hookd serve`)")
        }
        _ => format!("cannot connect to hookd on {shown}: {e}"),
    })?;
    stream
        .set_read_timeout(timeout)
        .map_err(|e| format!("cannot set up the connection: {e}"))?;
    let mut line =
        serde_json::to_vec(request).map_err(|e| format!("cannot encode the request: {e}"))?;
    line.push(b'\n');
    stream
        .write_all(&line)
        .map_err(|e| format!("cannot send the request to {shown}: {e}"))?;
    let mut reader = BufReader::new(stream);
    let mut response = String::new();
    match reader.read_line(&mut response) {
        Ok(0) => Err(format!(
            "hookd on {shown} closed the connection without answering"
        )),
        Ok(_) => {
            let line = response.trim_end().to_string();
            let value = serde_json::from_str(&line)
                .map_err(|e| format!("hookd sent an unreadable response ({e}): {line}"))?;
            Ok(Response { line, value })
        }
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            Err(format!("hookd on {shown} did not answer in time"))
        }
        Err(e) => Err(format!("cannot read hookd's response: {e}")),
    }
}
