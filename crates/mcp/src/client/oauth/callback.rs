//! The loopback redirect target of a login: `http://127.0.0.1:<ephemeral port>/callback`,
//! answering until one callback carries the expected `state`, then closed.
//!
//! Key decision: a callback whose `state` does not match ends the login with an error
//! instead of being skipped, because it means something other than this login's browser tab
//! reached the listener (a forged or replayed redirect); the person runs `tackle mcp login`
//! again. Requests to any other path (a browser's favicon) get 404 and change nothing. Each
//! connection is served on its own task, so a client that connects and stalls cannot hold the
//! listener; the caller bounds the whole wait with its timeout.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// The path the authorization server redirects to.
const CALLBACK_PATH: &str = "/callback";

/// What the authorization server sent back on the redirect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Callback {
    pub code: String,
    /// RFC 9207 `iss`, checked against the authorization server by the exchange.
    pub issuer: Option<String>,
}

/// Why the redirect did not bring an authorization code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallbackError {
    #[error(
        "the authorization callback carried a state that does not belong to this login (a forged or stale redirect); nothing was stored, run the login again"
    )]
    StateMismatch,
    #[error("the authorization server refused: {error}{description}")]
    Denied { error: String, description: String },
    #[error("the authorization callback carried no code; run the login again")]
    MissingCode,
    #[error("the loopback listener failed: {0}")]
    Listener(String),
}

/// A bound listener waiting for its one callback.
pub struct CallbackListener {
    listener: TcpListener,
    address: SocketAddr,
}

impl CallbackListener {
    /// Bind 127.0.0.1 on a port the system picks.
    pub async fn bind() -> std::io::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let address = listener.local_addr()?;
        Ok(Self { listener, address })
    }

    /// The redirect URI to register and to send in the authorization request.
    pub fn redirect_uri(&self) -> String {
        format!("http://{}{CALLBACK_PATH}", self.address)
    }

    /// Serve until a callback arrives; the listener is closed when this returns.
    pub async fn wait(self, expected_state: &str) -> Result<Callback, CallbackError> {
        let (tx, mut rx) = mpsc::channel::<Result<Callback, CallbackError>>(1);
        let expected = expected_state.to_owned();
        loop {
            tokio::select! {
                outcome = rx.recv() => {
                    return outcome.unwrap_or_else(|| {
                        Err(CallbackError::Listener("the callback handler ended".into()))
                    });
                }
                accepted = self.listener.accept() => {
                    let (stream, _) = accepted.map_err(|e| CallbackError::Listener(e.to_string()))?;
                    let tx = tx.clone();
                    let expected = expected.clone();
                    tokio::spawn(async move {
                        let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                            let tx = tx.clone();
                            let expected = expected.clone();
                            async move {
                                let (status, page, outcome) = answer(&req, &expected);
                                if let Some(outcome) = outcome {
                                    let _ = tx.try_send(outcome);
                                }
                                Response::builder()
                                    .status(status)
                                    .header("content-type", "text/plain; charset=utf-8")
                                    .header("connection", "close")
                                    .body(Full::new(Bytes::from(page)))
                            }
                        });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .keep_alive(false)
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
            }
        }
    }
}

/// The page for one request and, for a request to the callback path, the login's outcome.
fn answer(
    req: &Request<Incoming>,
    expected_state: &str,
) -> (StatusCode, String, Option<Result<Callback, CallbackError>>) {
    if req.uri().path() != CALLBACK_PATH {
        return (StatusCode::NOT_FOUND, "not found\n".into(), None);
    }
    let query: HashMap<String, String> =
        url::form_urlencoded::parse(req.uri().query().unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let outcome = judge(&query, expected_state);
    match &outcome {
        Ok(_) => (
            StatusCode::OK,
            "tackle: authorization received; you can close this page.\n".into(),
            Some(outcome),
        ),
        Err(e) => (
            StatusCode::BAD_REQUEST,
            format!("tackle: {e}\n"),
            Some(outcome),
        ),
    }
}

/// The callback's parameters judged: the state first (nothing else is believed without it).
fn judge(query: &HashMap<String, String>, expected_state: &str) -> Result<Callback, CallbackError> {
    let state_matches = query
        .get("state")
        .is_some_and(|s| constant_time_eq(s.as_bytes(), expected_state.as_bytes()));
    if !state_matches {
        return Err(CallbackError::StateMismatch);
    }
    if let Some(error) = query.get("error") {
        return Err(CallbackError::Denied {
            error: error.clone(),
            description: query
                .get("error_description")
                .map(|d| format!(" ({d})"))
                .unwrap_or_default(),
        });
    }
    let code = query
        .get("code")
        .filter(|c| !c.is_empty())
        .ok_or(CallbackError::MissingCode)?;
    Ok(Callback {
        code: code.clone(),
        issuer: query.get("iss").cloned(),
    })
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callbacks_are_judged_state_first() {
        let q = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        let ok = Callback {
            code: "c1".into(),
            issuer: None,
        };
        let cases: Vec<(HashMap<String, String>, Result<Callback, CallbackError>)> = vec![
            (q(&[("code", "c1"), ("state", "s")]), Ok(ok)),
            (
                q(&[("code", "c1"), ("state", "s"), ("iss", "https://as")]),
                Ok(Callback {
                    code: "c1".into(),
                    issuer: Some("https://as".into()),
                }),
            ),
            (
                q(&[("code", "c1"), ("state", "t")]),
                Err(CallbackError::StateMismatch),
            ),
            (q(&[("code", "c1")]), Err(CallbackError::StateMismatch)),
            (
                q(&[("code", "c1"), ("state", "ss")]),
                Err(CallbackError::StateMismatch),
            ),
            // An error without the right state is still a foreign request.
            (
                q(&[("error", "access_denied")]),
                Err(CallbackError::StateMismatch),
            ),
            (
                q(&[("error", "access_denied"), ("state", "s")]),
                Err(CallbackError::Denied {
                    error: "access_denied".into(),
                    description: String::new(),
                }),
            ),
            (q(&[("state", "s")]), Err(CallbackError::MissingCode)),
            (
                q(&[("state", "s"), ("code", "")]),
                Err(CallbackError::MissingCode),
            ),
        ];
        for (query, want) in cases {
            assert_eq!(judge(&query, "s"), want, "{query:?}");
        }
    }
}
