//! The sealed posture (seed 004): an agent that stays safe when the model reads a prompt
//! injection, because what the planner may *see* and what it may *decide* are enforced by
//! labels, not asked for in a prompt.
//!
//! - [`SealedState`] holds the session's reference table (`ref:N` → a file, a command's
//!   output or a processor's answer, with its label), the files a person vouched for or a write
//!   tainted, whether the planner's context has met untrusted content, and the answers a person
//!   gave; every change is recorded in the session's log ([`tackle_protocol::SealedRecord`]) and
//!   replayed on resume ([`SealedState::restore`]).
//! - [`TrustMap`] says which workspace content is trusted: what lies beneath a directory the
//!   user vouched for ([`Vouches`], `tackle trust --sealed DIR`), files vouched at the
//!   quarantined-read prompt, minus files a write of quarantined content tainted.
//! - [`SealedGate`] is the policy layer in front of the user's own gate: write_file and
//!   edit_file ask every time, run asks unless every stage is a vouched command and its input
//!   is not private, read_output asks; the user's deny rules still hold.
//! - [`catalog::tools`] builds the eleven tools, and nothing else: no shell, no MCP, no
//!   twelfth tool from a configuration file.
//!
//! The standard catalog's tools never learn about references: everything here is its own.

pub mod catalog;
mod errors;
pub mod gate;
pub mod glob;
pub mod processor;
pub mod prompt;
pub mod questions;
pub mod recorder;
pub mod reference;
pub mod state;
pub mod tools;
pub mod trust_map;
pub mod vouches;
mod walk;

pub use catalog::{SealedSetup, tools};
pub use gate::SealedGate;
pub use processor::{DOCUMENT_MARKER, ModelProcessor, Processor, ProcessorInput};
pub use questions::{Answer, Question, Questions};
pub use recorder::{Recorder, SessionRecorder};
pub use reference::RefId;
pub use state::SealedState;
pub use trust_map::TrustMap;
pub use vouches::Vouches;
