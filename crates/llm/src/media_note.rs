//! What a model is told about an attachment this slice does not deliver.
//!
//! Media delivery (placement per family and kind, size clamping, count limits) is not built
//! yet, so an attachment in a tool result travels as a note naming what it is and where it is
//! kept: the model learns it exists and can page or describe it through tools, and no bytes are
//! sent that a family could reject.

use tackle_protocol::ContentBlock;

/// The note that stands in for an attachment.
pub(crate) fn attachment_note(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Attachment {
            mime_type,
            bytes,
            artifact,
        } => format!(
            "[attachment {mime_type}, {bytes} bytes, kept as {artifact}; not delivered to this model]"
        ),
        ContentBlock::Text { text } => text.clone(),
    }
}
