//! `watch`: a connection that streams the record (docs/protocol.md, "watch"). After the first line, which
//! says the watch began, every record that passes the filter is written as its own line, as the journal
//! holds it, until the client closes or the daemon stops.
//!
//! A watcher never slows a fire: records reach it through a broadcast of bounded size
//! ([`WATCH_BUFFER`](crate::daemon::journal::WATCH_BUFFER)) that the journal's writer never waits on. A
//! watcher that falls that far behind is dropped, told how many records it missed; one that reads
//! nothing at all is dropped once a write has waited [`WRITE_DEADLINE`].

use std::os::fd::OwnedFd;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::io::unix::AsyncFd;
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::broadcast::{self, error::RecvError};
use tokio_util::sync::CancellationToken;

use crate::daemon::journal::Entry;
use crate::limits::WRITE_DEADLINE;
use crate::protocol::{ErrorKind, ErrorResponse, WatchFilter, to_line};

/// A watch asked for: its id, its filter, and its place in the broadcast, taken when it was asked.
pub struct Watch {
    pub id: Option<Value>,
    pub filter: WatchFilter,
    pub records: broadcast::Receiver<Arc<Entry>>,
}

/// Streams records to `write` until the client goes (`gone` resolves, or a write fails), the watcher
/// falls behind, or `draining` is cancelled.
pub async fn stream(
    write: &mut OwnedWriteHalf,
    mut watch: Watch,
    gone: Option<AsyncFd<OwnedFd>>,
    draining: &CancellationToken,
) {
    let started = json!({"id": watch.id, "ok": true, "watching": true});
    let mut first = serde_json::to_vec(&started).unwrap_or_default();
    first.push(b'\n');
    if write_within(write, &first).await.is_err() {
        return;
    }
    loop {
        tokio::select! {
            received = watch.records.recv() => match received {
                Ok(entry) => {
                    if watch.filter.matches(&entry.record)
                        && write_within(write, &entry.line).await.is_err()
                    {
                        return;
                    }
                }
                Err(RecvError::Lagged(missed)) => {
                    let message = format!(
                        "this watcher fell {missed} records behind the record and is dropped; the journal has them all (hookd log)"
                    );
                    let mut line = serde_json::to_value(ErrorResponse::new(
                        watch.id.clone(),
                        ErrorKind::TooSlow,
                        message,
                    ))
                    .unwrap_or_default();
                    line["missed"] = missed.into();
                    let mut bytes = serde_json::to_vec(&line).unwrap_or_default();
                    bytes.push(b'\n');
                    let _ = write_within(write, &bytes).await;
                    return;
                }
                Err(RecvError::Closed) => return,
            },
            _ = crate::daemon::hang_up::peer_gone(gone.as_ref()) => return,
            _ = draining.cancelled() => {
                let error = ErrorResponse::new(watch.id.clone(), ErrorKind::ShuttingDown, "the daemon is stopping");
                let _ = write_within(write, &to_line(&error)).await;
                return;
            }
        }
    }
}

async fn write_within(write: &mut OwnedWriteHalf, bytes: &[u8]) -> std::io::Result<()> {
    match tokio::time::timeout(WRITE_DEADLINE, write.write_all(bytes)).await {
        Ok(result) => result,
        Err(_) => Err(std::io::ErrorKind::TimedOut.into()),
    }
}
