//! The prompts a server offers (`prompts/list`, `prompts/get`): `tackle serve` offers the
//! project's and the user's skills, so the user of any MCP client can pull a skill into their
//! agent's conversation. Each is a name, a description and the text of one user message; the
//! server neither knows nor cares that they are skills.

use rmcp::ErrorData as McpError;
use rmcp::model::{GetPromptResult, ListPromptsResult, Prompt, PromptMessage, Role};

/// One prompt: what `prompts/list` shows and `prompts/get` returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServedPrompt {
    pub name: String,
    pub description: String,
    /// The user message `prompts/get` returns.
    pub text: String,
}

/// Every prompt, on one page.
pub(super) fn list(
    prompts: &[ServedPrompt],
    cursor: Option<String>,
) -> Result<ListPromptsResult, McpError> {
    if let Some(cursor) = cursor {
        return Err(McpError::invalid_params(
            format!(
                "invalid cursor `{cursor}`: tackle lists every prompt on one page; call prompts/list without a cursor"
            ),
            None,
        ));
    }
    Ok(ListPromptsResult::with_all_items(
        prompts
            .iter()
            .map(|p| Prompt::new(p.name.clone(), Some(p.description.clone()), None))
            .collect(),
    ))
}

/// The prompt `name`, or an error naming the nearest.
pub(super) fn get(prompts: &[ServedPrompt], name: &str) -> Result<GetPromptResult, McpError> {
    match prompts.iter().find(|p| p.name == name) {
        Some(p) => Ok(GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            p.text.clone(),
        )])
        .with_description(p.description.clone())),
        None => {
            let near =
                tackle_tools::nearest::nearest_names(name, prompts.iter().map(|p| p.name.as_str()));
            let hint = if near.is_empty() {
                "call prompts/list for the prompts".to_owned()
            } else {
                format!("did you mean {}?", near.join(", "))
            };
            Err(McpError::invalid_params(
                format!("unknown prompt `{name}`; {hint}"),
                Some(serde_json::json!({ "closest": near })),
            ))
        }
    }
}
