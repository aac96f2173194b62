//! tackle as a library: the tool runtime, the built-in tools, the agent loop and the model
//! providers behind one crate, for a Rust program that embeds them.
//!
//! This crate is a facade. Everything in it is re-exported from the workspace's crates
//! (`tackle-runtime`, `tackle-tool`, `tackle-tools`, `tackle-agent`, `tackle-llm`,
//! `tackle-protocol`, `tackle-gate`) except two conveniences: [`tool::FnTool`] (a tool from a
//! typed async function) and [`tools::Builtins`] (the built-in set, minus the tools you name).
//! What is re-exported here is the supported surface; the crates behind it hold more.
//!
//! # The shape of an embedding
//!
//! [`runtime::Runtime::builder`] assembles a [`runtime::Runtime`] from tools (the built-ins of
//! [`tools::builtins_except`], [`tool::FnTool`]s of your own), a gate (a [`gate::Policy`]
//! through `.policy(…)`, or any [`runtime::GateHook`] through `.gate(…)`: there is no default)
//! and a [`runtime::RuntimeConfig`]. A [`runtime::Session`] is opened on a project directory
//! (its store and event log live in `.agents/store/` there). Each model turn's tool calls go to
//! [`runtime::Runtime::run_batch`] as one batch; every call is parsed strictly against its
//! tool's schema, prepared, gated, run, its output retained, and recorded (`call_started` and
//! `call_finished` in the session's log) whether it succeeds or not. The agent loop
//! ([`agent::Agent`], assembled by [`agent::Agent::builder`]) does the same for a model's
//! turns, one batch per turn.
//!
//! # Run a built-in tool
//!
//! ```no_run
//! use std::sync::Arc;
//! use tackle::protocol::{CallId, ToolCall};
//! use tackle::runtime::{AllowAll, CancellationToken, Runtime, Session};
//! use tackle::tools::{BUILTIN_TOOL_NAMES, builtins_except};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let runtime = Runtime::builder()
//!     .tools(builtins_except(&["bash"])?) // an unknown name is an error naming the nearest
//!     .known_builtins(BUILTIN_TOOL_NAMES) // descriptions stop naming the tools left out
//!     .gate(Arc::new(AllowAll)) // or .policy(policy)
//!     .build()?; // two tools of one name: an error naming it
//! let session = Session::open(std::path::Path::new("."))?;
//! let call = ToolCall {
//!     id: CallId("c1".into()),
//!     name: "read_file".into(),
//!     arguments: tackle::serde_json::json!({ "path": "README.md" }),
//! };
//! let results = runtime.run_batch(&session, vec![call], CancellationToken::new()).await?;
//! println!("{}", results[0].text());
//! # Ok(()) }
//! ```
//!
//! # A custom tool
//!
//! The arguments are a struct that derives `serde::Deserialize` (with
//! `#[serde(deny_unknown_fields)]`: the catalog refuses a schema that admits unknown fields)
//! and `schemars::JsonSchema` (schemars 1, re-exported as [`schemars`]). The model sees the
//! schema generated from it, and the runtime parses its arguments strictly into it, as for
//! every built-in.
//!
//! ```no_run
//! use tackle::tool::{ExecuteContext, FnTool, PermissionResource, ToolCompletion};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct WordCountArgs {
//!     /// The file whose words are counted, relative to the project root.
//!     path: String,
//! }
//!
//! let word_count = FnTool::new(
//!     "word_count",
//!     "Counts the words of a file. Use it when you need a file's size in words.",
//!     |args: WordCountArgs, cx: ExecuteContext| async move {
//!         let text = std::fs::read_to_string(cx.root.join(&args.path))
//!             .map_err(|e| tackle::tool::ToolError::io(&args.path, &e))?;
//!         Ok(ToolCompletion::single(text.split_whitespace().count().to_string()))
//!     },
//! )
//! .read_only(true)
//! .parallel()
//! .permission(|args: &WordCountArgs| vec![PermissionResource::read(args.path.clone())]);
//! # let _ = word_count;
//! ```
//!
//! Its calls pass the same gate as the built-ins: the keys it is asked about are
//! `tool.word_count` and those [`tool::FnTool::permission`] returns (`read:notes.txt`), so a
//! [`gate::Policy`] rule such as `deny read:secrets/**` holds for it too. A rule the program
//! writes itself is [`gate::RuleSource::Embedder`], so a refusal names the program ("denied by
//! deny rule \"read:secrets/**\" set by the release bot") rather than a config file or flag:
//!
//! ```
//! use tackle::gate::{Effect, Mode, PathScope, Pattern, Policy, Rule, RuleSource, UrlScope};
//!
//! let rule = Rule::new(
//!     Effect::Deny,
//!     Pattern::parse("read:secrets/**")?,
//!     RuleSource::Embedder { by: "the release bot".into() },
//! );
//! let policy = Policy::new(vec![rule], Mode::Yolo, PathScope::default(), UrlScope::default())?;
//! # let _ = policy;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # An agent
//!
//! [`agent::Agent`] drives a model turn by turn over a runtime and a session. Any
//! [`llm::Provider`] will do: one [`llm::connect`]ed from a [`llm::ProviderSpec`], or, with no
//! network, [`llm::ReplayProvider`] playing a script of turns. [`agent::Agent::builder`] needs
//! the runtime, session, provider, model and system prompt (a missing one is an
//! [`agent::AgentBuildError`] naming its setter); bounds, watchdog, catalog form, observer and
//! task boundaries have defaults, and there is no delegation tree unless given one.
//!
//! ```no_run
//! use std::sync::Arc;
//! use tackle::agent::{Agent, ModelSetup};
//! use tackle::llm::{DeliveryFamily, ModelEntry, ReplayProvider};
//! # async fn demo(runtime: tackle::runtime::Runtime, session: tackle::runtime::Session) -> Result<(), Box<dyn std::error::Error>> {
//! let script = std::path::Path::new("script.jsonl"); // {"tackle_replay":1}, then one {"turn": …} a line
//! let entry = ModelEntry {
//!     id: "replay:scripted".parse()?,
//!     context_window: 200_000,
//!     max_output: 8192,
//!     input: vec![tackle::llm::Modality::Text],
//!     media: Vec::new(),
//!     prices: None,
//! };
//! let mut agent = Agent::builder()
//!     .runtime(runtime)
//!     .session(session)
//!     .provider(Arc::new(ReplayProvider::from_file("replay", script)?))
//!     .model(ModelSetup::new(entry, DeliveryFamily::Anthropic))
//!     .system("You count words.")
//!     .build()?;
//! let end = agent.run(Some("How many words are in notes.txt?"), tackle::runtime::CancellationToken::new()).await;
//! println!("{:?}: {:?}", end.outcome, end.last_message);
//! # Ok(()) }
//! ```
//!
//! # A tool that needs the agent
//!
//! A tool is registered in the runtime before the agent exists. One that needs the agent (to
//! ask a side question, run a piece of work) holds an empty [`agent::LateAgent`], and
//! `Agent::builder().bind(&slot)` fills it with the built agent's [`agent::AgentHandle`]. The
//! handle runs an [`agent::Subtask`] as a child run: a session of its own under the agent's
//! (the same root, store and gate, its own log naming the agent's session as parent), on the
//! agent's model, bounded in turns, offered only the tools the subtask names. It never touches
//! the running conversation, which is busy waiting on the tool.
//!
//! ```no_run
//! use tackle::agent::{LateAgent, Subtask};
//! use tackle::tool::{ExecuteContext, FnTool, ToolCompletion, ToolError};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct AskArgs {
//!     /// A self-contained question.
//!     question: String,
//! }
//!
//! let slot = LateAgent::new(); // and later: Agent::builder()…bind(&slot).build()?
//! let held = slot.clone();
//! let ask_aside = FnTool::new(
//!     "ask_aside",
//!     "Answers a self-contained question in a separate run.",
//!     move |args: AskArgs, cx: ExecuteContext| {
//!         let slot = held.clone();
//!         async move {
//!             let fail = |e: String| ToolError::new(tackle::protocol::ErrorCode::INTERNAL, e);
//!             let agent = slot.get().map_err(|e| fail(e.to_string()))?;
//!             let answered = agent
//!                 .run_subtask(Subtask::new("ask_aside", args.question), cx.cancel.clone())
//!                 .await
//!                 .map_err(|e| fail(e.to_string()))?;
//!             Ok(ToolCompletion::single(answered.answer))
//!         }
//!     },
//! )
//! .read_only(true);
//! # let _ = ask_aside;
//! ```
//!
//! The examples in `crates/facade/examples/` run each of these with no network and no key:
//! `cargo run -p tackle --example embed_runtime` (and `custom_tool`, `agent`, `subtask_tool`;
//! `mcp_server` with `--features mcp`).
//!
//! # Serve it over MCP
//!
//! With the feature `mcp`, `tackle::mcp::McpServer::new(runtime, session, options)` serves
//! the runtime's catalog, custom tools included, through `serve_stdio`, `serve_io` (any byte
//! stream pair) or `serve_http`.
//!
//! # What the library leaves to you
//!
//! - Configuration files, folder trust and third-party MCP servers offered as tools are the
//!   binary's (`tackle-config`); a program embedding tackle builds its [`gate::Policy`] and
//!   [`runtime::RuntimeConfig`] itself.
//! - `json_query` bounds a filter's memory exactly only where the program installs
//!   [`tools::MeteredAlloc`] as its `#[global_allocator]`; without it each operation is held to
//!   the budget alone.

