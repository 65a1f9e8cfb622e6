//! The DAP envelope: reading requests out of JSON values, building responses and
//! events. Typed per-request arguments live with their handlers.
//!
//! Outgoing messages carry no `seq` here: the connection's writer numbers them in
//! the order they go out.

use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc::{error::TrySendError, Sender};

/// A request from the client.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub seq: i64,
    pub command: String,
    pub arguments: Value,
}

impl Request {
    /// Read a request; the error says what is wrong with the message.
    pub fn parse(message: &Value) -> Result<Request, String> {
        let kind = message.get("type").and_then(Value::as_str);
        if kind != Some("request") {
            return Err(format!(
                "expected a message of type \"request\", got {:?}",
                kind.unwrap_or("none")
            ));
        }
        let seq = message
            .get("seq")
            .and_then(Value::as_i64)
            .ok_or("the request has no integer seq")?;
        let command = message
            .get("command")
            .and_then(Value::as_str)
            .ok_or("the request has no command")?;
        Ok(Request {
            seq,
            command: command.to_string(),
            arguments: message.get("arguments").cloned().unwrap_or(Value::Null),
        })
    }

    /// The arguments as `T` (missing arguments read as `{}`).
    pub fn args<T: DeserializeOwned>(&self) -> Result<T, String> {
        let args = if self.arguments.is_null() {
            json!({})
        } else {
            self.arguments.clone()
        };
        serde_json::from_value(args).map_err(|e| format!("bad arguments for {}: {e}", self.command))
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

    /// A failed response: `message` is shown to the user.
    pub fn fail(&self, request_seq: i64, command: &str, message: &str) {
        self.send(json!({
            "type": "response",
            "request_seq": request_seq,
            "success": false,
            "command": command,
            "message": message,
            "body": { "error": { "id": 1, "format": message, "showUser": true } },
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
        let ok = Request::parse(
            &json!({"seq": 3, "type": "request", "command": "next", "arguments": {"threadId": 1}}),
        )
        .unwrap();
        assert_eq!((ok.seq, ok.command.as_str()), (3, "next"));
        assert!(Request::parse(&json!({"seq": 1, "type": "event"}))
            .unwrap_err()
            .contains("\"event\""));
        assert!(Request::parse(&json!({"type": "request", "command": "x"}))
            .unwrap_err()
            .contains("seq"));
        assert!(Request::parse(&json!({"seq": 1, "type": "request"}))
            .unwrap_err()
            .contains("command"));
    }
}
