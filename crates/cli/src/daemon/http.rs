//! The daemon's front door: HTTP/1.1 on one address.
//!
//! - `POST /acp`, a JSON-RPC message as the body:
//!   - `session/prompt`: answered as an event stream (`text/event-stream`): the session's
//!     messages while the prompt runs (`session/update`, `session/request_permission`,
//!     `_tackle/approval_resolved`), each with its cursor as the event id, then the response.
//!     The prompt runs on whether or not the client stays to read.
//!   - `_tackle/session/attach`: an event stream that does not end: first
//!     `_tackle/attached` (`{sessionId, lastEventId, retold}`: the cursor the client is at),
//!     then what followed the cursor (`lastEventId`, or the `Last-Event-ID` header), or, when
//!     the cursor is from before a restart or missing, the stored conversation and the open
//!     permission requests (the journal's messages instead while a prompt runs); then live.
//!   - any other request: its JSON-RPC response as `application/json`.
//!   - a response (an answer to a permission request, by its id) or a notification
//!     (`session/cancel`): 202.
//! - `GET /health`: `_tackle/health`'s answer.
//! - `POST /peers`, `GET /peers` on a hub (`--peer-hub`): the registry ([`super::peers`]).
//!
//! - `GET` and `DELETE /acp`, and `POST /acp` with `Acp-Connection-Id`: the transport RFD's
//!   connections ([`super::connected_http`], [`super::websocket`]); `initialize` without one
//!   opens one.
//!
//! Every request passes [`ServerGuard`] first (Host, Origin, bearer token); bodies are held to
//! [`MOST_BODY_BYTES`].

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited, StreamBody, combinators::UnsyncBoxBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use serde_json::{Value, json};
use tackle_net::server_guard::ServerGuard;
use tokio::net::TcpListener;
use tokio::sync::{broadcast, mpsc};

use super::hosted::Daemon;
use super::journal::{Entry, From, cursor, parse_cursor};
use crate::acp::rpc::RpcError;

/// The largest request body: a prompt with files embedded is large, an endless one is not.
pub const MOST_BODY_BYTES: usize = 16 * 1024 * 1024;

/// How often an attached stream that has nothing to say says so (a comment), so proxies and
/// clients do not take a quiet session for a dead connection.
const KEEPALIVE: Duration = Duration::from_secs(15);

pub(super) type Body = UnsyncBoxBody<Bytes, Infallible>;

/// Serves `listener` until the daemon is stopped.
pub async fn serve(daemon: Arc<Daemon>, listener: TcpListener, guard: ServerGuard) {
    let guard = Arc::new(guard);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(_) => continue,
            },
            () = daemon.stop.cancelled() => return,
        };
        let _ = stream.set_nodelay(true);
        let daemon = daemon.clone();
        let guard = guard.clone();
        let handler = hyper::service::service_fn(move |req: Request<Incoming>| {
            let daemon = daemon.clone();
            let guard = guard.clone();
            async move { Ok::<_, Infallible>(route(&daemon, &guard, req).await) }
        });
        tokio::spawn(async move {
            // With upgrades: `GET /acp` may become a WebSocket.
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection_with_upgrades(TokioIo::new(stream), handler)
                .await;
        });
    }
}

async fn route(
    daemon: &Arc<Daemon>,
    guard: &ServerGuard,
    req: Request<Incoming>,
) -> Response<Body> {
    if let Err(refused) = guard.check_request(&req) {
        return text(
            StatusCode::from_u16(refused.status).unwrap_or(StatusCode::FORBIDDEN),
            refused.text.to_owned(),
        );
    }
    let path = req.uri().path().to_owned();
    match (req.method().clone(), path.as_str()) {
        (Method::POST, "/acp") => acp(daemon, req).await,
        (Method::GET, "/acp") if super::websocket::wanted(&req) => {
            super::websocket::upgrade(daemon, req)
        }
        (Method::GET, "/acp") => super::connected_http::stream(daemon, req.headers()),
        (Method::DELETE, "/acp") => super::connected_http::delete(daemon, req.headers()),
        (Method::GET, "/health") => {
            let health = super::methods::call(daemon, "_tackle/health", Value::Null).await;
            json_response(StatusCode::OK, &health.unwrap_or_else(|e| json!(e.message)))
        }
        (Method::GET, "/peers") | (Method::POST, "/peers") => match &daemon.peers {
            Some(registry) => super::peers_http::handle(registry, req).await,
            None => text(
                StatusCode::NOT_FOUND,
                "this daemon is not a peer hub; start the hub with `tackle daemon --peer-hub`"
                    .to_owned(),
            ),
        },
        _ => text(
            StatusCode::NOT_FOUND,
            format!(
                "no {} {path} here; the daemon serves POST, GET and DELETE /acp, GET /health, and /peers on a hub",
                req.method()
            ),
        ),
    }
}

