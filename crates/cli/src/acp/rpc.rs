//! JSON-RPC 2.0 over standard input and output, one message a line (the protocol's stdio
//! transport): incoming requests and notifications for the handler, responses for it to send,
//! and requests of its own (permission requests) whose answers it awaits.
//!
//! One task reads and one thread writes; a request's handler runs on a task of its own, so a
//! prompt that waits on the editor's answer to a permission request never holds the reader,
//! and a line sent by a busy task goes out at once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

/// The longest line read: a prompt with embedded files is large, an endless line is not.
const MOST_LINE_BYTES: usize = 64 * 1024 * 1024;

/// JSON-RPC's codes for what the handler refuses.
pub const INVALID_PARAMS: i64 = -32602;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INTERNAL_ERROR: i64 = -32603;
const PARSE_ERROR: i64 = -32700;

/// An error answer.
#[derive(Debug)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub fn invalid(message: impl Into<String>) -> RpcError {
        RpcError {
            code: INVALID_PARAMS,
            message: message.into(),
        }
    }

    pub fn internal(message: impl Into<String>) -> RpcError {
        RpcError {
            code: INTERNAL_ERROR,
            message: message.into(),
        }
    }
}

/// Requests of tackle's own that wait for the editor's answer, by id.
type Pending = HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>;

/// The sending half: responses, notifications and requests of tackle's own.
#[derive(Clone)]
pub struct Peer {
    /// Lines to write; `None` tells the writer to stop once what came before it is out.
    out: mpsc::UnboundedSender<Option<String>>,
    pending: Arc<Mutex<Pending>>,
    next: Arc<AtomicU64>,
}

impl Peer {
    pub(crate) fn send(&self, message: Value) {
        // The writer is gone only when the editor is: nobody is left to tell.
        let _ = self.out.send(Some(message.to_string()));
    }

    pub fn respond(&self, id: Value, result: Result<Value, RpcError>) {
        self.send(match result {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(e) => json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": e.code, "message": e.message},
            }),
        });
    }

    /// Sends a request and waits for its answer; an error when the connection ends first.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending_lock().insert(id, tx);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        rx.await
            .unwrap_or_else(|_| Err(RpcError::internal("the connection closed before an answer")))
    }

    fn pending_lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hands an answer to the request that waits for it.
    fn answered(&self, message: &Value) {
        let Some(id) = message.get("id").and_then(Value::as_u64) else {
            return;
        };
        let Some(waiting) = self.pending_lock().remove(&id) else {
            return;
        };
        let result = match message.get("error") {
            Some(error) => Err(RpcError {
                code: error
                    .get("code")
                    .and_then(Value::as_i64)
                    .unwrap_or(INTERNAL_ERROR),
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("the editor answered with an error")
                    .to_owned(),
            }),
            None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
        };
        let _ = waiting.send(result);
    }
}

/// Standard output for [`serve`], written in place: the writer runs on a thread of its own,
/// so a blocking write there holds up nothing else, and a line goes out without a hop to a
/// blocking pool first (what `tokio::io::stdout` takes for every write).
pub struct BlockingStdout(pub std::io::Stdout);

impl AsyncWrite for BlockingStdout {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::task::Poll::Ready(std::io::Write::write(&mut self.get_mut().0, buf))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(std::io::Write::flush(&mut self.get_mut().0))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.poll_flush(cx)
    }
}

/// One incoming message for the handler.
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
}

