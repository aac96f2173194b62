//! The RFD's Streamable HTTP profile on `/acp` ([`super::connections`]):
//!
//! - `POST /acp` `initialize` without `Acp-Connection-Id`: answered `200` with the result (its
//!   `connectionId` too) and the `Acp-Connection-Id` header: a connection is made.
//! - `POST /acp` with `Acp-Connection-Id`: `202` at once; the answer comes on the connection's
//!   stream. A message naming a session (`params.sessionId`) carries `Acp-Session-Id`, the same.
//!   Unknown connection `404`; an answer to a permission request no longer open `404`.
//! - `GET /acp` with `Acp-Connection-Id` and `Accept: text/event-stream`: the connection's
//!   stream (one at a time; a second is `409`); a stream that drops leaves its messages for the
//!   next `GET`.
//! - `DELETE /acp` with `Acp-Connection-Id`: the connection ends (`202`); its sessions stay the
//!   daemon's, to be loaded or attached again.
//!
//! Without `Acp-Connection-Id`, `POST /acp` is the daemon's own profile (`super::http`): each
//! request's answer on its own response, a prompt's as an event stream.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};
use hyper::body::Frame;
use serde_json::Value;

use super::connections::{Connection, Received, receive};
use super::hosted::Daemon;
use super::http::{Body, accepted, json_response, response, text};

pub const CONNECTION_HEADER: &str = "acp-connection-id";
pub const SESSION_HEADER: &str = "acp-session-id";

/// How often a quiet stream says it is alive.
const KEEPALIVE: Duration = Duration::from_secs(15);

/// The connection `headers` name, or the answer for a request that names none or an unknown one.
pub fn named(daemon: &Daemon, headers: &HeaderMap) -> Result<Arc<Connection>, Box<Response<Body>>> {
    let Some(id) = headers.get(CONNECTION_HEADER).and_then(|v| v.to_str().ok()) else {
        return Err(Box::new(text(
            StatusCode::BAD_REQUEST,
            "Acp-Connection-Id is missing; POST initialize to /acp to open a connection".to_owned(),
        )));
    };
    daemon.connections.get(id).ok_or_else(|| {
        Box::new(text(
            StatusCode::NOT_FOUND,
            format!("no connection {id} (closed, or never opened); initialize a new one"),
        ))
    })
}

/// `initialize` opening a connection: the protocol's answer, with the connection's id.
pub async fn initialize(daemon: &Arc<Daemon>, id: Value, params: Value) -> Response<Body> {
    let connection = match daemon.connections.create() {
        Ok(c) => c,
        Err(why) => return text(StatusCode::SERVICE_UNAVAILABLE, why),
    };
    let mut answer = super::methods::call(daemon, "initialize", params).await;
    if let Ok(Value::Object(result)) = &mut answer {
        result.insert(
            "connectionId".to_owned(),
            Value::from(connection.id.clone()),
        );
    }
    let mut reply = json_response(StatusCode::OK, &response(id, answer));
    if let Ok(value) = http::HeaderValue::from_str(&connection.id) {
        reply.headers_mut().insert(CONNECTION_HEADER, value);
    }
    reply
}

/// A message posted on a connection.
pub fn post(
    daemon: &Arc<Daemon>,
    connection: &Arc<Connection>,
    headers: &HeaderMap,
    message: Value,
) -> Response<Body> {
    if let Some(session) = message.pointer("/params/sessionId").and_then(Value::as_str) {
        match headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) {
            Some(named) if named == session => {}
            Some(named) => {
                return text(
                    StatusCode::BAD_REQUEST,
                    format!("Acp-Session-Id is {named} but the message is for session {session}"),
                );
            }
            None => {
                return text(
                    StatusCode::BAD_REQUEST,
                    format!(
                        "Acp-Session-Id is missing; a message for session {session} carries it"
                    ),
                );
            }
        }
    }
    match receive(daemon, connection, message) {
        Received::Accepted => accepted(),
        Received::UnknownRequest(id) => text(
            StatusCode::NOT_FOUND,
            format!("no open permission request {id} (answered already, or its prompt ended)"),
        ),
    }
}

/// `GET /acp`: the connection's stream.
pub fn stream(daemon: &Daemon, headers: &HeaderMap) -> Response<Body> {
    let wants_events = headers
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains("text/event-stream"));
    if !wants_events {
        return text(
            StatusCode::NOT_ACCEPTABLE,
            "GET /acp is a connection's event stream: send Accept: text/event-stream (or upgrade to a WebSocket)".to_owned(),
        );
    }
    let connection = match named(daemon, headers) {
        Ok(c) => c,
        Err(refused) => return *refused,
    };
    let Some(lease) = connection.take_stream() else {
        return text(
            StatusCode::CONFLICT,
            format!(
                "connection {} already has its stream open; close it first",
                connection.id
            ),
        );
    };
    let frames = futures::stream::unfold(lease, |mut lease| async move {
        let bytes = match tokio::time::timeout(KEEPALIVE, lease.next()).await {
            Ok(Some(message)) => Bytes::from(format!("data: {message}\n\n")),
            Ok(None) => return None,
            Err(_) => Bytes::from_static(b": keepalive\n\n"),
        };
        Some((Ok(Frame::data(bytes)), lease))
    });
    let mut reply = super::http::event_stream(frames);
    if let Ok(value) = http::HeaderValue::from_str(&connection.id) {
        reply.headers_mut().insert(CONNECTION_HEADER, value);
    }
    reply
}

/// `DELETE /acp`: the connection ends.
pub fn delete(daemon: &Daemon, headers: &HeaderMap) -> Response<Body> {
    let connection = match named(daemon, headers) {
        Ok(c) => c,
        Err(refused) => return *refused,
    };
    daemon.connections.close(&connection.id);
    accepted()
}