/// Reads a request's body, at most `most` bytes.
pub async fn read_body(
    req: Request<Incoming>,
    most: usize,
) -> Result<(http::request::Parts, Bytes), Response<Body>> {
    let (parts, body) = req.into_parts();
    let too_large = || {
        text(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the body is larger than {most} bytes, the most the daemon reads"),
        )
    };
    // A declared length over the limit is refused before a byte of it is read.
    let declared = parts
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > most as u64) {
        return Err(too_large());
    }
    match Limited::new(body, most).collect().await {
        Ok(collected) => Ok((parts, collected.to_bytes())),
        Err(e)
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            Err(text(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the body is larger than {most} bytes, the most the daemon reads"),
            ))
        }
        Err(_) => Err(text(
            StatusCode::BAD_REQUEST,
            "the request body could not be read".to_owned(),
        )),
    }
}

async fn acp(daemon: &Arc<Daemon>, req: Request<Incoming>) -> Response<Body> {
    let (parts, body) = match read_body(req, MOST_BODY_BYTES).await {
        Ok(read) => read,
        Err(refused) => return refused,
    };
    let json_body = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/json"));
    if !json_body {
        return text(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "POST /acp takes one JSON-RPC message: send Content-Type: application/json".to_owned(),
        );
    }
    let message: Value = match serde_json::from_slice(&body) {
        Ok(v @ Value::Object(_)) => v,
        Ok(Value::Array(_)) => {
            return rpc_error(
                StatusCode::NOT_IMPLEMENTED,
                Value::Null,
                -32600,
                "batches are not served: send one JSON-RPC message a request".to_owned(),
            );
        }
        Ok(_) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                Value::Null,
                -32600,
                "the body is not a JSON-RPC message (an object)".to_owned(),
            );
        }
        Err(e) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                Value::Null,
                -32700,
                format!("the body is not JSON: {e}"),
            );
        }
    };
    // The transport RFD's profile: the answer goes to the connection's stream.
    if parts
        .headers
        .contains_key(super::connected_http::CONNECTION_HEADER)
    {
        return match super::connected_http::named(daemon, &parts.headers) {
            Ok(connection) => {
                super::connected_http::post(daemon, &connection, &parts.headers, message)
            }
            Err(refused) => *refused,
        };
    }
    let id = message.get("id").cloned();
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    match (message.get("method").and_then(Value::as_str), id) {
        (Some(method), Some(id)) => match method {
            "initialize" => super::connected_http::initialize(daemon, id, params).await,
            "session/prompt" => prompt(daemon, id, params),
            "_tackle/session/attach" => {
                let header = parts
                    .headers
                    .get("last-event-id")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                attach(daemon, id, params, header).await
            }
            _ => {
                let answer = super::methods::call(daemon, method, params).await;
                json_response(StatusCode::OK, &response(id, answer))
            }
        },
        (Some(method), None) => {
            notified(daemon, method, &params);
            accepted()
        }
        (None, Some(id)) => match answered(daemon, &id, &message) {
            Ok(()) => accepted(),
            Err(UnknownAnswer(Some(id))) => text(
                StatusCode::NOT_FOUND,
                format!("no open permission request {id} (answered already, or its prompt ended)"),
            ),
            Err(UnknownAnswer(None)) => text(
                StatusCode::NOT_FOUND,
                "no open permission request has that id".to_owned(),
            ),
        },
        (None, None) => rpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            -32600,
            "the message has neither a method nor an id".to_owned(),
        ),
    }
}

