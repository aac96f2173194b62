//! The three delegation tools (seed 000, "Delegation and skills"): `delegate_subagent` starts
//! a child (or continues a finished one) in the background and answers at once with the
//! start notice; `get_subagent_result` pages a child's final output; `cancel_subagent` stops
//! one. Each addresses the caller's own children by handle or session id, through the
//! caller's [`Tree`].
//!
//! delegate_subagent is Parallel (admission serializes inside the tree) and, like
//! get_subagent_result, opts out of truncation: its result is a notice already bounded, and a
//! page is bounded by its `offset`/`limit`. get_subagent_result and cancel_subagent are
//! Exclusive. None is declared as changing anything: every call a child makes passes the gate
//! in the child's own session.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_tool::protocol::{Concurrency, ErrorCode, Truncation};
use tackle_tool::{
    ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

use crate::delegate::notice;
use crate::delegate::tree::{Node, Refused, StartRequest, Status, Tree};

pub const DELEGATE: &str = "delegate_subagent";
pub const RESULT: &str = "get_subagent_result";
pub const CANCEL: &str = "cancel_subagent";
/// The names of the three tools.
pub const NAMES: [&str; 3] = [DELEGATE, RESULT, CANCEL];

/// The default and largest page of get_subagent_result, in lines.
pub const MAX_PAGE_LINES: usize = 2000;
/// The largest page in bytes: the event schema's bound on one result.
pub const MAX_PAGE_BYTES: usize = 2 * 1024 * 1024;

/// The longest prompt a child is given, in bytes.
pub const MAX_PROMPT_BYTES: usize = 256 * 1024;

fn refused(tool: &str, r: Refused) -> ToolError {
    let code = match r.code {
        "invalid_arguments" => ErrorCode::INVALID_ARGUMENTS,
        "too_many_subagents" | "depth_exceeded" => ErrorCode::RESOURCE_LIMIT,
        other => ErrorCode::new(other),
    };
    ToolError::new(code, format!("{tool}: {}", r.message))
}

fn node_metadata(node: &Node) -> serde_json::Value {
    json!({
        "session_id": node.session.0,
        "handle": node.handle,
        "agent_type": node.agent_type,
        "status": node.status.as_str(),
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DelegateArgs {
    /// The agent type to run (see the list in your instructions).
    pub agent_type: String,
    /// The whole task, self-contained: the subagent sees nothing of your conversation.
    pub prompt: String,
    /// A few words on what the subagent is for, shown in lists of subagents.
    pub description: Option<String>,
    /// Continue a finished subagent of yours (its handle or session id) with `prompt` as its
    /// next message, instead of starting a new one.
    pub resume_session_id: Option<String>,
}

/// delegate_subagent.
pub struct DelegateSubagent {
    tree: Arc<Tree>,
}

impl DelegateSubagent {
    pub fn new(tree: Arc<Tree>) -> Self {
        Self { tree }
    }
}

impl Tool for DelegateSubagent {
    type Args = DelegateArgs;
    type Plan = StartRequest;

    fn name(&self) -> &str {
        DELEGATE
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Start a subagent on a self-contained task; it runs in the background with its own \
             context and tools while you go on. The answer is at once `Subagent started. \
             [subagent session <handle>]`; when it ends, a notice with the start of its output \
             reaches your conversation, and get_subagent_result gives the rest. Give the whole \
             task in `prompt`: the subagent sees nothing of this conversation. Use it for \
             research that would flood your context or for independent work in parallel; do \
             small things yourself.",
        )
    }

    fn summary(&self) -> Cow<'static, str> {
        Cow::Borrowed("Start a subagent on a self-contained task in the background.")
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        true
    }

    fn truncation(&self) -> Truncation {
        Truncation::OptOut
    }

    fn prepare(
        &self,
        args: DelegateArgs,
        _: &PrepareContext<'_>,
    ) -> Result<Prepared<StartRequest>, ToolError> {
        if args.prompt.trim().is_empty() {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                "delegate_subagent: `prompt` is empty; give the subagent its whole task",
            ));
        }
        if args.prompt.len() > MAX_PROMPT_BYTES {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                format!(
                    "delegate_subagent: `prompt` is {} bytes, over {MAX_PROMPT_BYTES}; point \
                     the subagent at files instead of pasting them",
                    args.prompt.len()
                ),
            ));
        }
        Ok(Prepared::new(
            Routing {
                resources: Vec::new(),
            },
            StartRequest {
                agent_type: args.agent_type.trim().to_owned(),
                prompt: args.prompt,
                description: args.description.filter(|d| !d.trim().is_empty()),
                // Small models fill optional fields with "": that is no resume.
                resume: args.resume_session_id.filter(|r| !r.trim().is_empty()),
            },
        ))
    }

    async fn execute(
        &self,
        req: StartRequest,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let resumed = req.resume.is_some();
        let node = self
            .tree
            .start(&cx.session, req)
            .map_err(|r| refused(DELEGATE, r))?;
        let mut metadata = node_metadata(&node);
        if resumed {
            metadata["resumed"] = json!(true);
        }
        Ok(ToolCompletion::single(notice::started(&node.handle)).with_metadata(metadata))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultArgs {
    /// The subagent's handle (`explore_1a2b3c4d`) or session id.
    pub session_id: String,
    /// The first line to return, from 0.
    pub offset: Option<usize>,
    /// How many lines, at most 2000 (the default).
    pub limit: Option<usize>,
}

/// get_subagent_result.
pub struct GetSubagentResult {
    tree: Arc<Tree>,
}

impl GetSubagentResult {
    pub fn new(tree: Arc<Tree>) -> Self {
        Self { tree }
    }
}

impl Tool for GetSubagentResult {
    type Args = ResultArgs;
    type Plan = ResultArgs;

    fn name(&self) -> &str {
        RESULT
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Read a subagent's final output by its handle or session id, a page of lines at a \
             time (`offset` from 0, `limit` up to 2000); the answer says its status and the \
             next offset when more remains. While it runs there is no output yet: its \
             completion notice will reach your conversation.",
        )
    }

    fn summary(&self) -> Cow<'static, str> {
        Cow::Borrowed("Read a subagent's output, a page of lines at a time.")
    }

    fn read_only(&self) -> bool {
        true
    }

    fn truncation(&self) -> Truncation {
        Truncation::OptOut
    }

    fn prepare(
        &self,
        args: ResultArgs,
        _: &PrepareContext<'_>,
    ) -> Result<Prepared<ResultArgs>, ToolError> {
        if args.limit == Some(0) {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                "get_subagent_result: `limit` is 0; ask for at least one line (at most 2000)",
            ));
        }
        Ok(Prepared::new(
            Routing {
                resources: Vec::new(),
            },
            args,
        ))
    }

    async fn execute(
        &self,
        args: ResultArgs,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let node = self
            .tree
            .resolve(&cx.session, &args.session_id)
            .map_err(|r| refused(RESULT, r))?;
        let mut metadata = node_metadata(&node);
        if node.status == Status::Running {
            let text = format!(
                "[subagent session {}; running; no output yet: its completion notice will \
                 reach your conversation when it ends]",
                node.handle
            );
            return Ok(ToolCompletion::single(text).with_metadata(metadata));
        }
        let total = notice::line_count(&node.output);
        let offset = args.offset.unwrap_or(0);
        let limit = args.limit.unwrap_or(MAX_PAGE_LINES).min(MAX_PAGE_LINES);
        if offset > total || (offset == total && total > 0) {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                format!(
                    "get_subagent_result: offset {offset} is past the output's {total} lines; \
                     start at 0"
                ),
            ));
        }
        let page: Vec<&str> = node.output.lines().skip(offset).take(limit).collect();
        let mut text = page.join("\n");
        let end = offset + page.len();
        if end < total {
            // The model reads no metadata: the page says itself where the rest begins.
            text.push_str(&format!(
                "\n[lines {}–{end} of {total}; the rest from offset {end}]",
                offset + 1
            ));
        }
        if text.len() > MAX_PAGE_BYTES {
            return Err(ToolError::new(
                ErrorCode::RESOURCE_LIMIT,
                format!(
                    "get_subagent_result: lines {offset}–{} are {} bytes, over the {MAX_PAGE_BYTES}-byte \
                     bound of one result; ask for fewer with a smaller `limit`",
                    offset + page.len(),
                    text.len()
                ),
            ));
        }
        metadata["total_lines"] = json!(total);
        metadata["offset"] = json!(offset);
        if end < total {
            metadata["next_offset"] = json!(end);
        }
        Ok(ToolCompletion::single(text).with_metadata(metadata))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelArgs {
    /// The subagent's handle (`explore_1a2b3c4d`) or session id.
    pub session_id: String,
}

