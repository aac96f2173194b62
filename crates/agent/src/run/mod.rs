//! The loop: model request (system prompt, tools, the conversation as the window allows) →
//! streamed text and tool calls → one batch through the runtime → results (and media, laid
//! out per family by `tackle_llm::media::deliver`) → the next request, until the model ends
//! its turn, a bound is reached, the run is cancelled or the provider fails. Every step is
//! recorded before the next begins ([`crate::record`]), so [`Agent::resume`] continues from any
//! point a process was stopped at.

mod compact;
mod ending;
mod overflow;

use std::sync::Arc;
use std::time::Instant;

use tackle_llm::{ErrorKind, Provider, TurnRequest};
use tackle_protocol::{
    Event, MessageConsumed, ModelTurn, ModelTurnCancelled, RunFinished, RunOutcome, RunStarted,
    ToolBatchFinished, ToolSpec, UserInput,
};
use tackle_runtime::{Descriptions, Runtime, Session};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::batch::Batch;
use crate::bounds::{self, Bounds, Spent};
use crate::checkpoint::Why;
use crate::context::{self, Calibration};
use crate::conversation::{Conversation, add_usage};
use crate::delegate::Tree;
use crate::error::AgentError;
use crate::events::{AgentEvent, Observer};
use crate::model::ModelSetup;
use crate::prompt::{Instructions, SystemPrompt};
use crate::rebuild::rebuild;
use crate::record::{Record, now_ms};
use crate::task_done::TaskBoundaries;
use crate::turn::{self, Streamed};
use crate::watchdog::{Action, Watchdog, WatchdogSettings};
use crate::window::{DescriptionsSetting, Window};

pub use compact::Compacted;
use ending::{Ended, bounded, ended_by};
use overflow::{Fixed, Refused, TooLong};

/// Everything a session's loop runs with.
pub struct AgentSetup {
    pub runtime: Arc<Runtime>,
    pub session: Session,
    pub provider: Arc<dyn Provider>,
    pub model: ModelSetup,
    /// The system prompt in its full and short forms ([`crate::prompt::system_prompts`]).
    pub system: SystemPrompt,
    /// `[tools] descriptions`: the catalog form, or `auto` to choose by the window.
    pub descriptions: DescriptionsSetting,
    pub bounds: Bounds,
    pub observer: Arc<dyn Observer>,
    /// Where mark_task_done (when the catalog offers it) leaves the boundaries the loop
    /// writes between turns.
    pub boundaries: Arc<TaskBoundaries>,
    pub watchdog: WatchdogSettings,
    /// The delegation tree this session belongs to, when the catalog offers delegation: its
    /// children's completion notices join the conversation at safe boundaries, and a run
    /// does not finish while a child of it runs.
    pub delegation: Option<Arc<Tree>>,
}

/// How a run ended, and the model's last words.
#[derive(Clone, Debug, PartialEq)]
pub struct RunEnd {
    pub outcome: RunOutcome,
    pub reason: String,
    pub last_message: Option<String>,
}

/// Sends input to a running loop; it joins the conversation at the next safe boundary (after
/// the running turn's results, before the next request).
#[derive(Clone)]
pub struct Steering(mpsc::UnboundedSender<String>);

impl Steering {
    /// False once the loop is gone.
    pub fn send(&self, text: impl Into<String>) -> bool {
        self.0.send(text.into()).is_ok()
    }
}

/// One session's conversation and the loop that continues it.
pub struct Agent {
    setup: AgentSetup,
    /// The window requests are planned for: the model's, or the smaller one a server named.
    window: Window,
    /// The catalog form sent, chosen for `window`.
    descriptions: Descriptions,
    tools: Vec<ToolSpec>,
    record: Record,
    conversation: Conversation,
    interrupted: Option<ToolBatchFinished>,
    instructions: Instructions,
    calibration: Calibration,
    steer_tx: mpsc::UnboundedSender<String>,
    steer_rx: mpsc::UnboundedReceiver<String>,
    watchdog: Watchdog,
    /// Whether the watchdog cut the run in progress.
    watchdog_cut: bool,
}

