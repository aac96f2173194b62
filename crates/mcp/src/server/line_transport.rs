//! Newline-delimited JSON-RPC over a byte stream pair (stdio), where every request is answered.
//!
//! This replaces the SDK's `AsyncRwTransport`, which drops a line over its limit with no
//! answer and answers a line it cannot decode without its id. Here each line is read with a
//! bound ([`crate::MAX_MESSAGE_BYTES`]), [screened](crate::screen), and held back by the
//! start-up rules ([`super::startup`]); whatever is not handed to the SDK and has someone
//! waiting is answered on the same output, in one piece, between the SDK's own messages.
//!
//! A line over the bound is answered as soon as the bound is reached (with the id read from
//! its start), and the rest of it is skipped as it arrives, so memory stays at the bound.

use std::borrow::Cow;
use std::sync::Arc;

use bytes::Bytes;
use futures::SinkExt;
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ProtocolVersion, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::Mutex;
use tokio_util::codec::{BytesCodec, FramedWrite};

use super::startup::{Admission, Startup};
use crate::screen::{Rejection, ReplyTo, Screened, screen};

type Writer<W> = Arc<Mutex<FramedWrite<W, BytesCodec>>>;

/// The transport (see the module docs).
pub struct LineTransport<R, W> {
    read: BufReader<R>,
    /// The line being read; never longer than `max_line`.
    line: Vec<u8>,
    max_line: usize,
    /// Skipping the rest of a line that passed `max_line`, up to its newline. On the struct
    /// because `receive` is cancelled whenever the SDK's select picks another branch.
    discarding: bool,
    write: Writer<W>,
    /// An answer of ours not yet queued on `write`.
    reply: Option<Bytes>,
    /// An answer queued but not yet flushed.
    unflushed: bool,
    startup: Startup,
}

/// How one bounded read ended.
enum LineRead {
    Line,
    /// Over the bound: the answer is ready, the rest of the line is being skipped.
    Oversized(Rejection),
    Eof,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// Lines up to `max_line` bytes (newline excluded); requests naming a version in
    /// `versions` may start a session without `initialize`.
    pub fn new(
        read: R,
        write: W,
        max_line: usize,
        versions: Cow<'static, [ProtocolVersion]>,
    ) -> Self {
        Self {
            read: BufReader::new(read),
            line: Vec::new(),
            max_line,
            discarding: false,
            write: Arc::new(Mutex::new(FramedWrite::new(write, BytesCodec::new()))),
            reply: None,
            unflushed: false,
            startup: Startup::new(versions),
        }
    }

    /// One line into `self.line`, never past `max_line`. Cancellation-safe: a partial line
    /// stays in `self.line` and the next call continues it.
    async fn read_line(&mut self) -> std::io::Result<LineRead> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(LineRead::Eof);
            }
            let newline = newline_in(available);
            let take = newline.map_or(available.len(), |at| at + 1);
            if self.discarding {
                self.discarding = newline.is_none();
                self.read.consume(take);
                continue;
            }
            let content = newline.map_or(take, |at| at);
            if self.line.len() + content > self.max_line {
                // Answered now, from what the line starts with; the rest is skipped.
                let room = self.max_line - self.line.len();
                self.line.extend_from_slice(&available[..room.min(content)]);
                let answer = Rejection::too_large(&self.line, self.max_line);
                self.line.clear();
                self.discarding = newline.is_none();
                self.read.consume(take);
                return Ok(LineRead::Oversized(answer));
            }
            self.line.extend_from_slice(&available[..take]);
            self.read.consume(take);
            if newline.is_some() {
                return Ok(LineRead::Line);
            }
        }
    }

    /// Queues and flushes an answer of ours, if one is waiting. Cancellation-safe: the answer
    /// leaves `self.reply` only once queued, and a queued answer is flushed on the next call.
    async fn write_reply(&mut self) -> std::io::Result<()> {
        if self.reply.is_none() && !self.unflushed {
            return Ok(());
        }
        let mut write = self.write.lock().await;
        if let Some(reply) = &self.reply {
            write.feed(reply.clone()).await?;
            self.reply = None;
            self.unflushed = true;
        }
        SinkExt::<Bytes>::flush(&mut *write).await?;
        self.unflushed = false;
        Ok(())
    }

    fn answer(&mut self, rejection: &Rejection) {
        if rejection.reply_to == ReplyTo::Nobody {
            return;
        }
        let mut line = rejection.to_json();
        line.push(b'\n');
        self.reply = Some(Bytes::from(line));
    }

    /// The next message for the SDK, answering what is not for it; `None` at end of input or
    /// when either stream fails.
    async fn next_message(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if self.write_reply().await.is_err() {
                return None;
            }
            match self.read_line().await {
                Ok(LineRead::Line) => {}
                Ok(LineRead::Oversized(answer)) => {
                    self.answer(&answer);
                    continue;
                }
                Ok(LineRead::Eof) | Err(_) => return None,
            }
            let screened = {
                let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if line.iter().all(u8::is_ascii_whitespace) {
                    None
                } else {
                    Some(screen(line))
                }
            };
            self.line.clear();
            match screened {
                None => continue,
                Some(Screened::Reject(rejection)) => self.answer(&rejection),
                Some(Screened::Deliver(message)) => match self.startup.admit(&message) {
                    Admission::Deliver => return Some(*message),
                    Admission::Ignore => {}
                    Admission::Refuse(rejection) => self.answer(&rejection),
                },
            }
        }
    }
}

