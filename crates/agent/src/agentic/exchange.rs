//! One request to the small model and its answer, recorded in a session's log as a run of
//! its own: `run_started`, the request as `user_input`, the answer as `model_turn` (with its
//! usage), `run_finished`. No tools are offered: a digest's model reads and answers.
//!
//! Key decision: a digest's exchanges do not go through [`crate::Agent`]. The loop would offer
//! the subtask session's tools to the model, carry each exchange's conversation into the next,
//! and meet a request too long for the window with a compaction; a digest wants none of that:
//! one request that holds its part of the output, and a refusal as too long handed back so the
//! part can be cut smaller. Every exchange is still recorded, so what went to which provider is
//! on file.

use std::sync::Arc;

use tackle_llm::{ErrorKind, Provider, TurnRequest};
use tackle_protocol::{
    Event, Message, ModelTurn, ModelTurnCancelled, RunFinished, RunOutcome, RunStarted, Usage,
    UserInput,
};
use tackle_runtime::Session;
use tokio_util::sync::CancellationToken;

use crate::events::Unobserved;
use crate::model::ModelSetup;
use crate::record::{Record, now_ms};
use crate::turn::{self, Streamed};

/// The small model: the provider connected once by the front end, and its catalog entry.
#[derive(Clone)]
pub struct SmallModel {
    pub provider: Arc<dyn Provider>,
    pub model: ModelSetup,
    /// How many parts of one output are asked at once: `digest::PARALLEL_PARTS` for a hosted
    /// API, 1 for a server of the user's own (llama.cpp and the like serve a request per
    /// slot on the same cores, so parts asked together only queue, each running into the
    /// transport's deadline while it waits).
    pub parallel: usize,
}

impl SmallModel {
    /// `provider:model`.
    pub fn id(&self) -> String {
        self.model.id()
    }

    /// The cost of `usage` at the model's prices, when it has them.
    pub fn cost(&self, usage: &Usage) -> Option<f64> {
        self.model
            .entry
            .prices
            .map(|p| crate::bounds::cost(usage, &p))
    }
}

/// An answer and what it cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Exchanged {
    pub text: String,
    pub usage: Usage,
}

/// Why an exchange gave no answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ExchangeError {
    /// The request was larger than the model's window (by the estimate, or the server said).
    TooLong,
    Cancelled,
    /// The model answered with no text; its tokens were spent all the same.
    Empty {
        usage: Usage,
    },
    /// The provider failed, or the record could not be written: the reason, to show.
    Failed(String),
}

impl ExchangeError {
    /// The tokens spent on an exchange that gave no answer.
    pub fn usage(&self) -> Usage {
        match self {
            ExchangeError::Empty { usage } => *usage,
            _ => Usage::default(),
        }
    }
}

/// Asks `small` for one answer to `prompt` under `system`, recorded in `session`'s log. A
/// stream cut before its end is asked again once, as the loop does.
pub async fn exchange(
    session: &Session,
    small: &SmallModel,
    system: &str,
    prompt: String,
    max_tokens: u32,
    cancel: &CancellationToken,
) -> Result<Exchanged, ExchangeError> {
    let record = Record::new(session.clone());
    let failed = |e: crate::AgentError| ExchangeError::Failed(format!("recording: {e}"));
    record
        .append(Event::RunStarted(RunStarted {
            model: small.id(),
            at_ms: now_ms(),
        }))
        .await
        .map_err(failed)?;
    record
        .append(Event::UserInput(UserInput {
            text: prompt.clone(),
            at_ms: now_ms(),
        }))
        .await
        .map_err(failed)?;
    let window = small.model.entry.context_window;
    let estimate = (system.len() + prompt.len()).div_ceil(4) as u64;
    let (outcome, reason, answered) = if estimate + u64::from(max_tokens) > window {
        let reason = format!(
            "the request (about {estimate} tokens) and its answer ({max_tokens}) do not fit the \
             {window}-token window"
        );
        (RunOutcome::Error, reason, Err(ExchangeError::TooLong))
    } else {
        let mut request = TurnRequest::new(
            small.model.model.clone(),
            vec![Message::user_text(prompt)],
            max_tokens,
        );
        request.system = Some(system.to_owned());
        ask(&record, small, &request, cancel).await
    };
    record
        .append(Event::RunFinished(RunFinished {
            outcome,
            reason,
            at_ms: now_ms(),
        }))
        .await
        .map_err(failed)?;
    answered
}

type Asked = (RunOutcome, String, Result<Exchanged, ExchangeError>);

async fn ask(
    record: &Record,
    small: &SmallModel,
    request: &TurnRequest,
    cancel: &CancellationToken,
) -> Asked {
    let mut retried = false;
    loop {
        let streamed =
            turn::stream(small.provider.as_ref(), request, cancel, &Unobserved, None).await;
        let answered = match streamed {
            Streamed::Complete(t) => t,
            Streamed::Cancelled { partial_text } => {
                let _ = record
                    .append(Event::ModelTurnCancelled(ModelTurnCancelled {
                        turn: 1,
                        partial_text,
                        at_ms: now_ms(),
                    }))
                    .await;
                let why = "cancelled".to_owned();
                return (RunOutcome::Cancelled, why, Err(ExchangeError::Cancelled));
            }
            Streamed::Failed(e) if e.kind == ErrorKind::StreamCut && !retried => {
                retried = true;
                continue;
            }
            Streamed::Failed(e) if e.kind == ErrorKind::ContextTooLong => {
                return (
                    RunOutcome::ProviderFailed,
                    e.to_string(),
                    Err(ExchangeError::TooLong),
                );
            }
            Streamed::Failed(e) => {
                let why = e.to_string();
                return (
                    RunOutcome::ProviderFailed,
                    why.clone(),
                    Err(ExchangeError::Failed(why)),
                );
            }
        };
        let text = answered.message.text();
        let usage = answered.usage;
        let recorded = record
            .append(Event::ModelTurn(ModelTurn {
                turn: 1,
                message: answered.message,
                stop_reason: answered.stop_reason,
                usage,
                model: answered.model,
                response_id: answered.response_id,
                at_ms: now_ms(),
            }))
            .await;
        if let Err(e) = recorded {
            let why = format!("recording the answer: {e}");
            return (
                RunOutcome::Error,
                why.clone(),
                Err(ExchangeError::Failed(why)),
            );
        }
        if text.trim().is_empty() {
            let why = "the small model answered with no text".to_owned();
            return (RunOutcome::Error, why, Err(ExchangeError::Empty { usage }));
        }
        return (
            RunOutcome::Finished,
            "answered".to_owned(),
            Ok(Exchanged { text, usage }),
        );
    }
}
