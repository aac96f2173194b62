//! The two admission checks, made when a tool result with attachments arrives.

use std::fmt;

use tackle_protocol::{ContentBlock, ToolResultPart};

use super::{DeliveryFamily, MediaKind};
use crate::catalog::ModelEntry;

/// Why an attachment may not reach this model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not a kind of media any model takes.
    NotMedia { mime_type: String },
    /// The model's catalog entry does not declare the modality.
    Capability {
        model: String,
        kind: MediaKind,
        declared: Vec<String>,
    },
    /// The family's wire API takes this kind neither in a tool result nor in a user turn.
    Family {
        family: DeliveryFamily,
        kind: MediaKind,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotMedia { mime_type } => write!(
                f,
                "the attachment is {mime_type}, which no model takes as input; read it as text or inspect it with other tools"
            ),
            Self::Capability {
                model,
                kind,
                declared,
            } => write!(
                f,
                "model {model} does not take {kind} input (its catalog entry declares: {}); \
                 inspect the file with other tools, or ask the user to switch to a model that \
                 takes {kind} (tackle models lists them)",
                declared.join(", ")
            ),
            Self::Family { family, kind } => write!(
                f,
                "the {family} API cannot take {kind} from a tool (neither in a tool result nor \
                 in a user turn); inspect the file with other tools, or ask the user for a \
                 model of another family"
            ),
        }
    }
}

/// Checks one attachment's MIME type: the model's capability first, then the family.
pub fn admit(
    model: &ModelEntry,
    family: DeliveryFamily,
    mime_type: &str,
) -> Result<MediaKind, Refusal> {
    let kind = MediaKind::of_mime(mime_type).ok_or_else(|| Refusal::NotMedia {
        mime_type: mime_type.to_owned(),
    })?;
    if !model.accepts(kind.modality()) {
        return Err(Refusal::Capability {
            model: model.id.to_string(),
            kind,
            declared: model.input.iter().map(|m| m.as_str().to_owned()).collect(),
        });
    }
    if family.placement(kind).is_none() {
        return Err(Refusal::Family { family, kind });
    }
    Ok(kind)
}

/// Makes a result whose attachment fails admission the tool error seed 000 asks for: the
/// whole result becomes the refusal's message. Returns the refusal, `None` when every
/// attachment (or none) was admitted and the result is unchanged.
pub fn refuse_undeliverable(
    result: &mut ToolResultPart,
    model: &ModelEntry,
    family: DeliveryFamily,
) -> Option<Refusal> {
    let refusal = result.content.iter().find_map(|block| match block {
        ContentBlock::Attachment { mime_type, .. } => admit(model, family, mime_type).err(),
        ContentBlock::Text { .. } => None,
    })?;
    result.is_error = true;
    result.content = vec![ContentBlock::Text {
        text: refusal.to_string(),
    }];
    result.media.clear();
    Some(refusal)
}
