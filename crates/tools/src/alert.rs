//! `alert`: POST a short JSON message to a webhook the operator registered by name (seed 003,
//! "Data + network": escalation, incident summaries, "I'm stuck" pings).
//!
//! Owns: the target list (only deliverable targets: the binary drops a target whose URL or
//! token environment variable is unset, and registers no `alert` tool when none is left), the
//! JSON body, the bearer token, and the permission resource `alert:<target>`.
//!
//! Refuses to own: any URL from the model. There is no URL parameter; the model names a target
//! and the operator's configuration supplies the address.
//!
//! Key decision: the webhook URL is operator-chosen and trusted, so the SSRF guard does *not*
//! apply to it (alert managers commonly live on private addresses). It is still sent through
//! the same client as `fetch_url`: no ambient proxy, the resolved address is the one dialed,
//! rustls, and redirects are never followed (a 3xx is reported, not chased).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_tool::protocol::{Concurrency, ErrorCode};
use tackle_tool::{
    Action, ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing, Tool,
    ToolCompletion, ToolError,
};
use url::Url;

use crate::fetch_url::{FetchSettings, TRANSPORT_ERROR};
use tackle_net::{ClientError, Guarded, Hops, HttpClient, Request, SsrfGuard};

pub const UNKNOWN_TARGET: ErrorCode = ErrorCode::new("unknown_target");
pub const ALERT_REJECTED: ErrorCode = ErrorCode::new("alert_rejected");

/// A deliverable target: its name and the values its environment variables held at start-up.
#[derive(Clone)]
pub struct AlertTarget {
    pub name: String,
    pub url: Url,
    pub token: Option<String>,
}

impl fmt::Debug for AlertTarget {
    /// Webhook URLs and tokens are secrets; only the name is shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AlertTarget")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AlertLevel {
    Info,
    Warning,
    Critical,
}

impl AlertLevel {
    fn as_str(self) -> &'static str {
        match self {
            AlertLevel::Info => "info",
            AlertLevel::Warning => "warning",
            AlertLevel::Critical => "critical",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AlertArgs {
    /// The target's name, one of those listed in the description.
    pub target: String,
    /// How urgent: info, warning or critical.
    pub level: AlertLevel,
    /// One line a person reads first.
    pub summary: String,
    /// Optional longer text: what was tried, what is needed.
    pub details: Option<String>,
}

pub struct AlertPlan {
    target: AlertTarget,
    body: bytes::Bytes,
}

pub struct Alert {
    targets: Vec<AlertTarget>,
    client: HttpClient,
    timeout: Duration,
}

/// Summaries longer than this are refused, so an alert stays a page, not a dump.
pub const MAX_SUMMARY_BYTES: usize = 1024;
pub const MAX_DETAILS_BYTES: usize = 16 * 1024;

impl Alert {
    /// `None` when no target is deliverable: then there is no alert tool at all.
    pub fn new(targets: Vec<AlertTarget>, settings: &FetchSettings) -> Option<Self> {
        if targets.is_empty() {
            return None;
        }
        Some(Self {
            targets,
            client: HttpClient::new(
                SsrfGuard::default(),
                Arc::clone(&settings.resolver),
                Arc::clone(&settings.dialer),
            ),
            timeout: settings.timeout,
        })
    }

    fn names(&self) -> Vec<&str> {
        self.targets.iter().map(|t| t.name.as_str()).collect()
    }
}

impl Tool for Alert {
    type Args = AlertArgs;
    type Plan = AlertPlan;

    fn name(&self) -> &str {
        "alert"
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Owned(format!(
            "Send a short alert to a person through an operator-registered webhook: escalate \
             when you are blocked, report an incident, or ask for a decision you cannot make. \
             Targets: {}. Give a one-line summary and, if useful, details saying what you \
             tried and what you need. Do not use it for routine progress reports.",
            self.names().join(", ")
        ))
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        false
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["alert"]
    }

    fn prepare(
        &self,
        args: AlertArgs,
        _cx: &PrepareContext<'_>,
    ) -> Result<Prepared<AlertPlan>, ToolError> {
        let Some(target) = self.targets.iter().find(|t| t.name == args.target) else {
            return Err(ToolError::new(
                UNKNOWN_TARGET,
                format!(
                    "alert: no target named \"{}\"; use one of: {}",
                    args.target,
                    self.names().join(", ")
                ),
            ));
        };
        if args.summary.trim().is_empty() || args.summary.len() > MAX_SUMMARY_BYTES {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                format!(
                    "alert: summary must be 1 to {MAX_SUMMARY_BYTES} bytes (got {}); put the rest in details",
                    args.summary.len()
                ),
            ));
        }
        if args
            .details
            .as_ref()
            .is_some_and(|d| d.len() > MAX_DETAILS_BYTES)
        {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                format!("alert: details must be at most {MAX_DETAILS_BYTES} bytes; shorten them"),
            ));
        }
        let body = json!({
            "source": "tackle",
            "target": target.name,
            "level": args.level.as_str(),
            "summary": args.summary,
            "details": args.details,
        });
        let routing = Routing {
            resources: vec![PermissionResource {
                action: Action::Custom("alert"),
                target: target.name.clone(),
            }],
        };
        Ok(Prepared::new(
            routing,
            AlertPlan {
                target: target.clone(),
                body: bytes::Bytes::from(body.to_string()),
            },
        ))
    }

    async fn execute(
        &self,
        plan: AlertPlan,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let name = plan.target.name.clone();
        let mut headers = vec![(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        )];
        if let Some(token) = &plan.target.token {
            let value = http::HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                ToolError::new(
                    TRANSPORT_ERROR,
                    format!("alert: the token for target {name} is not a valid header value; the operator must fix its environment variable"),
                )
            })?;
            headers.push((http::header::AUTHORIZATION, value));
        }
        let request = Request {
            method: http::Method::POST,
            url: plan.target.url.clone(),
            headers,
            body: plan.body,
        };
        let send = self
            .client
            .send(request, Hops::NotFollowed, Guarded::OperatorTrusted);
        let outcome = tokio::select! {
            r = tokio::time::timeout(self.timeout, send) => r,
            () = cx.cancel.cancelled() => {
                return Err(ToolError::new(ErrorCode::CANCELLED, "alert: cancelled"));
            }
        };
        let response = outcome
            .map_err(|_| {
                ToolError::new(
                    ErrorCode::TIMEOUT,
                    format!(
                        "alert: target {name} did not answer within {} s; try again later",
                        self.timeout.as_secs_f64()
                    ),
                )
            })?
            .map_err(|e| {
                // The URL is a secret of the operator's; messages name the target only.
                let why = match e {
                    ClientError::Transport(_) => "could not be reached",
                    _ => "refused the request",
                };
                ToolError::new(
                    TRANSPORT_ERROR,
                    format!("alert: target {name} {why}; try again later or use another target"),
                )
            })?;
        let status = response.status;
        let metadata = json!({ "target": name, "status_code": status });
        if !(200..300).contains(&status) {
            return Err(ToolError::new(
                ALERT_REJECTED,
                format!("alert: target {name} answered HTTP {status}; the alert was not accepted"),
            )
            .with_metadata(metadata));
        }
        Ok(
            ToolCompletion::single(format!("alert sent to {name} (HTTP {status})\n"))
                .with_metadata(metadata),
        )
    }
}