impl Agent {
    /// A new conversation in `setup.session` (whose log holds no agent records yet).
    pub fn new(setup: AgentSetup) -> Self {
        Self::with(setup, Conversation::default(), None, None)
    }

    /// The conversation recorded in `setup.session`'s log, continued. A batch the last
    /// process stopped in is answered from the record (interrupted calls are never re-run).
    pub fn resume(setup: AgentSetup) -> Result<Self, AgentError> {
        let rebuilt = rebuild(&setup.session.event_log_path())?;
        if let Some(note) = rebuilt.task_done {
            setup.boundaries.request(setup.session.id(), note);
        }
        Ok(Self::with(
            setup,
            rebuilt.conversation,
            rebuilt.interrupted,
            Some(rebuilt.watchdog),
        ))
    }

    fn with(
        mut setup: AgentSetup,
        conversation: Conversation,
        interrupted: Option<ToolBatchFinished>,
        recorded: Option<Watchdog>,
    ) -> Self {
        let (steer_tx, steer_rx) = mpsc::unbounded_channel();
        let mut watchdog = Watchdog::new(setup.watchdog);
        if let Some(recorded) = &recorded {
            watchdog.resume_from(recorded);
        }
        if let Some(tree) = &setup.delegation
            && setup
                .runtime
                .offered(&setup.session)
                .iter()
                .any(|t| t.name == crate::delegate::tools::DELEGATE)
            && let Some(section) = crate::delegate::prompt::instructions(tree, setup.session.id())
        {
            setup.system.full = format!("{}\n\n{section}", setup.system.full);
            setup.system.short = format!("{}\n\n{section}", setup.system.short);
        }
        let window = Window::of(&setup.model);
        let descriptions = setup.descriptions.form_for(window.context);
        Self {
            watchdog,
            watchdog_cut: false,
            window,
            descriptions,
            tools: offered_specs(&setup.runtime, &setup.session, descriptions),
            record: Record::new(setup.session.clone()),
            instructions: if setup.session.context().posture() == tackle_runtime::Posture::Sealed {
                Instructions::off(&setup.session.root)
            } else {
                Instructions::new(&setup.session.root, conversation.instructions_sent.clone())
            },
            conversation,
            interrupted,
            calibration: Calibration::default(),
            steer_tx,
            steer_rx,
            setup,
        }
    }

    pub fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    pub fn session(&self) -> &Session {
        &self.setup.session
    }

    pub fn steering(&self) -> Steering {
        Steering(self.steer_tx.clone())
    }

    /// Runs until the model ends its turn or the run ends otherwise. `input` is the user's
    /// next message (the task); `None` continues a resumed conversation. Cancelling `cancel`
    /// stops the model stream or the running batch (and every process it started); the record
    /// says which.
    pub async fn run(&mut self, input: Option<&str>, cancel: CancellationToken) -> RunEnd {
        self.watchdog_cut = false;
        // What a skill pre-approved lasts for the run it was loaded in, never into the next.
        self.setup.session.context().end_run();
        let ended = match self.drive(input, &cancel).await {
            Ok(ended) => ended,
            Err(e) => Ended::new(RunOutcome::Error, e.to_string()),
        };
        self.setup.session.context().end_run();
        if !self.watchdog_cut {
            self.watchdog.run_ended_uncut();
        }
        if let Some(tree) = &self.setup.delegation {
            // A run that ends leaves no child of it running (a finished run waited for them),
            // and no subtask of its calls still writing (a cancelled batch's ends at once).
            tree.cancel_children(self.setup.session.id()).await;
            tree.ledger.settled(self.setup.session.id()).await;
            tree.run_ended(self.setup.session.id());
        }
        let mut reason = ended.reason;
        let recorded = self
            .record
            .append(Event::RunFinished(RunFinished {
                outcome: ended.outcome,
                reason: reason.clone(),
                at_ms: now_ms(),
            }))
            .await;
        let outcome = match recorded {
            Ok(_) => ended.outcome,
            Err(e) if ended.outcome == RunOutcome::Error => {
                reason = format!("{reason}; recording the run's end also failed: {e}");
                RunOutcome::Error
            }
            Err(e) => {
                reason = format!("recording the run's end: {e}");
                RunOutcome::Error
            }
        };
        self.setup.observer.on_event(&AgentEvent::RunFinished {
            outcome,
            reason: reason.clone(),
        });
        RunEnd {
            outcome,
            reason,
            last_message: self.conversation.last_assistant_text(),
        }
    }

