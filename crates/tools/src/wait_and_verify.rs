//! `wait_and_verify`: poll a read-only tool until its result satisfies a condition, or a bounded
//! budget runs out (seed 003, "wait_and_verify (v2.9+) — bounded poll-until-condition").
//!
//! Every poll is a call of its own through the runtime ([`tackle_tool::ToolCalls`]): gated,
//! scheduled and recorded exactly like a call the model made. The tool itself only decides
//! what may be polled, when, and whether the condition holds.
//!
//! Key decisions: only tools that cannot change anything are polled (a loop that could call
//! write_file sixty times is an amplifier, not a verifier), with wait_and_verify itself and
//! ask_user refused whatever their classification; the operator's ceilings
//! ([`WaitSettings`]) are limits, and a request past one is refused, never clamped; an
//! unverified wait is a finding (`verified: false`), not an error; a failing poll is transient
//! and retried, while a poll the runtime refuses (denied, unknown, bad arguments) and a filter
//! that cannot run end the wait at once, because repeating them cannot succeed.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tackle_tool::protocol::{CallStatus, Concurrency, ErrorCode, ToolResult};
use tackle_tool::{
    ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

use crate::json_query;
use judge::{Judged, judge};

/// The tool's name, which it refuses to poll.
pub const WAIT_AND_VERIFY: &str = "wait_and_verify";
/// Tools never polled, whatever their classification: a poll loop of its own, and a question to
/// a person repeated until the answer is right.
pub const NEVER_POLLED: &[&str] = &[WAIT_AND_VERIFY, "ask_user"];

/// A request past an operator ceiling.
pub const PAST_CEILING: ErrorCode = ErrorCode::new("past_ceiling");
/// A target that may change something.
pub const NOT_POLLABLE: ErrorCode = ErrorCode::new("not_pollable");
/// The wait ended early because polling again could not succeed.
pub const WAIT_ABORTED: ErrorCode = ErrorCode::new("wait_aborted");

/// The shortest interval between polls.
pub const MIN_INTERVAL_SECONDS: f64 = 0.01;
/// The interval when the request names none.
pub const DEFAULT_INTERVAL_SECONDS: f64 = 5.0;
/// The wall clock when the request names none (or the ceiling, when that is lower).
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 60.0;

/// The operator's ceilings (`[tools.wait_and_verify]`), which no request may pass.
#[derive(Clone, Debug, PartialEq)]
pub struct WaitSettings {
    /// The longest wall clock one wait may ask for.
    pub max_timeout_seconds: f64,
    /// The most polls one wait may ask for.
    pub max_attempts: u32,
    /// Tools (model-facing names) that may be polled although they do not declare themselves
    /// read-only: third-party tools the operator vouches for. A built-in is never made pollable
    /// this way.
    pub poll_allow: Vec<String>,
}

impl WaitSettings {
    /// Five minutes and sixty polls: long enough for a deployment to roll out, short enough
    /// that a wait never outlives the runtime's call timeout (ten minutes by default).
    pub const DEFAULT: WaitSettings = WaitSettings {
        max_timeout_seconds: 300.0,
        max_attempts: 60,
        poll_allow: Vec::new(),
    };
}

impl Default for WaitSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitAndVerifyArgs {
    /// The read-only tool to poll, by name (read_file, stat, grep, json_query, a read-only MCP
    /// tool).
    pub tool: String,
    /// The polled tool's arguments: a JSON object as a string, e.g. `{"path": "status.json"}`.
    /// Default `{}`.
    pub args_json: Option<String>,
    /// A jq filter over the poll's result (parsed as JSON when it is JSON, otherwise a string);
    /// the condition holds when its last output is neither false nor null, as with `jq -e`.
    pub expect_jq: Option<String>,
    /// The condition holds when the poll's result text contains this.
    pub expect_contains: Option<String>,
    /// The condition holds when the poll's result text does not contain this.
    pub expect_not_contains: Option<String>,
    /// Seconds between the starts of two polls (default 5, at least 0.01).
    pub interval_seconds: Option<f64>,
    /// The longest the wait may take, in seconds (default 60, at most the operator's ceiling).
    pub timeout_seconds: Option<f64>,
    /// The most polls (default and most: the operator's ceiling).
    pub max_attempts: Option<u32>,
}

/// What makes a poll a success.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    Jq(String),
    Contains(String),
    NotContains(String),
}

