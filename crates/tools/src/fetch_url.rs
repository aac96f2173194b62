//! `fetch_url`: an HTTP GET of a URL inside the operator's URL scope, returned as text (seed 000,
//! "Webfetch", with seed 003's allowlist and SSRF guard).
//!
//! Owns: the URL's syntax check (lowercase `http://`/`https://`, no user info), the permission
//! resource `fetch:<url>` (the URL as parsed, without its fragment; the same parsed URL is the
//! one requested), content-type policy, HTML rendering, the 16 MiB cap, the overall timeout and
//! the four-line header of its output.
//!
//! Refuses to own: the first permission check (the runtime's gate decides on `fetch:<url>`),
//! and everything about addresses and connections (`tackle_net`). Redirect hops are checked here
//! against the URL scope because the gate only ever sees the first URL.
//!
//! Key decision: redirects are followed by hand, at most 10, and every hop must be inside the
//! URL scope and pass the SSRF guard before it is dialed (DESIGN.md: Cookie does not check
//! hops; we do). A hop that fails is an error naming the hop, never a silent stop.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_gate::Pattern;
use tackle_tool::protocol::{Concurrency, ErrorCode, Label};
use tackle_tool::{
    Action, ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing, Tool,
    ToolCompletion, ToolError,
};
use url::Url;

use tackle_net::{
    ClientError, Dialer, DirectDialer, GuardError, Guarded, Hops, HttpClient, PrivateHost, Request,
    Resolver, SsrfGuard, SystemResolver,
};

pub const INVALID_URL: ErrorCode = ErrorCode::new("invalid_url");
pub const REDIRECT_ERROR: ErrorCode = ErrorCode::new("redirect_error");
pub const TRANSPORT_ERROR: ErrorCode = ErrorCode::new("transport_error");
pub const UNSUPPORTED_CONTENT_TYPE: ErrorCode = ErrorCode::new("unsupported_content_type");

/// Bodies are read to this many bytes; the rest is not downloaded (seed 000: fixed, no
/// parameter).
pub const BODY_CAP: usize = 16 * 1024 * 1024;
/// Redirects followed before `redirect_error` (reqwest's default, which seed 000 inherits).
pub const MAX_REDIRECTS: usize = 10;
/// Width HTML is rendered at.
pub const RENDER_WIDTH: usize = 80;

/// How `fetch_url` reaches the network. The binary fills it from `[fetch]`; tests inject a stub
/// resolver, a recording dialer and a short timeout.
#[derive(Clone)]
pub struct FetchSettings {
    /// Hosts (exactly, optionally with a port) that may resolve to loopback or private ranges.
    pub allow_private_hosts: Vec<PrivateHost>,
    /// One deadline for the whole exchange: every hop, and the body.
    pub timeout: Duration,
    pub resolver: Arc<dyn Resolver>,
    pub dialer: Arc<dyn Dialer>,
}

impl FetchSettings {
    /// Seed 000: a 30-second overall timeout.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
}

impl Default for FetchSettings {
    fn default() -> Self {
        Self {
            allow_private_hosts: Vec::new(),
            timeout: Self::DEFAULT_TIMEOUT,
            resolver: Arc::new(SystemResolver),
            dialer: Arc::new(DirectDialer),
        }
    }
}

impl fmt::Debug for FetchSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FetchSettings")
            .field("allow_private_hosts", &self.allow_private_hosts)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FetchUrlArgs {
    /// The full URL, starting with lowercase `http://` or `https://`.
    pub url: String,
    /// Return HTML source instead of rendered text. Default false.
    #[serde(default)]
    pub raw: bool,
}

pub struct FetchPlan {
    /// As the model wrote it (for metadata).
    input: String,
    /// The one parsed URL that was gated and is requested.
    url: Url,
    raw: bool,
}

pub struct FetchUrl {
    /// `url_scope.allow`, for redirect hops (a leading `fetch:` is accepted, as in the gate).
    scope: Vec<Pattern>,
    client: HttpClient,
    timeout: Duration,
}

