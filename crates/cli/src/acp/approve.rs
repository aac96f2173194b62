//! Every ask of the gate goes to the editor as a permission request: allow once, allow for
//! the session (only where the gate would remember it), or reject. A reject reaches the model
//! as a refusal; a request the editor cannot answer (the prompt was cancelled, the connection
//! is gone) refuses the call.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tackle_runtime::{Approval, ApprovalFuture, ApprovalRequest, Approver, CancellationToken};

/// What the editor is asked.
#[derive(Clone, Debug)]
pub struct Ask {
    pub session: String,
    pub call_id: String,
    pub tool: String,
    pub arguments: serde_json::Value,
    /// The permission keys that need the answer (`tool.bash.cmd:rm -rf build`, `write:a.rs`).
    pub keys: Vec<String>,
    /// The gate's explanation, naming the rule or default that asks.
    pub message: String,
    /// What the call will do, when the arguments do not say it.
    pub effect: Option<String>,
    /// Whether "allow for the session" may be offered.
    pub session_grant: bool,
}

/// The editor's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Once,
    Session,
    /// Rejected, with the person's words for the model when they gave any.
    Reject(Option<String>),
    /// The request was cancelled or could not be delivered: `why`.
    Unanswered(String),
}

pub type AnswerFuture = Pin<Box<dyn Future<Output = Answer> + Send>>;

/// Sends an [`Ask`] to the editor and waits for its answer.
pub trait Asker: Send + Sync {
    fn ask(&self, ask: Ask) -> AnswerFuture;
}

/// The running prompt's cancel, shared with the session: a question still open when the
/// prompt is cancelled is answered "no" at once, whether or not the editor ever answers it.
pub type Running = Arc<std::sync::Mutex<Option<CancellationToken>>>;

/// The approver of one editor session's runtime.
pub struct EditorApprover {
    pub session: String,
    pub asker: Arc<dyn Asker>,
    pub running: Running,
}

impl Approver for EditorApprover {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        let ask = Ask {
            session: self.session.clone(),
            call_id: request.call_id.0.clone(),
            tool: request.tool.to_owned(),
            arguments: request.arguments.clone(),
            keys: request.keys.to_vec(),
            message: match request.handle {
                Some(handle) => format!("{handle}: {}", request.message),
                None => request.message.to_owned(),
            },
            effect: request.effect.map(str::to_owned),
            session_grant: request.session_grant,
        };
        let answer = self.asker.ask(ask);
        let grantable = request.session_grant;
        let cancel = self
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_default();
        Box::pin(async move {
            let answer = tokio::select! {
                answer = answer => answer,
                () = cancel.cancelled() => {
                    Answer::Unanswered("the prompt was cancelled while the editor was asked".to_owned())
                }
            };
            match answer {
                Answer::Once => Approval::Once,
                // Offered only when grantable; a client that answers it anyway gets once.
                Answer::Session if grantable => Approval::Session,
                Answer::Session => Approval::Once,
                Answer::Reject(None) => Approval::Deny {
                    message: Some("the user rejected this call in the editor".to_owned()),
                },
                Answer::Reject(Some(words)) => Approval::Deny {
                    message: Some(format!("the user rejected this call: {words}")),
                },
                Answer::Unanswered(why) => Approval::Unavailable { reason: why },
            }
        })
    }
}
