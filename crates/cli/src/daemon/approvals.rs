//! The gate's asks in a daemon: each becomes a `session/request_permission` request in the
//! session's journal, so every attached client sees it, and whichever client answers first
//! (a JSON-RPC response to the request's id, or `_tackle/approval/answer`) decides it. A client
//! that attaches while a request is open is sent it again. When it is decided, or the prompt
//! that asked is cancelled, the journal says so (`_tackle/approval_resolved`), so the other
//! clients can take the question down.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::journal::Journals;
use crate::acp::approve::{Answer, AnswerFuture, Ask, Asker};
use crate::acp::rpc::RpcError;

struct Open {
    session: String,
    /// The request as sent, to send again to a client that attaches.
    message: String,
    answer: oneshot::Sender<Answer>,
}

/// The open permission requests of every hosted session.
pub struct Approvals {
    journals: Arc<Journals>,
    next: AtomicU64,
    open: Mutex<HashMap<String, Open>>,
}

/// Why an answer was not taken.
#[derive(Debug, PartialEq, Eq)]
pub enum NotTaken {
    /// No open request has that id (never asked, already answered, or its prompt ended).
    Unknown,
    /// The request belongs to another session than the one named.
    OtherSession,
}

impl Approvals {
    pub fn new(journals: Arc<Journals>) -> Approvals {
        Approvals {
            journals,
            next: AtomicU64::new(1),
            open: Mutex::new(HashMap::new()),
        }
    }

    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<String, Open>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Decides the request `id` with a client's JSON-RPC answer; `session`, when given, must be
    /// the request's.
    pub fn answer(
        &self,
        id: &str,
        session: Option<&str>,
        answer: Result<Value, RpcError>,
    ) -> Result<(), NotTaken> {
        let open = {
            let mut open = self.open();
            match open.get(id) {
                None => return Err(NotTaken::Unknown),
                Some(o) if session.is_some_and(|s| s != o.session) => {
                    return Err(NotTaken::OtherSession);
                }
                Some(_) => {}
            }
            open.remove(id).ok_or(NotTaken::Unknown)?
        };
        let answer = crate::acp::wire::permission_answer(answer);
        self.resolved(&open.session, id, &answer);
        let _ = open.answer.send(answer);
        Ok(())
    }

    /// The open requests of `session`, as sent.
    pub fn pending(&self, session: &str) -> Vec<String> {
        self.open()
            .values()
            .filter(|o| o.session == session)
            .map(|o| o.message.clone())
            .collect()
    }

    /// How many requests of `session` wait for an answer.
    pub fn waiting(&self, session: &str) -> usize {
        self.open()
            .values()
            .filter(|o| o.session == session)
            .count()
    }

    fn resolved(&self, session: &str, id: &str, answer: &Answer) {
        let outcome = match answer {
            Answer::Once => "allow_once",
            Answer::Session => "allow_session",
            Answer::Reject(_) => "reject",
            Answer::Unanswered(_) => "withdrawn",
        };
        let note = json!({
            "jsonrpc": "2.0",
            "method": "_tackle/approval_resolved",
            "params": {"sessionId": session, "requestId": id, "outcome": outcome},
        });
        self.journals.of(session).append(note.to_string());
    }
}

/// Takes an open request back when the ask that made it is dropped unanswered (its prompt was
/// cancelled).
struct Withdraw {
    approvals: Arc<Approvals>,
    id: String,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        let removed = self.approvals.open().remove(&self.id);
        if let Some(open) = removed {
            let why = Answer::Unanswered("the prompt ended before an answer".to_owned());
            self.approvals.resolved(&open.session, &self.id, &why);
        }
    }
}

/// The daemon's [`Asker`].
pub struct Asking(pub Arc<Approvals>);

impl Asker for Asking {
    fn ask(&self, ask: Ask) -> AnswerFuture {
        let approvals = self.0.clone();
        let id = format!("perm-{}", approvals.next.fetch_add(1, Ordering::Relaxed));
        let message = crate::acp::wire::permission_request(json!(id), &ask).to_string();
        let (tx, rx) = oneshot::channel();
        approvals.open().insert(
            id.clone(),
            Open {
                session: ask.session.clone(),
                message: message.clone(),
                answer: tx,
            },
        );
        approvals.journals.of(&ask.session).append(message);
        let withdraw = Withdraw { approvals, id };
        Box::pin(async move {
            let answer = rx.await.unwrap_or_else(|_| {
                Answer::Unanswered("the daemon stopped before an answer".to_owned())
            });
            drop(withdraw);
            answer
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(session: &str) -> Ask {
        Ask {
            session: session.to_owned(),
            call_id: "c1".to_owned(),
            tool: "bash".to_owned(),
            arguments: json!({"command": "touch x"}),
            keys: vec!["tool.bash.cmd:touch x".to_owned()],
            message: "bash asks".to_owned(),
            effect: None,
            session_grant: true,
        }
    }

    #[tokio::test]
    async fn the_first_answer_decides_and_every_client_is_told() {
        let journals = Arc::new(Journals::default());
        let approvals = Arc::new(Approvals::new(journals.clone()));
        let asking = Asking(approvals.clone());
        let answered = asking.ask(ask("s1"));
        assert_eq!(approvals.waiting("s1"), 1);
        assert_eq!(approvals.pending("s1").len(), 1);
        let sent: Value = serde_json::from_str(&approvals.pending("s1")[0]).unwrap();
        let id = sent["id"].as_str().unwrap().to_owned();
        assert_eq!(sent["method"], "session/request_permission");
        assert_eq!(
            approvals.answer(&id, Some("s2"), Ok(Value::Null)),
            Err(NotTaken::OtherSession)
        );
        let allow = json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}});
        approvals
            .answer(&id, Some("s1"), Ok(allow.clone()))
            .unwrap();
        assert_eq!(answered.await, Answer::Once);
        assert_eq!(
            approvals.answer(&id, None, Ok(allow)),
            Err(NotTaken::Unknown)
        );
        let journal = journals.of("s1");
        let told = journal.attach(super::super::journal::From::After(0));
        let last: Value = serde_json::from_str(&told.entries.last().unwrap().message).unwrap();
        assert_eq!(last["method"], "_tackle/approval_resolved");
        assert_eq!(last["params"]["outcome"], "allow_once");
    }

    #[tokio::test]
    async fn an_ask_dropped_unanswered_is_withdrawn() {
        let journals = Arc::new(Journals::default());
        let approvals = Arc::new(Approvals::new(journals.clone()));
        drop(Asking(approvals.clone()).ask(ask("s1")));
        assert_eq!(approvals.waiting("s1"), 0);
        let told = journals
            .of("s1")
            .attach(super::super::journal::From::After(0));
        let last: Value = serde_json::from_str(&told.entries.last().unwrap().message).unwrap();
        assert_eq!(last["params"]["outcome"], "withdrawn");
    }
}
