//! The tool runtime: the catalog, the dispatcher and scheduler, and the layers around every call
//! (gate hook, timeout, retention and truncation, event recording). **API boundary** for
//! embedders: an agent builds a [`Catalog`], a [`Runtime`] and a [`Session`], then calls
//! [`Runtime::run_batch`] once per model turn.
//!
//! Refuses to own: policy (the gate crate decides; [`PolicyGate`] only adapts it to the hook), tool behaviour (the
//! tools crate), storage formats (the store crate), and any wire protocol.
//!
//! Key decision: a batch is prepared whole before anything executes, so every call's routing is
//! gated and every mutation staged against the state the model saw; scheduling then follows the
//! declared concurrency only. Rejected: executing calls as they are parsed, which would let an
//! early call change what a later call's prepare observes.

mod admit;
mod approval;
mod argument_depth;
mod artifact_source;
mod blocking;
mod builder;
mod catalog;
mod clock;
mod config;
mod digest;
mod dispatch;
mod error;
mod execute;
mod gate;
mod plan_gate;
mod policy_gate;
mod progress;
mod provenance;
mod read_sources;
mod recorder;
mod restore;
pub mod retention;
pub mod schedule;
mod session;
mod session_calls;
mod session_context;
mod shape;
mod stored_arguments;
mod tool_filter;
pub mod unguessable;
pub mod visible;

pub use approval::{Approval, ApprovalFuture, ApprovalRequest, Approver, HeadlessApprover};
pub use builder::{RuntimeBuildError, RuntimeBuilder};
pub use catalog::{Catalog, CatalogError, Descriptions};
pub use config::{
    FINAL_DISPLAY_LIMIT_BYTES, HEADINGS_RESERVE_BYTES, LIVE_DISPLAY_BUDGET_BYTES, PreviewLimits,
    RESULT_LIMIT_BYTES, RuntimeConfig,
};
pub use digest::{DIGEST_THRESHOLD_BYTES, RETRIEVE_RAW, RetrieveRaw, UNKNOWN_CALL, digest_text};
pub use dispatch::Runtime;
pub use error::RuntimeError;
pub use gate::{AllowAll, ArtifactRead, GateHook, GateRequest, GateVerdict, ProducedBy};
pub use plan_gate::{PLAN_REQUIRED_RULE, PlanGate};
pub use policy_gate::PolicyGate;
pub use progress::{EventObserver, ProgressObserver};
pub use provenance::Producers;
pub use session::{ForeignLogs, Resumed, Session};
pub use session_context::{ChildOptions, Narrowing, SessionContext, SessionOptions};
pub use stored_arguments::ARGUMENTS_INLINE_LIMIT;
pub use tackle_protocol::Posture;
// What a front end needs to open and resume sessions whose logs are tagged as the user's.
pub use tackle_store::{ForeignLine, ForeignReason, LogKey, LogOrigin};
pub use tool_filter::ToolFilter;

pub use tackle_tool::CancellationToken;
