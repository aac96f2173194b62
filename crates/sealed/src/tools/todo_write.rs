//! todo_write: the planner's task list, the whole list each time. Nothing is touched, so
//! nothing routes; an unrecognised status reads as outstanding work.

use std::borrow::Cow;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_protocol::Concurrency;
use tackle_tool::{
    ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

use crate::errors;

/// The most items on the list.
pub const MAX_TODOS: usize = 100;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Todo {
    /// What the item is.
    pub content: String,
    /// `pending`, `in_progress` or `completed`; anything else counts as pending.
    pub status: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The complete list; it replaces the previous one.
    pub todos: Vec<Todo>,
}

/// An item's state as the list shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Outstanding,
    InProgress,
    Completed,
}

impl Status {
    pub fn read(word: &str) -> Status {
        match word.trim().to_ascii_lowercase().as_str() {
            "in_progress" | "in-progress" | "active" => Status::InProgress,
            "completed" | "done" | "complete" => Status::Completed,
            _ => Status::Outstanding,
        }
    }

    fn mark(self) -> &'static str {
        match self {
            Status::Outstanding => "[ ]",
            Status::InProgress => "[~]",
            Status::Completed => "[x]",
        }
    }
}

/// The session's list.
#[derive(Default)]
pub struct TodoWrite {
    list: Mutex<Vec<(String, Status)>>,
}

impl TodoWrite {
    pub fn list(&self) -> Vec<(String, Status)> {
        self.list.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Tool for TodoWrite {
    type Args = Args;
    type Plan = Vec<(String, Status)>;

    fn name(&self) -> &str {
        "todo_write"
    }

    fn description(&self) -> Cow<'static, str> {
        "Records your task list: send the complete list every time (it replaces the previous one), \
         each item with content and status (pending, in_progress, completed)."
            .into()
    }

    fn read_only(&self) -> bool {
        true
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Exclusive
    }

    fn session_state(&self) -> bool {
        true
    }

    fn restore(&self, _session: &tackle_protocol::SessionId, calls: Vec<Args>) {
        if let Some(last) = calls.into_iter().last() {
            *self.list.lock().unwrap_or_else(|e| e.into_inner()) = items(last);
        }
    }

    fn prepare(
        &self,
        args: Args,
        _cx: &PrepareContext<'_>,
    ) -> Result<Prepared<Self::Plan>, ToolError> {
        if args.todos.len() > MAX_TODOS {
            return Err(errors::invalid(format!(
                "{} items is more than {MAX_TODOS}",
                args.todos.len()
            )));
        }
        Ok(Prepared::new(Routing::default(), items(args)))
    }

    async fn execute(
        &self,
        plan: Self::Plan,
        _cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let text = if plan.is_empty() {
            "the list is empty\n".to_owned()
        } else {
            plan.iter()
                .map(|(content, status)| format!("{} {content}\n", status.mark()))
                .collect()
        };
        *self.list.lock().unwrap_or_else(|e| e.into_inner()) = plan;
        Ok(ToolCompletion::single(text))
    }
}

fn items(args: Args) -> Vec<(String, Status)> {
    args.todos
        .into_iter()
        .map(|t| (t.content, Status::read(&t.status)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_status_reads_as_outstanding() {
        assert_eq!(Status::read("pending"), Status::Outstanding);
        assert_eq!(Status::read("blocked"), Status::Outstanding);
        assert_eq!(Status::read(""), Status::Outstanding);
        assert_eq!(Status::read("completed"), Status::Completed);
        assert_eq!(Status::read("in_progress"), Status::InProgress);
    }
}
