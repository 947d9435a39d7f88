//! The journal sent on to a team's OpenTelemetry collector, as OTLP logs over HTTP (docs/export.md):
//! one log record per journal record, `event.name = "hookd.decision"` for a fire.
//!
//! Exported from the journal's files, never from the fire's path: a thread of its own follows the
//! journal ([`follow`]) from a place kept in hookd's state folder, sends batches ([`post`]) and moves the
//! place only once the collector took them, so each record is sent at least once across a collector
//! that is down, a daemon restart and rotation. A dead or slow collector costs a fire nothing: the
//! fire's record goes to the journal as before, and the exporter reads it back later. Memory is bounded
//! by a batch ([`BATCH_RECORDS`], [`BATCH_BYTES`]): a backlog stays on disk, and a failed batch is
//! read again from the file. Retries pause from [`BACKOFF_MIN`] to [`BACKOFF_MAX`].

pub mod follow;
pub mod map;
pub mod post;
pub mod wire;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::protocol::ExportStatus;
use crate::record::Record;
use crate::settings::export::{Otlp, Protocol};
use crate::sync::lock;
use follow::{CURSOR_FILE, Follower};
use post::Sent;

/// The most records in one request.
pub const BATCH_RECORDS: usize = 512;
/// The most bytes of journal lines read for one request (one longer line is sent alone).
pub const BATCH_BYTES: usize = 1 << 20;
/// How often the journal is looked at when everything is sent, and the settings while a failed batch
/// waits.
pub const POLL: Duration = Duration::from_millis(200);
/// Export off, the thread sleeps until a reload ([`Exporter::settings_changed`]); it wakes this often
/// besides only to see whether the daemon that started it is gone (a test's daemon in its process).
const OFF_LOOK: Duration = Duration::from_secs(60);
/// The first pause after a batch was not taken, doubled at each failure in a row...
pub const BACKOFF_MIN: Duration = Duration::from_millis(500);
/// ... up to this: a collector back up is found within it.
pub const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// The settings in force, asked again at every step: a reload applies to the next batch.
pub type SettingsNow = Box<dyn Fn() -> Option<Otlp> + Send>;

/// What the daemon keeps of its exporter: its status, for `status` and `doctor`.
#[derive(Debug, Default)]
pub struct Exporter {
    status: Mutex<ExportStatus>,
    /// Reloads counted, and a condition to wait for the next: export off, the thread sleeps on it
    /// instead of waking every [`POLL`] to read the settings (an idle daemon wakes for nothing).
    reloads: (Mutex<u64>, std::sync::Condvar),
}

impl Exporter {
    /// Starts the exporter thread, following the journal in `state_dir`. When `[export.otlp]` is on
    /// already, the place to start from is found (and saved) before this returns, before the daemon
    /// writes anything: the records of this start (the relay's spool taken in) are all sent.
    pub fn start(state_dir: PathBuf, settings: SettingsNow) -> Arc<Exporter> {
        let exporter = Arc::new(Exporter::default());
        lock(&exporter.status).state = "off".into();
        let journal = state_dir.join(crate::record::read::FILE);
        let cursor = state_dir.join(CURSOR_FILE);
        let follower = settings()
            .is_some()
            .then(|| Follower::start(journal.clone(), cursor.clone()));
        let running = exporter.clone();
        let started = std::thread::Builder::new()
            .name("hookd-export".into())
            .spawn(move || {
                // Export off, as it is by default: the settings are looked at after each reload,
                // without a runtime, whose drivers (its epoll, its timer wheel, its buffers) an idle
                // daemon would hold resident for nothing; the runtime is built once export is on.
                let mut seen = *lock(&running.reloads.0);
                while settings().is_none() {
                    if Arc::strong_count(&running) == 1 {
                        return; // the daemon that started it is gone (a test's daemon in its process)
                    }
                    seen = running.next_reload(seen);
                }
                let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    tracing::warn!("the exporter cannot start its runtime: nothing is exported");
                    return;
                };
                let mut run = Run {
                    exporter: running,
                    settings,
                    journal,
                    cursor,
                    follower,
                    resource: map::resource(),
                    backoff: BACKOFF_MIN,
                };
                runtime.block_on(run.forever());
            });
        if let Err(e) = started {
            tracing::warn!("the exporter cannot start: {e}");
        }
        exporter
    }

    /// Says that new settings are in force: export turned on is taken at once.
    pub fn settings_changed(&self) {
        *lock(&self.reloads.0) += 1;
        self.reloads.1.notify_all();
    }

    /// Waits for a reload after the `seen`th (at most [`OFF_LOOK`]), and returns the count.
    fn next_reload(&self, seen: u64) -> u64 {
        let (count, changed) = &self.reloads;
        let count = lock(count);
        let (count, _) = changed
            .wait_timeout_while(count, OFF_LOOK, |now| *now == seen)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *count
    }

    /// The exporter in `status`.
    pub fn status(&self) -> ExportStatus {
        lock(&self.status).clone()
    }

    fn set(&self, change: impl FnOnce(&mut ExportStatus)) {
        change(&mut lock(&self.status));
    }
}

