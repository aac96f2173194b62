//! What an editor is told about a session, in tackle's own terms: the adapter
//! ([`super::wire`]) turns each [`Update`] into the protocol's `session/update`, and nothing
//! here knows the protocol's JSON.

use std::path::PathBuf;

/// What a tool call does, as an editor groups calls (an icon, a "files read" list).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    Edit,
    Delete,
    Search,
    Execute,
    Fetch,
    Think,
    Other,
}

impl Kind {
    /// The kind of a call to `tool`.
    pub fn of(tool: &str) -> Kind {
        match tool {
            "read_file" | "read_many_files" | "list_dir" | "stat" | "view_file_outline"
            | "json_query" | "retrieve_raw" => Kind::Read,
            "edit_file" | "write_file" => Kind::Edit,
            "delete_file" => Kind::Delete,
            "grep" | "glob" => Kind::Search,
            "bash" | "bash_stdin" | "wait_and_verify" => Kind::Execute,
            "fetch_url" | "web_search" => Kind::Fetch,
            "todo" | "record_plan" | "mark_task_done" => Kind::Think,
            _ if tool.starts_with("agentic_") => Kind::Read,
            _ => Kind::Other,
        }
    }
}

/// A file a call changes, before and after, for the editor's diff view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileChange {
    /// Absolute, as the protocol wants every path.
    pub path: PathBuf,
    /// `None` when the call creates the file.
    pub old: Option<String>,
    pub new: String,
}

/// How a call ended, as the editor shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Completed,
    Failed,
}

/// One item of the model's todo list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanItem {
    pub text: String,
    pub state: PlanState,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanState {
    Pending,
    InProgress,
    Done,
}

/// One thing to tell the editor, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Update {
    /// The person's own words (only when a stored session is replayed).
    UserText(String),
    /// A piece of the model's answer.
    AgentText(String),
    /// A piece of the model's visible reasoning (replayed sessions).
    Thought(String),
    /// A call is about to run.
    CallStarted {
        id: String,
        /// The tool's name (editors show the title; tackle's own clients the name).
        tool: String,
        title: String,
        kind: Kind,
        input: serde_json::Value,
        /// Absolute paths the call names.
        locations: Vec<PathBuf>,
        change: Option<FileChange>,
    },
    /// A call ended; `output` is what the model was shown, cut to a preview.
    CallEnded {
        id: String,
        ended: Ended,
        output: Option<String>,
    },
    /// The model's todo list as it now stands.
    Plan(Vec<PlanItem>),
    /// The session's permission mode changed.
    Mode(String),
}

/// Where a session's prompt is, for clients that follow a session from elsewhere (the
/// daemon's attach): an editor on stdio starts and ends its prompts itself and is not told.
#[derive(Clone, Debug)]
pub enum Turn {
    /// A prompt began to run: the person's words, or none when it goes on from the log (a
    /// wake, a resumed session owed results).
    Started { input: Option<String> },
    /// The prompt ended.
    Ended { stop: super::host::Stop },
}

/// Where a session's updates go.
pub trait Sink: Send + Sync {
    fn send(&self, session: &str, update: Update);

    /// A prompt began or ended; only a sink whose clients did not start it cares.
    fn turn(&self, _session: &str, _turn: Turn) {}
}

/// The most of one call's output an editor is sent: it is a preview, the model saw it whole
/// and the store keeps every byte.
pub const OUTPUT_PREVIEW_BYTES: usize = 16 * 1024;

/// `text` cut to [`OUTPUT_PREVIEW_BYTES`] on a character boundary, saying how much was left out.
pub fn preview(text: &str) -> String {
    if text.len() <= OUTPUT_PREVIEW_BYTES {
        return text.to_owned();
    }
    let mut end = OUTPUT_PREVIEW_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[… {} more bytes; the whole output is kept in the session's store]",
        &text[..end],
        text.len() - end
    )
}

/// The todo list a `todo` result shows, or `None` when `text` is no todo list.
pub fn plan_of(text: &str) -> Option<Vec<PlanItem>> {
    use tackle_tools::todo::TodoStatus;
    let items = tackle_tools::todo::parse_rendered(text)?;
    Some(
        items
            .into_iter()
            .map(|i| PlanItem {
                text: i.text,
                state: match i.status {
                    TodoStatus::Pending => PlanState::Pending,
                    TodoStatus::InProgress => PlanState::InProgress,
                    TodoStatus::Done => PlanState::Done,
                },
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_tools::todo::{TodoItem, TodoStatus, render};

    #[test]
    fn a_rendered_todo_list_reads_back_as_the_plan() {
        let items = vec![
            TodoItem {
                id: 1,
                text: "read the failing test".into(),
                status: TodoStatus::Done,
            },
            TodoItem {
                id: 2,
                text: "fix it. carefully".into(),
                status: TodoStatus::InProgress,
            },
            TodoItem {
                id: 3,
                text: "run the suite".into(),
                status: TodoStatus::Pending,
            },
        ];
        let plan = plan_of(&render(&items)).unwrap();
        let states: Vec<PlanState> = plan.iter().map(|p| p.state).collect();
        assert_eq!(
            states,
            [PlanState::Done, PlanState::InProgress, PlanState::Pending]
        );
        assert_eq!(plan[1].text, "fix it. carefully");
        assert_eq!(plan_of(&render(&[])), Some(Vec::new()));
        assert_eq!(plan_of("exit 0\nhello"), None);
    }

    #[test]
    fn a_long_output_is_cut_on_a_character_boundary() {
        let text = "é".repeat(OUTPUT_PREVIEW_BYTES);
        let cut = preview(&text);
        assert!(cut.len() < text.len());
        assert!(cut.contains("more bytes"));
        assert_eq!(preview("short"), "short");
    }
}
