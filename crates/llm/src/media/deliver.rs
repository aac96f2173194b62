//! The request-time step: attachments become bytes where the matrix puts them, or notes.

use std::collections::HashMap;

use base64::Engine as _;
use tackle_protocol::{ContentBlock, MediaPart, Message, Part, Role};

use super::{DeliveryFamily, MediaKind, Placement, admit};
use crate::catalog::ModelEntry;

/// Reads a retained attachment's bytes (the caller's store; this crate never opens files).
pub trait AttachmentBytes {
    fn read(&self, artifact: &str) -> Result<Vec<u8>, String>;
}

impl<F: Fn(&str) -> Result<Vec<u8>, String>> AttachmentBytes for F {
    fn read(&self, artifact: &str) -> Result<Vec<u8>, String> {
        self(artifact)
    }
}

/// A conversation ready for an adapter, and what happened to its attachments.
#[derive(Clone, Debug, PartialEq)]
pub struct Delivered {
    pub messages: Vec<Message>,
    /// Attachments that travel as bytes.
    pub delivered: usize,
    /// Attachments that became notes.
    pub degraded: usize,
}

enum Decision {
    Deliver {
        part: MediaPart,
        placement: Placement,
    },
    Note(String),
}

/// Where one attachment block is: message, part, block.
type Position = (usize, usize, usize);

/// Lays `messages` out for `model` on `family`. The newest results are served first, so when
/// counts or the budget run out it is the oldest attachments that become notes (the model can
/// re-read those files); within one result, earlier attachments come first.
pub fn deliver(
    messages: &[Message],
    model: &ModelEntry,
    family: DeliveryFamily,
    bytes: &dyn AttachmentBytes,
) -> Delivered {
    let mut decisions: HashMap<Position, Decision> = HashMap::new();
    let mut counts: HashMap<MediaKind, u32> = HashMap::new();
    let mut spent = 0u64;
    let budget = family.request_budget();
    for (mi, message) in messages.iter().enumerate().rev() {
        for (pi, part) in message.content.iter().enumerate() {
            let Part::ToolResult(result) = part else {
                continue;
            };
            for (bi, block) in result.content.iter().enumerate() {
                let ContentBlock::Attachment {
                    mime_type,
                    bytes: size,
                    artifact,
                } = block
                else {
                    continue;
                };
                let decision = decide(
                    model,
                    family,
                    (mime_type, *size, artifact),
                    (&mut counts, &mut spent, budget),
                    bytes,
                );
                decisions.insert((mi, pi, bi), decision);
            }
        }
    }
    lay_out(messages, decisions)
}

fn decide(
    model: &ModelEntry,
    family: DeliveryFamily,
    (mime_type, size, artifact): (&str, u64, &str),
    (counts, spent, budget): (&mut HashMap<MediaKind, u32>, &mut u64, u64),
    bytes: &dyn AttachmentBytes,
) -> Decision {
    let kind = match admit(model, family, mime_type) {
        Ok(kind) => kind,
        Err(refusal) => return Decision::Note(refusal.to_string()),
    };
    if !family.written(kind) {
        return Decision::Note(format!(
            "{family} endpoints take {kind} in a user turn, but this build does not know their \
             inline shape for it; inspect the file with other tools"
        ));
    }
    let Some(placement) = family.placement(kind) else {
        return Decision::Note(super::Refusal::Family { family, kind }.to_string());
    };
    // admit checked the modality, which a consistent entry gives a limit.
    let model_limit = model.media_limit(kind.modality());
    let limit = model_limit
        .map_or(0, |l| l.max_bytes)
        .min(family.inline_limit(kind));
    let max_count = model_limit.map_or(0, |l| l.max_count);
    // Judged on the recorded size before the bytes are read (a file too large is never
    // loaded), then on the bytes the store really holds.
    let unfit = |n: u64| {
        if n > limit {
            Some(Decision::Note(format!(
                "it is {}, larger than the {} one {kind} item may be for {} through {family}; \
                 read a smaller version (a downscaled copy, some pages) or inspect it with other tools",
                size_text(n),
                size_text(limit),
                model.id
            )))
        } else if counts.get(&kind).copied().unwrap_or(0) >= max_count {
            Some(Decision::Note(format!(
                "this request already carries the {max_count} {kind} items {} takes; \
                 re-read the file when it is needed again",
                model.id
            )))
        } else if *spent + n > budget {
            Some(Decision::Note(format!(
                "the request's media budget for {family} ({}) is spent by newer attachments; \
                 re-read the file when it is needed again",
                size_text(budget)
            )))
        } else {
            None
        }
    };
    if let Some(note) = unfit(size) {
        return note;
    }
    let data = match bytes.read(artifact) {
        Ok(data) => data,
        Err(e) => return Decision::Note(format!("it could not be read back from the store: {e}")),
    };
    let actual = data.len() as u64;
    if let Some(note) = unfit(actual) {
        return note;
    }
    *counts.entry(kind).or_insert(0) += 1;
    *spent += actual;
    Decision::Deliver {
        part: MediaPart {
            mime_type: mime_type.to_owned(),
            data_base64: base64::engine::general_purpose::STANDARD.encode(&data),
            artifact: artifact.to_owned(),
        },
        placement,
    }
}

