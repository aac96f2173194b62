//! A wrapper's subtask from start to end: the child session opened under the caller's, the
//! work (a digest of the underlying call's output, or the research loop), what its calls read
//! taken from its log, and its spend owed to the caller's run.
//!
//! The subtask's session is opened as a subagent's is (`Session::open_subagent`): the
//! caller's policy with nothing added, its catalog narrowed to the underlying tool (or the
//! read-only tools), its own log naming the caller as parent and the wrapper as its agent, no
//! handle (it is no subagent the model can address, and a resumed tree does not list it). Its
//! calls therefore meet the caller's rules and the caller's approver, and are recorded as the
//! caller's would be; its asks are asked again rather than answered by the caller's session
//! grants, as a subagent's are.

use std::sync::Arc;

use tackle_protocol::{CallId, SessionId, Usage};
use tackle_runtime::{ChildOptions, Session, ToolFilter};
use tackle_tool::ToolError;
use tokio_util::sync::CancellationToken;

use crate::agentic::args::UnderlyingCall;
use crate::agentic::digest::{self, MAX_PARTS, Reader};
use crate::agentic::exchange::SmallModel;
use crate::agentic::gather::{Bulk, gather};
use crate::agentic::ledger::SubtaskSpend;
use crate::agentic::reads::{self, ChildReads};
use crate::agentic::research;
use crate::delegate::Tree;

/// The most output a digest gathers, whatever the small model's window: past it the answer
/// says what was not read.
pub const MAX_BULK_BYTES: usize = 8 * 1024 * 1024;

/// What the four wrappers share: the tree whose sessions call them (for the caller's session,
/// the front end's [`crate::delegate::Spawn`] and the spend ledger) and the small model.
pub struct Subtasks {
    tree: Arc<Tree>,
    small: SmallModel,
}

/// What a wrapper asks of its subtask.
pub struct Request {
    pub wrapper: &'static str,
    pub question: String,
    pub work: Work,
    /// The wrapper's call id, which its subtask's calls are named after.
    pub caller: CallId,
}

/// The subtask's work.
pub enum Work {
    /// Answer from the output of one call (read_file pages on when `paging`).
    Digest { call: UnderlyingCall, paging: bool },
    /// Research the question with the read-only tools, from `path` when given.
    Research { path: Option<String> },
}

/// How a subtask ended.
pub struct Outcome {
    /// Whatever it read, answer or not.
    pub reads: ChildReads,
    pub result: Result<Answered, Failure>,
}

/// The small model's answer and where it came from.
pub struct Answered {
    pub answer: String,
    pub session: SessionId,
    pub model: String,
    /// The raw output's references (digests; research lists its calls instead).
    pub sources: Vec<String>,
    /// What of the output was not read, and how to read it.
    pub unread: Option<String>,
    /// Parts the output was read in (0 for research).
    pub parts: usize,
    pub bulk_bytes: usize,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
}

/// Why a subtask gave no answer.
pub enum Failure {
    /// The underlying call failed (refused by the gate, not found, bad arguments): its error.
    Call(ToolError),
    /// The subtask could not be started here.
    Unavailable(String),
    /// The small model gave no answer (a provider error, a bound, a cancellation).
    Model {
        why: String,
        cancelled: bool,
        session: SessionId,
        sources: Vec<String>,
    },
}

impl Subtasks {
    pub fn new(tree: Arc<Tree>, small: SmallModel) -> Arc<Self> {
        Arc::new(Self { tree, small })
    }

    pub fn small(&self) -> &SmallModel {
        &self.small
    }

