//! The [`Provider`] trait, and [`complete`]: one turn streamed and assembled.

use futures::StreamExt;
use tackle_protocol::AssistantTurn;
use tokio_util::sync::CancellationToken;

use crate::assemble::{AssembleError, TurnAssembler};
use crate::error::{ErrorContext, ErrorKind, LlmError};
use crate::request::TurnRequest;
use crate::transport::TurnStream;

/// A model provider: one family's wire format at one endpoint with one credential.
#[async_trait::async_trait]
pub trait Provider: Send + Sync {
    /// The configured name (`anthropic`, `openai`, `local`), used in errors.
    fn name(&self) -> &str;

    /// Sends the turn and returns its events once the response has begun streaming (failed
    /// attempts before that are retried as the transport's policy says).
    async fn stream(&self, request: &TurnRequest) -> Result<TurnStream, LlmError>;
}

/// Streams one turn and assembles it. Cancelling the token, like dropping the future, drops
/// the connection at once.
pub async fn complete(
    provider: &dyn Provider,
    request: &TurnRequest,
    cancel: &CancellationToken,
) -> Result<AssistantTurn, LlmError> {
    let ctx = ErrorContext {
        provider: provider.name().to_owned(),
        model: request.model.clone(),
    };
    let turn = async {
        let mut stream = provider.stream(request).await?;
        let mut assembler = TurnAssembler::new();
        while let Some(event) = stream.next().await {
            let complete = assembler
                .push(event?)
                .map_err(|e| assemble_error(&ctx, e))?;
            if complete {
                break;
            }
        }
        assembler.finish().map_err(|e| assemble_error(&ctx, e))
    };
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(ctx.error(ErrorKind::Cancelled, "the turn was cancelled")),
        result = turn => result,
    }
}

fn assemble_error(ctx: &ErrorContext, error: AssembleError) -> LlmError {
    match error {
        AssembleError::NoStop => ctx.error(
            ErrorKind::StreamCut,
            "the stream ended before its terminal event; try again",
        ),
        AssembleError::UnknownCallIndex { index } => ctx.error(
            ErrorKind::InvalidResponse,
            format!("the stream continued tool call {index}, which it never started"),
        ),
    }
}
