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

/// The first [`ANSWER_BYTES`] of an answer's body, as text: read no further, so that a collector that
/// answers with an endless or enormous body costs neither memory nor the request's deadline.
async fn answer_text(mut body: hyper::body::Incoming) -> String {
    let mut bytes = Vec::new();
    while bytes.len() < ANSWER_BYTES {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    bytes.extend_from_slice(data);
                }
            }
            _ => break,
        }
    }
    bytes.truncate(ANSWER_BYTES);
    String::from_utf8_lossy(&bytes).trim().to_string()
}

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
            let text = answer_text(response.into_body()).await;
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn an_endless_answer_is_read_only_to_its_bound() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            // A collector that answers 503 with a body that never ends.
            tokio::spawn(async move {
                let (mut stream, _) = listener.accept().await.unwrap();
                let mut request = vec![0u8; 64 * 1024];
                let _ = stream.read(&mut request).await;
                let head = "HTTP/1.1 503 Service Unavailable\r\ntransfer-encoding: chunked\r\n\r\n";
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = format!("{:x}\r\n{}\r\n", 1024, "x".repeat(1024));
                while stream.write_all(chunk.as_bytes()).await.is_ok() {}
            });
            let endpoint = Endpoint::parse(&format!("http://127.0.0.1:{port}/v1/logs")).unwrap();
            let sent = post(&endpoint, "application/json", &[], b"{}".to_vec()).await;
            match sent {
                Sent::Again(why) => assert!(why.contains("503"), "{why}"),
                other => panic!("{other:?}"),
            }
        });
    }
}
