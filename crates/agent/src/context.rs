//! What of the conversation a request can carry. Tokens are the provider's own count of the
//! last request, carried to the next one by an estimate (4 bytes a token, media by
//! `tackle_llm::media::context_tokens`) scaled by how far the estimate missed last time
//! ([`Calibration`]).
//!
//! When a request would not fit the window, the oldest tool results are elided as whole units
//! (the result with its attachments, so no media message outlives the result it came with),
//! each leaving a marker naming the retained artifact to re-read. The newest results are not
//! elided: when even that does not fit, [`View::fits`] is false and the loop writes a
//! compaction checkpoint ([`crate::checkpoint`]); only when the view after it still does not fit
//! are the newest elided too ([`view_eliding_newest`]), since a result larger than a small
//! window would otherwise end the run.

use tackle_protocol::{ContentBlock, Message, Part, Role, ToolSpec};

use crate::conversation::Conversation;

/// The most provider tokens one estimated token (4 bytes) is taken to be: a token covers at
/// least one byte, so a larger count (a tiny request under a large chat template, or a server
/// naming a size that is not this request's) says nothing about the next request.
pub const MAX_SCALE: f64 = 4.0;

/// Provider tokens per estimated token, learned from each turn's usage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration(pub f64);

impl Default for Calibration {
    fn default() -> Self {
        Self(1.0)
    }
}

impl Calibration {
    /// From a request's estimate and the prompt tokens the provider counted for it; never below
    /// 1 (an estimate may be generous, never trusted to be so) nor above [`MAX_SCALE`].
    pub fn learn(estimated: u64, counted: u64) -> Self {
        if estimated == 0 || counted == 0 {
            return Self::default();
        }
        Self((counted as f64 / estimated as f64).clamp(1.0, MAX_SCALE))
    }

    fn scale(self, estimate: u64) -> u64 {
        (estimate as f64 * self.0).ceil() as u64
    }
}

/// The estimate of one message.
pub fn estimate_message(message: &Message) -> u64 {
    message
        .content
        .iter()
        .map(|part| {
            4 + match part {
                Part::Text { text } | Part::Thinking { text, .. } => bytes(text.len()),
                Part::ToolCall(call) => {
                    bytes(call.name.len() + call.arguments.to_wire_string().len())
                }
                Part::ToolResult(result) => {
                    result
                        .content
                        .iter()
                        .map(|b| match b {
                            ContentBlock::Text { text } => bytes(text.len()),
                            ContentBlock::Attachment { .. } => 0,
                        })
                        .sum::<u64>()
                        + result
                            .media
                            .iter()
                            .map(tackle_llm::media::context_tokens)
                            .sum::<u64>()
                }
                Part::Media(media) => tackle_llm::media::context_tokens(media),
                Part::RedactedThinking { data } => bytes(data.len()),
                Part::Reasoning(r) => bytes(
                    r.summary.iter().map(String::len).sum::<usize>()
                        + r.encrypted_content.as_ref().map_or(0, String::len),
                ),
                Part::ThoughtSignature { signature } => bytes(signature.len()),
            }
        })
        .sum()
}

/// The estimate of a message with every tool result as an elision marker: what of it no
/// elision removes.
pub fn estimate_unelidable(message: &Message) -> u64 {
    let mut kept = message.clone();
    for part in &mut kept.content {
        if let Part::ToolResult(result) = part {
            result.content = vec![ContentBlock::Text {
                text: marker(result, &[]),
            }];
            result.media.clear();
        }
    }
    estimate_message(&kept)
}

/// The estimate of what every request carries besides its messages.
pub fn estimate_fixed(system: &str, tools: &[ToolSpec]) -> u64 {
    bytes(system.len())
        + tools
            .iter()
            .map(|t| bytes(t.name.len() + t.description.len() + t.input_schema.to_string().len()))
            .sum::<u64>()
}

fn bytes(n: usize) -> u64 {
    (n as u64).div_ceil(4)
}

