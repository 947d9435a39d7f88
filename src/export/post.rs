//! One OTLP/HTTP request: a POST of a batch over HTTP/1.1 (hyper's client, the crate hookd's own HTTP
//! listener is built on), on a connection of its own, within a deadline; the answer read as OTLP says
//! (2xx: taken; 400: refused for good; anything else, or no answer: try again later).

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;

use crate::settings::export::Endpoint;

/// The most a request may take, connection and answer included: a collector slower than this is
/// treated as down, and the batch sent again later.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// The most of an answer's body read (an error's text, for `status`).
const ANSWER_BYTES: usize = 4096;

/// What became of a request.
#[derive(Debug, PartialEq, Eq)]
pub enum Sent {
    /// The collector took it (2xx).
    Taken,
    /// The collector will never take it (400: a request it cannot read): sending it again is useless.
    Refused(String),
    /// Not taken now (no connection, a timeout, 429, 5xx, another status): try again later.
    Again(String),
}

/// Posts `body` to `endpoint` with `content_type` and `headers`.
pub async fn post(
    endpoint: &Endpoint,
    content_type: &str,
    headers: &[(String, String)],
    body: Vec<u8>,
) -> Sent {
    match tokio::time::timeout(DEADLINE, exchange(endpoint, content_type, headers, body)).await {
        Ok(sent) => sent,
        Err(_) => Sent::Again(format!(
            "{} did not answer within {} s",
            endpoint.url,
            DEADLINE.as_secs()
        )),
    }
}

async fn exchange(
    endpoint: &Endpoint,
    content_type: &str,
    headers: &[(String, String)],
    body: Vec<u8>,
) -> Sent {
    let stream = match tokio::net::TcpStream::connect((endpoint.host.as_str(), endpoint.port)).await
    {
        Ok(stream) => stream,
        Err(e) => return Sent::Again(format!("cannot connect to {}: {e}", endpoint.url)),
    };
    let _ = stream.set_nodelay(true);
    let (mut sender, connection) =
        match hyper::client::conn::http1::handshake(TokioIo::new(stream)).await {
            Ok(pair) => pair,
            Err(e) => return Sent::Again(format!("{}: {e}", endpoint.url)),
        };
    let driver = tokio::spawn(connection);
    let host = if endpoint.host.contains(':') {
        format!("[{}]:{}", endpoint.host, endpoint.port)
    } else {
        format!("{}:{}", endpoint.host, endpoint.port)
    };
    let mut request = hyper::Request::post(endpoint.path.as_str())
        .header(hyper::header::HOST, host)
        .header(hyper::header::CONTENT_TYPE, content_type)
        .header(
            hyper::header::USER_AGENT,
            concat!("hookd/", env!("CARGO_PKG_VERSION")),
        );
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let request = match request.body(Full::new(Bytes::from(body))) {
        Ok(request) => request,
        Err(e) => return Sent::Refused(format!("a header of headers_file cannot be sent: {e}")),
    };
    let sent = match sender.send_request(request).await {
        Ok(response) => {
            let status = response.status();
            let text = match response.into_body().collect().await {
                Ok(collected) => {
                    let bytes = collected.to_bytes();
                    let end = bytes.len().min(ANSWER_BYTES);
                    String::from_utf8_lossy(&bytes[..end]).trim().to_string()
                }
                Err(_) => String::new(),
            };
            let said = |status: hyper::StatusCode| {
                let printable: String =
                    text.chars().filter(|c| !c.is_control()).take(300).collect();
                if printable.is_empty() {
                    format!("{} answered {status}", endpoint.url)
                } else {
                    format!("{} answered {status}: {printable}", endpoint.url)
                }
            };
            if status.is_success() {
                Sent::Taken
            } else if status == hyper::StatusCode::BAD_REQUEST {
                Sent::Refused(said(status))
            } else {
                Sent::Again(said(status))
            }
        }
        Err(e) => Sent::Again(format!("{}: {e}", endpoint.url)),
    };
    driver.abort();
    sent
}
