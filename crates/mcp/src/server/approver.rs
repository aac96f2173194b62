//! Approvals through MCP elicitation: an `ask` from the gate becomes a form (once / session /
//! deny, with an optional message for the model) sent to the client that made the call.
//!
//! The runtime holds one approver for every call, but a question must go to the client that
//! asked; the calling peer travels in a task-local set around the batch ([`with_caller`]).
//! A client that did not declare the elicitation capability — or a 2026-07-28 client, which
//! forbids server-to-client requests (it would need `InputRequiredResult`, not wired yet) —
//! gets the headless refusal, `approval_unavailable`.

use std::future::Future;

use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::service::{ElicitationMode, Peer};
use tackle_runtime::{Approval, ApprovalFuture, ApprovalRequest, Approver};

tokio::task_local! {
    static CALLER: Peer<RoleServer>;
}

/// Run `fut` with `peer` as the client any approval question goes to.
pub(crate) fn with_caller<F: Future>(
    peer: Peer<RoleServer>,
    fut: F,
) -> impl Future<Output = F::Output> {
    CALLER.scope(peer, fut)
}

/// Asks the calling MCP client through a form elicitation.
pub struct ElicitationApprover;

fn unavailable(reason: &str) -> Approval {
    Approval::Unavailable {
        reason: reason.to_owned(),
    }
}

/// The form: a required decision and an optional message for the model.
fn form_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Decision",
                "description": "once: run this call; session: run it and allow these keys until the server stops; deny: refuse it",
                "enum": ["once", "session", "deny"]
            },
            "message": {
                "type": "string",
                "title": "Message for the model (optional, with deny)"
            }
        },
        "required": ["decision"]
    })
}

/// Map a form answer onto an approval. Anything unexpected refuses: a malformed answer must
/// never run a call.
pub(crate) fn decide(action: ElicitationAction, content: Option<&serde_json::Value>) -> Approval {
    let message = content
        .and_then(|c| c.get("message"))
        .and_then(|m| m.as_str())
        .filter(|m| !m.trim().is_empty())
        .map(str::to_owned);
    match action {
        ElicitationAction::Accept => {
            match content
                .and_then(|c| c.get("decision"))
                .and_then(|d| d.as_str())
            {
                Some("once") => Approval::Once,
                Some("session") => Approval::Session,
                _ => Approval::Deny { message },
            }
        }
        ElicitationAction::Decline => Approval::Deny { message },
        ElicitationAction::Cancel => Approval::Deny {
            message: Some("the user dismissed the approval request".to_owned()),
        },
        // An action this SDK version does not know refuses, like any unexpected answer.
        _ => Approval::Deny { message },
    }
}

impl Approver for ElicitationApprover {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        Box::pin(async move {
            let Ok(peer) = CALLER.try_with(Peer::clone) else {
                return unavailable("the call did not come from an MCP client");
            };
            if !peer
                .supported_elicitation_modes()
                .contains(&ElicitationMode::Form)
            {
                return unavailable(
                    "the MCP client did not declare the elicitation capability, so nobody can be asked",
                );
            }
            let schema = match serde_json::from_value(form_schema()) {
                Ok(s) => s,
                Err(e) => {
                    return unavailable(&format!("the approval form could not be built: {e}"));
                }
            };
            let arguments = serde_json::to_string(request.arguments).unwrap_or_default();
            let message = format!(
                "tackle: {} needs approval for {}.\n{}\narguments: {arguments}",
                request.tool,
                request.keys.join(", "),
                request.message
            );
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema: schema,
            };
            match peer.create_elicitation(params).await {
                Ok(answer) => decide(answer.action, answer.content.as_ref()),
                Err(e) => unavailable(&format!("the approval request failed: {e}")),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn form_schema_is_accepted_by_the_sdk() {
        let parsed: Result<rmcp::model::ElicitationSchema, _> =
            serde_json::from_value(form_schema());
        assert!(parsed.is_ok(), "{parsed:?}");
    }

    #[test]
    fn answers_map_to_approvals() {
        let table = [
            (
                ElicitationAction::Accept,
                Some(json!({"decision": "once"})),
                Approval::Once,
            ),
            (
                ElicitationAction::Accept,
                Some(json!({"decision": "session"})),
                Approval::Session,
            ),
            (
                ElicitationAction::Accept,
                Some(json!({"decision": "deny", "message": "use stat"})),
                Approval::Deny {
                    message: Some("use stat".into()),
                },
            ),
            (
                ElicitationAction::Accept,
                Some(json!({"decision": "yes"})),
                Approval::Deny { message: None },
            ),
            (
                ElicitationAction::Accept,
                None,
                Approval::Deny { message: None },
            ),
            (
                ElicitationAction::Decline,
                None,
                Approval::Deny { message: None },
            ),
        ];
        for (action, content, want) in table {
            assert_eq!(decide(action, content.as_ref()), want, "{content:?}");
        }
        assert!(matches!(
            decide(ElicitationAction::Cancel, None),
            Approval::Deny { message: Some(_) }
        ));
    }
}
