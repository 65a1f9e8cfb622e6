//! Serving DAP: over stdio (one session) or TCP on 127.0.0.1 (one session per
//! connection, any number at once). Each connection runs three parts: a reader task
//! (bytes -> messages -> typed requests; records cancels at once), the dispatcher (one
//! request at a time against the [`Connection`]) and a writer task (messages -> bytes, numbering
//! them with `seq`).

use crate::cancel::Cancels;
use crate::framing::{write_frame, FrameError, FrameReader};
use crate::handlers::{Connection, Flow};
use crate::protocol::{Outbox, Request, RequestError, MAX_QUEUED};
use crate::request::Command;
use serde_json::Value;
use std::sync::Arc;
use tokio::io::{AsyncBufRead, AsyncWrite};
use tokio::sync::mpsc;

/// Serve one DAP session over a pair of streams until the client disconnects or the
/// input ends.
pub async fn serve<R, W>(reader: R, mut writer: W)
where
    R: AsyncBufRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, mut out_rx) = mpsc::channel::<Value>(MAX_QUEUED);
    // Bounded too: a client sending faster than requests are answered waits.
    let (in_tx, mut in_rx) = mpsc::channel::<Incoming>(256);
    let cancels = Arc::new(Cancels::default());

    let writer_task = tokio::spawn(async move {
        let mut seq: i64 = 0;
        while let Some(mut message) = out_rx.recv().await {
            seq += 1;
            message["seq"] = seq.into();
            tracing::trace!(%message, "send");
            if let Err(e) = write_frame(&mut writer, &message).await {
                tracing::warn!("cannot write to the client ({e}); closing");
                break;
            }
        }
    });

    let out = Outbox::new(out_tx);
    let reader_out = out.clone();
    let reader_cancels = cancels.clone();
    let reader_task = tokio::spawn(async move {
        let mut frames = FrameReader::new(reader);
        loop {
            match frames.next().await {
                Ok(Some(message)) => {
                    let Some(incoming) = read(&message) else {
                        continue;
                    };
                    // A cancel takes effect as soon as it is read, not when it is dispatched.
                    if let (_, Ok(Command::Cancel(args))) = &incoming {
                        reader_cancels.cancel(args.request_id, args.progress_id.clone());
                    }
                    if in_tx.send(incoming).await.is_err() {
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) if e.is_recoverable() => tracing::warn!("malformed message skipped: {e}"),
                // No answer: the peer is not a DAP client (perhaps a web page's request).
                Err(e @ FrameError::NotDap(_)) => {
                    tracing::error!("closing the connection: {e}");
                    break;
                }
                // A DAP client lost its framing: say why before closing.
                Err(e @ FrameError::BadHeader(_)) => {
                    tracing::error!("closing the connection: {e}");
                    let why = format!("neural-dap: closing the connection: {e}\n");
                    reader_out.output("stderr", &why);
                    break;
                }
                Err(e) => {
                    tracing::warn!("input closed: {e}");
                    break;
                }
            }
        }
    });

    let mut connection = Connection::new(out.clone(), cancels);
    while let Some((request, command)) = in_rx.recv().await {
        if connection.dispatch(request, command).await == Flow::Close {
            break;
        }
        if out.overflowed() {
            tracing::error!("closing the connection: the client left {MAX_QUEUED} messages unread");
            break;
        }
    }
    reader_task.abort();
    drop(connection);
    let overflowed = out.overflowed();
    drop(out);
    // Flush what is queued, unless the client is not reading (then nothing would).
    let mut writer_task = writer_task;
    if overflowed
        || tokio::time::timeout(FLUSH_TIME, &mut writer_task)
            .await
            .is_err()
    {
        tracing::warn!("closing without flushing: the client is not reading");
        writer_task.abort();
    }
}

/// How long a closing connection waits for its last messages to be written.
const FLUSH_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// A request as read: where its answer goes, and its command or why it cannot be had.
type Incoming = (Request, Result<Command, RequestError>);

/// Parse a message once: its envelope, then its command. A message that is not a
/// request is answered (with the reason) only if it has a seq and a command.
fn read(message: &Value) -> Option<Incoming> {
    match Request::parse(message) {
        Ok((request, arguments)) => {
            let command = Command::parse(&request.command, arguments);
            Some((request, command))
        }
        Err(error) => {
            tracing::warn!("not a request ({error}): {message}");
            let seq = message.get("seq").and_then(Value::as_i64)?;
            let command = message.get("command").and_then(Value::as_str)?.into();
            Some((Request { seq, command }, Err(error)))
        }
    }
}

/// Serve over stdin/stdout.
pub async fn serve_stdio() {
    serve(
        tokio::io::BufReader::new(tokio::io::stdin()),
        tokio::io::stdout(),
    )
    .await;
}

/// Accept connections on 127.0.0.1:`port` forever, one session each. The bound
/// address is logged (port 0 picks a free port).
pub async fn serve_tcp(port: u16) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let address = listener.local_addr()?;
    tracing::info!(%address, "listening");
    // Written on stderr too, so that a client that asked for port 0 can find it.
    eprintln!("neural-dap listening on {address}");
    loop {
        let (stream, peer) = listener.accept().await?;
        tracing::info!(%peer, "connection");
        configure(&stream);
        tokio::spawn(async move {
            let (read, write) = stream.into_split();
            serve(tokio::io::BufReader::new(read), write).await;
            tracing::info!(%peer, "connection closed");
        });
    }
}

/// Each DAP message is one small write, answered before the next is sent: Nagle's
/// algorithm would hold it back for an acknowledgement.
fn configure(stream: &tokio::net::TcpStream) {
    if let Err(e) = stream.set_nodelay(true) {
        tracing::warn!("cannot set TCP_NODELAY ({e}); messages may be slow");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn accepted_sockets_send_without_delay() {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let address = listener.local_addr().unwrap();
        let client = tokio::spawn(tokio::net::TcpStream::connect(address));
        let (stream, _) = listener.accept().await.unwrap();
        configure(&stream);
        assert!(stream.nodelay().unwrap());
        client.await.unwrap().unwrap();
    }
}