#![deny(missing_docs)]

mod builtins;
mod fn_tool;

/// schemars 1, the version tool argument schemas are generated with: derive
/// `schemars::JsonSchema` from this version for [`tool::FnTool`] arguments.
pub use schemars;
/// serde_json, whose `Value` carries tool arguments and metadata.
pub use serde_json;

/// The runtime: catalog, sessions, batches, gates and approvals.
pub mod runtime {
    pub use tackle_runtime::{
        AllowAll, Approval, ApprovalFuture, ApprovalRequest, Approver, ArtifactRead,
        CancellationToken, Catalog, CatalogError, ChildOptions, Descriptions, EventObserver,
        ForeignLogs, GateHook, GateRequest, GateVerdict, HeadlessApprover, Narrowing, PlanGate,
        PolicyGate, Posture, PreviewLimits, ProgressObserver, Resumed, RetrieveRaw, Runtime,
        RuntimeBuildError, RuntimeBuilder, RuntimeConfig, RuntimeError, Session, SessionContext,
        SessionOptions, ToolFilter,
    };
    /// A session's event log, for reading it back: `EventLog::read_records` of
    /// [`Session::event_log_path`] gives every record in order, each event as JSON that parses
    /// into [`crate::protocol::Event`].
    pub use tackle_store::{EventLog, Record};
    /// The user's key that tags every line of a session's log, which [`Session::resume`] and
    /// [`Session::open_sealed`] take: `LogKey::load_or_create(dir)` keeps it in `dir/log-key`.
    /// A log with lines not tagged with it is foreign ([`ForeignLogs`]).
    pub use tackle_store::{LogKey, LogKeyError};
}

