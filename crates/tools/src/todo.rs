//! `todo`: the session's plan as a checklist (seed 003, "Planning").
//!
//! Items are kept in memory per session id, with ids that never change or get reused within a
//! session (`1`, `2`, …, even after `clear`). Every change returns the whole list, so the model
//! never has to remember it.
//!
//! Key decision: the list lives in the tool, keyed by session, rather than in the project: it is
//! the model's working memory for one conversation, not project state. It survives a restart
//! because the session's log already holds every change: the tool says it keeps session state,
//! and a resumed session's successful `todo` calls are replayed into a fresh list
//! ([`Tool::restore`]) before its first batch. Rejected: an event of its own for the list, which
//! would duplicate what `call_started` records.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tackle_tool::protocol::{Concurrency, ErrorCode, SessionId};
use tackle_tool::{
    ExecuteContext, PrepareContext, Prepared, Routing, SerializationKey, Tool, ToolCompletion,
    ToolError,
};

pub const UNKNOWN_ITEM: ErrorCode = ErrorCode::new("unknown_item");

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Done,
}

impl TodoStatus {
    fn mark(self) -> &'static str {
        match self {
            Self::Pending => "[ ]",
            Self::InProgress => "[~]",
            Self::Done => "[x]",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoAction {
    /// Show the list.
    List,
    /// Add an item (`text`), pending unless `status` says otherwise.
    Add,
    /// Change the status of item `id` to `status`.
    SetStatus,
    /// Remove every item.
    Clear,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoArgs {
    /// list, add, set_status or clear.
    pub action: TodoAction,
    /// The item's id (for set_status).
    pub id: Option<u64>,
    /// The item's text (for add).
    pub text: Option<String>,
    /// pending, in_progress or done (for set_status; optional for add).
    pub status: Option<TodoStatus>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TodoItem {
    pub id: u64,
    pub text: String,
    pub status: TodoStatus,
}

#[derive(Default)]
struct TodoList {
    items: Vec<TodoItem>,
    next_id: u64,
}

/// The lists of every session, shared by the tool's clones.
#[derive(Clone, Default)]
pub struct Todo {
    lists: Arc<Mutex<HashMap<SessionId, TodoList>>>,
}

impl Todo {
    pub fn new() -> Self {
        Self::default()
    }

    /// Apply one action to `session`'s list; returns the list after it.
    pub fn apply(&self, session: &SessionId, args: TodoArgs) -> Result<Vec<TodoItem>, ToolError> {
        // A poisoned lock means a panic mid-update of a Vec push/assign; the list is still whole.
        let mut lists = self.lists.lock().unwrap_or_else(|p| p.into_inner());
        lists.entry(session.clone()).or_default().apply(args)
    }

    /// Replace `session`'s list by the one `calls` build, in order (calls that fail change
    /// nothing, as they did when they ran).
    pub fn rebuild(&self, session: &SessionId, calls: Vec<TodoArgs>) {
        let mut list = TodoList::default();
        for args in calls {
            let _ = list.apply(args);
        }
        let mut lists = self.lists.lock().unwrap_or_else(|p| p.into_inner());
        lists.insert(session.clone(), list);
    }
}

impl TodoList {
    fn apply(&mut self, args: TodoArgs) -> Result<Vec<TodoItem>, ToolError> {
        let list = self;
        match args.action {
            TodoAction::List => {}
            TodoAction::Add => {
                let Some(text) = args.text.filter(|t| !t.trim().is_empty()) else {
                    return Err(invalid("$.text", "add needs a non-empty `text`"));
                };
                list.next_id += 1;
                list.items.push(TodoItem {
                    id: list.next_id,
                    text,
                    status: args.status.unwrap_or(TodoStatus::Pending),
                });
            }
            TodoAction::SetStatus => {
                let Some(id) = args.id else {
                    return Err(invalid("$.id", "set_status needs the item's `id`"));
                };
                let Some(status) = args.status else {
                    return Err(invalid(
                        "$.status",
                        "set_status needs a `status`: pending, in_progress or done",
                    ));
                };
                let ids: Vec<String> = list.items.iter().map(|i| i.id.to_string()).collect();
                let Some(item) = list.items.iter_mut().find(|i| i.id == id) else {
                    return Err(ToolError::new(
                        UNKNOWN_ITEM,
                        format!(
                            "todo: there is no item {id}; {}",
                            if ids.is_empty() {
                                "the list is empty, add items first".to_owned()
                            } else {
                                format!("the items are {}", ids.join(", "))
                            }
                        ),
                    ));
                };
                item.status = status;
            }
            TodoAction::Clear => list.items.clear(),
        }
        Ok(list.items.clone())
    }
}

fn invalid(path: &str, what: &str) -> ToolError {
    ToolError::new(ErrorCode::INVALID_ARGUMENTS, format!("todo: {what}"))
        .with_metadata(json!({ "path": path }))
}

/// The list as the model reads it.
pub fn render(items: &[TodoItem]) -> String {
    if items.is_empty() {
        return "[the todo list is empty]\n".to_owned();
    }
    let done = items
        .iter()
        .filter(|i| i.status == TodoStatus::Done)
        .count();
    let mut out = format!("todo ({done}/{} done):\n", items.len());
    for i in items {
        out.push_str(&format!("{} {}. {}\n", i.status.mark(), i.id, i.text));
    }
    out
}

/// The items of a list [`render`] wrote, read back (for front ends that show the list as
/// their own widget); `None` when `text` is not such a list.
pub fn parse_rendered(text: &str) -> Option<Vec<TodoItem>> {
    let mut lines = text.lines();
    let head = lines.next()?;
    if head == "[the todo list is empty]" {
        return Some(Vec::new());
    }
    if !head.starts_with("todo (") {
        return None;
    }
    lines
        .map(|line| {
            let status = [
                TodoStatus::Pending,
                TodoStatus::InProgress,
                TodoStatus::Done,
            ]
            .into_iter()
            .find(|s| line.starts_with(s.mark()))?;
            let rest = line[status.mark().len()..].strip_prefix(' ')?;
            let (id, text) = rest.split_once(". ")?;
            Some(TodoItem {
                id: id.parse().ok()?,
                text: text.to_owned(),
                status,
            })
        })
        .collect()
}

pub struct TodoPlan {
    session: SessionId,
    args: TodoArgs,
}

impl Tool for Todo {
    type Args = TodoArgs;
    type Plan = TodoPlan;

    fn name(&self) -> &str {
        "todo"
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Keep a checklist of the steps of the current task. Actions: `list`; `add` with \
             `text`; `set_status` with `id` and `status` (pending, in_progress, done); `clear`. \
             Every call returns the whole list with each item's id. Use it for work with \
             several steps: add the steps first, mark one in_progress while you work on it and \
             done when it is finished.",
        )
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        // Mutates only the session's own in-memory checklist, never the project.
        true
    }

    fn session_state(&self) -> bool {
        true
    }

    fn restore(&self, session: &SessionId, calls: Vec<TodoArgs>) {
        self.rebuild(session, calls);
    }

    fn prepare(
        &self,
        args: TodoArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<TodoPlan>, ToolError> {
        // Calls of one batch change the list in turn order.
        Ok(Prepared::new(
            Routing::default(),
            TodoPlan {
                session: cx.session.clone(),
                args,
            },
        )
        .serialized_by(SerializationKey("todo".to_owned())))
    }

    async fn execute(
        &self,
        plan: TodoPlan,
        _cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let items = self.apply(&plan.session, plan.args)?;
        Ok(ToolCompletion::single(render(&items)).with_metadata(json!({ "items": items })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(action: TodoAction) -> TodoArgs {
        TodoArgs {
            action,
            id: None,
            text: None,
            status: None,
        }
    }

    fn add(text: &str) -> TodoArgs {
        TodoArgs {
            text: Some(text.into()),
            ..args(TodoAction::Add)
        }
    }

    fn set(id: u64, status: TodoStatus) -> TodoArgs {
        TodoArgs {
            id: Some(id),
            status: Some(status),
            ..args(TodoAction::SetStatus)
        }
    }

    #[test]
    fn lifecycle_keeps_ids_stable_and_sessions_apart() {
        let t = Todo::new();
        let s = SessionId("s1".into());
        let other = SessionId("s2".into());
        assert!(t.apply(&s, args(TodoAction::List)).unwrap().is_empty());
        t.apply(&s, add("read the code")).unwrap();
        let items = t.apply(&s, add("write the test")).unwrap();
        assert_eq!(items.iter().map(|i| i.id).collect::<Vec<_>>(), [1, 2]);
        let items = t.apply(&s, set(2, TodoStatus::InProgress)).unwrap();
        assert_eq!(items[1].status, TodoStatus::InProgress);
        let items = t.apply(&s, set(1, TodoStatus::Done)).unwrap();
        assert_eq!(
            render(&items),
            "todo (1/2 done):\n[x] 1. read the code\n[~] 2. write the test\n"
        );
        assert!(t.apply(&other, args(TodoAction::List)).unwrap().is_empty());
        assert!(t.apply(&s, args(TodoAction::Clear)).unwrap().is_empty());
        // Ids are never reused after a clear.
        assert_eq!(t.apply(&s, add("again")).unwrap()[0].id, 3);
    }

    #[test]
    fn a_rebuild_replaces_the_list_with_the_one_the_calls_build() {
        let t = Todo::new();
        let s = SessionId("s".into());
        t.apply(&s, add("stale")).unwrap();
        let calls = vec![
            add("read"),
            add("write"),
            set(9, TodoStatus::Done),
            set(2, TodoStatus::Done),
        ];
        t.rebuild(&s, calls);
        let items = t.apply(&s, args(TodoAction::List)).unwrap();
        assert_eq!(
            render(&items),
            "todo (1/2 done):\n[ ] 1. read\n[x] 2. write\n"
        );
        assert_eq!(t.apply(&s, add("next")).unwrap()[2].id, 3);
    }

    #[test]
    fn bad_input_gets_stable_codes() {
        let t = Todo::new();
        let s = SessionId("s".into());
        let cases = [
            (args(TodoAction::Add), ErrorCode::INVALID_ARGUMENTS),
            (add("  "), ErrorCode::INVALID_ARGUMENTS),
            (args(TodoAction::SetStatus), ErrorCode::INVALID_ARGUMENTS),
            (
                TodoArgs {
                    id: Some(1),
                    ..args(TodoAction::SetStatus)
                },
                ErrorCode::INVALID_ARGUMENTS,
            ),
            (set(9, TodoStatus::Done), UNKNOWN_ITEM),
        ];
        for (a, code) in cases {
            assert_eq!(t.apply(&s, a).unwrap_err().code, code);
        }
    }
}
