//! One model request: streamed, each text delta shown as it comes, assembled into a turn.
//! Cancelling stops the stream at once (the connection is dropped with it).

use futures::StreamExt;
use tackle_llm::{ErrorKind, LlmError, Provider, StreamEvent, TurnAssembler, TurnRequest};
use tackle_protocol::AssistantTurn;
use tokio_util::sync::CancellationToken;

use crate::events::{AgentEvent, Observer};

/// How a request ended.
#[derive(Debug)]
pub enum Streamed {
    Complete(AssistantTurn),
    /// Cancelled; the text streamed before that.
    Cancelled {
        partial_text: String,
    },
    Failed(LlmError),
}

/// Streams `request`, telling `observer` each text delta as turn `turn` (none when `turn` is
/// `None`: a summary request).
pub async fn stream(
    provider: &dyn Provider,
    request: &TurnRequest,
    cancel: &CancellationToken,
    observer: &dyn Observer,
    turn: Option<u32>,
) -> Streamed {
    let mut partial = String::new();
    let work = async {
        let mut events = provider.stream(request).await?;
        let mut assembler = TurnAssembler::new();
        while let Some(event) = events.next().await {
            let event = event?;
            if let (StreamEvent::TextDelta { text }, Some(turn)) = (&event, turn) {
                partial.push_str(text);
                observer.on_event(&AgentEvent::TextDelta {
                    turn,
                    text: text.clone(),
                });
            }
            if let (StreamEvent::ThinkingDelta { text }, Some(turn)) = (&event, turn) {
                observer.on_event(&AgentEvent::ThinkingDelta {
                    turn,
                    text: text.clone(),
                });
            }
            match assembler.push(event) {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => return Err(assembly(provider, request, e)),
            }
        }
        assembler
            .finish()
            .map_err(|e| assembly(provider, request, e))
    };
    let outcome = tokio::select! {
        biased;
        () = cancel.cancelled() => None,
        result = work => Some(result),
    };
    match outcome {
        None => Streamed::Cancelled {
            partial_text: partial,
        },
        Some(Ok(turn)) => Streamed::Complete(turn),
        Some(Err(e)) if e.kind == ErrorKind::Cancelled => Streamed::Cancelled {
            partial_text: partial,
        },
        Some(Err(e)) => Streamed::Failed(e),
    }
}

fn assembly(
    provider: &dyn Provider,
    request: &TurnRequest,
    error: tackle_llm::AssembleError,
) -> LlmError {
    let ctx = tackle_llm::ErrorContext {
        provider: provider.name().to_owned(),
        model: request.model.clone(),
    };
    match error {
        tackle_llm::AssembleError::NoStop => ctx.error(
            ErrorKind::StreamCut,
            "the stream ended before its terminal event; try again",
        ),
        tackle_llm::AssembleError::UnknownCallIndex { index } => ctx.error(
            ErrorKind::InvalidResponse,
            format!("the stream continued tool call {index}, which it never started"),
        ),
    }
}
