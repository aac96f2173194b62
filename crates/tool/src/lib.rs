//! The `Tool` trait and everything a tool sees: its arguments, what it declares in `prepare`,
//! the output sink it streams into, and the errors it returns.
//!
//! A tool here *declares* and *produces*; it never decides. It states where a call lands
//! ([`Routing`]: paths, URLs, verbs, peers), what must not run beside it ([`SerializationKey`]),
//! and the staged work it will do ([`Prepared::plan`]); the runtime's layers gate, schedule,
//! truncate, retain and record. Keeping those concerns out of tools is what lets every tool be
//! governed the same way.
//!
//! Key decision: tools are written against a typed trait ([`Tool`], with `Args` parsed strictly
//! and a JSON Schema generated from the same type) and the runtime holds them type-erased as
//! [`DynTool`]. The schema a model sees and the parser that checks its arguments can therefore
//! never disagree. Rejected: hand-written schemas beside hand-written parsers.

mod artifacts;
mod blocking;
mod context;
mod dyn_tool;
mod error;
mod output;
pub mod plan_gate;
mod portable_schema;
mod prepared;
mod schema;
mod summary;
mod survey;
pub mod time;
mod tool_calls;

pub use artifacts::{ArtifactSource, OpenedArtifact};
pub use blocking::{run_blocking, run_tool_blocking, tool_work_running};
pub use context::{AdmitAll, ExecuteContext, PrepareContext, ReadScope};
pub use dyn_tool::{DynTool, ErasedPlan};
pub use error::ToolError;
pub use output::{
    Attachment, CompletionOutput, OutputChunk, OutputSink, ProgressReceiver, ToolCompletion,
    ToolProgress,
};
pub use plan_gate::{PlanMode, PlanRecords};
pub use portable_schema::{PORTABLE_KEYWORDS, first_unportable, portable};
pub use prepared::{Action, PermissionResource, Prepared, Routing, SerializationKey};
pub use schema::{SchemaError, strict_schema_for};
pub use summary::first_sentence;
pub use survey::{FileRead, FileReadOutcome, LineMatch, SurveyListing};
pub use tool_calls::{CALLS_UNAVAILABLE, CallFuture, CallTarget, NoToolCalls, ToolCalls};

pub use tackle_protocol as protocol;
pub use tokio_util::sync::CancellationToken;

use std::borrow::Cow;
use std::future::Future;

use serde::de::DeserializeOwned;
use tackle_protocol::{Concurrency, ErrorCode, Label, OutputDeclaration, SessionId, Truncation};

/// A tool, written against typed arguments.
///
/// The life of a call: the runtime parses the model's JSON into `Args` (strictly: unknown
/// fields, missing fields and wrong types are `invalid_arguments`), calls [`Tool::prepare`] for
/// every call of the batch before any executes, gates the declared routing, schedules, then
/// calls [`Tool::execute`] with the plan.
pub trait Tool: Send + Sync + 'static {
    /// The argument object. Derive `Deserialize` with `#[serde(deny_unknown_fields)]` and
    /// `JsonSchema`; the catalog refuses a schema without `additionalProperties: false`.
    type Args: DeserializeOwned + schemars::JsonSchema + Send + 'static;
    /// What `prepare` hands to `execute`: resolved targets, staged bytes, base hashes.
    type Plan: Send + 'static;

    /// The model-facing name, `^[A-Za-z0-9_-]{1,64}$`.
    fn name(&self) -> &str;

    /// A prescriptive, model-facing description: what the tool does *and when to prefer it*.
    fn description(&self) -> Cow<'static, str>;

    /// The description in one sentence, for the compact catalog a model with a small context
    /// window gets (the schema is the same): by default the description's first sentence.
    fn summary(&self) -> Cow<'static, str> {
        summary::derived(self.description())
    }

    /// `Exclusive` unless the tool is known to be safe beside sibling calls.
    fn concurrency(&self) -> Concurrency {
        Concurrency::Exclusive
    }

    /// Whether the tool never mutates anything. Required: there is no safe default.
    fn read_only(&self) -> bool;

    fn output(&self) -> OutputDeclaration {
        OutputDeclaration::Single
    }

    fn truncation(&self) -> Truncation {
        Truncation::Bounded
    }

    /// The permission actions this tool's routing keys use (`read`, `write`, `fetch`,
    /// `message`, `tool.bash.cmd`, …), besides `tool.<name>`. The catalog uses them to decide
    /// whether any rule could ever allow the tool; one that none could is not advertised.
    fn permission_actions(&self) -> &'static [&'static str] {
        &[]
    }

    /// The code a call whose arguments fail the strict parse is refused with. A tool whose
    /// specification names its own (`send_message:invalid_arguments`) says so here.
    fn invalid_arguments_code(&self) -> ErrorCode {
        ErrorCode::INVALID_ARGUMENTS
    }

    /// Whether this is a *survey* tool (seed 003, "Digested survey tools"): one that answers
    /// "what is out there" over a loosely named set (a directory, a glob, a pattern). Above a
    /// threshold the runtime shows the model a structural digest of its result instead, with
    /// `retrieve_raw` to get the whole. Tools whose output is the narrowing move (read_file) or
    /// must stay verbatim (bash, json_query) are not.
    fn survey(&self) -> bool {
        false
    }

    /// Whether this tool calls other tools through [`ExecuteContext::calls`]. Only such a tool
    /// is handed a live [`ToolCalls`]; every other sees [`NoToolCalls`].
    fn calls_tools(&self) -> bool {
        false
    }

    /// The information-flow label of this tool's results.
    fn label(&self) -> Label {
        Label::LOCAL
    }

    /// Whether the tool keeps state per session that its own successful calls build (todo's
    /// list). A session's log is then the state's record: when the session is resumed, the
    /// runtime hands the arguments of those calls back to [`Tool::restore`] before the
    /// session's first batch runs.
    fn session_state(&self) -> bool {
        false
    }

    /// Rebuild `session`'s state from the arguments of its calls that ended `ok`, oldest first,
    /// replacing whatever the tool holds for it. Only asked of tools that say
    /// [`Tool::session_state`].
    fn restore(&self, _session: &SessionId, _calls: Vec<Self::Args>) {}

    /// Resolve targets and stage work; no side effects on the project.
    fn prepare(
        &self,
        args: Self::Args,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<Self::Plan>, ToolError>;

    /// Do the work, streaming output into `cx.output` or returning it in the completion.
    fn execute(
        &self,
        plan: Self::Plan,
        cx: ExecuteContext,
    ) -> impl Future<Output = Result<ToolCompletion, ToolError>> + Send;
}
