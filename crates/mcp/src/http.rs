//! `tackle serve --http`: Streamable HTTP, safe to run on a developer's machine.
//!
//! Loopback by default. `Host` must name the bound address (or `localhost`), and a request
//! carrying a foreign `Origin` is refused with 403, so a web page cannot reach the server
//! through DNS rebinding. Binding anything but loopback requires a bearer token (from an
//! environment variable the operator names, at least [`MIN_TOKEN_BYTES`] long), checked on
//! every request before the SDK sees it. Bodies over [`crate::MAX_MESSAGE_BYTES`] get a 413 the
//! client can read ([`crate::http_body`]), with a JSON-RPC error carrying the request's id; a
//! body the SDK refuses (it answers such bodies 415 or 400 with no id) is screened then, and
//! gets 400 with the JSON-RPC error that says why and the request's id ([`crate::screen`]:
//! -32700 for malformed JSON, -32600, -32601, -32602); a served method whose params do not
//! decode reaches the session as a custom request and is answered -32602 there. At
//! most [`SessionLimits::max_sessions`] MCP sessions are open at once, and one idle for
//! [`SessionLimits::idle_expiry`] is closed; each has a tackle session of its own.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, combinators::UnsyncBoxBody};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::McpServer;
use crate::http_body::{Intake, read_bounded};
use crate::http_sessions::{CappedSessions, SessionLimits};
use crate::screen::{Rejection, Screened, screen};

/// How to serve HTTP.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// The bearer token clients must present (`Authorization: Bearer <token>`). Required when
    /// `addr` is not loopback, and at least [`MIN_TOKEN_BYTES`] long.
    pub bearer_token: Option<String>,
    /// How many MCP sessions may be open at once, and when an idle one is closed.
    pub sessions: SessionLimits,
}

/// The shortest bearer token accepted (`tackle_net::server_guard`'s, for every tackle server).
pub const MIN_TOKEN_BYTES: usize = tackle_net::server_guard::MIN_TOKEN_BYTES;

/// Why `serve_http` did not serve: an address or token it refuses, or a failed bind.
#[derive(Debug, thiserror::Error)]
pub enum HttpServeError {
    /// An address or token the rules of every tackle server refuse.
    #[error(transparent)]
    Listen(#[from] tackle_net::server_guard::ListenError),
    #[error("binding {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// Bind, then serve until `shutdown` is cancelled. `on_bound` receives the bound address (the
/// port is chosen by the system when `addr` has port 0) before the first request is accepted.
pub async fn serve_http(
    server: McpServer,
    options: HttpOptions,
    shutdown: CancellationToken,
    on_bound: impl FnOnce(SocketAddr),
) -> Result<(), HttpServeError> {
    let addr = options.addr;
    tackle_net::server_guard::check_listen(addr, options.bearer_token.as_deref())?;
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| HttpServeError::Bind { addr, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| HttpServeError::Bind { addr, source })?;
    // The SDK checks Host and Origin itself, against the lists every tackle server uses.
    let guard = tackle_net::server_guard::ServerGuard::new(bound, None);
    let (hosts, origins) = (guard.hosts().to_vec(), guard.origins().to_vec());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .with_max_request_body_bytes(crate::MAX_MESSAGE_BYTES)
        .with_cancellation_token(shutdown.child_token());
    // Shared, and called through `handle`: its `tower::Service` face clones the service (and
    // with it every allowed host and origin) for each request.
    let service = Arc::new(StreamableHttpService::new(
        move || Ok(server.for_new_client()),
        Arc::new(CappedSessions::new(options.sessions)),
        config,
    ));
    let token: Option<Arc<str>> = options.bearer_token.map(Into::into);
    on_bound(bound);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // A failed accept (out of descriptors, a reset) loses one connection, not the server.
                Err(_) => continue,
            },
            () = shutdown.cancelled() => return Ok(()),
        };
        // Responses go out in several small writes (headers, then body frames); with Nagle's
        // algorithm on, a kept-alive client's delayed ACK holds each request ≈ 40 ms.
        let _ = stream.set_nodelay(true);
        let service = Arc::clone(&service);
        let token = token.clone();
        let handler = hyper::service::service_fn(move |req: Request<Incoming>| {
            let service = Arc::clone(&service);
            let token = token.clone();
            async move {
                if let Some(refusal) = check_token(&req, token.as_deref()) {
                    return Ok::<_, std::convert::Infallible>(refusal);
                }
                let (parts, body) = req.into_parts();
                let limit = crate::MAX_MESSAGE_BYTES;
                let bytes = match read_bounded(&parts.headers, body, limit).await {
                    Ok(Intake::Complete(bytes)) => bytes,
                    Ok(Intake::TooLarge { start, drained }) => {
                        let rejection = Rejection::too_large(&start, limit);
                        let mut response = json_error(StatusCode::PAYLOAD_TOO_LARGE, &rejection);
                        if !drained {
                            response.headers_mut().insert(
                                http::header::CONNECTION,
                                http::HeaderValue::from_static("close"),
                            );
                        }
                        return Ok(response);
                    }
                    // The connection failed mid-body; nobody may be left to read an answer.
                    Err(_) => {
                        return Ok(plain(
                            StatusCode::BAD_REQUEST,
                            "the request body could not be read",
                        ));
                    }
                };
                // The SDK decodes the body once; only a body it refuses is screened, so a valid
                // call is decoded once, not twice.
                let screenable = parts.method == http::Method::POST && is_json(&parts.headers);
                let req = Request::from_parts(parts, Full::new(bytes.clone()));
                let response = service.handle(req).await;
                if screenable
                    && response.status().is_client_error()
                    && let Screened::Reject(rejection) = screen(&bytes)
                {
                    return Ok(json_error(StatusCode::BAD_REQUEST, &rejection));
                }
                Ok(response.map(|b| b.boxed_unsync()))
            }
        });
        tokio::spawn(async move {
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), handler)
                .await;
        });
    }
}

type Body = UnsyncBoxBody<Bytes, std::convert::Infallible>;

/// Whether the request says its body is JSON (what the SDK requires; it answers 415 otherwise).
fn is_json(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// `status` with a JSON-RPC error body.
fn json_error(status: StatusCode, rejection: &Rejection) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(rejection.to_json())).boxed_unsync());
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed_unsync());
    *response.status_mut() = status;
    response
}

/// `Some(401)` when a token is required and the request does not carry it.
fn check_token<B>(req: &Request<B>, token: Option<&str>) -> Option<Response<Body>> {
    let token = token?;
    let presented = req
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if presented.is_some_and(|p| tackle_net::server_guard::bearer_matches(p, token)) {
        return None;
    }
    let mut response = Response::new(
        Full::new(Bytes::from_static(
            b"unauthorized: send Authorization: Bearer <token>",
        ))
        .boxed_unsync(),
    );
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    Some(response)
}