impl Condition {
    /// The condition as the result names it: `expect_jq=.status == "ok"`.
    pub fn describe(&self) -> String {
        match self {
            Self::Jq(f) => format!("expect_jq={f}"),
            Self::Contains(s) => format!("expect_contains={s}"),
            Self::NotContains(s) => format!("expect_not_contains={s}"),
        }
    }
}

pub struct WaitPlan {
    tool: String,
    arguments: Value,
    condition: Condition,
    interval: f64,
    timeout: f64,
    max_attempts: u32,
}

/// How a wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Verified,
    Timeout,
    AttemptsExhausted,
    Canceled,
}

/// One poll, as the trail records it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Observation {
    pub attempt: u32,
    /// When the poll started, from the start of the wait.
    pub at_seconds: f64,
    pub matched: bool,
    /// The poll's own call id in the session's record.
    pub call_id: String,
    /// The poll's error code, or `filter_error` when the filter failed on its result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Where the poll's whole output is kept (`read_file` it to see what was observed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

/// The wait's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WaitReport {
    pub verified: bool,
    pub outcome: Outcome,
    pub attempts: u32,
    pub interval_seconds: f64,
    pub elapsed_seconds: f64,
    pub condition: String,
    pub observations: Vec<Observation>,
}

pub struct WaitAndVerify {
    settings: WaitSettings,
}

impl WaitAndVerify {
    pub fn new(settings: WaitSettings) -> Self {
        Self { settings }
    }

    fn plan(&self, args: WaitAndVerifyArgs) -> Result<WaitPlan, ToolError> {
        if NEVER_POLLED.contains(&args.tool.as_str()) {
            return Err(not_pollable(&format!(
                "wait_and_verify: {} is never polled; poll a read-only tool such as read_file, \
                 stat or grep",
                args.tool
            )));
        }
        let arguments = match &args.args_json {
            None => json!({}),
            Some(text) => parse_args_json(text)?,
        };
        let condition = match (
            args.expect_jq,
            args.expect_contains,
            args.expect_not_contains,
        ) {
            (Some(f), None, None) => {
                json_query::check_filter(&f).map_err(|e| {
                    ToolError::new(
                        e.code,
                        format!(
                            "wait_and_verify: expect_jq: {}",
                            e.message.trim_start_matches("json_query: ")
                        ),
                    )
                    .with_metadata(json!({ "path": "$.expect_jq" }))
                })?;
                Condition::Jq(f)
            }
            (None, Some(s), None) => Condition::Contains(s),
            (None, None, Some(s)) => Condition::NotContains(s),
            _ => {
                return Err(invalid(
                    "$.expect_jq",
                    "wait_and_verify: pass exactly one of expect_jq, expect_contains and \
                     expect_not_contains",
                ));
            }
        };
        let ceiling = &self.settings;
        let timeout = match args.timeout_seconds {
            None => DEFAULT_TIMEOUT_SECONDS.min(ceiling.max_timeout_seconds),
            Some(t) if !t.is_finite() || t <= 0.0 => {
                return Err(invalid(
                    "$.timeout_seconds",
                    "wait_and_verify: timeout_seconds must be a positive number of seconds",
                ));
            }
            Some(t) if t > ceiling.max_timeout_seconds => {
                return Err(past_ceiling(
                    "timeout_seconds",
                    t,
                    ceiling.max_timeout_seconds,
                    "max_timeout_seconds",
                ));
            }
            Some(t) => t,
        };
        let interval = match args.interval_seconds {
            None => DEFAULT_INTERVAL_SECONDS.min(timeout),
            Some(i) if !i.is_finite() || i < MIN_INTERVAL_SECONDS => {
                return Err(invalid(
                    "$.interval_seconds",
                    &format!(
                        "wait_and_verify: interval_seconds must be at least \
                         {MIN_INTERVAL_SECONDS}"
                    ),
                ));
            }
            Some(i) if i > timeout => {
                return Err(invalid(
                    "$.interval_seconds",
                    &format!(
                        "wait_and_verify: interval_seconds {i} is longer than the wait \
                         ({timeout} s): at most one poll would run; shorten the interval or \
                         lengthen timeout_seconds"
                    ),
                ));
            }
            Some(i) => i,
        };
        let max_attempts = match args.max_attempts {
            None => ceiling.max_attempts,
            Some(0) => {
                return Err(invalid(
                    "$.max_attempts",
                    "wait_and_verify: max_attempts must be at least 1",
                ));
            }
            Some(n) if n > ceiling.max_attempts => {
                return Err(past_ceiling(
                    "max_attempts",
                    f64::from(n),
                    f64::from(ceiling.max_attempts),
                    "max_attempts",
                ));
            }
            Some(n) => n,
        };
        Ok(WaitPlan {
            tool: args.tool,
            arguments,
            condition,
            interval,
            timeout,
            max_attempts,
        })
    }

