//! The underlying call of a digest wrapper, run in the subtask's session through the runtime
//! (so resolved, parsed, gated, approved and recorded exactly as a plain call), and its output
//! gathered as the small model reads it: the [`Bulk`].
//!
//! read_file pages: without a `limit`, the wrapper calls it again at each `next_offset` (every
//! page a call of its own, through the gate) until the file ends or the bulk holds all the
//! small model can read ([`gather`]'s `budget`); its lines are numbered, so the answer can cite
//! them. A Bounded tool's output (grep, fetch_url) is read whole from the artifact the runtime
//! retained when the call's result showed only a preview or a digest: the small model reads
//! what the parent would have had to page.
//!
//! The first call's failure (a refusal by the gate, a path not found, bad arguments) is the
//! wrapper's answer, as the plain call's would be: the small model is never asked to guess
//! around it.

use std::io::Read;

use serde_json::{Value, json};
use tackle_protocol::{CallId, ContentBlock, ErrorCode, ToolCall, ToolResult};
use tackle_runtime::{Runtime, Session};
use tackle_store::ArtifactId;
use tackle_tool::ToolError;
use tokio_util::sync::CancellationToken;

use crate::agentic::args::UnderlyingCall;

/// What the underlying calls gave, as the small model reads it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bulk {
    pub text: String,
    /// Where the text came from, for the parent to read it raw: an `artifact://` URI, or for
    /// read_file (which retains nothing: it pages the file itself) the path and lines.
    pub sources: Vec<String>,
    /// Set when the output goes on past what was gathered: how to read the rest.
    pub unread: Option<String>,
}

/// Runs `call` in `session` (and, when `paging`, read_file's further pages) until `budget`
/// bytes are gathered. `Err` is the first call's own failure, for the wrapper to return.
pub async fn gather(
    runtime: &Runtime,
    session: &Session,
    caller: &CallId,
    call: &UnderlyingCall,
    paging: bool,
    budget: usize,
    cancel: &CancellationToken,
) -> Result<Bulk, ToolError> {
    let mut bulk = Bulk::default();
    let mut arguments = call.arguments.clone();
    // The lines read_file's pages covered, first and last: one source for all of them.
    let mut lines: Option<(u64, u64)> = None;
    for page in 1.. {
        let id = CallId(format!("{}.{}-{page}", caller.0, call.tool));
        let result = run_one(runtime, session, id, call.tool, arguments.clone(), cancel).await?;
        if result.is_error {
            if page == 1 {
                return Err(refusal(call.tool, &result));
            }
            // A later page failed (the file changed, say): what was read stands.
            bulk.unread = Some(format!("reading on failed: {}", result.text().trim_end()));
            break;
        }
        let next = if call.tool == "read_file" {
            let page = read_file_page(&mut bulk, &result);
            if let Some((first, last)) = page.lines {
                lines = Some((lines.map_or(first, |(f, _)| f), last));
            }
            page.next
        } else {
            bounded_output(&mut bulk, session, &result, budget)?;
            None
        };
        let Some(next) = next.filter(|_| paging) else {
            break;
        };
        if bulk.text.len() >= budget || cancel.is_cancelled() {
            bulk.unread = Some(format!(
                "the rest from line {next} was not read: ask again with offset {next}"
            ));
            break;
        }
        arguments["offset"] = json!(next);
    }
    if call.tool == "read_file" {
        let path = call.arguments["path"].as_str().unwrap_or_default();
        bulk.sources.push(match lines {
            Some((first, last)) => format!("{path} lines {first}–{last}"),
            None => path.to_owned(),
        });
    }
    Ok(bulk)
}

/// One call as a batch of its own in the subtask's session.
async fn run_one(
    runtime: &Runtime,
    session: &Session,
    id: CallId,
    tool: &str,
    arguments: Value,
    cancel: &CancellationToken,
) -> Result<ToolResult, ToolError> {
    let call = ToolCall {
        id,
        name: tool.to_owned(),
        arguments,
    };
    let mut results = runtime
        .run_batch(session, vec![call], cancel.clone())
        .await
        .map_err(|e| {
            ToolError::new(
                ErrorCode::INTERNAL,
                format!("the subtask's {tool} call could not be recorded: {e}"),
            )
        })?;
    results.pop().ok_or_else(|| {
        ToolError::new(
            ErrorCode::INTERNAL,
            format!("the subtask's {tool} call returned no result"),
        )
    })
}

