//! One question and its answer, bounded: a whole request (connection, headers and body) within
//! the probe's timeout, at most `max_body` bytes of the body read, no redirect followed.
//!
//! A server that does not answer in time, or at all, ends the probe: the next question would
//! wait as long. A server that answers something that is not HTTP is one more answer that names
//! no window.

use std::time::Duration;

use futures::StreamExt;

use super::{ProbeError, ProbeErrorKind, ProbeLimits, ProbeTarget, Question};

/// What came back for one question.
#[derive(Debug)]
pub(super) enum Fetched {
    Answer {
        status: u16,
        body: Vec<u8>,
    },
    /// The body ran past the limit; nothing of it is read.
    TooLarge {
        status: u16,
        limit: usize,
    },
    /// Something that is not an HTTP answer, or one that broke off.
    Broken(String),
}

/// Asks one server's questions.
pub(super) struct Fetcher {
    client: reqwest::Client,
    target: ProbeTarget,
    limits: ProbeLimits,
}

impl Fetcher {
    pub fn new(target: &ProbeTarget, limits: &ProbeLimits) -> Result<Self, ProbeError> {
        let tls = crate::transport::tls_config()
            .map_err(|e| ProbeError::new(ProbeErrorKind::Unreachable, e))?;
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            // A redirect could lead anywhere; the key goes only to the configured server.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| {
                ProbeError::new(
                    ProbeErrorKind::Unreachable,
                    format!("http client setup failed: {e}"),
                )
            })?;
        Ok(Self {
            client,
            target: target.clone(),
            limits: limits.clone(),
        })
    }

    /// The answer to `question`, or the end of the probe when nothing answers in time.
    pub async fn fetch(&self, question: &Question) -> Result<Fetched, ProbeError> {
        let mut request = match question.method {
            "POST" => self.client.post(question.url.clone()),
            _ => self.client.get(question.url.clone()),
        }
        .header(http::header::ACCEPT, "application/json");
        if let Some(body) = &question.body {
            request = request
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(body.to_string());
        }
        if let Some((name, value)) = self.target.key() {
            request = request.header(name.clone(), value.clone());
        }
        let max_body = self.limits.max_body;
        let asked = async {
            let response = match request.send().await {
                Ok(response) => response,
                Err(e) if e.is_connect() => {
                    return Err(ProbeError::new(
                        ProbeErrorKind::Unreachable,
                        format!(
                            "could not reach {} ({}); start the server or check the provider's base_url",
                            self.target.shown(),
                            innermost(&e)
                        ),
                    ));
                }
                Err(e) => return Ok(Fetched::Broken(format!("failed: {}", innermost(&e)))),
            };
            let status = response.status().as_u16();
            let too_large = response
                .content_length()
                .is_some_and(|n| n > max_body as u64);
            if too_large {
                return Ok(Fetched::TooLarge {
                    status,
                    limit: max_body,
                });
            }
            let mut body = Vec::new();
            let mut chunks = response.bytes_stream();
            while let Some(chunk) = chunks.next().await {
                match chunk {
                    Ok(chunk) if body.len() + chunk.len() > max_body => {
                        return Ok(Fetched::TooLarge {
                            status,
                            limit: max_body,
                        });
                    }
                    Ok(chunk) => body.extend_from_slice(&chunk),
                    Err(e) => {
                        return Ok(Fetched::Broken(format!(
                            "broke off after {status}: {}",
                            innermost(&e)
                        )));
                    }
                }
            }
            Ok(Fetched::Answer { status, body })
        };
        match tokio::time::timeout(self.limits.timeout, asked).await {
            Ok(answer) => answer,
            Err(_) => Err(ProbeError::new(
                ProbeErrorKind::Unreachable,
                format!(
                    "{} did not answer {} {} within {}; check that the server is up and not busy loading a model",
                    self.target.shown(),
                    question.method,
                    question.shown,
                    seconds(self.limits.timeout)
                ),
            )),
        }
    }
}

fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// The innermost cause of a reqwest error, which names what went wrong without the URL.
fn innermost(error: &reqwest::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(error);
    let mut detail = String::new();
    while let Some(s) = source {
        detail = s.to_string();
        source = s.source();
    }
    if detail.is_empty() {
        "no detail".to_owned()
    } else {
        detail
    }
}
