//! The engine's decisions as the protocol's answers: the one place the daemon turns a [`Decision`] into
//! a [`FireResponse`] (capped to [`MAX_ANSWER`](crate::limits::MAX_ANSWER)), and [`NotDecided`] into an
//! [`ErrorResponse`].

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::engine::verdict::{self, Kind, Rewritten};
use crate::engine::{Decision, Engine, Fire, NotDecided};
use crate::protocol::{
    ErrorKind, ErrorResponse, FireResponse, HookReport, Outcome, Permission, Rewrote, to_line,
};

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

/// A decision as the protocol says it, echoing `id`. Never more than `MAX_ANSWER` bytes of answer,
/// whoever asks (socket or http); the verdict is kept whole.
pub fn fire_response(id: Option<Value>, decision: Decision) -> FireResponse {
    let mut response = FireResponse {
        id,
        ok: true,
        refused: decision.refused,
        permission: decision.permission.map(|p| match p {
            verdict::Permission::Allow => Permission::Allow,
            verdict::Permission::Ask => Permission::Ask,
        }),
        advisory: decision.advisory,
        reason: decision.reason,
        adds: decision.adds,
        input: decision.input,
        output: decision.output,
        hooks: decision
            .hooks
            .into_iter()
            .map(|hook| HookReport {
                name: hook.name,
                outcome: outcome(hook.outcome),
                rewrote: hook.rewrote.map(|r| match r {
                    Rewritten::Input => Rewrote::Input,
                    Rewritten::Output => Rewrote::Output,
                }),
                exit: hook.exit,
                ms: crate::time::tenths_of_ms(hook.elapsed),
                error: hook.error,
                truncated: hook.truncated,
            })
            .collect(),
    };
    crate::daemon::answer_cap::cap(&mut response);
    response
}

fn outcome(kind: Kind) -> Outcome {
    match kind {
        Kind::Nothing => Outcome::Nothing,
        Kind::Adds => Outcome::Adds,
        Kind::Rewrote => Outcome::Rewrote,
        Kind::Allowed => Outcome::Allowed,
        Kind::Asked => Outcome::Asked,
        Kind::Refused => Outcome::Refused,
        Kind::Failed => Outcome::Failed,
        Kind::Skipped => Outcome::Skipped,
    }
}