    /// Runs `request` for the session `caller`. Runs to its end once started (the wrapper
    /// spawns it, so a wrapper dropped on its timeout cannot cut a record in two); `cancel`
    /// ends it.
    pub async fn run(
        &self,
        caller: &SessionId,
        request: Request,
        cancel: &CancellationToken,
    ) -> Outcome {
        let _running = self.tree.ledger.start(caller);
        let unavailable = |why: String| Outcome {
            reads: ChildReads::default(),
            result: Err(Failure::Unavailable(why)),
        };
        let Some(parent) = self.tree.session(caller) else {
            return unavailable(format!(
                "session {} is not one this process runs; agentic tools work in tackle run and \
                 tackle chat",
                caller.0
            ));
        };
        let Some(spawn) = self.tree.spawner() else {
            return unavailable("subtasks are not set up in this front end".to_owned());
        };
        let tools: Vec<String> = match &request.work {
            Work::Digest { call, .. } => vec![call.tool.to_owned()],
            Work::Research { .. } => research::TOOLS.iter().map(|t| (*t).to_owned()).collect(),
        };
        let opened = parent.open_subagent(ChildOptions {
            agent: Some(request.wrapper.to_owned()),
            tools: ToolFilter::only(tools),
            handle: None,
            narrowing: Vec::new(),
        });
        let session = match opened {
            Ok(s) => s,
            Err(e) => return unavailable(format!("opening the subtask's session: {e}")),
        };
        let ty = research::agent_type(request.wrapper);
        let (result, usage) = match request.work {
            Work::Digest { call, paging } => {
                // The front end's builder of child loops is where the runtime comes from; of
                // the loop it builds, a digest needs only that.
                let runtime = match spawn.setup(session.clone(), &ty) {
                    Ok(setup) => setup.runtime,
                    Err(e) => return unavailable(format!("setting up the subtask: {e}")),
                };
                let described = call.describe();
                let budget = (digest::part_budget(&self.small, &request.question, &described)
                    * MAX_PARTS)
                    .min(MAX_BULK_BYTES);
                let gathered = gather(
                    &runtime,
                    &session,
                    &request.caller,
                    &call,
                    paging,
                    budget,
                    cancel,
                )
                .await;
                match gathered {
                    Err(e) => (Err(Failure::Call(e)), Usage::default()),
                    Ok(bulk) => {
                        let reader = Reader {
                            subtask: &session,
                            small: &self.small,
                            wrapper: request.wrapper,
                            question: &request.question,
                            call: &described,
                            cancel,
                        };
                        self.digest(&reader, &session, bulk).await
                    }
                }
            }
            Work::Research { path } => {
                let task = crate::agentic::prompt::research(&request.question, path.as_deref());
                let done = research::research(
                    spawn.as_ref(),
                    session.clone(),
                    &self.small,
                    &ty,
                    task,
                    cancel.clone(),
                )
                .await;
                match done {
                    Ok((answer, usage)) => (Ok(self.answered(&session, answer, usage)), usage),
                    Err(e) => (
                        Err(Failure::Model {
                            why: e.why,
                            cancelled: e.cancelled,
                            session: session.id().clone(),
                            sources: Vec::new(),
                        }),
                        e.usage,
                    ),
                }
            }
        };
        let reads = reads::of(&session);
        if usage != Usage::default() {
            self.tree.ledger.record(
                caller,
                SubtaskSpend {
                    tool: request.wrapper.to_owned(),
                    session: session.id().clone(),
                    model: self.small.id(),
                    usage,
                    cost_usd: self.small.cost(&usage),
                },
            );
        }
        Outcome { reads, result }
    }

    async fn digest(
        &self,
        reader: &Reader<'_>,
        session: &Session,
        bulk: Bulk,
    ) -> (Result<Answered, Failure>, Usage) {
        if bulk.text.trim().is_empty() {
            // Nothing to read: no model is asked to describe nothing.
            let answered = Answered {
                answer: "The output is empty.".to_owned(),
                sources: bulk.sources,
                unread: bulk.unread,
                ..self.answered(session, String::new(), Usage::default())
            };
            return (Ok(answered), Usage::default());
        }
        match reader.digest(&bulk.text).await {
            Ok(d) => {
                let short = (d.covered_bytes < bulk.text.len()).then(|| {
                    format!(
                        "the small model read the first {} lines ({} of {} bytes) of what was \
                         gathered; the rest is in the raw output",
                        d.covered_lines,
                        d.covered_bytes,
                        bulk.text.len()
                    )
                });
                let unread = match (short, bulk.unread) {
                    (Some(a), Some(b)) => Some(format!("{a}; {b}")),
                    (a, b) => a.or(b),
                };
                let answered = Answered {
                    sources: bulk.sources,
                    unread,
                    parts: d.parts,
                    bulk_bytes: bulk.text.len(),
                    ..self.answered(session, d.answer, d.usage)
                };
                (Ok(answered), d.usage)
            }
            Err(e) => (
                Err(Failure::Model {
                    why: e.why,
                    cancelled: e.cancelled,
                    session: session.id().clone(),
                    sources: bulk.sources,
                }),
                e.usage,
            ),
        }
    }

    fn answered(&self, session: &Session, answer: String, usage: Usage) -> Answered {
        Answered {
            answer,
            session: session.id().clone(),
            model: self.small.id(),
            sources: Vec::new(),
            unread: None,
            parts: 0,
            bulk_bytes: 0,
            usage,
            cost_usd: self.small.cost(&usage),
        }
    }
}