/// `session/prompt` as an event stream: the session's messages until the prompt ends, then its
/// response.
fn prompt(daemon: &Arc<Daemon>, id: Value, params: Value) -> Response<Body> {
    let session = match hosted_session(daemon, &params, "open it with session/new or session/load")
    {
        Ok(session) => session,
        Err(why) => {
            return json_response(StatusCode::OK, &response(id, Err(RpcError::invalid(why))));
        }
    };
    let journal = daemon.journals.of(&session);
    let mut backlog = journal.attach(From::After(journal.last()));
    let (done_tx, mut done_rx) = tokio::sync::oneshot::channel();
    {
        let daemon = daemon.clone();
        // On a task of its own: the prompt runs to its end whether the client reads or not.
        tokio::spawn(async move {
            let answer = super::methods::call(&daemon, "session/prompt", params).await;
            let _ = done_tx.send(answer);
        });
    }
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let epoch = daemon.epoch.clone();
    tokio::spawn(async move {
        let answer = loop {
            tokio::select! {
                biased;
                received = backlog.live.recv() => match received {
                    Ok(entry) => {
                        if tx.send(event(&epoch, &entry)).await.is_err() {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let _ = tx.send(lagged()).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                answer = &mut done_rx => break answer.unwrap_or_else(|_| Err(RpcError::internal("the prompt's task ended without an answer"))),
            }
        };
        // What the prompt said before it ended goes out before its answer.
        let last = journal.last();
        while let Ok(entry) = backlog.live.try_recv() {
            if tx.send(event(&epoch, &entry)).await.is_err() {
                return;
            }
            if entry.seq >= last {
                break;
            }
        }
        let data = response(id, answer).to_string();
        let _ = tx.send(Bytes::from(format!("data: {data}\n\n"))).await;
    });
    stream_response(rx)
}

/// `_tackle/session/attach`: the backlog from the cursor, then live, until the client leaves.
async fn attach(
    daemon: &Arc<Daemon>,
    id: Value,
    params: Value,
    header: Option<String>,
) -> Response<Body> {
    let session = match hosted_session(daemon, &params, "_tackle/sessions/list names those it does")
    {
        Ok(session) => session,
        Err(why) => {
            return json_response(StatusCode::OK, &response(id, Err(RpcError::invalid(why))));
        }
    };
    let given = params
        .get("lastEventId")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or(header);
    let journal = daemon.journals.of(&session);
    let mut backlog = journal.attach(parse_cursor(&daemon.epoch, given.as_deref()));
    // First, where the client is: the cursor it may reconnect from.
    let at = cursor(&daemon.epoch, journal.last());
    let running = daemon
        .host
        .states()
        .into_iter()
        .any(|s| s.id == session && s.running);
    let state = super::methods::state_of(daemon, &session, running);
    let attached = json!({
        "jsonrpc": "2.0",
        "method": "_tackle/attached",
        "params": {"sessionId": session, "lastEventId": at, "retold": backlog.retell, "state": state},
    });
    let mut first: Vec<Bytes> = vec![Bytes::from(format!("id: {at}\ndata: {attached}\n\n"))];
    if backlog.retell
        && let Some(updates) = daemon.host.retold(&session).await.unwrap_or_default()
    {
        // The stored conversation stands for the journal's messages; numbered as the last of
        // them, so a client that reconnects from here gets only what follows.
        backlog.entries.clear();
        for update in updates {
            let message = crate::acp::wire::update_notification(&session, update).to_string();
            first.push(Bytes::from(format!("id: {at}\ndata: {message}\n\n")));
        }
        for request in daemon.approvals.pending(&session) {
            first.push(Bytes::from(format!("id: {at}\ndata: {request}\n\n")));
        }
    }
    let epoch = daemon.epoch.clone();
    let stop = daemon.stop.clone();
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    tokio::spawn(async move {
        for bytes in first {
            if tx.send(bytes).await.is_err() {
                return;
            }
        }
        for entry in std::mem::take(&mut backlog.entries) {
            if tx.send(event(&epoch, &entry)).await.is_err() {
                return;
            }
        }
        let mut quiet_since = Instant::now();
        loop {
            tokio::select! {
                received = backlog.live.recv() => match received {
                    Ok(entry) => {
                        if tx.send(event(&epoch, &entry)).await.is_err() {
                            return;
                        }
                        quiet_since = Instant::now();
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let _ = tx.send(lagged()).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                () = tokio::time::sleep_until((quiet_since + KEEPALIVE).into()) => {
                    if tx.send(Bytes::from_static(b": keepalive\n\n")).await.is_err() {
                        return;
                    }
                    quiet_since = Instant::now();
                }
                () = stop.cancelled() => return,
            }
        }
    });
    stream_response(rx)
}

/// The session `params` names, when the daemon hosts it; otherwise what is wrong, `hint`
/// saying what to do about an unknown session.
fn hosted_session(daemon: &Daemon, params: &Value, hint: &str) -> Result<String, String> {
    let Some(session) = params.get("sessionId").and_then(Value::as_str) else {
        return Err("`sessionId` is missing".to_owned());
    };
    if !daemon.host.is_open(session) {
        return Err(format!("the daemon hosts no session {session}; {hint}"));
    }
    Ok(session.to_owned())
}

fn event(epoch: &str, entry: &Entry) -> Bytes {
    Bytes::from(format!(
        "id: {}\ndata: {}\n\n",
        cursor(epoch, entry.seq),
        entry.message
    ))
}

/// Said when a client fell so far behind that it is cut off: it attaches again from its cursor.
fn lagged() -> Bytes {
    let note = json!({
        "jsonrpc": "2.0",
        "method": "_tackle/lagged",
        "params": {"message": "this stream fell behind and is closed; attach again with the last event id received"},
    });
    Bytes::from(format!("data: {note}\n\n"))
}

/// A client's notification: `session/cancel` cancels the session's prompt; any other is
/// ignored, as JSON-RPC lets a server ignore notifications it does not know.
pub(super) fn notified(daemon: &Daemon, method: &str, params: &Value) {
    if matches!(method, "session/cancel" | "_tackle/session/cancel")
        && let Some(session) = params.get("sessionId").and_then(Value::as_str)
    {
        daemon.host.cancel(session);
    }
}

/// A response the client sent matches no open permission request: its id, when a string.
pub(super) struct UnknownAnswer(pub Option<String>);

/// A client's response to a permission request, by its id.
pub(super) fn answered(daemon: &Daemon, id: &Value, message: &Value) -> Result<(), UnknownAnswer> {
    let Some(id) = id.as_str() else {
        return Err(UnknownAnswer(None));
    };
    let answer = match message.get("error") {
        Some(e) => Err(RpcError::internal(
            e.get("message")
                .and_then(Value::as_str)
                .unwrap_or("an error")
                .to_owned(),
        )),
        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
    };
    daemon
        .approvals
        .answer(id, None, answer)
        .map_err(|_| UnknownAnswer(Some(id.to_owned())))
}

fn stream_response(rx: mpsc::Receiver<Bytes>) -> Response<Body> {
    event_stream(futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|bytes| (Ok::<_, Infallible>(Frame::data(bytes)), rx))
    }))
}

/// A `text/event-stream` response of `frames`, never cached.
pub(super) fn event_stream(
    frames: impl futures::Stream<Item = Result<Frame<Bytes>, Infallible>> + Send + 'static,
) -> Response<Body> {
    let mut response = Response::new(BodyExt::boxed_unsync(StreamBody::new(frames)));
    let headers = response.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-cache"),
    );
    response
}

pub(super) fn response(id: Value, answer: Result<Value, RpcError>) -> Value {
    match answer {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(e) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": e.code, "message": e.message}})
        }
    }
}

fn rpc_error(status: StatusCode, id: Value, code: i64, message: String) -> Response<Body> {
    json_response(status, &response(id, Err(RpcError { code, message })))
}

pub fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(value.to_string())).boxed_unsync());
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

pub fn text(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed_unsync());
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

pub(super) fn accepted() -> Response<Body> {
    let mut response = Response::new(empty());
    *response.status_mut() = StatusCode::ACCEPTED;
    response
}

pub(super) fn empty() -> Body {
    Full::new(Bytes::new()).boxed_unsync()
}

/// The address a listener is bound to, as clients write it.
pub fn url_of(addr: SocketAddr) -> String {
    format!("http://{addr}")
}
