//! Approvals through MCP elicitation: an `ask` from the gate becomes a form (once / session /
//! deny, with an optional message for the model) sent to the client that made the call.
//!
//! The runtime holds one approver for every call, but a question must go to the client that
//! asked; how to reach it travels in a task-local set around the batch ([`with_caller`]):
//!
//! - a client that `initialize`d and declared elicitation is sent an `elicitation/create`
//!   request while the call waits;
//! - a 2026-07-28 client forbids server-to-client requests, so the question is kept
//!   ([`Asking::Defer`]), the call is answered with an `InputRequiredResult` carrying the form,
//!   and the client's retry brings the answer back ([`Asking::Answered`]);
//! - a client that declared no elicitation gets the headless refusal, `approval_unavailable`.

use std::future::Future;
use std::sync::{Arc, Mutex};
use tackle_runtime::visible::{visible, visible_json};

use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::service::{ElicitationMode, Peer};
use tackle_runtime::{Approval, ApprovalFuture, ApprovalRequest, Approver};

/// How the call in scope may ask its client.
#[derive(Clone)]
pub(crate) enum Asking {
    /// Send an elicitation request and wait for the answer.
    Elicit(Peer<RoleServer>),
    /// Keep the question: the server answers the call with `InputRequiredResult`.
    Defer(Arc<Mutex<Option<Deferred>>>),
    /// A retry that carries the answer to the question asked before; used once.
    Answered(Arc<Mutex<Option<Approval>>>),
    /// Nobody can be asked, for this reason.
    Unavailable(&'static str),
}

/// A question kept for an `InputRequiredResult`.
#[derive(Clone, Debug)]
pub(crate) struct Deferred {
    pub(crate) message: String,
    /// Whether the form offers "session" ([`ApprovalRequest::session_grant`]).
    pub(crate) session_grant: bool,
}

tokio::task_local! {
    static CALLER: Asking;
}

/// Run `fut` with `asking` as the way any approval question reaches the client.
pub(crate) fn with_caller<F: Future>(asking: Asking, fut: F) -> impl Future<Output = F::Output> {
    CALLER.scope(asking, fut)
}

/// The approval form as an elicitation request (for `InputRequiredResult`).
pub(crate) fn form_request(
    message: String,
    session_grant: bool,
) -> Result<ElicitRequestParams, String> {
    let schema = serde_json::from_value(form_schema(session_grant))
        .map_err(|e| format!("the approval form could not be built: {e}"))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema,
    })
}

/// The form's text. A client shows it to a person, so what the model chose is shown through
/// [`visible`] (no escape sequences or bidirectional overrides reach them raw).
fn question(request: &ApprovalRequest<'_>) -> String {
    let arguments = visible_json(request.arguments);
    let keys: Vec<_> = request.keys.iter().map(|k| visible(k)).collect();
    format!(
        "tackle: {} needs approval for {}.\n{}\narguments: {arguments}",
        visible(request.tool),
        keys.join(", "),
        visible(request.message)
    )
}

/// Asks the calling MCP client through a form elicitation.
pub struct ElicitationApprover;

fn unavailable(reason: &str) -> Approval {
    Approval::Unavailable {
        reason: reason.to_owned(),
    }
}

/// The form: a required decision and an optional message for the model. "session" is
/// offered only where a session grant would be remembered.
fn form_schema(session_grant: bool) -> serde_json::Value {
    let (description, choices) = if session_grant {
        (
            "once: run this call; session: run it and allow these keys for the rest of this client's session; deny: refuse it",
            serde_json::json!(["once", "session", "deny"]),
        )
    } else {
        (
            "once: run this call (these keys ask every time); deny: refuse it",
            serde_json::json!(["once", "deny"]),
        )
    };
    serde_json::json!({
        "type": "object",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Decision",
                "description": description,
                "enum": choices
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
            let Ok(asking) = CALLER.try_with(Asking::clone) else {
                return unavailable("the call did not come from an MCP client");
            };
            let peer = match asking {
                Asking::Elicit(peer) => peer,
                Asking::Defer(slot) => {
                    *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(Deferred {
                        message: question(&request),
                        session_grant: request.session_grant,
                    });
                    return unavailable(
                        "the client is asked through an input-required result and retries the call",
                    );
                }
                Asking::Answered(slot) => {
                    return slot
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .take()
                        .unwrap_or_else(|| unavailable("the client's answer was already used"));
                }
                Asking::Unavailable(reason) => return unavailable(reason),
            };
            if !peer
                .supported_elicitation_modes()
                .contains(&ElicitationMode::Form)
            {
                return unavailable(
                    "the MCP client did not declare the elicitation capability, so nobody can be asked",
                );
            }
            let params = match form_request(question(&request), request.session_grant) {
                Ok(p) => p,
                Err(e) => return unavailable(&e),
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
        for session_grant in [true, false] {
            let parsed: Result<rmcp::model::ElicitationSchema, _> =
                serde_json::from_value(form_schema(session_grant));
            assert!(parsed.is_ok(), "{parsed:?}");
        }
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
