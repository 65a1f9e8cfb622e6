//! continue, next, stepIn, stepOut, stepBack, reverseContinue, pause.
//!
//! Each move runs on a blocking thread (the engine may be slow). The response comes
//! first; the events of the move (output, stopped or exited) follow it.

use super::Connection;
use crate::protocol::Request;
use crate::session::{Move, Session, Step};
use serde_json::json;
use std::sync::{Arc, Mutex};

pub async fn step(conn: &mut Connection, request: &Request) -> Result<(), String> {
    let step = match request.command.as_str() {
        "continue" => Step::Continue,
        "next" => Step::Over,
        "stepIn" => Step::Into,
        "stepOut" => Step::Out,
        "stepBack" => Step::Back,
        _ => Step::ReverseContinue,
    };
    // threadId is required by DAP; there is one thread, so any value is accepted.
    if request
        .arguments
        .get("threadId")
        .and_then(|t| t.as_i64())
        .is_none()
    {
        return Err(format!(
            "bad arguments for {}: threadId (an integer) is required",
            request.command
        ));
    }
    if conn.terminated {
        return Err("the program has ended".into());
    }
    if !conn.started {
        return Err("the program has not started: send configurationDone first".into());
    }
    let session = conn.session()?;
    let moved = run_step(session, step).await?;
    let body = (step == Step::Continue).then(|| json!({ "allThreadsContinued": true }));
    conn.out.respond(request, body);
    conn.report(moved);
    Ok(())
}

/// Make a move off the async runtime.
pub async fn run_step(session: Arc<Mutex<Session>>, step: Step) -> Result<Move, String> {
    tokio::task::spawn_blocking(move || {
        let mut session = session.lock().unwrap_or_else(|e| e.into_inner());
        session.step(step).map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| format!("the engine stopped unexpectedly: {e}"))?
}

/// Every move ends stopped or exited before its response, so there is never a running
/// program to pause: the request is acknowledged.
pub fn pause(conn: &mut Connection, request: &Request) -> Result<(), String> {
    conn.out.respond(request, None);
    Ok(())
}