fn lay_out(messages: &[Message], mut decisions: HashMap<Position, Decision>) -> Delivered {
    let mut out = Vec::with_capacity(messages.len());
    let (mut delivered, mut degraded) = (0, 0);
    for (mi, message) in messages.iter().enumerate() {
        let mut following: Vec<Part> = Vec::new();
        let mut content = Vec::with_capacity(message.content.len());
        for (pi, part) in message.content.iter().enumerate() {
            let Part::ToolResult(result) = part else {
                content.push(part.clone());
                continue;
            };
            let mut result = result.clone();
            let mut ordinal = 0;
            for (bi, block) in result.content.iter_mut().enumerate() {
                let ContentBlock::Attachment {
                    mime_type,
                    bytes,
                    artifact,
                } = block
                else {
                    continue;
                };
                let Some(decision) = decisions.remove(&(mi, pi, bi)) else {
                    continue;
                };
                ordinal += 1;
                let what = format!(
                    "attachment {ordinal}: {mime_type}, {}, kept as {artifact}",
                    size_text(*bytes)
                );
                let note = match decision {
                    Decision::Deliver {
                        part,
                        placement: Placement::ToolResult,
                    } => {
                        delivered += 1;
                        result.media.push(part);
                        format!("[{what}; attached to this result]")
                    }
                    Decision::Deliver {
                        part,
                        placement: Placement::UserTurn,
                    } => {
                        delivered += 1;
                        let label = format!("[attachment {ordinal} of call {}]", result.call_id.0);
                        let note =
                            format!("[{what}; it follows in the next user message as {label}]");
                        following.push(Part::Text { text: label });
                        following.push(Part::Media(part));
                        note
                    }
                    Decision::Note(reason) => {
                        degraded += 1;
                        format!("[{what}; not delivered: {reason}]")
                    }
                };
                *block = ContentBlock::Text { text: note };
            }
            content.push(Part::ToolResult(result));
        }
        out.push(Message {
            role: message.role,
            content,
        });
        if !following.is_empty() {
            out.push(Message {
                role: Role::User,
                content: following,
            });
        }
    }
    Delivered {
        messages: out,
        delivered,
        degraded,
    }
}

/// `7.5 MiB`, `3.75 MiB`, `512 KiB`, `300 bytes`.
pub(super) fn size_text(n: u64) -> String {
    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;
    if n >= MIB {
        let hundredths = (n * 100 + MIB / 2) / MIB;
        let text = format!("{}.{:02}", hundredths / 100, hundredths % 100);
        format!("{} MiB", text.trim_end_matches('0').trim_end_matches('.'))
    } else if n >= KIB {
        format!("{} KiB", (n + KIB / 2) / KIB)
    } else {
        format!("{n} bytes")
    }
}
