//! The DAP envelope: reading a request's header (its `seq` and command) out of a JSON
//! value, building responses and events, and the typed error a failed request answers
//! with. The arguments are parsed into a typed request in [`crate::request`].
//!
//! Outgoing messages carry no `seq` here: the connection's writer numbers them in
//! the order they go out.

use serde::Serialize;
use serde_json::{json, Map, Value};
use std::fmt::Display;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc::{error::TrySendError, Sender};

/// A request's header: what its response needs (`request_seq` and `command`).
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub seq: i64,
    pub command: String,
}

impl Request {
    /// Read a request: its header, and its arguments (`{}` when there are none) for
    /// [`crate::request::Command::parse`].
    pub fn parse(message: &Value) -> Result<(Request, Value), RequestError> {
        let kind = message.get("type").and_then(Value::as_str);
        if kind != Some("request") {
            return Err(RequestError::malformed(format!(
                "expected a message of type \"request\", got {:?}",
                kind.unwrap_or("none")
            )));
        }
        let seq = message
            .get("seq")
            .and_then(Value::as_i64)
            .ok_or_else(|| RequestError::malformed("the request has no integer seq"))?;
        let command = message
            .get("command")
            .and_then(Value::as_str)
            .ok_or_else(|| RequestError::malformed("the request has no command"))?;
        let arguments = match message.get("arguments") {
            None | Some(Value::Null) => json!({}),
            Some(arguments) => arguments.clone(),
        };
        let request = Request {
            seq,
            command: command.to_string(),
        };
        Ok((request, arguments))
    }
}

/// Why a request failed: DAP's `Message`, the `body.error` of an error response.
/// `format` is also the response's `message`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error("{format}")]
pub struct RequestError {
    /// The kind of failure: one of the `*_ID` constants.
    pub id: i64,
    pub format: String,
    pub show_user: bool,
}

impl RequestError {
    /// The request was understood but cannot be done (no program yet, the engine or
    /// the program said no).
    pub const FAILED_ID: i64 = 1;
    /// The message or its arguments are not what DAP says they must be.
    pub const MALFORMED_ID: i64 = 2;
    /// A command this adapter does not implement.
    pub const UNKNOWN_ID: i64 = 3;
    /// The client cancelled the request.
    pub const CANCELLED_ID: i64 = 4;

    fn new(id: i64, format: impl Display) -> Self {
        RequestError {
            id,
            format: format.to_string(),
            show_user: true,
        }
    }

    pub fn failed(why: impl Display) -> Self {
        Self::new(Self::FAILED_ID, why)
    }

    pub fn malformed(why: impl Display) -> Self {
        Self::new(Self::MALFORMED_ID, why)
    }

    pub fn unknown(command: &str) -> Self {
        Self::new(
            Self::UNKNOWN_ID,
            format!("unknown request {command:?}: this adapter does not implement it"),
        )
    }

    /// DAP's predefined `message` for a cancelled request.
    pub fn cancelled() -> Self {
        Self::new(Self::CANCELLED_ID, "cancelled")
    }
}

/// Messages queued for a client that does not read them before the connection is
/// closed: a client that never reads must not make the adapter's memory grow.
pub const MAX_QUEUED: usize = 4096;

/// Sends messages to the client (cheap to clone; the writer task owns the stream).
#[derive(Clone)]
pub struct Outbox {
    tx: Sender<Value>,
    overflowed: Arc<AtomicBool>,
}

impl Outbox {
    /// An outbox over `tx`, a channel of [`MAX_QUEUED`] messages.
    pub fn new(tx: Sender<Value>) -> Self {
        Outbox {
            tx,
            overflowed: Arc::new(AtomicBool::new(false)),
        }
    }

    fn send(&self, message: Value) {
        match self.tx.try_send(message) {
            Ok(()) => {}
            // The client has not read the last MAX_QUEUED messages: give up on it.
            Err(TrySendError::Full(_)) => self.overflowed.store(true, Ordering::Relaxed),
            // The writer is gone only when the connection is closing: nothing to do.
            Err(TrySendError::Closed(_)) => {}
        }
    }

    /// Whether a message was dropped because the client stopped reading.
    pub fn overflowed(&self) -> bool {
        self.overflowed.load(Ordering::Relaxed)
    }

    pub fn respond(&self, request: &Request, body: Option<Value>) {
        let mut message = Map::new();
        message.insert("type".into(), "response".into());
        message.insert("request_seq".into(), request.seq.into());
        message.insert("success".into(), true.into());
        message.insert("command".into(), request.command.clone().into());
        if let Some(body) = body {
            message.insert("body".into(), body);
        }
        self.send(Value::Object(message));
    }

    /// A failed response, carrying `error` as its `message` and `body.error`.
    pub fn fail(&self, request: &Request, error: &RequestError) {
        self.send(json!({
            "type": "response",
            "request_seq": request.seq,
            "success": false,
            "command": request.command,
            "message": error.format,
            "body": { "error": error },
        }));
    }

    pub fn event(&self, event: &str, body: Option<Value>) {
        let mut message = json!({ "type": "event", "event": event });
        if let Some(body) = body {
            message["body"] = body;
        }
        self.send(message);
    }

    /// An `output` event (`stdout`, `stderr` or `console`); nothing for empty text.
    pub fn output(&self, category: &str, text: &str) {
        if !text.is_empty() {
            self.event(
                "output",
                Some(json!({ "category": category, "output": text })),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_requests_and_says_what_is_wrong() {
        let (ok, arguments) = Request::parse(
            &json!({"seq": 3, "type": "request", "command": "next", "arguments": {"threadId": 1}}),
        )
        .unwrap();
        assert_eq!((ok.seq, ok.command.as_str()), (3, "next"));
        assert_eq!(arguments, json!({"threadId": 1}));
        let (_, none) =
            Request::parse(&json!({"seq": 4, "type": "request", "command": "threads"})).unwrap();
        assert_eq!(none, json!({}), "missing arguments read as {{}}");
        assert!(Request::parse(&json!({"seq": 1, "type": "event"}))
            .unwrap_err()
            .format
            .contains("\"event\""));
        assert!(Request::parse(&json!({"type": "request", "command": "x"}))
            .unwrap_err()
            .format
            .contains("seq"));
        assert!(Request::parse(&json!({"seq": 1, "type": "request"}))
            .unwrap_err()
            .format
            .contains("command"));
    }

    #[test]
    fn a_failed_request_answers_with_a_dap_error_message() {
        let (tx, mut rx) = tokio::sync::mpsc::channel(1);
        let request = Request {
            seq: 7,
            command: "frobnicate".into(),
        };
        Outbox::new(tx).fail(&request, &RequestError::unknown("frobnicate"));
        let format = "unknown request \"frobnicate\": this adapter does not implement it";
        assert_eq!(
            rx.try_recv().unwrap(),
            json!({
                "type": "response",
                "request_seq": 7,
                "success": false,
                "command": "frobnicate",
                "message": format,
                "body": { "error": { "id": 3, "format": format, "showUser": true } },
            })
        );
        let cancelled = serde_json::to_value(RequestError::cancelled()).unwrap();
        assert_eq!(
            cancelled,
            json!({ "id": 4, "format": "cancelled", "showUser": true })
        );
    }
}
