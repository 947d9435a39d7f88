//! The engine's verdicts as the protocol's answers: the one place the daemon turns a [`Verdict`] into
//! a [`FireResponse`] (capped to [`MAX_ANSWER`](crate::limits::MAX_ANSWER)), and [`NotDecided`] into an
//! [`ErrorResponse`].

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::decision::Verdict;
use crate::engine::{Engine, Fire, NotDecided};
use crate::protocol::{ErrorKind, ErrorResponse, FireResponse, to_line};

/// Decides `fire` and answers it as one response line, echoing `id`.
pub async fn fire_line(
    engine: &Arc<Engine>,
    id: Option<Value>,
    fire: Fire,
    cancel: CancellationToken,
) -> Vec<u8> {
    match engine.decide(fire, &cancel).await {
        Ok(decision) => to_line(&fire_response(id, decision)),
        Err(not_decided) => to_line(&error_response(id, not_decided)),
    }
}

/// Why a fire was not decided, as the protocol says it.
pub fn error_response(id: Option<Value>, not_decided: NotDecided) -> ErrorResponse {
    match not_decided {
        NotDecided::UnknownMoment(message) => {
            ErrorResponse::new(id, ErrorKind::UnknownMoment, message)
        }
        NotDecided::ShuttingDown => ErrorResponse::new(
            id,
            ErrorKind::ShuttingDown,
            "the daemon stopped before the hooks finished",
        ),
    }
}

/// A verdict as the protocol says it, echoing `id`. Never more than `MAX_ANSWER` bytes of answer,
/// whoever asks (socket or http); the verdict is kept whole.
pub fn fire_response(id: Option<Value>, verdict: Verdict) -> FireResponse {
    let mut response = FireResponse {
        id,
        ok: true,
        verdict,
    };
    crate::daemon::answer_cap::cap(&mut response);
    response
}
