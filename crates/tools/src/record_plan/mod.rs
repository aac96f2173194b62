//! `record_plan`: the plan-first escape valve (seed 003, record_plan). Writes the plan to
//! `.agents/plans/plan-<seq>.md` under a header saying who wrote it, and under
//! `permissions.plan_mode = "required"` puts a plan on file for the session, which the
//! runtime's plan gate ([`tackle_runtime`'s `PlanGate`]) waits for before any mutating call.
//!
//! Registered only when plan mode is advisory or required. The description and the result are
//! mode-aware, and the result names the tools this build actually gates ([`message`]). A repeat
//! does not mint a file ([`outcome`]): identical text is `unchanged` (with the reserved
//! `no_op` key, which the watchdog reads), revised text in the same turn is `updated` in place.
//!
//! Key decision: the plan files are the state ([`book`]), not a flag in memory, so a plan is on
//! file across `tackle call` invocations of one session and a revocation by another process
//! closes the gate. Rejected: declaring `write:.agents/plans/…` routing, which the protected
//! `.agents/` rule would make ask on every call — the target is fixed, not the model's choice,
//! and the plans directory is opened beneath the root like every other write.

pub mod book;
pub mod header;
pub mod message;
pub mod outcome;

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_tool::protocol::{Concurrency, ErrorCode, SessionId};
use tackle_tool::{
    ExecuteContext, PlanMode, PrepareContext, Prepared, Routing, SerializationKey, Tool,
    ToolCompletion, ToolError,
};

pub use book::{Filed, PlanAuthor, PlanBook, Revoked};
pub use message::GatedSet;
pub use outcome::PlanOutcome;

/// Largest plan accepted: a plan is a page, not a document.
pub const MAX_PLAN_BYTES: usize = 64 * 1024;

/// The built-ins a required-mode description names as waiting for the plan, when registered.
const NAMED_MUTATORS: &[&str] = &["write_file", "edit_file", "delete_file", "bash"];

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordPlanArgs {
    /// The plan: the steps you will take, as short markdown (a numbered list works well).
    pub plan: String,
}

pub struct RecordPlanCall {
    author: PlanAuthor,
    turn: String,
    body: String,
}

pub struct RecordPlan {
    mode: PlanMode,
    book: Arc<PlanBook>,
    /// Built-ins this catalog registers; empty when not known (all are named).
    registered: Vec<String>,
}

impl RecordPlan {
    pub fn new(mode: PlanMode, book: Arc<PlanBook>, registered: Vec<String>) -> Self {
        Self {
            mode,
            book,
            registered,
        }
    }
}

impl Tool for RecordPlan {
    type Args = RecordPlanArgs;
    type Plan = RecordPlanCall;

    fn name(&self) -> &str {
        "record_plan"
    }

    fn description(&self) -> Cow<'static, str> {
        let common = "Record your plan for the current task as .agents/plans/plan-<seq>.md, the \
                      operator's audit trail. Pass the steps you will take in `plan`. Calling it \
                      again in the same turn with revised text revises that plan in place; \
                      calling it with identical text writes nothing.";
        match self.mode {
            PlanMode::Required => {
                let named: Vec<&str> = NAMED_MUTATORS
                    .iter()
                    .copied()
                    .filter(|n| {
                        self.registered.is_empty() || self.registered.iter().any(|r| r == n)
                    })
                    .collect();
                let examples = if named.is_empty() {
                    String::new()
                } else {
                    format!(" (any {} call)", named.join(" / "))
                };
                Cow::Owned(format!(
                    "Plan mode is required: call this BEFORE any mutating call{examples}. Until \
                     your plan is on file for this session, every tool that changes something \
                     is denied. {common}"
                ))
            }
            PlanMode::Advisory | PlanMode::Off => Cow::Owned(format!(
                "{common} Plan mode is advisory: nothing waits for this plan, so record it and \
                 proceed with the work in the same turn; do not stop to wait for an approval \
                 nobody will send."
            )),
        }
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        // It writes the plan file.
        false
    }

    fn prepare(
        &self,
        args: RecordPlanArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<RecordPlanCall>, ToolError> {
        if args.plan.trim().is_empty() {
            return Err(invalid("`plan` is empty; pass the steps you will take"));
        }
        if args.plan.len() > MAX_PLAN_BYTES {
            return Err(invalid(&format!(
                "`plan` is {} bytes, more than the {MAX_PLAN_BYTES} a plan may have; record the \
                 steps, not the details",
                args.plan.len()
            )));
        }
        let mut body = args.plan;
        if !body.ends_with('\n') {
            body.push('\n');
        }
        // Calls of one batch record in turn order.
        Ok(Prepared::new(
            Routing::default(),
            RecordPlanCall {
                author: PlanAuthor {
                    agent: cx.agent.map(str::to_owned),
                    session: SessionId(cx.session.0.clone()),
                },
                turn: cx.turn.0.clone(),
                body,
            },
        )
        .serialized_by(SerializationKey("plans".to_owned())))
    }

    async fn execute(
        &self,
        call: RecordPlanCall,
        _cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let book = self.book.clone();
        let filed = tackle_tool::run_tool_blocking("record_plan", move || {
            book.record(&call.author, &call.turn, &call.body)
        })
        .await?
        .map_err(|e| crate::fs_error("record_plan", e))?;
        let text = message::result_text(
            self.mode,
            &self.book.gated(),
            filed.outcome,
            &filed.path,
            filed.opened,
        );
        let mut metadata = json!({
            "outcome": filed.outcome,
            "plan": filed.seq,
            "path": filed.path,
            "gate_opened": filed.opened && self.mode == PlanMode::Required,
        });
        if filed.outcome == PlanOutcome::Unchanged {
            metadata["no_op"] = json!(true);
        }
        Ok(ToolCompletion::single(text).with_metadata(metadata))
    }
}

fn invalid(what: &str) -> ToolError {
    ToolError::new(ErrorCode::INVALID_ARGUMENTS, format!("record_plan: {what}"))
        .with_metadata(json!({ "path": "$.plan" }))
}

#[cfg(test)]
mod tests;
