//! Calling a tool's `prepare` and `execute` directly, without the runtime's layers: what the
//! tool itself costs, for benchmarks that compare it with a command-line peer.

use std::path::Path;
use std::sync::Arc;

use tackle_tool::protocol::{ArtifactUri, CallId, SessionId};
use tackle_tool::{
    AdmitAll, ArtifactSource, CancellationToken, ExecuteContext, OpenedArtifact, OutputSink,
    PrepareContext, ProgressReceiver, Tool, ToolCompletion, ToolError, ToolProgress,
};

struct NoArtifacts;

impl ArtifactSource for NoArtifacts {
    fn derived_from(&self, _: tackle_tool::protocol::Label, _: &[String]) {}

    fn open(&self, _: &ArtifactUri) -> Result<OpenedArtifact, ToolError> {
        Err(ToolError::new(
            tackle_tool::protocol::ErrorCode::ARTIFACT_MISSING,
            "benchmarks have no artifact store",
        ))
    }
}

struct Discard;

impl ProgressReceiver for Discard {
    fn accept(&self, _: ToolProgress) -> Result<(), ToolError> {
        Ok(())
    }
}

/// Parses `args`, prepares and executes `tool` against `root` (canonical), every path admitted.
pub fn call<T: Tool>(
    rt: &tokio::runtime::Runtime,
    tool: &T,
    root: &Path,
    args: serde_json::Value,
) -> Result<ToolCompletion, ToolError> {
    let args: T::Args = serde_json::from_value(args).map_err(|e| {
        ToolError::new(
            tackle_tool::protocol::ErrorCode::INVALID_ARGUMENTS,
            e.to_string(),
        )
    })?;
    let session = SessionId("bench".to_owned());
    let call_id = CallId("bench".to_owned());
    let prepared = tool.prepare(
        args,
        &PrepareContext {
            root,
            session: &session,
            turn: &tackle_tool::protocol::TurnId("t".into()),
            agent: None,
            call_id: &call_id,
            artifacts: &NoArtifacts,
            read_scope: &tackle_tool::AdmitAll,
        },
    )?;
    let cx = ExecuteContext {
        root: Arc::from(root),
        session,
        call_id,
        artifacts: Arc::new(NoArtifacts),
        output: OutputSink::new(Arc::new(Discard)),
        cancel: CancellationToken::new(),
        read_scope: Arc::new(AdmitAll),
        calls: Arc::new(tackle_tool::NoToolCalls),
    };
    rt.block_on(tool.execute(prepared.plan, cx))
}