    /// Whether `tool` may be polled: the runtime classifies it pollable, or the operator listed
    /// a non-built-in in `poll_allow`.
    fn check_target(&self, tool: &str, cx: &ExecuteContext) -> Result<(), ToolError> {
        let Some(target) = cx.calls.target(tool) else {
            return Err(ToolError::new(
                ErrorCode::UNKNOWN_TOOL,
                format!(
                    "wait_and_verify: no tool named `{tool}` is registered; pass the name of a \
                     read-only tool from the catalog"
                ),
            ));
        };
        let vouched = self.settings.poll_allow.iter().any(|t| t == tool)
            && !crate::BUILTIN_TOOL_NAMES.contains(&tool);
        if target.pollable || vouched {
            return Ok(());
        }
        Err(not_pollable(&format!(
            "wait_and_verify: {tool} may change things, and polling it would repeat the change; \
             poll a read-only tool (read_file, stat, grep, json_query), or for a third-party \
             tool have the operator declare its server read_only or list it in \
             [tools.wait_and_verify] poll_allow"
        )))
    }
}

impl Tool for WaitAndVerify {
    type Args = WaitAndVerifyArgs;
    type Plan = WaitPlan;

    fn name(&self) -> &str {
        WAIT_AND_VERIFY
    }

    fn summary(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Poll a read-only tool until its result satisfies a condition, or a bounded budget runs out.",
        )
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Owned(format!(
            "Poll a read-only tool until its result satisfies a condition, or a bounded budget \
             runs out, in one call: apply a change, then confirm the system converged instead \
             of asserting it. Name the `tool` and its arguments (`args_json`, a JSON object as \
             a string), and exactly one condition: `expect_jq` (a jq filter over the result, \
             true when its last output is neither false nor null), `expect_contains` or \
             `expect_not_contains` (text of the result). Set `interval_seconds` (default \
             {DEFAULT_INTERVAL_SECONDS}), `timeout_seconds` (default {DEFAULT_TIMEOUT_SECONDS}, \
             at most {}) and `max_attempts` (at most {}); a request past a limit is refused. \
             The result says `verified`, the `outcome` (verified, timeout, attempts_exhausted, \
             canceled), and each poll's `observations`; verified: false is a finding to \
             report, not a failure to retry. Only read-only tools can be polled. Use this \
             instead of sleep loops in bash.",
            self.settings.max_timeout_seconds, self.settings.max_attempts
        ))
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        true
    }

    fn calls_tools(&self) -> bool {
        true
    }

    fn prepare(
        &self,
        args: WaitAndVerifyArgs,
        _cx: &PrepareContext<'_>,
    ) -> Result<Prepared<WaitPlan>, ToolError> {
        // Each poll is gated as a call of its own; the wait itself lands nowhere.
        Ok(Prepared::new(Routing::default(), self.plan(args)?))
    }

    async fn execute(
        &self,
        plan: WaitPlan,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        self.check_target(&plan.tool, &cx)?;
        let report = poll(&plan, &cx).await?;
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| ToolError::new(ErrorCode::INTERNAL, format!("wait_and_verify: {e}")))?;
        let metadata = serde_json::to_value(&report)
            .map_err(|e| ToolError::new(ErrorCode::INTERNAL, format!("wait_and_verify: {e}")))?;
        Ok(ToolCompletion::single(text).with_metadata(metadata))
    }
}

