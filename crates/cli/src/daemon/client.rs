//! A daemon's client, for `tackle daemon status|stop`, `tackle run --daemon`, `tackle attach`,
//! the heartbeat to a hub and `call_peer`: JSON-RPC over `POST /acp`, answered as JSON or as an
//! event stream read message by message.
//!
//! The daemon's URL is the operator's (a flag, the state directory, the hub's registry), so it
//! is dialed without the SSRF guard that model-directed requests pass; the token goes only to
//! that URL, and redirects are never followed.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tackle_net::{
    DirectDialer, Guarded, Hops, HttpClient, Request, SseDecoder, SsrfGuard, SystemResolver,
};
use url::Url;

/// The largest event a daemon sends that a client reads (a tool's whole output preview fits).
const MOST_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// Why a request to a daemon failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("{0}")]
    Transport(String),
    /// The daemon answered with an HTTP status other than success.
    #[error("{url} answered {status}: {body}")]
    Status {
        url: String,
        status: u16,
        body: String,
    },
    /// The daemon answered the request with a JSON-RPC error.
    #[error("{message}")]
    Rpc { code: i64, message: String },
}

#[derive(Clone)]
pub struct DaemonClient {
    base: Url,
    token: Option<String>,
    http: HttpClient,
}

/// What a stream's reader wants next.
pub enum Flow {
    Continue,
    Stop,
}

impl DaemonClient {
    /// A client of the daemon at `base` (`http://host:port`), sending `token` when given.
    pub fn new(base: &str, token: Option<String>) -> Result<DaemonClient, ClientError> {
        let base = Url::parse(base)
            .map_err(|e| ClientError::Transport(format!("{base:?} is not a URL: {e}")))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(ClientError::Transport(format!(
                "{base} is not an http or https URL"
            )));
        }
        Ok(DaemonClient {
            base,
            token,
            http: HttpClient::new(
                SsrfGuard::new(Vec::new()),
                Arc::new(SystemResolver),
                Arc::new(DirectDialer),
            ),
        })
    }

    pub fn base(&self) -> &Url {
        &self.base
    }

    fn url(&self, path: &str) -> Url {
        let mut url = self.base.clone();
        url.set_path(path);
        url
    }

    async fn send(
        &self,
        method: http::Method,
        path: &str,
        body: Option<&Value>,
        accept: &'static str,
    ) -> Result<tackle_net::Response, ClientError> {
        let mut headers = vec![(http::header::ACCEPT, http::HeaderValue::from_static(accept))];
        if body.is_some() {
            headers.push((
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            ));
        }
        if let Some(token) = &self.token {
            let value = http::HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                ClientError::Transport("the token is not a valid header value".to_owned())
            })?;
            headers.push((http::header::AUTHORIZATION, value));
        }
        let request = Request {
            method,
            url: self.url(path),
            headers,
            body: body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string())),
        };
        let response = self
            .http
            .send(request, Hops::NotFollowed, Guarded::OperatorTrusted)
            .await
            .map_err(transport)?;
        if !(200..300).contains(&response.status) {
            let status = response.status;
            let body = response
                .read_capped(4096)
                .await
                .map(|b| String::from_utf8_lossy(&b.bytes).into_owned())
                .unwrap_or_default();
            return Err(ClientError::Status {
                url: self.url(path).to_string(),
                status,
                body,
            });
        }
        Ok(response)
    }

    /// `GET path`, its body as JSON.
    pub async fn get(&self, path: &str) -> Result<Value, ClientError> {
        let response = self
            .send(http::Method::GET, path, None, "application/json")
            .await?;
        read_json(response).await
    }

    /// `POST path` with `body`, the answer as JSON.
    pub async fn post(&self, path: &str, body: &Value) -> Result<Value, ClientError> {
        let response = self
            .send(http::Method::POST, path, Some(body), "application/json")
            .await?;
        read_json(response).await
    }

    /// Calls `method` and returns its result.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let answer = self.post("/acp", &message).await?;
        result_of(answer)
    }

    /// Sends a notification or an answer (202 expected).
    pub async fn tell(&self, message: &Value) -> Result<(), ClientError> {
        self.send(
            http::Method::POST,
            "/acp",
            Some(message),
            "application/json",
        )
        .await
        .map(drop)
    }

    /// Calls `method`, whose answer is an event stream: `on_message` sees every message on it
    /// (with the event's id) until it says stop or the stream ends; the response to the call
    /// ends it too and is returned.
    pub async fn stream(
        &self,
        method: &str,
        params: Value,
        mut on_message: impl FnMut(&Value, Option<&str>) -> Flow,
    ) -> Result<Option<Value>, ClientError> {
        let message = json!({"jsonrpc": "2.0", "id": "stream", "method": method, "params": params});
        let mut response = self
            .send(
                http::Method::POST,
                "/acp",
                Some(&message),
                "text/event-stream",
            )
            .await?;
        let is_stream = response
            .headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_stream {
            // Refused before any stream began (an unknown session): a plain JSON answer.
            return result_of(read_json(response).await?).map(Some);
        }
        let mut decoder = SseDecoder::new(MOST_EVENT_BYTES);
        let mut events = Vec::new();
        while let Some(frame) = response.body.frame().await {
            let frame =
                frame.map_err(|e| ClientError::Transport(format!("reading the stream: {e}")))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            decoder
                .feed(&data, &mut events)
                .map_err(|e| ClientError::Transport(format!("reading the stream: {e}")))?;
            for event in events.drain(..) {
                let Ok(message) = serde_json::from_str::<Value>(&event.data) else {
                    continue;
                };
                if message.get("id") == Some(&json!("stream")) && message.get("method").is_none() {
                    return result_of(message).map(Some);
                }
                if let Flow::Stop = on_message(&message, event.id.as_deref()) {
                    return Ok(None);
                }
            }
        }
        Ok(None)
    }
}

async fn read_json(response: tackle_net::Response) -> Result<Value, ClientError> {
    let url = response.final_url.to_string();
    let body = response
        .read_capped(MOST_EVENT_BYTES)
        .await
        .map_err(transport)?;
    serde_json::from_slice(&body.bytes).map_err(|e| {
        ClientError::Transport(format!("{url} answered something that is not JSON: {e}"))
    })
}

/// A failed exchange, said for the person running the command.
fn transport(e: tackle_net::ClientError) -> ClientError {
    ClientError::Transport(match e {
        tackle_net::ClientError::Transport(text) | tackle_net::ClientError::Redirect(text) => text,
        other => format!("{other:?}"),
    })
}

fn result_of(answer: Value) -> Result<Value, ClientError> {
    if let Some(error) = answer.get("error") {
        return Err(ClientError::Rpc {
            code: error.get("code").and_then(Value::as_i64).unwrap_or(-32603),
            message: error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("the daemon answered with an error")
                .to_owned(),
        });
    }
    Ok(answer.get("result").cloned().unwrap_or(Value::Null))
}