/// Writing tools: the typed [`tool::Tool`] trait, what a tool declares and
/// produces, and [`tool::FnTool`], a tool from an async function.
pub mod tool {
    pub use crate::fn_tool::{FnTool, ToolFn};
    pub use tackle_tool::{
        Action, Attachment, CompletionOutput, DynTool, ExecuteContext, OutputSink,
        PermissionResource, PrepareContext, Prepared, ReadScope, Routing, SerializationKey, Tool,
        ToolCompletion, ToolError, ToolProgress,
    };
}

/// The built-in tools.
pub mod tools {
    pub use crate::builtins::{Builtins, UnknownToolName, builtins, builtins_except};
    pub use tackle_tools::json_query::memory::MeteredAlloc;
    pub use tackle_tools::{
        AlertTarget, BUILTIN_TOOL_NAMES, BuiltinConfig, DeleteFile, EditFile, FetchSettings, Glob,
        Grep, JsonQuery, ListDir, ReadFile, ReadManyFiles, SearchGateMode, Stat, Todo,
        WaitSettings, WriteFile, builtin_tools,
    };
}

/// The agent loop over a runtime.
pub mod agent {
    pub use tackle_agent::late::SUBTASK_MAX_TURNS;
    pub use tackle_agent::{
        Agent, AgentBuildError, AgentBuilder, AgentError, AgentEvent, AgentHandle, AgentSetup,
        Bounds, CallEvents, Conversation, DescriptionsSetting, LateAgent, MarkTaskDone, ModelSetup,
        NotBound, ObservedApprover, Observer, RunEnd, Steering, Subtask, SubtaskAnswer,
        SubtaskError, SystemPrompt, TaskBoundaries, Unobserved, WatchdogMode, WatchdogSettings,
    };
}

/// Model providers.
pub mod llm {
    pub use tackle_llm::catalog::{Modality, ModelEntry, ModelId, ProviderKind, ProviderSpec};
    pub use tackle_llm::media::DeliveryFamily;
    pub use tackle_llm::replay::{
        Exchange, RecordingProvider, ReplayProvider, ScriptedCall, ScriptedTurn,
        parse as parse_replay,
    };
    pub use tackle_llm::{
        LlmError, Provider, StreamEvent, Transport, TransportLimits, TurnRequest, TurnStream,
        complete, connect,
    };
}

/// Plain data: calls, results, events, labels.
pub mod protocol {
    pub use tackle_protocol::{
        BatchResult, CallFinished, CallId, CallStarted, CallStatus, Concurrency, ContentBlock,
        ErrorCode, Event, Label, Message, ModelTurn, Part, Privacy, RunFinished, RunOutcome,
        RunStarted, SessionId, SessionStarted, StopReason, ToolBatchFinished, ToolBatchStarted,
        ToolCall, ToolResult, ToolSpec, Trust, Usage, UserInput,
    };
}

/// The MCP server: a runtime's catalog served to any MCP client, every call through the
/// same gate, retention and event log (feature `mcp`).
#[cfg(feature = "mcp")]
pub mod mcp {
    pub use tackle_mcp::{
        HttpOptions, HttpServeError, McpServer, ServerOptions, serve_http, serve_io, serve_stdio,
    };
}

/// Permission policy: rules over permission keys, modes and scopes.
pub mod gate {
    pub use tackle_gate::{
        Decision, Effect, Grants, Mode, PathScope, Pattern, Policy, PolicyError, Rule, RuleSource,
        UrlScope,
    };
}