/// The messages of one request.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    pub messages: Vec<Message>,
    /// Tool results elided from this request.
    pub elided: usize,
    /// The estimate (calibrated) of the request, fixed part included.
    pub tokens: u64,
    pub fits: bool,
}

/// The request view of `conversation` within `window` tokens for the prompt.
pub fn view(
    conversation: &Conversation,
    fixed: u64,
    window: u64,
    calibration: Calibration,
) -> View {
    elided_view(conversation, fixed, window, calibration, false)
}

/// [`view`] as a last resort, after a compaction that was not enough: the newest results are
/// elided too (oldest first), each marker naming the artifact to read in smaller pieces, so a
/// result larger than a small window does not end the run.
pub fn view_eliding_newest(
    conversation: &Conversation,
    fixed: u64,
    window: u64,
    calibration: Calibration,
) -> View {
    elided_view(conversation, fixed, window, calibration, true)
}

fn elided_view(
    conversation: &Conversation,
    fixed: u64,
    window: u64,
    calibration: Calibration,
    newest: bool,
) -> View {
    let (mut messages, offset) = sliced(conversation);
    let total = |messages: &[Message]| {
        calibration.scale(fixed + messages.iter().map(estimate_message).sum::<u64>())
    };
    let mut tokens = total(&messages);
    let mut elided = 0;
    if tokens > window {
        let last = if newest {
            messages.len()
        } else {
            messages.len().saturating_sub(1)
        };
        'outer: for (mi, message) in messages.iter_mut().enumerate().take(last) {
            for pi in 0..message.content.len() {
                let before = estimate_message(message);
                let Part::ToolResult(result) = &mut message.content[pi] else {
                    continue;
                };
                if is_elided(result) {
                    continue;
                }
                let artifacts = match mi.checked_sub(offset.skipped) {
                    Some(_) => conversation.artifacts_of(mi + offset.base - offset.skipped, pi),
                    None => &[],
                };
                result.content = vec![ContentBlock::Text {
                    text: marker(result, artifacts),
                }];
                result.media.clear();
                elided += 1;
                let after = estimate_message(message);
                tokens = tokens.saturating_sub(calibration.scale(before.saturating_sub(after)));
                if tokens <= window {
                    break 'outer;
                }
            }
        }
        tokens = total(&messages);
    }
    View {
        messages,
        elided,
        fits: tokens <= window,
        tokens,
    }
}

/// Where the view's messages come from: `skipped` leading messages of the view (the summary)
/// stand for nothing in the conversation; the rest start at conversation index `base`.
struct Offset {
    skipped: usize,
    base: usize,
}

/// The messages after the latest checkpoint, led by its summary.
fn sliced(conversation: &Conversation) -> (Vec<Message>, Offset) {
    match &conversation.checkpoint {
        None => (
            conversation.messages.clone(),
            Offset {
                skipped: 0,
                base: 0,
            },
        ),
        Some(mark) => {
            let mut messages = vec![Message::user_text(crate::checkpoint::summary_message(
                &mark.summary,
            ))];
            let rest = &conversation.messages[mark.through..];
            // The summary is the user's; a kept user message joins it so roles alternate.
            let mut rest = rest.iter().cloned();
            if let Some(first) = conversation.messages.get(mark.through)
                && first.role == Role::User
            {
                rest.next();
                messages[0].content.extend(first.content.iter().cloned());
                return (
                    messages.into_iter().chain(rest).collect(),
                    Offset {
                        skipped: 0,
                        base: mark.through,
                    },
                );
            }
            (
                messages.into_iter().chain(rest).collect(),
                Offset {
                    skipped: 1,
                    base: mark.through,
                },
            )
        }
    }
}

const ELIDED: &str = "[elided to fit the context window:";

fn is_elided(result: &tackle_protocol::ToolResultPart) -> bool {
    matches!(result.content.as_slice(), [ContentBlock::Text { text }] if text.starts_with(ELIDED))
}