/// The loop: poll, judge, wait for the next slot, until the condition holds or a budget ends.
async fn poll(plan: &WaitPlan, cx: &ExecuteContext) -> Result<WaitReport, ToolError> {
    let started = Instant::now();
    let mut observations = Vec::new();
    let outcome = loop {
        if cx.cancel.is_cancelled() {
            break Outcome::Canceled;
        }
        let attempt = observations.len() as u32 + 1;
        let at_seconds = started.elapsed().as_secs_f64();
        let result = cx
            .calls
            .call(&plan.tool, plan.arguments.clone(), cx.cancel.child_token())
            .await?;
        if result.status == CallStatus::Cancelled && cx.cancel.is_cancelled() {
            break Outcome::Canceled;
        }
        let judged = judge(&plan.condition, &result).await;
        let observation = Observation {
            attempt,
            at_seconds: round_ms(at_seconds),
            matched: judged.as_ref().is_ok_and(|m| *m),
            call_id: result.call_id.0.clone(),
            error: judged.as_ref().err().and_then(|j| j.code()),
            output: readable_output(&result),
        };
        observations.push(observation);
        match judged {
            Ok(true) => break Outcome::Verified,
            Ok(false) | Err(Judged::Transient(_)) => {}
            Err(Judged::Abort(_, why)) => {
                return Err(
                    ToolError::new(WAIT_ABORTED, format!("wait_and_verify: {why}")).with_metadata(
                        json!({
                            "attempts": observations.len(),
                            "condition": plan.condition.describe(),
                            "observations": observations,
                        }),
                    ),
                );
            }
        }
        if attempt >= plan.max_attempts {
            break Outcome::AttemptsExhausted;
        }
        let next = Duration::from_secs_f64(plan.interval * f64::from(attempt));
        if next.as_secs_f64() > plan.timeout || started.elapsed().as_secs_f64() >= plan.timeout {
            break Outcome::Timeout;
        }
        let wake = tokio::time::Instant::from_std(started + next);
        tokio::select! {
            () = cx.cancel.cancelled() => break Outcome::Canceled,
            () = tokio::time::sleep_until(wake) => {}
        }
    };
    Ok(report(plan, outcome, started, observations))
}

fn report(
    plan: &WaitPlan,
    outcome: Outcome,
    started: Instant,
    observations: Vec<Observation>,
) -> WaitReport {
    WaitReport {
        verified: outcome == Outcome::Verified,
        outcome,
        attempts: observations.len() as u32,
        interval_seconds: plan.interval,
        elapsed_seconds: round_ms(started.elapsed().as_secs_f64()),
        condition: plan.condition.describe(),
        observations,
    }
}

/// The poll's whole output as a model reads it back: `artifact://<hex>` of its single stream.
fn readable_output(result: &ToolResult) -> Option<String> {
    let [only] = result.retained_output.as_slice() else {
        return None;
    };
    only.artifact
        .strip_prefix("artifact://sha256/")
        .map(|hex| format!("artifact://{hex}"))
}

fn round_ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

fn parse_args_json(text: &str) -> Result<Value, ToolError> {
    if let Err(json_query::nesting::OverLimit(why)) =
        json_query::nesting::check_json(text.as_bytes())
    {
        return Err(invalid(
            "$.args_json",
            &format!("wait_and_verify: args_json {why}; pass a shallower object"),
        ));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(invalid(
            "$.args_json",
            "wait_and_verify: args_json must be a JSON object, e.g. {\"path\": \"status.json\"}",
        )),
        Err(e) => Err(invalid(
            "$.args_json",
            &format!(
                "wait_and_verify: args_json is not valid JSON ({e}); pass a JSON object as a string"
            ),
        )),
    }
}

fn invalid(path: &str, message: &str) -> ToolError {
    ToolError::new(ErrorCode::INVALID_ARGUMENTS, message).with_metadata(json!({ "path": path }))
}

fn not_pollable(message: &str) -> ToolError {
    ToolError::new(NOT_POLLABLE, message)
}

fn past_ceiling(field: &str, asked: f64, ceiling: f64, key: &str) -> ToolError {
    ToolError::new(
        PAST_CEILING,
        format!(
            "wait_and_verify: {field} {asked} is past the operator's ceiling of {ceiling} \
             ([tools.wait_and_verify] {key}); ask for at most {ceiling}"
        ),
    )
    .with_metadata(json!({ "path": format!("$.{field}"), "ceiling": ceiling }))
}

mod judge;
#[cfg(test)]
mod tests;
