//! What a tackle HTTP server checks before it reads a request: `Host` names the bound address
//! (a web page cannot reach it through DNS rebinding), a browser's `Origin` is the server's own,
//! and, when the operator set one, the bearer token matches (compared in constant time). Loopback
//! by default; any other address needs a token of at least [`MIN_TOKEN_BYTES`].

use std::net::SocketAddr;

/// The shortest bearer token accepted: 32 bytes, so it cannot be guessed or brute-forced over a
/// connection (`openssl rand -hex 32` gives 64).
pub const MIN_TOKEN_BYTES: usize = 32;

/// Why a server refuses to start on an address.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ListenError {
    #[error(
        "refusing to serve on {addr}, which is not a loopback address, without a bearer token; set the token's environment variable or bind 127.0.0.1"
    )]
    NonLoopbackWithoutToken { addr: SocketAddr },
    #[error(
        "the bearer token is {len} bytes; use at least {MIN_TOKEN_BYTES} random bytes (for example `openssl rand -hex 32`)"
    )]
    TokenTooShort { len: usize },
}

/// Whether `addr` may be served with `token`.
pub fn check_listen(addr: SocketAddr, token: Option<&str>) -> Result<(), ListenError> {
    if !addr.ip().is_loopback() && token.is_none() {
        return Err(ListenError::NonLoopbackWithoutToken { addr });
    }
    match token {
        Some(t) if t.len() < MIN_TOKEN_BYTES => Err(ListenError::TokenTooShort { len: t.len() }),
        _ => Ok(()),
    }
}

/// A refused request: its status and the text that says why and what to do.
#[derive(Debug, PartialEq, Eq)]
pub struct Refused {
    pub status: u16,
    pub text: &'static str,
}

/// The checks for a server bound to one address.
#[derive(Clone, Debug)]
pub struct ServerGuard {
    loopback: bool,
    hosts: Vec<String>,
    origins: Vec<String>,
    token: Option<String>,
}

impl ServerGuard {
    /// The guard of a server bound to `bound` that requires `token` when it is set.
    pub fn new(bound: SocketAddr, token: Option<String>) -> ServerGuard {
        let port = bound.port();
        let mut hosts = vec![
            "localhost".to_owned(),
            format!("localhost:{port}"),
            bound.ip().to_string(),
            bound.to_string(),
        ];
        if bound.ip().is_loopback() {
            hosts.extend([
                "127.0.0.1".to_owned(),
                format!("127.0.0.1:{port}"),
                "[::1]".to_owned(),
                format!("[::1]:{port}"),
            ]);
        }
        let origins = vec![
            format!("http://localhost:{port}"),
            format!("http://127.0.0.1:{port}"),
            format!("http://[::1]:{port}"),
            format!("http://{bound}"),
        ];
        ServerGuard {
            loopback: bound.ip().is_loopback(),
            hosts,
            origins,
            token,
        }
    }

    /// The `Host` values a request may carry.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// The `Origin` values a browser's request may carry.
    pub fn origins(&self) -> &[String] {
        &self.origins
    }

    /// `Err` when a request with these headers must not be served.
    /// [`Self::check`] of a whole request: an HTTP/2 request names its server in the
    /// `:authority` pseudo-header, which stands for `Host` when there is none.
    pub fn check_request<B>(&self, req: &http::Request<B>) -> Result<(), Refused> {
        let authority = req.uri().authority().map(|a| a.as_str());
        match authority {
            Some(authority) if !req.headers().contains_key(http::header::HOST) => {
                let mut headers = req.headers().clone();
                if let Ok(value) = http::HeaderValue::from_str(authority) {
                    headers.insert(http::header::HOST, value);
                }
                self.check(&headers)
            }
            _ => self.check(req.headers()),
        }
    }

