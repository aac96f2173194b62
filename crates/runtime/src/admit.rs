//! The admit stage: resolve, strict parse, prepare and gate one call, then put what the gate
//! wants approved to the approver. A call comes out [`Admitted`] (ready to schedule) or as a
//! [`Refusal`] (the status and error it ends with, without running).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use tackle_protocol::{CallStatus, ErrorCode, ToolCall, TurnId};
use tackle_tool::{DynTool, ErasedPlan, PrepareContext, Prepared, ToolError};

use crate::approval::{Approval, ApprovalRequest};
use crate::artifact_source::StoreArtifacts;
use crate::dispatch::Runtime;
use crate::execute::panic_error;
use crate::gate::{GateRequest, GateVerdict};
use crate::session::Session;

/// A call that passed resolve, parse, prepare and the gate (and its approval, when the gate
/// asked for one).
pub(crate) struct Admitted {
    pub(crate) tool: Arc<dyn DynTool>,
    pub(crate) prepared: Prepared<ErasedPlan>,
}

/// A call stopped before execution, with the status and error it ends with.
pub(crate) struct Refusal {
    pub(crate) status: CallStatus,
    pub(crate) error: ToolError,
}

impl Refusal {
    fn error(error: ToolError) -> Self {
        Self {
            status: CallStatus::Error,
            error,
        }
    }

    fn denied(error: ToolError) -> Self {
        Self {
            status: CallStatus::Denied,
            error,
        }
    }
}

/// What the gate said about a prepared call.
struct Gated {
    admitted: Admitted,
    /// `Some` when the gate wants a person to approve it.
    ask: Option<Ask>,
}

/// The gate's question for a person: the keys to approve and its explanation.
struct Ask {
    keys: Vec<String>,
    message: String,
}

impl Runtime {
    /// Resolve, parse, prepare and gate one call, and ask about it when the gate wants that.
    pub(crate) async fn admit(
        &self,
        session: &Session,
        turn: &TurnId,
        call: &ToolCall,
        artifacts: &StoreArtifacts,
    ) -> Result<Admitted, Refusal> {
        let Gated { admitted, ask } = self.gate_call(session, turn, call, artifacts)?;
        if let Some(ask) = ask {
            let effect = admitted.prepared.effect.as_deref();
            self.ask(session, call, admitted.tool.read_only(), effect, &ask)
                .await?;
        }
        Ok(admitted)
    }

    fn gate_call(
        &self,
        session: &Session,
        turn: &TurnId,
        call: &ToolCall,
        artifacts: &StoreArtifacts,
    ) -> Result<Gated, Refusal> {
        let Some(tool) = self.tool_for(session, &call.name).cloned() else {
            return Err(self.unknown_tool(session, call));
        };
        let read_scope = self.gate().read_scope(session.context());
        let cx = PrepareContext {
            root: &session.root,
            session: session.id(),
            turn,
            agent: session.context().agent(),
            call_id: &call.id,
            artifacts,
            read_scope: read_scope.as_ref(),
        };
        let prepared = std::panic::catch_unwind(AssertUnwindSafe(|| {
            tool.prepare_json(call.arguments.clone(), &cx)
        }))
        .map_err(|p| Refusal::error(panic_error(&call.name, "prepare", &*p)))?
        .map_err(Refusal::error)?;

        let mut keys = vec![format!("tool.{}", tool.gate_name())];
        keys.extend(prepared.routing.resources.iter().map(|r| r.key()));
        // What produced each artifact the call reads back: the gate asks about those sources
        // too, and the call may open only these.
        let reads = crate::provenance::artifact_reads(&session.store, &prepared.routing.resources);
        artifacts.admitted(&prepared.routing.resources, &reads);
        artifacts.note_reads(prepared.sources.iter().map(|r| r.key()));
        let request = GateRequest {
            session: session.context(),
            tool: &call.name,
            keys,
            resources: &prepared.routing.resources,
            read_only: tool.read_only(),
            artifacts: &reads,
        };
        let ask = match self.gate().check(&request) {
            GateVerdict::Allow => None,
            GateVerdict::Ask { keys, message } => Some(Ask { keys, message }),
            GateVerdict::Deny { key, rule, message } => {
                return Err(Refusal::denied(
                    ToolError::new(ErrorCode::PERMISSION_DENIED, message.clone()).with_metadata(
                        serde_json::json!({ "tool_denied": { "key": key, "rule": rule, "message": message } }),
                    ),
                ));
            }
        };
        Ok(Gated {
            admitted: Admitted { tool, prepared },
            ask,
        })
    }

    /// A tool the catalog lacks, or that the session is not offered: the hint names only what
    /// the session could call instead.
    fn unknown_tool(&self, session: &Session, call: &ToolCall) -> Refusal {
        let context = session.context();
        let near: Vec<String> = self
            .catalog()
            .closest_among(&call.name, 3, |name| context.offers(name));
        let hint = if near.is_empty() {
            let all: Vec<&str> = self
                .catalog()
                .names()
                .filter(|name| context.offers(name))
                .collect();
            format!("available tools: {}", all.join(", "))
        } else {
            format!("did you mean {}?", near.join(", "))
        };
        Refusal::error(
            ToolError::new(
                ErrorCode::UNKNOWN_TOOL,
                format!("unknown tool `{}`; {hint}", call.name),
            )
            .with_metadata(serde_json::json!({ "closest": near })),
        )
    }

    /// Put a call the gate wants approved to the approver.
    async fn ask(
        &self,
        session: &Session,
        call: &ToolCall,
        read_only: bool,
        effect: Option<&str>,
        ask: &Ask,
    ) -> Result<(), Refusal> {
        let Ask { keys, message } = ask;
        let request = ApprovalRequest {
            session: session.id(),
            handle: session.context().handle(),
            call_id: &call.id,
            tool: &call.name,
            read_only,
            arguments: &call.arguments,
            keys,
            message,
            session_grant: keys.iter().all(|k| self.gate().session_grantable(k)),
            effect,
        };
        let key = keys.first().cloned().unwrap_or_default();
        // On record before anyone is asked: a process that stops while the question is open
        // leaves a log that says the call never ran.
        let asked = tackle_protocol::Event::ApprovalAsked(tackle_protocol::ApprovalAsked {
            call_id: call.id.clone(),
            at_ms: crate::clock::now_ms(),
        });
        if let Err(e) = self
            .record(session, asked, tackle_store::Durability::Written)
            .await
        {
            return Err(Refusal::denied(ToolError::new(
                ErrorCode::APPROVAL_UNAVAILABLE,
                format!(
                    "{message}; it needs approval, but the session log cannot record the question: {e}"
                ),
            )));
        }
        match self.approver().approve(request).await {
            Approval::Once => Ok(()),
            Approval::Session => {
                self.gate().grant_session(session.context(), keys);
                Ok(())
            }
            Approval::Deny { message: reason } => {
                let text = match &reason {
                    Some(r) => format!("{} was refused by the user: {r}", call.name),
                    None => format!("{} was refused by the user", call.name),
                };
                Err(Refusal::denied(
                    ToolError::new(ErrorCode::PERMISSION_DENIED, text.clone()).with_metadata(
                        serde_json::json!({ "tool_denied": { "key": key, "rule": "refused at approval", "message": text } }),
                    ),
                ))
            }
            Approval::Unavailable { reason } => Err(Refusal::denied(
                ToolError::new(
                    ErrorCode::APPROVAL_UNAVAILABLE,
                    format!("{message}; it needs approval, but {reason}"),
                )
                .with_metadata(serde_json::json!({ "keys": keys })),
            )),
        }
    }
}