/// cancel_subagent.
pub struct CancelSubagent {
    tree: Arc<Tree>,
}

impl CancelSubagent {
    pub fn new(tree: Arc<Tree>) -> Self {
        Self { tree }
    }
}

impl Tool for CancelSubagent {
    type Args = CancelArgs;
    type Plan = String;

    fn name(&self) -> &str {
        CANCEL
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Stop a running subagent of yours (its handle or session id), and every subagent \
             it started. What it produced so far stays readable with get_subagent_result.",
        )
    }

    fn summary(&self) -> Cow<'static, str> {
        Cow::Borrowed("Stop a running subagent.")
    }

    fn read_only(&self) -> bool {
        true
    }

    fn prepare(
        &self,
        args: CancelArgs,
        _: &PrepareContext<'_>,
    ) -> Result<Prepared<String>, ToolError> {
        Ok(Prepared::new(
            Routing {
                resources: Vec::new(),
            },
            args.session_id,
        ))
    }

    async fn execute(
        &self,
        reference: String,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let before = self
            .tree
            .resolve(&cx.session, &reference)
            .map_err(|r| refused(CANCEL, r))?;
        let node = self
            .tree
            .cancel(&cx.session, &reference)
            .await
            .map_err(|r| refused(CANCEL, r))?;
        let text = if before.status == Status::Running {
            format!("[subagent session {}; cancelled]", node.handle)
        } else {
            format!(
                "[subagent session {}; already {}; nothing to cancel]",
                node.handle,
                node.status.as_str()
            )
        };
        Ok(ToolCompletion::single(text).with_metadata(node_metadata(&node)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delegate::{Limits, agent_type};
    use crate::events::Unobserved;

    /// Seed 000's concurrency table and truncation opt-outs, row by row.
    #[test]
    fn the_tools_declare_what_the_seed_says() {
        let tree = Tree::new(
            Limits::default(),
            agent_type::built_in(),
            Arc::new(Unobserved),
        );
        let rows: [(&str, Concurrency, Truncation); 3] = [
            (DELEGATE, Concurrency::Parallel, Truncation::OptOut),
            (RESULT, Concurrency::Exclusive, Truncation::OptOut),
            (CANCEL, Concurrency::Exclusive, Truncation::Bounded),
        ];
        let declared = [
            (
                DelegateSubagent::new(tree.clone()).name().to_owned(),
                DelegateSubagent::new(tree.clone()).concurrency(),
                DelegateSubagent::new(tree.clone()).truncation(),
            ),
            (
                GetSubagentResult::new(tree.clone()).name().to_owned(),
                GetSubagentResult::new(tree.clone()).concurrency(),
                GetSubagentResult::new(tree.clone()).truncation(),
            ),
            (
                CancelSubagent::new(tree.clone()).name().to_owned(),
                CancelSubagent::new(tree.clone()).concurrency(),
                CancelSubagent::new(tree).truncation(),
            ),
        ];
        for ((name, concurrency, truncation), (got_name, got_c, got_t)) in
            rows.iter().zip(&declared)
        {
            assert_eq!(name, got_name);
            assert_eq!(concurrency, got_c, "{name}");
            assert_eq!(truncation, got_t, "{name}");
        }
    }
}