fn marker(result: &tackle_protocol::ToolResultPart, artifacts: &[String]) -> String {
    let size: usize = result
        .content
        .iter()
        .map(|b| match b {
            ContentBlock::Text { text } => text.len(),
            ContentBlock::Attachment { .. } => 0,
        })
        .sum();
    let attachments: Vec<&str> = result
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Attachment { artifact, .. } => Some(artifact.as_str()),
            ContentBlock::Text { .. } => None,
        })
        .collect();
    let mut uris: Vec<&str> = artifacts.iter().map(String::as_str).collect();
    uris.extend(attachments);
    let again = if uris.is_empty() {
        "no output was retained; run the call again if you need it".to_owned()
    } else {
        format!(
            "re-read it with read_file on {} if you need it (offset and limit read it a page at a time)",
            uris.join(", ")
        )
    };
    format!(
        "{ELIDED} the result of call {} ({size} bytes); {again}]",
        result.call_id
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_protocol::{
        BatchResult, CallId, CallStatus, ModelTurn, StopReason, ToolArguments, ToolBatchFinished,
        ToolCallPart, ToolResultPart, Usage,
    };

    fn conversation(results: usize, size: usize) -> Conversation {
        let mut c = Conversation::default();
        c.push_user("task");
        for i in 0..results {
            let id = CallId(format!("c{i}"));
            c.push_turn(&ModelTurn {
                turn: i as u32 + 1,
                message: Message {
                    role: Role::Assistant,
                    content: vec![Part::ToolCall(ToolCallPart {
                        id: id.clone(),
                        name: "read_file".into(),
                        arguments: ToolArguments::parse("{}"),
                    })],
                },
                stop_reason: StopReason::ToolUse,
                usage: Usage::default(),
                model: "m".into(),
                response_id: None,
                at_ms: 0,
            });
            c.push_results(&ToolBatchFinished {
                turn: i as u32 + 1,
                results: vec![BatchResult {
                    tool: "read_file".into(),
                    status: CallStatus::Ok,
                    code: None,
                    result: ToolResultPart {
                        call_id: id,
                        content: vec![ContentBlock::Text {
                            text: "x".repeat(size),
                        }],
                        is_error: false,
                        media: Vec::new(),
                    },
                    artifacts: vec![format!("artifact://sha256/{i:064}")],
                    no_op: false,
                }],
                notes: Vec::new(),
                cancelled: false,
                interrupted: false,
                at_ms: 0,
            });
        }
        c
    }

    #[test]
    fn a_conversation_that_fits_is_sent_whole() {
        let c = conversation(3, 400);
        let v = view(&c, 10, 10_000, Calibration::default());
        assert!(v.fits);
        assert_eq!(v.elided, 0);
        assert_eq!(v.messages, c.messages);
    }

    #[test]
    fn the_oldest_results_are_elided_first_with_a_marker_naming_their_artifact() {
        let c = conversation(3, 4000);
        // Each result is ~1000 tokens: two fit, three do not.
        let v = view(&c, 10, 2200, Calibration::default());
        assert!(v.fits, "{}", v.tokens);
        assert_eq!(v.elided, 1);
        let Part::ToolResult(first) = &v.messages[2].content[0] else {
            panic!("{:?}", v.messages[2]);
        };
        let text = crate::conversation::result_text(&first.content);
        assert!(text.starts_with(ELIDED), "{text}");
        assert!(
            text.contains(&format!("artifact://sha256/{:064}", 0)),
            "{text}"
        );
        assert_eq!(v.messages[4], c.messages[4], "newer results stay");
    }

    #[test]
    fn when_even_the_newest_results_do_not_fit_the_view_says_so() {
        let c = conversation(2, 40_000);
        let v = view(&c, 10, 5000, Calibration::default());
        assert!(!v.fits);
        assert_eq!(v.elided, 1, "every result but the newest is elided first");
    }

    #[test]
    fn calibration_scales_the_estimate_and_never_shrinks_it() {
        assert_eq!(Calibration::learn(100, 150), Calibration(1.5));
        assert_eq!(Calibration::learn(100, 50), Calibration(1.0));
        assert_eq!(Calibration::learn(0, 50), Calibration(1.0));
    }
}
