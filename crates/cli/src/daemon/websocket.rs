//! The RFD's WebSocket profile on `/acp`: a `GET /acp` with `Upgrade: websocket` (past the same
//! token, Host and Origin checks as every request) becomes a connection
//! ([`super::connections`]) whose id the `101` answer carries in `Acp-Connection-Id`. Each text
//! frame is one JSON-RPC message, handled as a POST on the connection would be; everything the
//! connection is sent goes back as text frames. Binary frames are ignored. When the socket
//! closes, the connection ends; its sessions stay the daemon's.

use std::sync::Arc;

use futures::{SinkExt as _, StreamExt as _};
use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Message, Role, WebSocketConfig};

use super::connected_http::CONNECTION_HEADER;
use super::connections::{Received, receive};
use super::hosted::Daemon;
use super::http::{Body, MOST_BODY_BYTES, text};

/// Whether `req` asks to upgrade to a WebSocket.
pub fn wanted(req: &Request<Incoming>) -> bool {
    req.headers()
        .get(http::header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// Answers the upgrade and serves the socket on a task of its own.
pub fn upgrade(daemon: &Arc<Daemon>, mut req: Request<Incoming>) -> Response<Body> {
    let headers = req.headers();
    let version_ok = headers
        .get("sec-websocket-version")
        .and_then(|v| v.to_str().ok())
        == Some("13");
    let Some(key) = headers
        .get("sec-websocket-key")
        .map(|k| k.as_bytes().to_vec())
    else {
        return text(
            StatusCode::BAD_REQUEST,
            "a WebSocket upgrade needs Sec-WebSocket-Key".to_owned(),
        );
    };
    if !version_ok {
        let mut refused = text(
            StatusCode::UPGRADE_REQUIRED,
            "the daemon speaks WebSocket version 13".to_owned(),
        );
        refused.headers_mut().insert(
            "sec-websocket-version",
            http::HeaderValue::from_static("13"),
        );
        return refused;
    }
    let connection = match daemon.connections.create() {
        Ok(c) => c,
        Err(why) => return text(StatusCode::SERVICE_UNAVAILABLE, why),
    };
    let Some(mut lease) = connection.take_stream() else {
        return text(
            StatusCode::INTERNAL_SERVER_ERROR,
            "a new connection's stream was taken".to_owned(),
        );
    };
    let upgrading = hyper::upgrade::on(&mut req);
    let daemon = daemon.clone();
    tokio::spawn(async move {
        let Ok(upgraded) = upgrading.await else {
            daemon.connections.close(&lease.connection().id);
            return;
        };
        let config = WebSocketConfig::default()
            .max_message_size(Some(MOST_BODY_BYTES))
            .max_frame_size(Some(MOST_BODY_BYTES));
        let socket =
            WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config))
                .await;
        let (mut outgoing, mut incoming) = socket.split();
        let connection = lease.connection().clone();
        loop {
            tokio::select! {
                frame = incoming.next() => match frame {
                    Some(Ok(Message::Text(text))) => {
                        match serde_json::from_str::<Value>(text.as_str()) {
                            Ok(message @ Value::Object(_)) => {
                                if let Received::UnknownRequest(id) = receive(&daemon, &connection, message) {
                                    connection.send(json!({
                                        "jsonrpc": "2.0",
                                        "method": "_tackle/unknown_answer",
                                        "params": {"message": format!("no open permission request {id} (answered already, or its prompt ended)")},
                                    }).to_string());
                                }
                            }
                            Ok(_) | Err(_) => connection.send(
                                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "a frame is one JSON-RPC message (an object)"}})
                                    .to_string(),
                            ),
                        }
                    }
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    // Pings are answered by the protocol layer; binary frames are ignored.
                    Some(Ok(_)) => {}
                },
                message = lease.next() => match message {
                    Some(message) => {
                        if outgoing.send(Message::text(message)).await.is_err() {
                            break;
                        }
                    }
                    None => {
                        let _ = outgoing.send(Message::Close(None)).await;
                        break;
                    }
                },
            }
        }
        daemon.connections.close(&connection.id);
    });
    let mut switching = Response::new(super::http::empty());
    *switching.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = switching.headers_mut();
    headers.insert(
        http::header::UPGRADE,
        http::HeaderValue::from_static("websocket"),
    );
    headers.insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("Upgrade"),
    );
    if let Ok(accept) = http::HeaderValue::from_str(&derive_accept_key(&key)) {
        headers.insert("sec-websocket-accept", accept);
    }
    if let Ok(id) = http::HeaderValue::from_str(&connection.id) {
        headers.insert(CONNECTION_HEADER, id);
    }
    switching
}