/// Reads `input` until it ends, handing each request and notification to `handle` (which
/// answers through the [`Peer`]) and each answer to the request waiting for it; `output`
/// receives every line written. When `input` ends, `closed` is awaited (it ends the work
/// still running), then what was written until then goes out and this returns.
pub async fn serve<R, W, H, C>(input: R, output: W, handle: H, closed: C)
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
    H: Fn(Peer, Incoming) + Send + Sync + 'static,
    C: Future<Output = ()>,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<Option<String>>();
    let peer = Peer {
        out: tx,
        pending: Arc::new(Mutex::new(HashMap::new())),
        next: Arc::new(AtomicU64::new(1)),
    };
    // The writer runs on a thread of its own: a line sent from a task that goes on working
    // without yielding (a turn appending to its log, a tool running) would otherwise wait in
    // that worker's next-task slot, which no other worker takes, until the task yields, and an
    // editor would see a turn's text only when the turn ended.
    let writer = std::thread::Builder::new()
        .name("acp-writer".to_owned())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async move {
                let mut output = output;
                while let Some(Some(line)) = rx.recv().await {
                    let written = async {
                        output.write_all(line.as_bytes()).await?;
                        output.write_all(b"\n").await?;
                        output.flush().await
                    };
                    if written.await.is_err() {
                        return;
                    }
                }
            });
        });
    let mut lines = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        match read_line(&mut lines, &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let message: Value = match serde_json::from_str(text) {
            Ok(m) => m,
            Err(e) => {
                peer.respond(
                    Value::Null,
                    Err(RpcError {
                        code: PARSE_ERROR,
                        message: format!("not JSON: {e}"),
                    }),
                );
                continue;
            }
        };
        let method = message.get("method").and_then(Value::as_str);
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        match (method, message.get("id")) {
            (Some(method), Some(id)) => handle(
                peer.clone(),
                Incoming::Request {
                    id: id.clone(),
                    method: method.to_owned(),
                    params,
                },
            ),
            (Some(method), None) => handle(
                peer.clone(),
                Incoming::Notification {
                    method: method.to_owned(),
                    params,
                },
            ),
            (None, Some(_)) => peer.answered(&message),
            (None, None) => {}
        }
    }
    // Requests still waiting will never be answered.
    peer.pending_lock().clear();
    closed.await;
    let _ = peer.out.send(None);
    drop(peer);
    if let Ok(writer) = writer {
        let _ = tokio::task::spawn_blocking(move || writer.join()).await;
    }
}

/// One line into `buf` (its newline kept), at most [`MOST_LINE_BYTES`]: a longer line is an
/// error that ends the connection rather than memory without end.
async fn read_line<R: tokio::io::AsyncBufRead + Unpin>(
    input: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(total);
        }
        let (take, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        buf.extend_from_slice(&available[..take]);
        input.consume(take);
        total += take;
        if done {
            return Ok(total);
        }
        if total > MOST_LINE_BYTES {
            return Err(std::io::Error::other(format!(
                "a message is longer than {MOST_LINE_BYTES} bytes"
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn requests_reach_the_handler_and_answers_reach_the_asker() {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_in, server_out) = tokio::io::split(server);
        let (closed_tx, closed_rx) = oneshot::channel();
        let served = tokio::spawn(serve(
            server_in,
            server_out,
            |peer: Peer, incoming| {
                if let Incoming::Request { id, method, .. } = incoming {
                    tokio::spawn(async move {
                        // Ask the client something before answering.
                        let asked = peer.request("ask/me", json!({"q": method})).await;
                        peer.respond(id, asked.map(|v| json!({"got": v})));
                    });
                }
            },
            async move {
                let _ = closed_tx.send(());
            },
        ));
        let (client_in, mut client_out) = tokio::io::split(client);
        let mut client_in = BufReader::new(client_in).lines();
        client_out
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"hello\"}\nnot json\n")
            .await
            .unwrap();
        // The request's task and the reader race: the two lines come in either order.
        let mut two = Vec::new();
        for _ in 0..2 {
            let line = client_in.next_line().await.unwrap().unwrap();
            two.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        let (ask, parse_error) = if two[0].get("method").is_some() {
            (two[0].clone(), two[1].clone())
        } else {
            (two[1].clone(), two[0].clone())
        };
        assert_eq!(ask["method"], "ask/me");
        assert_eq!(ask["params"]["q"], "hello");
        assert_eq!(parse_error["error"]["code"], PARSE_ERROR);
        let answer = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":42}}\n",
            ask["id"]
        );
        client_out.write_all(answer.as_bytes()).await.unwrap();
        let done: Value =
            serde_json::from_str(&client_in.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(done["id"], 7);
        assert_eq!(done["result"]["got"], 42);
        drop(client_out);
        drop(client_in);
        served.await.unwrap();
        closed_rx
            .await
            .expect("closed is called when the input ends");
    }
}