struct Run {
    exporter: Arc<Exporter>,
    settings: SettingsNow,
    journal: PathBuf,
    cursor: PathBuf,
    follower: Option<Follower>,
    resource: Vec<(String, wire::Any)>,
    backoff: Duration,
}

impl Run {
    async fn forever(&mut self) {
        loop {
            if Arc::strong_count(&self.exporter) == 1 {
                return; // the daemon that started it is gone (a test's daemon in its process)
            }
            let Some(otlp) = (self.settings)() else {
                self.exporter.set(|s| {
                    *s = ExportStatus {
                        state: "off".into(),
                        sent: s.sent,
                        refused: s.refused,
                        last_sent: s.last_sent.take(),
                        ..ExportStatus::default()
                    }
                });
                tokio::time::sleep(POLL).await;
                continue;
            };
            let (journal, cursor) = (self.journal.clone(), self.cursor.clone());
            let follower = self
                .follower
                .get_or_insert_with(|| Follower::start(journal, cursor));
            // Said once the place to start from is found: a record written after status shows the
            // endpoint is sent.
            self.exporter.set(|s| {
                s.endpoint = Some(otlp.endpoint.url.clone());
                s.protocol = Some(otlp.protocol.name().into());
            });
            let batch = follower.next(BATCH_RECORDS, BATCH_BYTES);
            if let Some(trouble) = follower.trouble.take() {
                tracing::warn!("export: {trouble}");
                self.exporter.set(|s| s.last_error = Some(trouble));
            }
            let batch = match batch {
                Ok(Some(batch)) => batch,
                Ok(None) => {
                    self.exporter.set(|s| {
                        s.state = "caught_up".into();
                        s.backlog_bytes = 0;
                    });
                    tokio::time::sleep(POLL).await;
                    continue;
                }
                Err(e) => {
                    self.failed(format!("cannot read the journal: {e}")).await;
                    continue;
                }
            };
            let records: Vec<wire::LogRecord> = batch
                .lines
                .iter()
                .filter_map(|line| serde_json::from_slice::<Record>(line).ok())
                .filter(|record| {
                    let decision = record.verdict.as_ref().map(|v| v.decision.word());
                    otlp.sends(record.kind.word(), decision)
                })
                .map(|record| map::log_record(&record, otlp.redact))
                .collect();
            if records.is_empty() {
                follower.commit(batch.end);
                continue;
            }
            let backlog = follower.backlog();
            self.exporter.set(|s| {
                s.backlog_bytes = backlog;
                if s.state != "retrying" {
                    s.state = "sending".into();
                }
            });
            let headers = match &otlp.headers_file {
                Some(path) => match crate::settings::export::read_headers(path) {
                    Ok(headers) => headers,
                    Err(e) => {
                        self.failed(e).await;
                        continue;
                    }
                },
                None => Vec::new(),
            };
            let count = records.len() as u64;
            let request = map::request(self.resource.clone(), records);
            let (body, content_type) = match otlp.protocol {
                Protocol::Protobuf => (request.to_protobuf(), "application/x-protobuf"),
                Protocol::Json => (request.to_json(), "application/json"),
            };
            match post::post(&otlp.endpoint, content_type, &headers, body).await {
                Sent::Taken => {
                    follower.commit(batch.end);
                    self.backoff = BACKOFF_MIN;
                    let backlog = follower.backlog();
                    self.exporter.set(|s| {
                        s.sent += count;
                        s.last_sent = Some(crate::time::now_rfc3339());
                        s.last_error = None;
                        s.backlog_bytes = backlog;
                        s.state = "sending".into();
                    });
                }
                Sent::Refused(why) => {
                    tracing::warn!("export: {why}; these {count} records are not sent again");
                    follower.commit(batch.end);
                    self.exporter.set(|s| {
                        s.refused += count;
                        s.last_error = Some(why);
                    });
                }
                Sent::Again(why) => self.failed(why).await,
            }
        }
    }

    /// A batch not sent: said in `status`, then a pause (longer at each failure in a row, up to
    /// [`BACKOFF_MAX`]) that a change of the settings ends early.
    async fn failed(&mut self, why: String) {
        let backlog = self.follower.as_ref().map_or(0, Follower::backlog);
        let pause = self.backoff;
        self.exporter.set(|s| {
            if s.last_error.as_deref() != Some(why.as_str()) {
                tracing::warn!("export: {why}; trying again");
            }
            s.state = "retrying".into();
            s.last_error = Some(why);
            s.backlog_bytes = backlog;
        });
        self.backoff = (self.backoff * 2).min(BACKOFF_MAX);
        let before = (self.settings)();
        let until = Instant::now() + pause;
        while Instant::now() < until {
            tokio::time::sleep(POLL.min(until - Instant::now())).await;
            if (self.settings)() != before {
                self.backoff = BACKOFF_MIN;
                return;
            }
        }
    }
}
