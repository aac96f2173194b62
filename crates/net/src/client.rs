//! The HTTP client the network tools share: one HTTP/1.1 exchange per hop over a connection
//! this module dials itself, redirects followed by hand, bodies read to a cap.
//!
//! Owns: dialing the exact socket addresses the [`SsrfGuard`] approved (through a [`Dialer`],
//! so tests can see what was dialed), TLS (rustls with bundled web roots), the request line and
//! headers built from the one parsed [`Url`], redirect following with a per-hop check of the URL
//! scope and the guard, and capped body reads.
//!
//! Refuses to own: timeouts (the caller wraps the whole exchange in one deadline), content-type
//! policy and output formatting (the tools decide), proxies: no proxy is ever used, so the
//! address checked is the address the bytes go to. Ambient `HTTP_PROXY`/`HTTPS_PROXY` are
//! ignored on purpose.
//!
//! Key decision: hyper's connection API rather than a pooled client. A pooled client resolves
//! names itself and may reuse a connection dialed for another host; owning the dial is what
//! makes DNS pinning a property of the code rather than of a resolver hook.

use std::net::SocketAddr;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls;
use url::Url;

use crate::guard::{GuardError, Resolver, SsrfGuard};

/// Opens TCP connections. The production dialer connects to exactly the address given; tests
/// substitute one that records it.
#[async_trait]
pub trait Dialer: Send + Sync {
    async fn dial(&self, addr: SocketAddr) -> std::io::Result<TcpStream>;
}

/// `TcpStream::connect` to the one address given.
#[derive(Clone, Copy, Debug, Default)]
pub struct DirectDialer;

#[async_trait]
impl Dialer for DirectDialer {
    async fn dial(&self, addr: SocketAddr) -> std::io::Result<TcpStream> {
        TcpStream::connect(addr).await
    }
}

/// What a request may reach after its first hop.
pub enum Hops<'a> {
    /// Redirects are returned as responses, never followed (webhooks).
    NotFollowed,
    /// Follow up to `max` redirects; each hop's URL must satisfy `in_scope`.
    Follow {
        max: usize,
        in_scope: &'a (dyn Fn(&Url) -> bool + Send + Sync),
    },
}

/// Whether the guard is applied to the addresses of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guarded {
    /// Model-directed URLs: every hop's addresses pass the SSRF guard.
    Yes,
    /// Operator-chosen URLs (alert webhooks): resolved and dialed the same way, unchecked.
    OperatorTrusted,
}

/// A failed exchange.
#[derive(Debug)]
pub enum ClientError {
    /// A hop's host resolved to an address the guard refuses.
    Blocked { url: Url, error: GuardError },
    /// A redirect led outside the URL scope.
    OutOfScope { url: Url },
    /// Too many redirects, a bad `Location`, or a non-HTTP redirect target.
    Redirect(String),
    /// DNS, connect, TLS or HTTP failure.
    Transport(String),
}

/// The head of a response whose body is still to be read.
pub struct Response {
    pub final_url: Url,
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Incoming,
    /// Keeps the connection task alive while the body is read; aborts it when dropped.
    _connection: AbortOnDrop,
}

struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A body read to a cap.
pub struct CappedBody {
    pub bytes: Vec<u8>,
    pub truncated: bool,
}

impl Response {
    /// Reads the body, stopping at `cap` bytes: a longer body keeps its first `cap` bytes and
    /// sets `truncated`; the rest is never downloaded.
    pub async fn read_capped(mut self, cap: usize) -> Result<CappedBody, ClientError> {
        let mut bytes = Vec::new();
        while let Some(frame) = self.body.frame().await {
            let frame =
                frame.map_err(|e| ClientError::Transport(format!("reading the body: {e}")))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let room = cap - bytes.len();
            if data.len() > room {
                bytes.extend_from_slice(&data[..room]);
                return Ok(CappedBody {
                    bytes,
                    truncated: true,
                });
            }
            bytes.extend_from_slice(&data);
        }
        Ok(CappedBody {
            bytes,
            truncated: false,
        })
    }
}

/// An outgoing request.
pub struct Request {
    pub method: http::Method,
    pub url: Url,
    pub headers: Vec<(http::HeaderName, http::HeaderValue)>,
    pub body: Bytes,
}

/// The shared client: guard, resolver, dialer and TLS configuration.
#[derive(Clone)]
pub struct HttpClient {
    pub guard: Arc<SsrfGuard>,
    pub resolver: Arc<dyn Resolver>,
    pub dialer: Arc<dyn Dialer>,
    /// `Err` only if the TLS provider cannot build a configuration; then https fails per call.
    tls: Result<Arc<rustls::ClientConfig>, String>,
}

pub const USER_AGENT: &str = concat!("tackle/", env!("CARGO_PKG_VERSION"));

impl HttpClient {
    pub fn new(guard: SsrfGuard, resolver: Arc<dyn Resolver>, dialer: Arc<dyn Dialer>) -> Self {
        Self {
            guard: Arc::new(guard),
            resolver,
            dialer,
            tls: tls_config(),
        }
    }