impl FetchUrl {
    pub fn new(url_scope: &[Pattern], settings: FetchSettings) -> Self {
        let scope = url_scope
            .iter()
            .filter_map(|p| match p.as_str().strip_prefix("fetch:") {
                // A pattern that fails to re-parse matches nothing: hops fail closed.
                Some(rest) => Pattern::parse(rest).ok(),
                None => Some(p.clone()),
            })
            .collect();
        let guard = SsrfGuard::new(settings.allow_private_hosts);
        Self {
            scope,
            client: HttpClient::new(guard, settings.resolver, settings.dialer),
            timeout: settings.timeout,
        }
    }

    fn in_scope(&self, url: &Url) -> bool {
        self.scope.iter().any(|p| p.matches(url.as_str()))
    }
}

/// Parses a model-supplied URL: lowercase `http://`/`https://` (checked on the text, before
/// parsing), no user info, fragment dropped.
pub fn parse_url(input: &str) -> Result<Url, ToolError> {
    if !(input.starts_with("http://") || input.starts_with("https://")) {
        return Err(ToolError::new(
            INVALID_URL,
            format!(
                "fetch_url: \"{input}\" does not start with lowercase http:// or https://; pass a full URL such as https://docs.rs/serde"
            ),
        ));
    }
    let mut url = Url::parse(input).map_err(|e| {
        ToolError::new(
            INVALID_URL,
            format!("fetch_url: \"{input}\" is not a valid URL ({e}); check the host and port"),
        )
    })?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(ToolError::new(
            INVALID_URL,
            format!(
                "fetch_url: \"{input}\" carries user info (user@host); fetch_url sends no credentials, remove the part before @"
            ),
        ));
    }
    if url.host().is_none() {
        return Err(ToolError::new(
            INVALID_URL,
            format!("fetch_url: \"{input}\" has no host"),
        ));
    }
    url.set_fragment(None);
    Ok(url)
}

/// What a content type means for the output.
#[derive(Debug, PartialEq, Eq)]
pub enum Body {
    Html,
    Text,
}

