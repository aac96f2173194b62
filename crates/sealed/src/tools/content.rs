//! The bytes a reference stands for, read by the policy layer for a tool that passes them on
//! (write_file's contents_ref, run's stdin, spawn_processor's reads): never for the planner.

use tackle_protocol::{Label, Quarantined};
use tackle_tool::ToolError;

use crate::errors;
use crate::reference::RefId;
use crate::tools::{FILE_CAP, Shared};

/// What a reference's content is, and where a processor's answer may go.
pub struct Content {
    pub text: String,
    pub label: Label,
    /// The file a processor answer is about; `None` for other kinds.
    pub answer_about: Option<Option<String>>,
}

/// The content behind `id` as text.
pub fn of(shared: &Shared, field: &str, text: &str) -> Result<(RefId, Content), ToolError> {
    let id = RefId::parse_arg(field, text).map_err(errors::invalid)?;
    let held = shared
        .state
        .get(id)
        .ok_or_else(|| errors::unknown_reference(text))?;
    let content = match held.held {
        Quarantined::File { path } => {
            let shown = id.to_string();
            let rel = shared
                .root
                .resolve(&path)
                .map_err(|e| errors::fs(&e, &shown))?;
            let real = shared
                .root
                .real_path(&rel)
                .map_err(|e| errors::fs(&e, &shown))?;
            let bytes = shared
                .root
                .read_capped(&rel, FILE_CAP)
                .map_err(|e| errors::fs(&e, &shown))?;
            let text = String::from_utf8(bytes).map_err(|_| {
                ToolError::new(
                    errors::BINARY,
                    format!("the file behind {shown} is not UTF-8 text"),
                )
            })?;
            Content {
                text,
                // The label of the file as it is now: a vouch since the reference was made counts.
                label: shared.trust.file_label(real.as_str()),
                answer_about: None,
            }
        }
        Quarantined::Output { text, .. } => Content {
            text,
            label: held.label,
            answer_about: None,
        },
        Quarantined::Answer { about, document } => {
            let Some(document) = document else {
                return Err(ToolError::new(
                    errors::NOT_A_DESTINATION,
                    format!(
                        "{id} holds no document: the processor's reply had no document marker, so it can be used nowhere"
                    ),
                ));
            };
            Content {
                text: document,
                label: held.label,
                answer_about: Some(about),
            }
        }
    };
    Ok((id, content))
}