    pub fn check(&self, headers: &http::HeaderMap) -> Result<(), Refused> {
        let text = |name: http::header::HeaderName| {
            headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"))
        };
        // A server not bound to loopback has a token, and the token is what protects it (its
        // clients name it as they please); a loopback one is also protected by the Host check
        // from pages that rebind a name to it.
        let host_ok = match text(http::header::HOST) {
            Some(host) => self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)),
            None => false,
        };
        if !host_ok && (self.loopback || self.token.is_none()) {
            return Err(Refused {
                status: 403,
                text: "forbidden: the Host header does not name this server's address",
            });
        }
        if let Some(origin) = text(http::header::ORIGIN)
            && !self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
        {
            return Err(Refused {
                status: 403,
                text: "forbidden: requests from web pages of other origins are refused",
            });
        }
        if let Some(token) = &self.token {
            let presented = text(http::header::AUTHORIZATION)
                .and_then(|v| v.strip_prefix("Bearer "))
                .unwrap_or("");
            if !bearer_matches(presented, token) {
                return Err(Refused {
                    status: 401,
                    text: "unauthorized: send Authorization: Bearer <token>",
                });
            }
        }
        Ok(())
    }
}

/// Whether `presented` is `token`, in time that does not depend on where they differ.
pub fn bearer_matches(presented: &str, token: &str) -> bool {
    let (a, b) = (presented.as_bytes(), token.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn loopback_servers_check_host_and_origin_and_token_servers_the_token() {
        let bound: SocketAddr = "127.0.0.1:4000".parse().unwrap();
        let open = ServerGuard::new(bound, None);
        assert!(open.check(&headers(&[("host", "127.0.0.1:4000")])).is_ok());
        assert!(open.check(&headers(&[("host", "localhost:4000")])).is_ok());
        assert_eq!(
            open.check(&headers(&[("host", "evil.example:4000")]))
                .unwrap_err()
                .status,
            403
        );
        assert_eq!(
            open.check(&headers(&[
                ("host", "127.0.0.1:4000"),
                ("origin", "https://evil.example")
            ]))
            .unwrap_err()
            .status,
            403
        );
        let token = "t".repeat(32);
        let closed = ServerGuard::new(bound, Some(token.clone()));
        assert_eq!(
            closed
                .check(&headers(&[("host", "127.0.0.1:4000")]))
                .unwrap_err()
                .status,
            401
        );
        let bearer = format!("Bearer {token}");
        // On loopback a token does not excuse a Host that names another server.
        assert_eq!(
            closed
                .check(&headers(&[
                    ("host", "evil.example:4000"),
                    ("authorization", &bearer)
                ]))
                .unwrap_err()
                .status,
            403
        );
        // Off loopback the token is the protection; clients name the server as they please.
        let public = ServerGuard::new("0.0.0.0:4000".parse().unwrap(), Some(token.clone()));
        assert!(
            public
                .check(&headers(&[
                    ("host", "build-box:4000"),
                    ("authorization", &bearer)
                ]))
                .is_ok()
        );
        assert!(
            closed
                .check(&headers(&[
                    ("host", "127.0.0.1:4000"),
                    ("authorization", &bearer)
                ]))
                .is_ok()
        );
    }

    #[test]
    fn only_loopback_goes_without_a_long_enough_token() {
        let public: SocketAddr = "0.0.0.0:4000".parse().unwrap();
        assert!(check_listen(public, None).is_err());
        assert_eq!(
            check_listen(public, Some("short")),
            Err(ListenError::TokenTooShort { len: 5 })
        );
        assert!(check_listen(public, Some(&"x".repeat(32))).is_ok());
        assert!(check_listen("127.0.0.1:0".parse().unwrap(), None).is_ok());
    }

    #[test]
    fn an_http2_request_is_checked_by_its_authority() {
        let open = ServerGuard::new("127.0.0.1:4000".parse().unwrap(), None);
        let h2 = |authority: &str| {
            http::Request::builder()
                .uri(format!("http://{authority}/acp"))
                .body(())
                .unwrap()
        };
        assert!(open.check_request(&h2("127.0.0.1:4000")).is_ok());
        assert_eq!(
            open.check_request(&h2("evil.example:4000"))
                .unwrap_err()
                .status,
            403
        );
        // A Host header, when there is one, is what is checked.
        let mut with_host = h2("127.0.0.1:4000");
        with_host.headers_mut().insert(
            http::header::HOST,
            http::HeaderValue::from_static("evil.example:4000"),
        );
        assert_eq!(open.check_request(&with_host).unwrap_err().status, 403);
    }
}
