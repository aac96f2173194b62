//! `tackle serve --approvals client`: the client's own confirmation stands for tackle's ask.
//!
//! Gemini CLI and opencode declare no elicitation, so tackle cannot put a question to their
//! user; they confirm tool calls themselves before sending them (Gemini CLI for a server
//! without `trust`, opencode under a `permission` rule of `ask`, Codex under its approval
//! modes). With this mode the user says "my client asks me before it calls": a call the gate
//! would ask about runs as approved once, on the strength of that confirmation.
//!
//! What it never covers, so the client's generic "allow tool X?" is never taken for more
//! than it showed:
//! - a deny: the gate refuses before any approver is consulted;
//! - a key the gate asks about every time (a protected path: no session grant), whose
//!   question names the danger that a client's prompt does not;
//! - a read-only tool (published as `readOnlyHint`), which clients commonly run unasked.
//!
//! Those go to the approver the server would use otherwise (elicitation when the client
//! declared it, else `approval_unavailable`).

use std::sync::Arc;

use tackle_runtime::{Approval, ApprovalFuture, ApprovalRequest, Approver};

/// Approves what the calling client has confirmed; hands everything else to `fallback`.
pub struct ClientConfirmsApprover {
    fallback: Arc<dyn Approver>,
}

impl ClientConfirmsApprover {
    pub fn new(fallback: Arc<dyn Approver>) -> Self {
        Self { fallback }
    }
}

/// Whether the client's confirmation of this call stands for tackle's question.
fn client_confirmation_covers(request: &ApprovalRequest<'_>) -> bool {
    !request.read_only && request.session_grant
}

impl Approver for ClientConfirmsApprover {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        if client_confirmation_covers(&request) {
            Box::pin(std::future::ready(Approval::Once))
        } else {
            self.fallback.approve(request)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_protocol::{CallId, SessionId};
    use tackle_runtime::HeadlessApprover;

    fn decide(read_only: bool, session_grant: bool) -> Approval {
        let session = SessionId("s".into());
        let call = CallId("c".into());
        let arguments = serde_json::json!({"path": "notes.txt"});
        let keys = vec!["write:notes.txt".to_owned()];
        let request = ApprovalRequest {
            session: &session,
            handle: None,
            call_id: &call,
            tool: "edit_file",
            read_only,
            arguments: &arguments,
            keys: &keys,
            message: "write:notes.txt needs approval (default for writes)",
            session_grant,
            effect: None,
        };
        let approver = ClientConfirmsApprover::new(Arc::new(HeadlessApprover));
        block_on(approver.approve(request))
    }

    fn block_on(f: ApprovalFuture<'_>) -> Approval {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a current-thread runtime")
            .block_on(f)
    }

    #[test]
    fn only_a_grantable_ask_on_a_mutating_tool_is_taken_as_confirmed() {
        // (read_only, session_grant) → approved by the client's confirmation?
        let table = [
            (false, true, true),
            (false, false, false), // a protected path: tackle's own question
            (true, true, false),   // clients run read-only tools unasked
            (true, false, false),
        ];
        for (read_only, session_grant, confirmed) in table {
            let got = decide(read_only, session_grant);
            if confirmed {
                assert_eq!(
                    got,
                    Approval::Once,
                    "read_only={read_only} grant={session_grant}"
                );
            } else {
                assert!(
                    matches!(got, Approval::Unavailable { .. }),
                    "read_only={read_only} grant={session_grant}: {got:?}"
                );
            }
        }
    }
}
