//! DAP wire framing: `Content-Length: N\r\n\r\n` headers, then N bytes of JSON.
//!
//! [`FrameReader`] turns bytes into JSON values. Malformed input (a bad header, a body
//! that is not JSON) is reported as a recoverable [`FrameError`] so that the caller
//! can log it and read on; only the end of the stream (clean or mid-message) ends it.
//! [`write_frame`] is the other direction.

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Bodies above this size are refused (and skipped) rather than buffered.
pub const MAX_BODY: usize = 64 << 20;

/// Why one message could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The header block had no usable `Content-Length`; the block was skipped.
    #[error("bad header: {0}")]
    BadHeader(String),
    /// The body was read but is not a JSON object.
    #[error("body is not a JSON object: {0}")]
    BadJson(String),
    /// The stream ended inside a message.
    #[error("stream ended inside a message ({0})")]
    Truncated(String),
    #[error("read failed: {0}")]
    Io(#[from] std::io::Error),
}

impl FrameError {
    /// Whether reading can go on after this error.
    pub fn is_recoverable(&self) -> bool {
        matches!(self, FrameError::BadHeader(_) | FrameError::BadJson(_))
    }
}

/// Reads framed JSON messages from a byte stream.
pub struct FrameReader<R> {
    reader: R,
}

impl<R: AsyncBufRead + Unpin> FrameReader<R> {
    pub fn new(reader: R) -> Self {
        FrameReader { reader }
    }

    /// The next message; `Ok(None)` at a clean end of stream.
    pub async fn next(&mut self) -> Result<Option<Value>, FrameError> {
        let mut length: Option<Result<usize, String>> = None;
        let mut line = String::new();
        let mut seen_any = false;
        loop {
            line.clear();
            let n = self.reader.read_line(&mut line).await?;
            if n == 0 {
                return if seen_any {
                    Err(FrameError::Truncated("end of stream in the header".into()))
                } else {
                    Ok(None)
                };
            }
            let text = line.trim_end_matches(['\r', '\n']);
            if text.is_empty() {
                if !seen_any {
                    continue; // stray blank lines between messages are harmless
                }
                break;
            }
            seen_any = true;
            if let Some((name, value)) = text.split_once(':') {
                if name.trim().eq_ignore_ascii_case("content-length") {
                    length = Some(
                        value
                            .trim()
                            .parse::<usize>()
                            .map_err(|_| format!("Content-Length {:?}", value.trim())),
                    );
                }
            }
        }
        let length = match length {
            None => return Err(FrameError::BadHeader("no Content-Length".into())),
            Some(Err(why)) => return Err(FrameError::BadHeader(why)),
            Some(Ok(n)) if n > MAX_BODY => {
                return Err(FrameError::BadHeader(format!(
                    "Content-Length {n} is over {MAX_BODY}"
                )))
            }
            Some(Ok(n)) => n,
        };
        let mut body = vec![0u8; length];
        if let Err(e) = self.reader.read_exact(&mut body).await {
            return if e.kind() == std::io::ErrorKind::UnexpectedEof {
                Err(FrameError::Truncated(format!(
                    "expected {length} bytes of body"
                )))
            } else {
                Err(e.into())
            };
        }
        match serde_json::from_slice::<Value>(&body) {
            Ok(value @ Value::Object(_)) => Ok(Some(value)),
            Ok(other) => Err(FrameError::BadJson(format!("got {}", kind(&other)))),
            Err(e) => Err(FrameError::BadJson(e.to_string())),
        }
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Write one message with its header and flush.
pub async fn write_frame<W: AsyncWrite + Unpin>(
    writer: &mut W,
    message: &Value,
) -> std::io::Result<()> {
    let body = serde_json::to_vec(message).expect("a JSON value always serialises");
    let header = format!("Content-Length: {}\r\n\r\n", body.len());
    writer.write_all(header.as_bytes()).await?;
    writer.write_all(&body).await?;
    writer.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn read_all(bytes: &[u8]) -> Vec<Result<Value, String>> {
        let mut reader = FrameReader::new(bytes);
        let mut out = Vec::new();
        loop {
            match reader.next().await {
                Ok(Some(v)) => out.push(Ok(v)),
                Ok(None) => break,
                Err(e) => {
                    let go_on = e.is_recoverable();
                    out.push(Err(e.to_string()));
                    if !go_on {
                        break;
                    }
                }
            }
        }
        out
    }

    #[tokio::test]
    async fn round_trips_messages() {
        let mut bytes = Vec::new();
        write_frame(&mut bytes, &json!({"seq": 1, "type": "request"}))
            .await
            .unwrap();
        write_frame(&mut bytes, &json!({"text": "é\r\n"}))
            .await
            .unwrap();
        let got = read_all(&bytes).await;
        assert_eq!(
            got,
            vec![
                Ok(json!({"seq": 1, "type": "request"})),
                Ok(json!({"text": "é\r\n"}))
            ]
        );
    }

    #[tokio::test]
    async fn malformed_messages_are_skipped_not_fatal() {
        let bytes = b"Content-Length: abc\r\n\r\nContent-Length: 5\r\n\r\nnope!Content-Length: 2\r\n\r\n[]Content-Length: 2\r\n\r\n{}";
        let got = read_all(bytes).await;
        assert_eq!(got.len(), 4);
        assert!(got[0]
            .as_ref()
            .unwrap_err()
            .contains("Content-Length \"abc\""));
        assert!(got[1].as_ref().unwrap_err().contains("not a JSON object"));
        assert!(got[2].as_ref().unwrap_err().contains("an array"));
        assert_eq!(got[3], Ok(json!({})));
    }

    #[tokio::test]
    async fn a_truncated_body_ends_the_stream() {
        let got = read_all(b"Content-Length: 10\r\n\r\n{}").await;
        assert_eq!(got.len(), 1);
        assert!(got[0].as_ref().unwrap_err().contains("expected 10 bytes"));
    }
}