/// Seed 000: HTML is rendered; text types, JSON, XML, JavaScript, form data and `+json`/`+xml`
/// pass through; everything else (and a missing or invalid type, read as
/// `application/octet-stream`) is refused, in raw mode too.
pub fn body_kind(content_type: Option<&str>) -> Result<Body, String> {
    let essence = content_type
        .map(|c| {
            c.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default();
    let valid = essence
        .split_once('/')
        .is_some_and(|(t, s)| !t.is_empty() && !s.is_empty() && !s.contains('/'));
    if !valid {
        return Err("application/octet-stream".to_owned());
    }
    if matches!(essence.as_str(), "text/html" | "application/xhtml+xml") {
        return Ok(Body::Html);
    }
    let text = essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || matches!(
            essence.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/ecmascript"
                | "application/x-www-form-urlencoded"
        );
    if text { Ok(Body::Text) } else { Err(essence) }
}

impl Tool for FetchUrl {
    type Args = FetchUrlArgs;
    type Plan = FetchPlan;

    fn name(&self) -> &str {
        "fetch_url"
    }

    fn description(&self) -> Cow<'static, str> {
        let mut scope: Vec<&str> = self.scope.iter().take(10).map(Pattern::as_str).collect();
        if self.scope.len() > 10 {
            scope.push("…");
        }
        Cow::Owned(format!(
            "HTTP GET a URL and return it as text: four header lines (final_url, status_code, \
             content_type, truncated), a blank line, then the body. HTML is rendered to plain \
             text at 80 columns; pass raw: true for the HTML source. Text, JSON, XML and \
             JavaScript come back verbatim; images, PDFs and other binary types are refused. \
             Use this for documentation, API references and raw source files instead of curl \
             or wget in bash. Only URLs matching the URL scope can be fetched: {}. Redirects \
             are followed (at most 10) only while they stay inside that scope. Loopback, \
             private-network and cloud-metadata addresses are refused. Bodies over 16 MiB are \
             cut to their first 16 MiB (truncated: true). HTTP error statuses such as 404 are \
             returned with their body, not as errors. When the page is long and you need \
             only an answer from it, call agentic_fetch_url instead.",
            scope.join(", ")
        ))
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        true
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["fetch"]
    }

    fn label(&self) -> Label {
        Label::REMOTE
    }

    fn prepare(
        &self,
        args: FetchUrlArgs,
        _cx: &PrepareContext<'_>,
    ) -> Result<Prepared<FetchPlan>, ToolError> {
        let url = parse_url(&args.url)?;
        let routing = Routing {
            resources: vec![PermissionResource {
                action: Action::Fetch,
                target: url.as_str().to_owned(),
            }],
        };
        Ok(Prepared::new(
            routing,
            FetchPlan {
                input: args.url,
                url,
                raw: args.raw,
            },
        ))
    }

    async fn execute(
        &self,
        plan: FetchPlan,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let FetchPlan { input, url, raw } = plan;
        let in_scope = |u: &Url| self.in_scope(u);
        let exchange = async {
            let request = Request {
                method: http::Method::GET,
                url: url.clone(),
                headers: vec![(
                    http::header::ACCEPT,
                    http::HeaderValue::from_static(
                        "text/html, text/*;q=0.9, application/json;q=0.9, application/xml;q=0.9, */*;q=0.1",
                    ),
                )],
                body: bytes::Bytes::new(),
            };
            let hops = Hops::Follow {
                max: MAX_REDIRECTS,
                in_scope: &in_scope,
            };
            let response = self
                .client
                .send(request, hops, Guarded::Yes)
                .await
                .map_err(|e| client_error(&url, e))?;
            let content_type = response
                .headers
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(|s| s.trim().to_owned());
            let kind = body_kind(content_type.as_deref()).map_err(|essence| {
                ToolError::new(
                    UNSUPPORTED_CONTENT_TYPE,
                    format!(
                        "fetch_url: {} answered {} with content type {essence}, which is not text; fetch_url reads HTML, text, JSON, XML, JavaScript and form data only",
                        response.final_url, response.status
                    ),
                )
                .with_metadata(json!({
                    "url": input,
                    "final_url": response.final_url.as_str(),
                    "status_code": response.status,
                    "content_type": essence,
                }))
            })?;
            let final_url = response.final_url.clone();
            let status = response.status;
            let body = response
                .read_capped(BODY_CAP)
                .await
                .map_err(|e| client_error(&url, e))?;
            Ok::<_, ToolError>((final_url, status, content_type, kind, body))
        };
        let timed = tokio::time::timeout(self.timeout, exchange);
        let outcome = tokio::select! {
            r = timed => r,
            () = cx.cancel.cancelled() => {
                return Err(ToolError::new(ErrorCode::CANCELLED, "fetch_url: cancelled"));
            }
        };
        let (final_url, status, content_type, kind, body) = outcome.map_err(|_| {
            ToolError::new(
                ErrorCode::TIMEOUT,
                format!(
                    "fetch_url: no complete response from {url} within {} s; try again later or fetch a smaller page",
                    self.timeout.as_secs_f64()
                ),
            )
        })??;
        let text = if kind == Body::Html && !raw {
            render_html(body.bytes).await
        } else {
            String::from_utf8_lossy(&body.bytes).into_owned()
        };
        let shown_type = content_type.clone().unwrap_or_default();
        let mut out = format!(
            "final_url: {final_url}\nstatus_code: {status}\ncontent_type: {shown_type}\ntruncated: {}\n\n",
            body.truncated
        );
        out.push_str(&text);
        Ok(ToolCompletion::single(out).with_metadata(json!({
            "url": input,
            "final_url": final_url.as_str(),
            "status_code": status,
            "content_type": shown_type,
            "truncated": body.truncated,
        })))
    }
}

/// Renders HTML to text at [`RENDER_WIDTH`] off the async threads (a large page is seconds of
/// CPU), within [`crate::html_text`]'s depth bound. If the renderer fails, the source is
/// returned rather than nothing.
async fn render_html(bytes: Vec<u8>) -> String {
    tackle_tool::run_tool_blocking("fetch_url", move || {
        crate::html_text::render(&bytes, RENDER_WIDTH)
    })
    .await
    .unwrap_or_default()
}

fn client_error(initial: &Url, e: ClientError) -> ToolError {
    let hop = |u: &Url| {
        if u == initial {
            format!("{u}")
        } else {
            format!("{u} (a redirect from {initial})")
        }
    };
    match e {
        ClientError::Blocked {
            url,
            error: GuardError::Blocked(b),
        } => ToolError::new(
            ErrorCode::PERMISSION_DENIED,
            format!("fetch_url: refused {}: {b}", hop(&url)),
        )
        .with_metadata(json!({
            "reason": "ssrf_guard",
            "url": url.as_str(),
            "address": b.address.to_string(),
            "rule": b.rule(),
        })),
        ClientError::Blocked {
            url,
            error: GuardError::Resolve { host, message },
        } => ToolError::new(
            TRANSPORT_ERROR,
            format!(
                "fetch_url: could not resolve {host} for {}: {message}; check the host name",
                hop(&url)
            ),
        ),
        ClientError::Blocked {
            url,
            error: GuardError::NoHost(_),
        } => ToolError::new(INVALID_URL, format!("fetch_url: {} has no host", hop(&url))),
        ClientError::OutOfScope { url } => ToolError::new(
            ErrorCode::PERMISSION_DENIED,
            format!(
                "fetch_url: {initial} redirected to {url}, which is outside url_scope.allow; not followed. Fetch a URL inside the scope, or ask the operator to add this one"
            ),
        )
        .with_metadata(json!({ "reason": "url_scope", "url": url.as_str() })),
        ClientError::Redirect(message) => {
            ToolError::new(REDIRECT_ERROR, format!("fetch_url: {message}"))
        }
        ClientError::Transport(message) => ToolError::new(
            TRANSPORT_ERROR,
            format!("fetch_url: {message}; the server may be down, try again later"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types() {
        // (content type, expected: Ok(html?) or Err(named type))
        let cases: &[(Option<&str>, Result<bool, &str>)] = &[
            (Some("text/html; charset=utf-8"), Ok(true)),
            (Some("TEXT/HTML"), Ok(true)),
            (Some("application/xhtml+xml"), Ok(true)),
            (Some("text/plain"), Ok(false)),
            (Some("text/markdown"), Ok(false)),
            (Some("text/css"), Ok(false)),
            (Some("application/json"), Ok(false)),
            (Some("application/problem+json"), Ok(false)),
            (Some("application/xml"), Ok(false)),
            (Some("application/atom+xml"), Ok(false)),
            (Some("application/javascript"), Ok(false)),
            (Some("application/x-www-form-urlencoded"), Ok(false)),
            (Some("image/png"), Err("image/png")),
            (Some("application/pdf"), Err("application/pdf")),
            (
                Some("application/octet-stream"),
                Err("application/octet-stream"),
            ),
            (None, Err("application/octet-stream")),
            (Some(""), Err("application/octet-stream")),
            (Some("garbage"), Err("application/octet-stream")),
            (Some("text/"), Err("application/octet-stream")),
        ];
        for (ct, want) in cases {
            let got = body_kind(*ct);
            match want {
                Ok(html) => assert_eq!(
                    got,
                    Ok(if *html { Body::Html } else { Body::Text }),
                    "{ct:?}"
                ),
                Err(name) => assert_eq!(got, Err((*name).to_owned()), "{ct:?}"),
            }
        }
    }

    #[test]
    fn urls_are_checked_before_any_request() {
        let bad = [
            "HTTP://example.com/",
            "Https://example.com/",
            "ftp://example.com/",
            "file:///etc/passwd",
            "example.com",
            "//example.com/",
            "http://",
            "http://a@127.0.0.1/",
            "http://user:pw@example.com/",
            "http://[::1/",
        ];
        for input in bad {
            let e = parse_url(input).unwrap_err();
            assert_eq!(e.code, INVALID_URL, "{input}: {e}");
        }
        let u = parse_url("https://docs.rs/serde?x=1#frag").unwrap();
        assert_eq!(u.as_str(), "https://docs.rs/serde?x=1");
        assert_eq!(
            parse_url("http://2130706433/").unwrap().as_str(),
            "http://127.0.0.1/"
        );
    }
}