    /// Sends `request`, following redirects as `hops` says. A 301/302/303 turns the next hop
    /// into a body-less GET; 307/308 keep the method and body.
    pub async fn send(
        &self,
        mut request: Request,
        hops: Hops<'_>,
        guarded: Guarded,
    ) -> Result<Response, ClientError> {
        let mut redirects = 0usize;
        loop {
            let response = self.exchange(&request, guarded).await?;
            let Hops::Follow { max, in_scope } = &hops else {
                return Ok(response);
            };
            let status = response.status;
            if !matches!(status, 301 | 302 | 303 | 307 | 308) {
                return Ok(response);
            }
            let Some(location) = response.headers.get(http::header::LOCATION) else {
                // A redirect status without a Location is an ordinary response.
                return Ok(response);
            };
            let location = location.to_str().map_err(|_| {
                ClientError::Redirect(format!(
                    "{} answered {status} with a Location header that is not text",
                    request.url
                ))
            })?;
            let mut next = request.url.join(location).map_err(|e| {
                ClientError::Redirect(format!(
                    "{} answered {status} with an invalid Location \"{location}\": {e}",
                    request.url
                ))
            })?;
            next.set_fragment(None);
            drop(response);
            redirects += 1;
            if redirects > *max {
                return Err(ClientError::Redirect(format!(
                    "more than {max} redirects (the last pointed to {next}); fetch the final URL directly if you know it"
                )));
            }
            if !matches!(next.scheme(), "http" | "https") {
                return Err(ClientError::Redirect(format!(
                    "{} redirected to {next}, which is not http:// or https://",
                    request.url
                )));
            }
            if !next.username().is_empty() || next.password().is_some() {
                return Err(ClientError::Redirect(format!(
                    "{} redirected to a URL with user info; not followed",
                    request.url
                )));
            }
            if !in_scope(&next) {
                return Err(ClientError::OutOfScope { url: next });
            }
            if matches!(status, 301..=303) {
                request.method = http::Method::GET;
                request.body = Bytes::new();
            }
            request.url = next;
        }
    }

    /// One request on a fresh connection to an address the guard approved.
    async fn exchange(&self, request: &Request, guarded: Guarded) -> Result<Response, ClientError> {
        let url = &request.url;
        let addrs = match guarded {
            Guarded::Yes => self
                .guard
                .resolve(self.resolver.as_ref(), url)
                .await
                .map_err(|error| ClientError::Blocked {
                    url: url.clone(),
                    error,
                })?,
            Guarded::OperatorTrusted => unguarded_addrs(self.resolver.as_ref(), url).await?,
        };
        let tcp = self.connect_any(url, &addrs).await?;
        let host = url
            .host_str()
            .ok_or_else(|| ClientError::Transport(format!("{url} has no host")))?;
        match url.scheme() {
            "https" => {
                let name = rustls::pki_types::ServerName::try_from(
                    host.trim_start_matches('[')
                        .trim_end_matches(']')
                        .to_owned(),
                )
                .map_err(|e| ClientError::Transport(format!("{host}: {e}")))?;
                let config = self.tls.clone().map_err(ClientError::Transport)?;
                let tls = TlsConnector::from(config)
                    .connect(name, tcp)
                    .await
                    .map_err(|e| ClientError::Transport(format!("TLS with {host}: {e}")))?;
                self.http1(TokioIo::new(tls), request).await
            }
            _ => self.http1(TokioIo::new(tcp), request).await,
        }
    }

    async fn connect_any(&self, url: &Url, addrs: &[SocketAddr]) -> Result<TcpStream, ClientError> {
        let mut last = None;
        for addr in addrs {
            match self.dialer.dial(*addr).await {
                Ok(s) => return Ok(s),
                Err(e) => last = Some(format!("connecting to {addr}: {e}")),
            }
        }
        Err(ClientError::Transport(format!(
            "{url}: {}",
            last.unwrap_or_else(|| "no address to connect to".to_owned())
        )))
    }

    async fn http1<T>(&self, io: TokioIo<T>, request: &Request) -> Result<Response, ClientError>
    where
        T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let url = &request.url;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
            .await
            .map_err(|e| ClientError::Transport(format!("{url}: {e}")))?;
        let task = AbortOnDrop(tokio::spawn(async move {
            // Errors surface through the request future; nothing to do with them here.
            let _ = connection.await;
        }));
        let mut target = url.path().to_owned();
        if let Some(q) = url.query() {
            target.push('?');
            target.push_str(q);
        }
        let host_header = match url.port() {
            Some(p) => format!("{}:{p}", url.host_str().unwrap_or_default()),
            None => url.host_str().unwrap_or_default().to_owned(),
        };
        let mut builder = http::Request::builder()
            .method(request.method.clone())
            .uri(target)
            .header(http::header::HOST, host_header)
            .header(http::header::USER_AGENT, USER_AGENT);
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        let req = builder
            .body(Full::new(request.body.clone()))
            .map_err(|e| ClientError::Transport(format!("{url}: building the request: {e}")))?;
        let response = sender
            .send_request(req)
            .await
            .map_err(|e| ClientError::Transport(format!("{url}: {e}")))?;
        let (parts, body) = response.into_parts();
        Ok(Response {
            final_url: url.clone(),
            status: parts.status.as_u16(),
            headers: parts.headers,
            body,
            _connection: task,
        })
    }
}

async fn unguarded_addrs(
    resolver: &dyn Resolver,
    url: &Url,
) -> Result<Vec<SocketAddr>, ClientError> {
    let port = url
        .port_or_known_default()
        .ok_or_else(|| ClientError::Transport(format!("{url} has no port")))?;
    let ips = match url.host() {
        Some(url::Host::Ipv4(v4)) => vec![v4.into()],
        Some(url::Host::Ipv6(v6)) => vec![v6.into()],
        Some(url::Host::Domain(name)) => resolver
            .resolve(name, port)
            .await
            .map_err(|e| ClientError::Transport(format!("resolving {name}: {e}")))?,
        None => return Err(ClientError::Transport(format!("{url} has no host"))),
    };
    Ok(ips
        .into_iter()
        .map(|ip| SocketAddr::new(ip, port))
        .collect())
}

fn tls_config() -> Result<Arc<rustls::ClientConfig>, String> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS is unavailable: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
