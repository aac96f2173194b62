//! `retrieve_raw`: the whole output of a call whose result arrived as a digest.
//!
//! The mapping call id → raw artifact is the session's event log: a digested call's
//! `call_finished` says `digested: true` and names its retained output. Reading it from the log
//! (rather than from memory) means a resumed session still finds calls made before.

use std::borrow::Cow;
use std::io::Read;
use std::ops::ControlFlow;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_protocol::{ArtifactUri, CallFinished, Concurrency, ErrorCode, Event};
use tackle_store::{ArtifactId, EventLog};
use tackle_tool::{
    ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing, Tool, ToolCompletion,
    ToolError,
};

use crate::session::Session;

pub const RETRIEVE_RAW: &str = "retrieve_raw";
/// No digested call with that id in this session.
pub const UNKNOWN_CALL: ErrorCode = ErrorCode::new("unknown_call");

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieveRawArgs {
    /// The call id stamped on the digest (`retrieve_raw {"call_id": "…"}` in its last line).
    pub call_id: String,
}

/// Registered only while digests are on: the digest is safe only while this can undo it.
pub struct RetrieveRaw;

impl Tool for RetrieveRaw {
    type Args = RetrieveRawArgs;
    type Plan = ArtifactUri;

    fn name(&self) -> &str {
        RETRIEVE_RAW
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Fetch the raw, un-digested output of an earlier call whose result arrived as a \
             structural digest; pass the call_id the digest names. Treat a digest as \
             authoritative: every retrieve_raw puts the whole output back into context, so \
             call it only when the digest left out something you need, and prefer narrowing \
             the original query (a subdirectory, a tighter pattern). Long output comes back \
             as a preview with a read_file hint for the rest.",
        )
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        true
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["read"]
    }

    fn prepare(
        &self,
        args: RetrieveRawArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<ArtifactUri>, ToolError> {
        let log = tackle_store::session_log_path(&Session::store_dir_for(cx.root), &cx.session.0);
        // The history is read one line at a time: a long session costs its largest line in
        // memory, not its length. Every line is checked, so damage anywhere is an error here.
        let mut digested = Vec::new();
        let mut found = None;
        EventLog::visit_records(&log, |r| {
            let Ok(Event::CallFinished(f)) = serde_json::from_value::<Event>(r.event) else {
                return ControlFlow::Continue(());
            };
            if !f.digested {
                return ControlFlow::Continue(());
            }
            if f.call_id.0 == args.call_id {
                found = Some(f);
            } else {
                digested.push(f.call_id.0);
            }
            ControlFlow::Continue(())
        })
        .map_err(|e| {
            ToolError::new(
                ErrorCode::IO,
                format!("retrieve_raw: reading the session's event log: {e}"),
            )
        })?;
        let Some(finished) = found else {
            let known = if digested.is_empty() {
                "no call in this session was digested".to_owned()
            } else {
                format!("digested calls in this session: {}", digested.join(", "))
            };
            return Err(ToolError::new(
                UNKNOWN_CALL,
                format!(
                    "retrieve_raw: no digested call `{}` in this session ({known}); pass the \
                     call_id named in the digest",
                    args.call_id
                ),
            )
            .with_metadata(json!({ "digested_calls": digested })));
        };
        let uri = raw_uri(&finished)?;
        let routing = Routing {
            resources: vec![PermissionResource::read(uri.resource())],
        };
        Ok(Prepared::new(routing, uri))
    }

    async fn execute(
        &self,
        uri: ArtifactUri,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        tackle_tool::run_tool_blocking(RETRIEVE_RAW, move || {
            let opened = cx.artifacts.open(&uri)?;
            let mut raw = Vec::with_capacity(opened.bytes as usize);
            (&opened.file)
                .read_to_end(&mut raw)
                .map_err(|e| ToolError::io("retrieve_raw", &e))?;
            let text = String::from_utf8_lossy(&raw).into_owned();
            Ok(ToolCompletion::single(text)
                .with_metadata(json!({ "artifact": uri.to_string(), "bytes": opened.bytes })))
        })
        .await?
    }
}

fn raw_uri(finished: &CallFinished) -> Result<ArtifactUri, ToolError> {
    let id = finished
        .retained_output
        .first()
        .and_then(|r| ArtifactId::from_internal_uri(&r.artifact));
    let Some(id) = id else {
        return Err(ToolError::new(
            ErrorCode::ARTIFACT_MISSING,
            format!(
                "retrieve_raw: call `{}` retained no output to return",
                finished.call_id
            ),
        ));
    };
    ArtifactUri::parse(&id.public_uri())
        .map_err(|e| ToolError::new(ErrorCode::INTERNAL, format!("retrieve_raw: {e}")))
}
