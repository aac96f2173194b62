//! read_file: a file's lines, when its content is trusted; otherwise a reference, the file
//! never opened, unless a person vouches for it at that moment.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_protocol::{Concurrency, Truncation};
use tackle_protocol::{Quarantined, Trust};
use tackle_runtime::{Approval, ApprovalRequest};
use tackle_tool::{
    Action, ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

use crate::errors;
use crate::tools::target::Target;
use crate::tools::{FILE_CAP, Shared};

/// The most lines one read returns.
pub const MAX_LINES: u64 = 2_000;
/// The most bytes one read returns.
pub const MAX_BYTES: usize = 256 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Workspace-relative path.
    #[serde(default)]
    pub path: Option<String>,
    /// A reference to a file whose name you were not shown, e.g. ref:2.
    #[serde(default)]
    pub path_ref: Option<String>,
    /// 1-based line to start at (default 1).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Maximum lines to return (default and cap 2000).
    #[serde(default)]
    pub limit: Option<u64>,
}

pub struct ReadFile(pub Arc<Shared>);

pub struct Plan {
    target: Target,
    offset: u64,
    limit: u64,
    trusted: bool,
}

impl Tool for ReadFile {
    type Args = Args;
    type Plan = Plan;

    fn name(&self) -> &str {
        "read_file"
    }

    fn description(&self) -> Cow<'static, str> {
        "Reads a UTF-8 text file of the workspace and returns its lines, numbered. Give `path`, \
         or `path_ref` for a file you hold only as a reference. A file in a directory nobody \
         vouched for is not shown: you get a reference (ref:N) to pass to spawn_processor or \
         write_file instead. Long files come back a page at a time; the result gives the offset \
         to continue from."
            .into()
    }

    fn read_only(&self) -> bool {
        true
    }

    fn concurrency(&self) -> Concurrency {
        // A quarantined read may add a reference; references are numbered in call order.
        Concurrency::Exclusive
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["read"]
    }

    fn truncation(&self) -> Truncation {
        // Self-paginating: a page comes back whole with the offset to continue from. Cut by the
        // runtime's preview, it would lose that line and point at an artifact URI, which this
        // read_file does not open.
        Truncation::OptOut
    }

    fn prepare(&self, args: Args, _cx: &PrepareContext<'_>) -> Result<Prepared<Plan>, ToolError> {
        if args.offset == Some(0) {
            return Err(errors::invalid("offset is 1-based: the first line is 1"));
        }
        if args.limit == Some(0) {
            return Err(errors::invalid("limit must be at least 1"));
        }
        let target = Target::of(
            &self.0,
            args.path.as_deref(),
            args.path_ref.as_deref(),
            false,
        )?;
        let trusted = self.0.trust.file(target.real.as_str()) == Trust::Trusted;
        let routing = Routing {
            resources: target.keys(Action::Read),
        };
        Ok(Prepared::new(
            routing,
            Plan {
                target,
                offset: args.offset.unwrap_or(1),
                limit: args.limit.unwrap_or(MAX_LINES).min(MAX_LINES),
                trusted,
            },
        ))
    }

    async fn execute(&self, plan: Plan, cx: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        let shared = &self.0;
        let target = &plan.target;
        let mut trusted = plan.trusted;
        if !trusted && self.vouched_now(&cx, target).await {
            shared
                .state
                .set_file_trust(&cx.call_id, target.real.as_str(), true)
                .await
                .map_err(record_failed)?;
            trusted = true;
        }
        if !trusted {
            let label = shared.trust.file_label(target.real.as_str());
            let id = shared
                .state
                .add(
                    &cx.call_id,
                    Quarantined::File {
                        path: target.rel.as_str().to_owned(),
                    },
                    label,
                )
                .await
                .map_err(record_failed)?;
            return Ok(ToolCompletion::single(format!(
                "{id}: this file's content is quarantined (nobody vouched for it), so it is not \
                 shown to you. Pass {id} to spawn_processor to work on it, or to write_file as \
                 contents_ref to copy it."
            )));
        }
        let bytes = shared
            .root
            .read_capped(&target.rel, FILE_CAP)
            .map_err(|e| errors::fs(&e, &target.shown))?;
        if bytes.contains(&0) {
            return Err(ToolError::new(
                errors::BINARY,
                format!("{} is binary, not text", target.shown),
            ));
        }
        let text = String::from_utf8(bytes).map_err(|_| {
            ToolError::new(
                errors::BINARY,
                format!("{} is not UTF-8 text", target.shown),
            )
        })?;
        Ok(ToolCompletion::single(page(&text, plan.offset, plan.limit)))
    }
}

impl ReadFile {
    /// The quarantined-read prompt: a person may vouch for this one file now.
    async fn vouched_now(&self, cx: &ExecuteContext, target: &Target) -> bool {
        let Some(voucher) = &self.0.voucher else {
            return false;
        };
        let key = format!("sealed.vouch:{}", target.real.as_str());
        let keys = [key];
        let effect = format!(
            "vouch for {} so the planner sees its content (only this file, for this session)",
            target.real.as_str()
        );
        let arguments = serde_json::json!({ "path": target.shown });
        let request = ApprovalRequest {
            session: &cx.session,
            handle: None,
            call_id: &cx.call_id,
            tool: "read_file",
            read_only: true,
            arguments: &arguments,
            keys: &keys,
            message: "its content is quarantined: nobody vouched for it",
            session_grant: false,
            effect: Some(&effect),
        };
        matches!(
            voucher.approve(request).await,
            Approval::Once | Approval::Session
        )
    }
}

/// Lines `offset ..` of `text`, at most `limit` of them and [`MAX_BYTES`], numbered, with where
/// to continue when there is more.
pub fn page(text: &str, offset: u64, limit: u64) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len() as u64;
    if text.is_empty() {
        return "(the file is empty)".to_owned();
    }
    if offset > total {
        return format!("(the file has {total} lines; offset {offset} is past its end)");
    }
    let mut out = String::new();
    let mut last = offset - 1;
    for (i, line) in lines
        .iter()
        .enumerate()
        .skip((offset - 1) as usize)
        .take(limit as usize)
    {
        let numbered = format!("{:>6}\t{line}\n", i + 1);
        if out.len() + numbered.len() > MAX_BYTES && !out.is_empty() {
            break;
        }
        out.push_str(&numbered);
        last = i as u64 + 1;
    }
    if last < total {
        out.push_str(&format!(
            "[lines {offset}–{last} of {total}; continue with offset {}]\n",
            last + 1
        ));
    }
    out
}

pub(crate) fn record_failed(message: String) -> ToolError {
    ToolError::new(
        tackle_protocol::ErrorCode::IO,
        format!("the session's log could not record a reference: {message}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_say_where_to_continue() {
        let text = "a\nb\nc\n";
        assert_eq!(
            page(text, 1, 2),
            "     1\ta\n     2\tb\n[lines 1–2 of 3; continue with offset 3]\n"
        );
        assert_eq!(page(text, 3, 2), "     3\tc\n");
        assert!(page(text, 9, 2).contains("past its end"));
        assert_eq!(page("", 1, 2), "(the file is empty)");
    }
}
