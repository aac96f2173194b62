//! The second peer: an rmcp server whose `stat`, `read_file` and `grep` do the file work
//! tackle's do, the way a plain MCP file server would, and nothing else: no gate, no
//! confinement beneath a root handle, no event log, no retention, no result metadata. Beside
//! the echo server (which answers with text it already holds) it shows how much of tackle's
//! cost per call is the file work itself and how much is what tackle adds to every call.
//!
//! The tools take the arguments of `tackle_mix` and answer text of about the same size:
//! `stat` a few fields, `read_file` the first `limit` lines, `grep` `path:line:text` lines from
//! a walk that honours ignore files (ripgrep's `ignore` and `grep-searcher`, as tackle uses).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use grep_regex::RegexMatcher;
use grep_searcher::sinks::UTF8;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

#[derive(Clone)]
pub struct SameWork {
    pub root: Arc<PathBuf>,
}

impl ServerHandler for SameWork {
    fn get_info(&self) -> ServerConfig {
        super::tools_only()
    }

    async fn list_tools(
        &self,
        _: Option<rmcp::model::PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, ErrorData> {
        Ok(super::listed_tools(&["stat", "read_file", "grep"]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let root = Arc::clone(&self.root);
        let name = request.name.to_string();
        // File work off the executor, as tackle runs it.
        let answer = tokio::task::block_in_place(|| match name.as_str() {
            "stat" => stat(&root, &args),
            "read_file" => read_file(&root, &args),
            "grep" => grep(&root, &args),
            other => Err(format!("no tool {other}")),
        });
        Ok(match answer {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(e)]),
        }
        .into())
    }
}

fn arg<'a>(args: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{key} is required"))
}

fn stat(root: &Path, args: &Map<String, Value>) -> Result<String, String> {
    let path = arg(args, "path")?;
    let meta = std::fs::metadata(root.join(path)).map_err(|e| e.to_string())?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    let fields = json!({
        "path": path, "exists": true, "is_dir": meta.is_dir(), "size": meta.len(),
        "mtime": mtime,
    });
    serde_json::to_string_pretty(&fields).map_err(|e| e.to_string())
}

fn read_file(root: &Path, args: &Map<String, Value>) -> Result<String, String> {
    let path = arg(args, "path")?;
    let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(2000) as usize;
    let bytes = std::fs::read(root.join(path)).map_err(|e| e.to_string())?;
    let end = memchr::memchr_iter(b'\n', &bytes)
        .nth(limit.saturating_sub(1))
        .map_or(bytes.len(), |at| at + 1);
    Ok(String::from_utf8_lossy(&bytes[..end]).into_owned())
}

fn grep(root: &Path, args: &Map<String, Value>) -> Result<String, String> {
    let matcher = RegexMatcher::new(arg(args, "pattern")?).map_err(|e| e.to_string())?;
    let start = root.join(args.get("path").and_then(Value::as_str).unwrap_or("."));
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\0'))
        .build();
    let mut out = String::new();
    for entry in ignore::WalkBuilder::new(&start).build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
        let shown = rel.to_string_lossy();
        let _ = searcher.search_path(
            &matcher,
            entry.path(),
            UTF8(|line, text| {
                let _ = write!(out, "{shown}:{line}:{text}");
                Ok(true)
            }),
        );
    }
    Ok(out)
}
