//! DAP wire framing: `Content-Length: N\r\n\r\n` headers, then N bytes of JSON.
//!
//! [`FrameReader`] turns bytes into JSON values. A body that is not a JSON object is
//! a recoverable [`FrameError`]: the frame's end is known, so the caller logs it and
//! reads on. Anything wrong in a header is not: input that is not DAP framing at all
//! (an HTTP request, which any web page can send to a port on 127.0.0.1) must never
//! reach the dispatcher, and after a header without a usable length the next message
//! cannot be found, so the caller closes the connection. [`write_frame`] is the other
//! direction.

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Bodies above this size are refused (and the connection closed) rather than buffered.
pub const MAX_BODY: usize = 64 << 20;

/// Header lines longer than this are refused: a DAP header line is short, and a peer
/// must not make us buffer a line without end.
pub const MAX_HEADER_LINE: usize = 8 << 10;

/// Why one message could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The input is not DAP framing (a request line such as `POST / HTTP/1.1`, a
    /// header other than Content-Length and Content-Type, an overlong or non-UTF-8
    /// line): the peer is no DAP client and gets no answer.
    #[error("not DAP framing: {0}")]
    NotDap(String),
    /// A DAP header block without a usable `Content-Length` (missing, not a number,
    /// over [`MAX_BODY`]): where its body ends is unknown.
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
    /// Whether reading can go on after this error (only when the frame's end is known).
    pub fn is_recoverable(&self) -> bool {
        matches!(self, FrameError::BadJson(_))
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
        let mut line = Vec::new();
        let mut seen_any = false;
        loop {
            line.clear();
            // One byte past the limit tells a line that is too long from one that fits.
            let n = (&mut self.reader)
                .take(MAX_HEADER_LINE as u64 + 1)
                .read_until(b'\n', &mut line)
                .await?;
            if n == 0 {
                return if seen_any {
                    Err(FrameError::Truncated("end of stream in the header".into()))
                } else {
                    Ok(None)
                };
            }
            if line.len() > MAX_HEADER_LINE {
                return Err(FrameError::NotDap(format!(
                    "a header line over {MAX_HEADER_LINE} bytes"
                )));
            }
            let text = std::str::from_utf8(&line)
                .map_err(|_| FrameError::NotDap("a header line that is not UTF-8".into()))?
                .trim_end_matches(['\r', '\n']);
            if text.is_empty() {
                if !seen_any {
                    continue; // stray blank lines between messages are harmless
                }
                break;
            }
            seen_any = true;
            let Some((name, value)) = text.split_once(':') else {
                return Err(FrameError::NotDap(format!("the line {:?}", shorten(text))));
            };
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => {
                    length = Some(
                        value
                            .trim()
                            .parse::<usize>()
                            .map_err(|_| format!("Content-Length {:?}", shorten(value.trim()))),
                    )
                }
                "content-type" => {}
                _ => {
                    return Err(FrameError::NotDap(format!(
                        "the header {:?}",
                        shorten(name)
                    )))
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

/// At most 80 characters of what a peer sent, for a log line.
fn shorten(text: &str) -> String {
    text.chars().take(80).collect()
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
    // One buffer, one write: written apart, the body waited on TCP for the header's
    // acknowledgement (Nagle's algorithm), about 45 ms a message.
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(&body);
    writer.write_all(&frame).await?;
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
    async fn bodies_that_are_not_objects_are_skipped_not_fatal() {
        let bytes =
            b"Content-Length: 5\r\n\r\nnope!Content-Length: 2\r\n\r\n[]Content-Length: 2\r\n\r\n{}";
        let got = read_all(bytes).await;
        assert_eq!(got.len(), 3);
        assert!(got[0].as_ref().unwrap_err().contains("not a JSON object"));
        assert!(got[1].as_ref().unwrap_err().contains("an array"));
        assert_eq!(got[2], Ok(json!({})));
    }

    #[tokio::test]
    async fn content_type_is_the_one_other_header_dap_allows() {
        let bytes = b"\r\nContent-Length: 2\r\ncontent-type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}";
        assert_eq!(read_all(bytes).await, vec![Ok(json!({}))]);
    }

    /// What a reader gives for `bytes` followed by a valid message: one error, and
    /// never that message.
    async fn the_only_error(bytes: &[u8]) -> String {
        let mut input = bytes.to_vec();
        input.extend_from_slice(b"Content-Length: 2\r\n\r\n{}");
        let got = read_all(&input).await;
        assert_eq!(got.len(), 1, "{got:?}");
        got[0].clone().unwrap_err()
    }

    #[tokio::test]
    async fn http_and_other_foreign_framing_end_the_stream() {
        // What a web page's fetch() to 127.0.0.1 sends, with a DAP launch as its body.
        let post = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}";
        let cases: [(&[u8], &str); 5] = [
            (post, "not DAP framing: the line \"POST / HTTP/1.1\""),
            (
                b"Content-Length: 2\r\nHost: 127.0.0.1\r\n\r\n{}",
                "not DAP framing: the header \"Host\"",
            ),
            (
                b"GET http://127.0.0.1/ HTTP/1.1\r\n\r\n",
                "not DAP framing: the header \"GET http\"",
            ),
            (
                b"Content-Length: 2\xff\r\n\r\n{}",
                "not DAP framing: a header line that is not UTF-8",
            ),
            (
                &[b'x'; 200_000],
                "not DAP framing: a header line over 8192 bytes",
            ),
        ];
        for (bytes, expected) in cases {
            assert_eq!(the_only_error(bytes).await, expected);
        }
    }

    #[tokio::test]
    async fn a_header_without_a_usable_length_ends_the_stream() {
        // Its body would be read as header lines, and every later message lost.
        let body = br#"{"seq": 1, "type": "request", "command": "initialize"}"#;
        for (header, expected) in [
            ("Content-Type: text/plain", "no Content-Length"),
            ("Content-Length: -5", "Content-Length \"-5\""),
            ("Content-Length: abc", "Content-Length \"abc\""),
            ("Content-Length: 67108865", "is over 67108864"),
        ] {
            let mut bytes = format!("{header}\r\n\r\n").into_bytes();
            bytes.extend_from_slice(body);
            let error = the_only_error(&bytes).await;
            assert!(
                error.starts_with("bad header: ") && error.contains(expected),
                "{error}"
            );
        }
    }

    #[tokio::test]
    async fn a_message_is_written_in_one_write() {
        /// Records each write it is given.
        #[derive(Default)]
        struct Writes(Vec<Vec<u8>>);
        impl AsyncWrite for Writes {
            fn poll_write(
                mut self: std::pin::Pin<&mut Self>,
                _: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                self.0.push(buf.to_vec());
                std::task::Poll::Ready(Ok(buf.len()))
            }
            fn poll_flush(
                self: std::pin::Pin<&mut Self>,
                _: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::task::Poll::Ready(Ok(()))
            }
            fn poll_shutdown(
                self: std::pin::Pin<&mut Self>,
                _: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::task::Poll::Ready(Ok(()))
            }
        }
        let mut writes = Writes::default();
        write_frame(&mut writes, &json!({"seq": 1})).await.unwrap();
        assert_eq!(
            writes.0,
            vec![b"Content-Length: 9\r\n\r\n{\"seq\":1}".to_vec()]
        );
    }

    #[tokio::test]
    async fn a_truncated_body_ends_the_stream() {
        let got = read_all(b"Content-Length: 10\r\n\r\n{}").await;
        assert_eq!(got.len(), 1);
        assert!(got[0].as_ref().unwrap_err().contains("expected 10 bytes"));
    }
}
