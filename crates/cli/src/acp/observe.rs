//! A session's [`AgentEvent`]s as [`Update`]s for the editor: the answer as it streams, each
//! call as it starts (its kind, the paths it names, the change an edit or write will make,
//! read before it runs) and as it ends (what the model was shown, cut to a preview), and the
//! todo list as a plan.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tackle_agent::{AgentEvent, Observer};
use tackle_protocol::ContentBlock;

use super::update::{Ended, FileChange, Kind, Sink, Update, plan_of, preview};

/// Forwards one session's events to a [`Sink`].
pub struct Forward {
    pub session: String,
    pub root: PathBuf,
    pub sink: Arc<dyn Sink>,
}

impl Observer for Forward {
    fn on_event(&self, event: &AgentEvent) {
        for update in updates(&self.root, event) {
            self.sink.send(&self.session, update);
        }
    }
}

/// What `event` tells the editor (often nothing: usage, windows and turns are tackle's own).
pub fn updates(root: &Path, event: &AgentEvent) -> Vec<Update> {
    match event {
        AgentEvent::TextDelta { text, .. } if !text.is_empty() => {
            vec![Update::AgentText(text.clone())]
        }
        AgentEvent::ThinkingDelta { text, .. } if !text.is_empty() => {
            vec![Update::Thought(text.clone())]
        }
        AgentEvent::ToolCallStarted {
            call_id,
            tool,
            arguments,
        } => vec![started(root, &call_id.0, tool, arguments)],
        AgentEvent::ToolResults { results, .. } => results
            .iter()
            .flat_map(|r| {
                let text = text_of(&r.content);
                let mut out = vec![Update::CallEnded {
                    id: r.call_id.0.clone(),
                    ended: if r.is_error {
                        Ended::Failed
                    } else {
                        Ended::Completed
                    },
                    output: (!text.is_empty()).then(|| preview(&text)),
                }];
                if r.tool == "todo"
                    && !r.is_error
                    && let Some(plan) = plan_of(&text)
                {
                    out.push(Update::Plan(plan));
                }
                out
            })
            .collect(),
        AgentEvent::Watchdog { message, .. } => {
            vec![Update::AgentText(format!("\n\n[{message}]\n"))]
        }
        _ => Vec::new(),
    }
}

/// The text blocks of a result, joined.
pub fn text_of(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("")
}

/// A call about to run, as the editor lists it.
pub fn started(root: &Path, id: &str, tool: &str, arguments: &serde_json::Value) -> Update {
    let path = arguments
        .get("path")
        .and_then(serde_json::Value::as_str)
        .map(|p| absolute(root, p));
    let title = title(tool, arguments);
    Update::CallStarted {
        id: id.to_owned(),
        tool: tool.to_owned(),
        title,
        kind: Kind::of(tool),
        input: arguments.clone(),
        locations: path.iter().cloned().collect(),
        change: path.and_then(|p| change(root, &p, tool, arguments)),
    }
}

/// A short line for the call: the tool and what it acts on.
pub fn title(tool: &str, arguments: &serde_json::Value) -> String {
    let arg = |k: &str| arguments.get(k).and_then(serde_json::Value::as_str);
    let what = match tool {
        "bash" => arg("command"),
        "grep" | "glob" => arg("pattern"),
        "fetch_url" => arg("url"),
        _ => arg("path"),
    };
    match what {
        Some(w) => {
            let w: String = w.chars().take(120).collect();
            format!("{tool} {}", crate::safe_text::safe_line(&w))
        }
        None => tool.to_owned(),
    }
}

/// `p` beneath `root` unless it is already absolute (the protocol wants absolute paths).
fn absolute(root: &Path, p: &str) -> PathBuf {
    let path = Path::new(p);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        root.join(path)
    }
}

/// The most of a file a diff is sent for: past it the editor gets the call without a diff.
const DIFF_MOST_BYTES: u64 = 1024 * 1024;

/// The change a write or an edit will make, read now, before it runs; `None` for other
/// tools, for a file outside the root, and for an edit that would not apply.
fn change(
    root: &Path,
    path: &Path,
    tool: &str,
    arguments: &serde_json::Value,
) -> Option<FileChange> {
    let arg = |k: &str| arguments.get(k).and_then(serde_json::Value::as_str);
    let canonical_root = root.canonicalize().ok()?;
    let inside = path
        .parent()
        .and_then(|d| d.canonicalize().ok())
        .is_some_and(|d| d.starts_with(&canonical_root));
    if !inside {
        return None;
    }
    let old = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() && m.len() <= DIFF_MOST_BYTES => {
            Some(std::fs::read_to_string(path).ok()?)
        }
        Ok(_) => return None,
        Err(_) => None,
    };
    let new = match tool {
        "write_file" => arg("content")?.to_owned(),
        "edit_file" => {
            let (from, to) = (arg("old_string")?, arg("new_string")?);
            let old = old.as_deref()?;
            if from.is_empty() || !old.contains(from) {
                return None;
            }
            if arguments
                .get("replace_all")
                .and_then(serde_json::Value::as_bool)
                == Some(true)
            {
                old.replace(from, to)
            } else {
                old.replacen(from, to, 1)
            }
        }
        _ => return None,
    };
    Some(FileChange {
        path: path.to_path_buf(),
        old,
        new,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_edit_is_shown_as_the_file_before_and_after() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.txt"), "one two one\n").unwrap();
        let Update::CallStarted {
            kind,
            change,
            locations,
            ..
        } = started(
            &root,
            "c1",
            "edit_file",
            &json!({"path": "a.txt", "old_string": "one", "new_string": "1"}),
        )
        else {
            panic!("not a call")
        };
        assert_eq!(kind, Kind::Edit);
        assert_eq!(locations, [root.join("a.txt")]);
        let change = change.unwrap();
        assert_eq!(change.old.as_deref(), Some("one two one\n"));
        assert_eq!(change.new, "1 two one\n");

        let Update::CallStarted { change, .. } = started(
            &root,
            "c2",
            "write_file",
            &json!({"path": "new.txt", "content": "hi\n"}),
        ) else {
            panic!("not a call")
        };
        let change = change.unwrap();
        assert_eq!((change.old, change.new.as_str()), (None, "hi\n"));

        // Outside the root: no diff is read.
        let Update::CallStarted { change, .. } = started(
            &root,
            "c3",
            "write_file",
            &json!({"path": "../elsewhere.txt", "content": "x"}),
        ) else {
            panic!("not a call")
        };
        assert!(change.is_none());
    }
}
