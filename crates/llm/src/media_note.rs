//! What a model is told about an attachment that reaches an adapter without having passed
//! through [`crate::media::deliver`]: a note naming what it is and where it is kept, so the
//! model learns it exists and can inspect it through tools, and no bytes are sent that the
//! family could reject.

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
