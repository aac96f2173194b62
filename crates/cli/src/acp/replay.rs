//! A stored conversation told again as updates, for `session/load`: the person's words, the
//! model's answers and reasoning, and each call with what it returned, in order.

use std::path::Path;

use tackle_protocol::{Message, Part, Role, ToolArguments};

use super::observe::{started, text_of};
use super::update::{Ended, Update, plan_of, preview};

/// The updates that retell `messages`.
pub fn updates(root: &Path, messages: &[Message]) -> Vec<Update> {
    let mut out = Vec::new();
    let mut tools: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for message in messages {
        for part in &message.content {
            match (part, message.role) {
                (Part::Text { text }, Role::User) => out.push(Update::UserText(text.clone())),
                (Part::Text { text }, _) => out.push(Update::AgentText(text.clone())),
                (Part::Thinking { text, .. }, _) => out.push(Update::Thought(text.clone())),
                (Part::ToolCall(call), _) => {
                    let arguments = match &call.arguments {
                        ToolArguments::Valid { value } => value.clone(),
                        ToolArguments::Invalid { raw, .. } => {
                            serde_json::Value::String(raw.clone())
                        }
                    };
                    tools.insert(call.id.0.clone(), call.name.clone());
                    // A stored call's change is history: the file is no longer as it found it.
                    let mut update = started(root, &call.id.0, &call.name, &arguments);
                    if let Update::CallStarted { change, .. } = &mut update {
                        *change = None;
                    }
                    out.push(update);
                }
                (Part::ToolResult(result), _) => {
                    let text = text_of(&result.content);
                    out.push(Update::CallEnded {
                        id: result.call_id.0.clone(),
                        ended: if result.is_error {
                            Ended::Failed
                        } else {
                            Ended::Completed
                        },
                        output: (!text.is_empty()).then(|| preview(&text)),
                    });
                    if tools.get(&result.call_id.0).map(String::as_str) == Some("todo")
                        && let Some(plan) = plan_of(&text)
                    {
                        out.push(Update::Plan(plan));
                    }
                }
                _ => {}
            }
        }
    }
    out
}