/// The underlying call's failure as the wrapper's: its code, its words.
fn refusal(tool: &str, result: &ToolResult) -> ToolError {
    let code = result.code.clone().unwrap_or(ErrorCode::INTERNAL);
    let text = result.text();
    let prefix = format!("error [{code}]: ");
    let message = text.strip_prefix(&prefix).unwrap_or(&text).trim_end();
    ToolError::new(code, format!("{tool}: {message}")).with_metadata(result.metadata.clone())
}

/// What one read_file page added.
struct Page {
    /// The file lines it held, first and last; `None` for output that is not a page of lines.
    lines: Option<(u64, u64)>,
    next: Option<u64>,
}

/// Adds a read_file page, its lines numbered (the page's own footer left out: paging is the
/// wrapper's), and says where the next begins.
fn read_file_page(bulk: &mut Bulk, result: &ToolResult) -> Page {
    let meta = &result.metadata;
    let text = text_of(result);
    let (Some(first), Some(count)) = (meta["first_line"].as_u64(), meta["lines"].as_u64()) else {
        // Not a page of lines (a directory's entries, or media): as the tool rendered it.
        bulk.text.push_str(&text);
        return Page {
            lines: None,
            next: meta["next_offset"].as_u64(),
        };
    };
    for (n, line) in text.lines().take(count as usize).enumerate() {
        bulk.text
            .push_str(&format!("{}\t{line}\n", first + n as u64));
    }
    Page {
        lines: (count > 0).then(|| (first, first + count - 1)),
        next: meta["next_offset"].as_u64(),
    }
}

/// Adds a Bounded tool's output: the text as rendered when it was shown whole, else its
/// retained artifact, read up to `budget` bytes.
fn bounded_output(
    bulk: &mut Bulk,
    session: &Session,
    result: &ToolResult,
    budget: usize,
) -> Result<(), ToolError> {
    let retained = result.retained_output.iter().find(|r| r.stream.is_none());
    let Some(retained) = retained else {
        bulk.text.push_str(&text_of(result));
        return Ok(());
    };
    let id = ArtifactId::from_internal_uri(&retained.artifact).ok_or_else(|| {
        ToolError::new(
            ErrorCode::INTERNAL,
            format!(
                "the subtask's output reference `{}` is malformed",
                retained.artifact
            ),
        )
    })?;
    bulk.sources.push(id.public_uri());
    if !retained.truncated && !result.digested {
        bulk.text.push_str(&text_of(result));
        return Ok(());
    }
    // The artifact was produced by the call just admitted in this subtask: reading it is
    // reading that call's own output, which the gate has already passed.
    let file = session.store.open_artifact(id).map_err(|e| {
        ToolError::new(
            ErrorCode::ARTIFACT_MISSING,
            format!("reading the subtask's output {}: {e}", id.public_uri()),
        )
    })?;
    let mut bytes = Vec::new();
    let cap = budget.saturating_sub(bulk.text.len()) as u64 + 1;
    file.take(cap)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::io("the subtask's output", &e))?;
    if bytes.len() as u64 == cap {
        bytes.pop();
        bulk.unread = Some(format!(
            "only the first {} of its {} bytes were read: page the rest with read_file {}",
            bytes.len(),
            retained.bytes,
            id.public_uri()
        ));
    }
    bulk.text.push_str(&String::from_utf8_lossy(&bytes));
    Ok(())
}

/// A result's text, its attachments named (the small model reads text only).
fn text_of(result: &ToolResult) -> String {
    let mut out = String::new();
    for block in &result.content {
        match block {
            ContentBlock::Text { text } => out.push_str(text),
            ContentBlock::Attachment {
                mime_type, bytes, ..
            } => out.push_str(&format!(
                "[attachment {mime_type}, {bytes} bytes: not shown]\n"
            )),
        }
    }
    out
}
