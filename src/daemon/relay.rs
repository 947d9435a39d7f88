//! The `relay` request: an agent's raw hook input answered as `hookd relay` answers it, by the relay's
//! own logic ([`crate::agents::relay`]), with the daemon's engine in place of the socket round trip.
//! A client that is only a pipe (stdin in, the answer out) then needs none of the relay's code, and
//! none of what it costs to start (docs/protocol.md, "relay").

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::agents::Agent;
use crate::agents::relay::{Asked, Begun, Options, Relayed, Unanswered, begin, finish};
use crate::engine::{Engine, Fire};
use crate::limits::OFF_THREAD;
use crate::protocol::{ErrorKind, ErrorResponse, RelayRequest, RelayResponse, Request, to_line};

/// Answers `request` as one response line, echoing `id`. The relay's logic runs in its two halves: the
/// input read and translated (on a blocking thread when it is large, as a large request line is
/// decoded), then the fire decided as any fire is, then the answer made from its verdict.
pub async fn answer(
    engine: Arc<Engine>,
    id: Option<Value>,
    request: RelayRequest,
    cancel: CancellationToken,
) -> Vec<u8> {
    let Some(agent) = Agent::from_name(&request.agent) else {
        let known: Vec<&str> = Agent::ALL.iter().map(|agent| agent.name()).collect();
        let message = format!(
            "relay: unknown agent \"{}\" (one of: {})",
            crate::moment::shown(&request.agent),
            known.join(", ")
        );
        return to_line(&ErrorResponse::new(id, ErrorKind::BadRequest, message));
    };
    let options = Arc::new(Options {
        agent,
        socket: PathBuf::from(&request.socket),
        fail_closed: request.fail_closed,
        event: request.event,
        timeout: Duration::from_secs_f64(request.timeout),
    });
    let input = request.input;
    let begun = if input.len() <= OFF_THREAD {
        Ok(begin(&options, input.as_bytes()))
    } else {
        let options = options.clone();
        tokio::task::spawn_blocking(move || begin(&options, input.as_bytes())).await
    };
    let relayed = match begun {
        Ok(Begun::Answered(relayed)) => *relayed,
        Ok(Begun::Asking(mut pending)) => {
            let line = std::mem::take(&mut pending.line);
            let asked = ask(&engine, &options, line, pending.wait, cancel).await;
            finish(&options, pending, asked)
        }
        Err(e) => {
            tracing::error!("a relay request's task ended abnormally: {e}");
            return to_line(&ErrorResponse::new(
                id,
                ErrorKind::Internal,
                "internal error; see the daemon's log",
            ));
        }
    };
    to_line(&response(id, relayed))
}

/// The fire the relay asks for, decided by the engine within `wait`, and read back as the relay reads
/// the daemon's answer on its socket, so that both answer alike. Past `wait`, its hooks are stopped, as
/// when a relay gives up and hangs up.
async fn ask(
    engine: &Arc<Engine>,
    options: &Options,
    line: Vec<u8>,
    wait: Duration,
    cancel: CancellationToken,
) -> Asked {
    let unreadable =
        |why: String| Unanswered::Other(format!("hookd could not read its own fire: {why}"));
    // A large fire line is decoded off the thread every client shares, as a large request line is.
    let decoded = if line.len() <= OFF_THREAD {
        Ok(crate::protocol::decoder::decode(&line))
    } else {
        tokio::task::spawn_blocking(move || crate::protocol::decoder::decode(&line)).await
    };
    let Ok(decoded) = decoded else {
        return Err(unreadable("its decoding ended abnormally".into()));
    };
    let fire = match decoded {
        Ok((
            _,
            Request::Fire {
                moment,
                agent,
                event,
            },
        )) => Fire {
            moment,
            agent,
            event,
        },
        Ok(_) => return Err(unreadable("not a fire".into())),
        Err(error) => return Err(unreadable(error.error.message)),
    };
    let stop = cancel.child_token();
    let decided =
        crate::daemon::answer::fire_line(engine, Some(Value::from(1)), fire, stop.clone());
    let Ok(response) = tokio::time::timeout(wait, decided).await else {
        stop.cancel();
        return Err(Unanswered::TimedOut(format!(
            "hookd on {} did not answer in time",
            options.socket.display()
        )));
    };
    let response = String::from_utf8_lossy(&response);
    crate::protocol::read_fire_response(response.trim_end()).map_err(unreadable)
}

/// What the relay answers, as the response says it. What it did alone (the record `hookd relay` keeps in
/// its spool for a daemon to take in later) goes straight to this daemon's journal, without waiting and
/// with no file written on the thread every client shares.
fn response(id: Option<Value>, relayed: Relayed) -> RelayResponse {
    if let Some(record) = relayed.spooled {
        crate::record::note(record);
    }
    let mut stderr = String::new();
    for note in &relayed.notes {
        stderr.push_str(note);
        stderr.push('\n');
    }
    if let Some(err) = &relayed.stderr {
        stderr.push_str(err);
        stderr.push('\n');
    }
    RelayResponse {
        id,
        ok: true,
        exit: relayed.exit,
        stdout: relayed.stdout.map(|out| out + "\n").unwrap_or_default(),
        stderr,
        refusal: relayed.refusal,
    }
}