fn newline_in(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|b| *b == b'\n')
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = Arc::clone(&self.write);
        async move {
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            write.lock().await.send(Bytes::from(line)).await
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        self.next_message()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        SinkExt::<Bytes>::flush(&mut *self.write.lock().await).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    const LIMIT: usize = 256;

    async fn exchange(input: Vec<u8>) -> (Vec<ClientJsonRpcMessage>, Vec<Value>) {
        let (client_out, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, client_in) = tokio::io::duplex(1 << 16);
        let writer = tokio::spawn(async move {
            let mut client_out = client_out;
            client_out.write_all(&input).await.unwrap();
        });
        let mut transport = LineTransport::new(
            server_in,
            server_out,
            LIMIT,
            Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS),
        );
        let mut delivered = Vec::new();
        while let Some(m) = transport.receive().await {
            delivered.push(m);
        }
        writer.await.unwrap();
        drop(transport);
        let mut answers = Vec::new();
        let mut lines = tokio::io::BufReader::new(client_in).lines();
        while let Some(line) = lines.next_line().await.unwrap() {
            answers.push(serde_json::from_str(&line).unwrap());
        }
        (delivered, answers)
    }

    #[tokio::test]
    async fn an_oversized_line_is_answered_with_its_id_and_the_next_line_is_served() {
        let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
        let mut input = init.to_vec();
        input.push(b'\n');
        input.extend(br#"{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":""#);
        input.extend(std::iter::repeat_n(b'x', LIMIT * 40));
        input.extend(b"\"}}\n");
        // Exactly at the limit is accepted; one past is not.
        let at_limit = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"ping","pad":"{}"}}"#,
            "y".repeat(LIMIT - 49)
        );
        assert_eq!(at_limit.len(), LIMIT);
        input.extend(at_limit.as_bytes());
        input.push(b'\n');
        input.extend(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":[1]}"#);
        input.push(b'\n');
        input.extend(b"\n   \n");
        let (delivered, answers) = exchange(input).await;
        assert_eq!(delivered.len(), 2, "{delivered:?}");
        assert_eq!(answers.len(), 2, "{answers:?}");
        assert_eq!(answers[0]["id"], "big");
        assert_eq!(answers[0]["error"]["code"], -32600);
        assert!(
            answers[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&format!("over {LIMIT} bytes"))
        );
        assert_eq!(
            answers[1],
            json!({"jsonrpc":"2.0","id":3,"error":{"code":-32602,
            "message": answers[1]["error"]["message"]}})
        );
    }

    #[tokio::test]
    async fn notifications_before_initialize_are_held_back_and_requests_answered() {
        let input = [
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}"#,
        ]
        .join("\n")
            + "\n";
        let (delivered, answers) = exchange(input.into_bytes()).await;
        assert!(delivered.is_empty(), "{delivered:?}");
        assert_eq!(answers.len(), 1, "{answers:?}");
        assert_eq!(answers[0]["id"], 5);
        assert!(
            answers[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("send `initialize` first")
        );
    }
}
