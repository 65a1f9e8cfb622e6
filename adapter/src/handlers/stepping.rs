//! continue, next, stepIn, stepOut, stepBack, reverseContinue, pause.
//!
//! Each move runs on a blocking thread (the engine may be slow). The response comes
//! first; the events of the move (output, stopped or exited) follow it.

use super::Connection;
use crate::protocol::{Request, RequestError};
use crate::session::{Move, Session, Step};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// Make `step`, the move the request's command names (its `threadId` was checked
/// when it was parsed; there is one thread).
pub async fn step(
    conn: &mut Connection,
    request: &Request,
    step: Step,
) -> Result<(), RequestError> {
    if conn.terminated {
        return Err(RequestError::failed("the program has ended"));
    }
    if !conn.started {
        return Err(RequestError::failed(
            "the program has not started: send configurationDone first",
        ));
    }
    let session = conn.session()?;
    let moved = run_step(session, step).await?;
    let body = (step == Step::Continue).then(|| json!({ "allThreadsContinued": true }));
    conn.out.respond(request, body);
    conn.report(moved);
    Ok(())
}

/// Make a move off the async runtime.
pub async fn run_step(session: Arc<Mutex<Session>>, step: Step) -> Result<Move, RequestError> {
    tokio::task::spawn_blocking(move || {
        let mut session = session.lock().unwrap_or_else(|e| e.into_inner());
        session.step(step).map_err(RequestError::failed)
    })
    .await
    .map_err(|e| RequestError::failed(format!("the engine stopped unexpectedly: {e}")))?
}

/// Every move ends stopped or exited before its response, so there is never a running
/// program to pause: the request is acknowledged.
pub fn pause(conn: &mut Connection, request: &Request) -> Result<(), RequestError> {
    conn.out.respond(request, None);
    Ok(())
}
