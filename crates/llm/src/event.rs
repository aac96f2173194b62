//! The neutral stream a provider produces for one turn.
//!
//! Adapters lift each vendor's events into these; the [`crate::TurnAssembler`] folds them into
//! an [`tackle_protocol::AssistantTurn`]. Tool calls are keyed by `index` (the order the model
//! opened them), never by id: OpenAI sends the id only in a call's first delta.

use tackle_protocol::{CallId, ReasoningPart, StopReason, Usage};

/// One event of a turn's stream, in the neutral form every provider lifts its own into.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
    /// The response began; the model name and id as the provider reported them.
    Started {
        model: String,
        response_id: Option<String>,
    },
    TextDelta {
        text: String,
    },
    ThinkingDelta {
        text: String,
    },
    /// The signature of the thinking part in progress (Anthropic `signature_delta`).
    ThinkingSignature {
        signature: String,
    },
    /// A whole encrypted reasoning block.
    RedactedThinking {
        data: String,
    },
    /// A whole reasoning item (OpenAI Responses `output_item.done`), kept for replay.
    Reasoning(ReasoningPart),
    /// The signature of the part just before (Gemini `thoughtSignature`), kept for replay.
    PartSignature {
        signature: String,
    },
    ToolCallStart {
        index: usize,
        id: CallId,
        /// The catalog name, already mapped back from the wire name.
        name: String,
    },
    ToolCallArgumentsDelta {
        index: usize,
        fragment: String,
    },
    ToolCallEnd {
        index: usize,
    },
    /// Usage so far; later values replace earlier ones (Anthropic's are cumulative).
    Usage(Usage),
    /// The terminal event: the turn is complete.
    Stop(StopReason),
}