    async fn drive(
        &mut self,
        input: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Ended, AgentError> {
        let started = Instant::now();
        let deadline = self.setup.bounds.max_duration.map(|d| started + d);
        let run = self
            .append(Event::RunStarted(RunStarted {
                model: self.setup.model.id(),
                at_ms: now_ms(),
            }))
            .await?;
        if let Some(tree) = &self.setup.delegation {
            tree.run_began(self.setup.session.id(), run);
        }
        if let Some(batch) = self.interrupted.take() {
            self.append(Event::ToolBatchFinished(batch.clone())).await?;
            self.conversation.push_results(&batch);
        }
        if let Some(text) = input {
            self.user_input(text).await?;
        }
        if self.conversation.messages.is_empty() {
            return Ok(Ended::new(
                RunOutcome::Error,
                "nothing to do: the session holds no task; give one",
            ));
        }
        if self.watchdog.halted() {
            self.watchdog_cut = true;
            return Ok(Ended::new(
                RunOutcome::BoundHit,
                "the watchdog halted the agent after runs cut in a row; give new input to go on",
            ));
        }
        let mut spent = Spent::default();
        let mut retried_cut = false;
        // Whether the loop compacted since the model last answered: a second compaction
        // without an answer between them would repeat without progress (`overflow.rs`).
        let mut compacted_unanswered = false;
        // The server's refusal of the last request as too long.
        let mut refused: Option<Refused> = None;
        self.announce_window();
        // A run's start takes every message waiting, queued ones too.
        let mut starting = true;
        loop {
            while let Ok(text) = self.steer_rx.try_recv() {
                self.user_input(&text).await?;
            }
            self.child_notices().await?;
            self.messages(starting).await?;
            starting = false;
            if self
                .conversation
                .messages
                .last()
                .is_some_and(|m| m.role == tackle_protocol::Role::Assistant)
            {
                // The model ended its turn: queued messages are its next input.
                if self.messages(true).await? {
                    continue;
                }
                if self.children_running() {
                    // The model ended its turn with children still at work: their ends are
                    // its next input, so wait for one instead of finishing.
                    let tree = self.setup.delegation.clone();
                    if let Some(tree) = tree
                        && !tree.wait_for_change(self.setup.session.id(), cancel).await
                    {
                        return Ok(Ended::new(
                            RunOutcome::Cancelled,
                            "cancelled while waiting for subagents",
                        ));
                    }
                    continue;
                }
                return Ok(Ended::new(
                    RunOutcome::Finished,
                    "the model had ended its turn; give a new task to go on",
                ));
            }
            spent.elapsed = started.elapsed();
            if let Some(reason) = self.setup.bounds.exceeded(&spent) {
                return Ok(Ended::new(RunOutcome::BoundHit, reason));
            }
            let turn_no = self.conversation.turns + 1;
            // Between turns: a task the model marked done gets its completion record.
            if let Some(note) = self.setup.boundaries.take(self.setup.session.id())
                && let Some(ended) = self
                    .write_checkpoint(Why::TaskDone(note), turn_no, cancel, &mut spent, deadline)
                    .await?
            {
                return Ok(ended);
            }
            let system = self.setup.system.form(self.descriptions).to_owned();
            let fixed = context::estimate_fixed(&system, &self.tools);
            let window = self.window.prompt();
            if let Some(too_long) = self.irreducible(&system) {
                return Ok(self.too_long(&too_long));
            }
            let mut view = context::view(&self.conversation, fixed, window, self.calibration);
            if !view.fits || refused.is_some() {
                if compacted_unanswered {
                    let too_long = match refused.take() {
                        Some(r) => TooLong::RefusedAgain(r),
                        None => TooLong::AfterCompaction {
                            estimate: view.tokens,
                        },
                    };
                    return Ok(self.too_long(&too_long));
                }
                compacted_unanswered = true;
                refused = None;
                if let Some(ended) = self
                    .write_checkpoint(Why::WindowFull, turn_no, cancel, &mut spent, deadline)
                    .await?
                {
                    return Ok(ended);
                }
                view = context::view(&self.conversation, fixed, window, self.calibration);
                if !view.fits {
                    view = context::view_eliding_newest(
                        &self.conversation,
                        fixed,
                        window,
                        self.calibration,
                    );
                }
                if !view.fits {
                    let too_long = TooLong::AfterCompaction {
                        estimate: view.tokens,
                    };
                    return Ok(self.too_long(&too_long));
                }
            }
            if view.elided > 0 {
                self.setup.observer.on_event(&AgentEvent::ContextElided {
                    turn: turn_no,
                    results: view.elided,
                });
            }
            let store = self.setup.session.store.clone();
            let read = move |uri: &str| {
                let id = tackle_store::ArtifactId::from_internal_uri(uri)
                    .ok_or_else(|| format!("`{uri}` is not an artifact reference"))?;
                store.read(id).map_err(|e| e.to_string())
            };
            let delivered = tackle_llm::media::deliver(
                &view.messages,
                &self.setup.model.entry,
                self.setup.model.family,
                &read,
            );
            let request = self.request(system, delivered.messages);
            let estimated = fixed
                + request
                    .messages
                    .iter()
                    .map(context::estimate_message)
                    .sum::<u64>();
            self.setup
                .observer
                .on_event(&AgentEvent::TurnStarted { turn: turn_no });
            let turn_cancel = cancel.child_token();
            let (streamed, late) = bounded(
                turn::stream(
                    self.setup.provider.as_ref(),
                    &request,
                    &turn_cancel,
                    self.setup.observer.as_ref(),
                    Some(turn_no),
                ),
                deadline,
                &turn_cancel,
            )
            .await;
            let answered = match streamed {
                Streamed::Complete(t) => t,
                Streamed::Cancelled { partial_text } => {
                    self.append(Event::ModelTurnCancelled(ModelTurnCancelled {
                        turn: turn_no,
                        partial_text,
                        at_ms: now_ms(),
                    }))
                    .await?;
                    self.conversation.turns = turn_no;
                    return Ok(self.stopped(late, "the model's turn"));
                }
                Streamed::Failed(e) if e.kind == ErrorKind::StreamCut && !retried_cut => {
                    retried_cut = true;
                    continue;
                }
                Streamed::Failed(e) if e.kind == ErrorKind::ContextTooLong => {
                    // The estimate was short, or the window smaller than the catalog says:
                    // learn what the answer names, then compact once (at the loop's top).
                    let answer = Refused::of(&e);
                    if let Some(prompt) = answer.sizes.prompt {
                        self.calibration = Calibration::learn(estimated, prompt);
                    }
                    if self.window.learn(answer.sizes, self.setup.model.max_tokens) {
                        self.refit();
                    }
                    refused = Some(answer);
                    continue;
                }
                Streamed::Failed(e) => {
                    return Ok(Ended::new(RunOutcome::ProviderFailed, e.to_string()));
                }
            };
            retried_cut = false;
            compacted_unanswered = false;
            self.calibration = Calibration::learn(estimated, answered.usage.prompt_tokens());
            // A call the model wrote as text is made as the call it meant (`text_calls.rs`).
            let (message, stop_reason) =
                match crate::text_calls::recover(&answered.message, &self.tools, turn_no) {
                    Some(calls) => (calls, crate::text_calls::RECOVERED_STOP),
                    None => (answered.message, answered.stop_reason),
                };
            let model_turn = ModelTurn {
                turn: turn_no,
                message,
                stop_reason,
                usage: answered.usage,
                model: answered.model,
                response_id: answered.response_id,
                at_ms: now_ms(),
            };
            self.append(Event::ModelTurn(model_turn.clone())).await?;
            self.conversation.push_turn(&model_turn);
            spent.turns += 1;
            self.spend(&mut spent, &model_turn.usage, turn_no);
            self.setup.observer.on_event(&AgentEvent::TurnFinished {
                turn: turn_no,
                stop_reason: model_turn.stop_reason.clone(),
            });
            if model_turn.message.tool_calls().next().is_none() {
                match ended_by(&model_turn.stop_reason) {
                    Some(ended)
                        if ended.outcome == RunOutcome::Finished
                            && (self.children_running() || self.messages_waiting()) =>
                    {
                        continue;
                    }
                    Some(ended) => return Ok(ended),
                    None => continue,
                }
            }
            let batch_cancel = cancel.child_token();
            let batch = Batch {
                runtime: &self.setup.runtime,
                session: &self.setup.session,
                record: &self.record,
                model: &self.setup.model,
                instructions: &mut self.instructions,
            };
            let (finished, late) = bounded(
                batch.run(
                    turn_no,
                    &model_turn.message,
                    &model_turn.stop_reason,
                    batch_cancel.clone(),
                ),
                deadline,
                &batch_cancel,
            )
            .await;
            let mut finished = finished?;
            // What the batch's agentic subtasks spent is the run's, cancelled batch or not.
            if let Some(tree) = &self.setup.delegation {
                crate::agentic::ledger::settle(
                    &tree.ledger,
                    self.setup.session.id(),
                    &mut spent,
                    turn_no,
                    self.setup.observer.as_ref(),
                );
            }
            let trips = self.watchdog.observe(&model_turn.message, &mut finished);
            self.append(Event::ToolBatchFinished(finished.clone()))
                .await?;
            self.setup.observer.on_event(&AgentEvent::ToolResults {
                turn: turn_no,
                results: finished
                    .results
                    .iter()
                    .map(|r| crate::ToolResultView {
                        call_id: r.result.call_id.clone(),
                        tool: r.tool.clone(),
                        is_error: r.result.is_error,
                        content: r.result.content.clone(),
                    })
                    .collect(),
            });
            self.conversation.push_results(&finished);
            if finished.cancelled {
                // A boundary marked in a batch the user stopped is not written.
                self.setup.boundaries.take(self.setup.session.id());
                return Ok(self.stopped(late, "the running tool calls"));
            }
            if let Some(ended) = self.watch(&trips, turn_no) {
                return Ok(ended);
            }
        }
    }

    /// Whether a child of this session is running, or ended with its notice not yet shown.
    fn children_running(&self) -> bool {
        self.setup
            .delegation
            .as_ref()
            .is_some_and(|t| t.awaits(self.setup.session.id()))
    }

    /// The completion notices of this session's children, as input at this boundary.
    ///
    /// A notice carries a child's words, not the user's: it is recorded as a message the
    /// session read (`message_consumed`, under a `notice_` id), never as `user_input`, and it
    /// is not operator input to the watchdog.
    async fn child_notices(&mut self) -> Result<(), AgentError> {
        let Some(tree) = self.setup.delegation.clone() else {
            return Ok(());
        };
        for notice in tree.take_notices(self.setup.session.id()) {
            self.append(Event::MessageConsumed(MessageConsumed {
                message_id: crate::delegate::notice::new_id(),
                text: notice.clone(),
                at_ms: now_ms(),
            }))
            .await?;
            self.conversation.push_user(&notice);
        }
        Ok(())
    }

    /// Whether a message waits for this session.
    fn messages_waiting(&self) -> bool {
        self.setup
            .delegation
            .as_ref()
            .is_some_and(|t| t.has_messages(self.setup.session.id(), true))
    }

    /// The messages other sessions of the tree sent this one, as input at this boundary: its
    /// steer ones, and its queued ones too when `with_queued`. Each is recorded as consumed
    /// with the text the model reads, so a rebuild neither loses nor repeats it. True when
    /// any was delivered.
    async fn messages(&mut self, with_queued: bool) -> Result<bool, AgentError> {
        let Some(tree) = self.setup.delegation.clone() else {
            return Ok(false);
        };
        let id = self.setup.session.id().clone();
        let taken = tree.take_messages(&id, with_queued);
        let delivered = !taken.is_empty();
        for message in taken {
            let text = crate::messaging::envelope::delivered(&message);
            self.append(Event::MessageConsumed(MessageConsumed {
                message_id: message.id.clone(),
                text: text.clone(),
                at_ms: now_ms(),
            }))
            .await?;
            self.conversation.push_user(&text);
            tree.handling(&id, message.hop);
        }
        Ok(delivered)
    }

    fn request(&self, system: String, messages: Vec<tackle_protocol::Message>) -> TurnRequest {
        let mut request =
            TurnRequest::new(self.setup.model.model.clone(), messages, self.window.output);
        request.system = Some(system);
        request.tools = self.tools.clone();
        request
    }

    /// Tells the front end the window and the catalog form sent with it.
    fn announce_window(&self) {
        self.setup.observer.on_event(&AgentEvent::Window {
            context: self.window.context,
            output: self.window.output,
            source: self.window.source.as_str().to_owned(),
            descriptions: self.descriptions.as_str().to_owned(),
        });
    }

    /// After the window shrank: the catalog form it calls for, and the front end told.
    fn refit(&mut self) {
        let descriptions = self.setup.descriptions.form_for(self.window.context);
        if descriptions != self.descriptions {
            self.descriptions = descriptions;
            self.tools = offered_specs(&self.setup.runtime, &self.setup.session, descriptions);
        }
        self.announce_window();
    }

    /// Why no compaction can make the next request fit, if none can: the system prompt, the
    /// catalog and the last message alone are larger than the prompt's share of the window.
    fn irreducible(&self, system: &str) -> Option<TooLong> {
        let fixed = Fixed::of(system, &self.tools, self.conversation.messages.last());
        let scale = self.calibration.0;
        let total = ((fixed.system + fixed.tools + fixed.last) as f64 * scale).ceil() as u64;
        (total > self.window.prompt()).then_some(TooLong::Irreducible { fixed, scale })
    }

    fn too_long(&self, why: &TooLong) -> Ended {
        why.ended(&self.window, self.descriptions.as_str())
    }

    fn spend(&self, spent: &mut Spent, usage: &tackle_protocol::Usage, turn: u32) {
        add_usage(&mut spent.usage, usage);
        spent.cost_usd = self
            .setup
            .model
            .entry
            .prices
            .map(|p| bounds::cost(&spent.usage, &p));
        self.setup.observer.on_event(&AgentEvent::Usage {
            turn,
            usage: *usage,
            total: spent.total_usage(),
            cost_usd: spent.total_cost(),
            subtask: None,
        });
    }

    /// Acts on what the watchdog saw in a batch; `Some` when it cuts the run.
    fn watch(&mut self, trips: &crate::watchdog::Trips, turn: u32) -> Option<Ended> {
        let (message, cut) = match self.watchdog.act(trips) {
            Action::Nothing => return None,
            Action::Warn(message) => (message, false),
            Action::Cut { reason, .. } => (reason, true),
        };
        self.setup.observer.on_event(&AgentEvent::Watchdog {
            turn,
            message: message.clone(),
            cut,
        });
        self.watchdog_cut = cut;
        cut.then(|| Ended::new(RunOutcome::BoundHit, message))
    }

    async fn user_input(&mut self, text: &str) -> Result<(), AgentError> {
        self.watchdog.operator_input();
        self.append(Event::UserInput(UserInput {
            text: text.to_owned(),
            at_ms: now_ms(),
        }))
        .await?;
        self.conversation.push_user(text);
        Ok(())
    }

    async fn append(&self, event: Event) -> Result<u64, AgentError> {
        self.record.append(event).await
    }
}

/// The catalog in `descriptions`' form, as far as `session` is offered it (a subagent sees
/// only its type's tools).
fn offered_specs(
    runtime: &Runtime,
    session: &Session,
    descriptions: Descriptions,
) -> Vec<ToolSpec> {
    let context = session.context();
    runtime
        .catalog()
        .specs_in(descriptions)
        .into_iter()
        .filter(|spec| context.offers(&spec.name))
        .collect()
}
