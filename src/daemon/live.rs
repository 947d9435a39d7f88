//! A connection's live hooks (docs/protocol.md, "Live hooks"): `attach`, `answer` and `detach` carried
//! out for the connection, against the engine's hooks hung ([`crate::engine::live`]). The connection
//! writes the calls and notices its client is sent ([`LiveSide::lines`]), and takes its hooks down when
//! it ends, however it ends.

use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::sync::mpsc;

use crate::daemon::state::Daemon;
use crate::engine::live::{Client, Line, NotTaken};
use crate::protocol::{AttachResponse, DetachResponse, ErrorKind, ErrorResponse, Refused, to_line};

/// What a connection holds of its live hooks.
#[derive(Debug, Default)]
pub struct LiveSide {
    /// The peer's process and user, as the kernel said when it connected.
    pub pid: Option<i32>,
    pub uid: Option<u32>,
    /// Set at the connection's first `attach`.
    pub client: Option<Arc<Client>>,
    /// The lines to write to the client (calls, notices), until the connection's loop takes them.
    pub lines: Option<mpsc::Receiver<Line>>,
}

impl LiveSide {
    /// Whether the connection holds live hooks now: then it is not idle, however long it is silent.
    pub fn holds_hooks(&self) -> bool {
        self.client.as_ref().is_some_and(|client| client.hung() > 0)
    }

    /// A line taken from the queue, to write now: `None` for a call nobody waits for any more.
    pub fn to_write(&self, line: Line) -> Option<Vec<u8>> {
        self.client.as_ref()?.to_write(line)
    }

    /// The client sent a line hookd could not read: it may have been an answer, so every call pending
    /// on the connection fails now (its `on_failure` decides) rather than at its timeout.
    pub fn unreadable_line(&self, why: &str) {
        if let Some(client) = &self.client
            && client.pending() > 0
        {
            let failed = client.fail_pending(&format!(
                "the client sent a line hookd could not read, which may have been this call's answer ({why})"
            ));
            tracing::warn!(
                failed,
                "a live client sent an unreadable line: its calls pending failed"
            );
        }
    }

    /// `attach`: each hook checked as the settings file's are, then hung after every hook hung before.
    pub fn attach(
        &mut self,
        daemon: &Daemon,
        id: Option<Value>,
        client: &str,
        hooks: &[Value],
    ) -> Vec<u8> {
        // Root may connect to the socket (to look at it); a hook in this user's agents is this user's.
        let own = nix::unistd::geteuid().as_raw();
        if self.uid != Some(own) {
            let error = ErrorResponse::new(
                id,
                ErrorKind::BadRequest,
                "attach: only the daemon's own user may hang live hooks",
            );
            return to_line(&error);
        }
        let live = daemon.engine.live();
        let connected = self.client.get_or_insert_with(|| {
            let connected = live.connect(self.pid);
            self.lines = Some(connected.lines);
            connected.client
        });
        let generation = daemon.engine.current();
        let mut refused = Vec::new();
        let mut checked = Vec::new();
        for hook in hooks {
            match crate::engine::live_check::live_hook(
                hook,
                &generation.settings,
                connected.connection,
                client,
            ) {
                Ok(spec) => checked.push(spec),
                Err((name, reason)) => refused.push(Refused { name, reason }),
            }
        }
        let names: Vec<String> = checked.iter().map(|spec| spec.hook.name.clone()).collect();
        let mut attached = Vec::new();
        for (name, hung) in names.into_iter().zip(live.attach(connected, checked)) {
            match hung {
                Ok(name) => attached.push(name),
                Err(reason) => refused.push(Refused { name, reason }),
            }
        }
        for refusal in &refused {
            tracing::info!(client, hook = %refusal.name, "a live hook refused: {}", refusal.reason);
        }
        if !attached.is_empty() {
            tracing::info!(client, pid = self.pid, hooks = ?attached, "live hooks hung");
        }
        to_line(&AttachResponse {
            id,
            ok: true,
            attached,
            refused,
        })
    }

    /// `answer`: nothing to write when taken; an error line (echoing the answer's `id`, if it had one)
    /// when late or out of step.
    pub fn answer(
        &self,
        id: Option<Value>,
        call: Option<Value>,
        answer: &Map<String, Value>,
    ) -> Option<Vec<u8>> {
        let taken = match &self.client {
            Some(client) => client.answer(call.as_ref(), answer),
            None => Err(NotTaken::OutOfStep(
                "an answer out of step: this connection has hung no live hook, and was sent no call"
                    .into(),
            )),
        };
        let (kind, message) = match taken {
            Ok(()) => return None,
            Err(NotTaken::Late(message)) => (ErrorKind::BadRequest, message),
            Err(NotTaken::OutOfStep(message)) => {
                tracing::warn!("a live client: {message}");
                (ErrorKind::OutOfStep, message)
            }
        };
        Some(to_line(&ErrorResponse::new(id, kind, message)))
    }

    /// `detach`: the hooks named (all of the connection's when none is) taken down.
    pub fn detach(&self, daemon: &Daemon, id: Option<Value>, hooks: Option<&[String]>) -> Vec<u8> {
        let (detached, unknown) = match &self.client {
            Some(client) => daemon.engine.live().detach(client.connection, hooks),
            None => (Vec::new(), hooks.unwrap_or_default().to_vec()),
        };
        if !detached.is_empty() {
            tracing::info!(pid = self.pid, hooks = ?detached, "live hooks taken down");
        }
        to_line(&DetachResponse {
            id,
            ok: true,
            detached,
            unknown,
        })
    }

    /// The connection ended: its hooks are taken down, its calls pending fail at once.
    pub fn end(&mut self, daemon: &Daemon) {
        if let Some(client) = self.client.take() {
            daemon.engine.live().disconnect(client.connection);
            tracing::info!(
                pid = self.pid,
                "a live client's connection ended: its hooks are taken down"
            );
        }
    }
}
