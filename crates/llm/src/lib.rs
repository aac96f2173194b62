//! Model providers: the one place vendor JSON lives.
//!
//! Owns the [`Provider`] trait (stream one turn as neutral [`StreamEvent`]s), the
//! [`TurnAssembler`] that folds them into a [`tackle_protocol::AssistantTurn`], request
//! building from the neutral conversation plus the catalog's [`tackle_protocol::ToolSpec`]s,
//! per-family schema shaping and tool-name mapping, classified errors and the HTTP transport
//! (retries, idle timeout, deadline). One module per wire format: [`anthropic`] (Messages),
//! [`openai_chat`] (Chat Completions), [`openai_responses`] (Responses), the last two also for
//! compatible servers by base URL and for Azure ([`azure`]: only where Azure serves them),
//! [`gemini`] (`streamGenerateContent`, on the Gemini API and on Vertex AI), [`bedrock`]
//! (Converse, binary event-stream frames, SigV4) and [`cohere`] (Cohere v2 Chat). What every
//! adapter shares about its endpoint (key, headers, route, redaction) is one module, `endpoint`.
//! [`replay`] records any provider's turns to a file and answers from such a file (recorded or
//! written by hand), for offline, deterministic tests of whatever drives a model.
//! [`window_probe`] asks a local or self-hosted server (llama.cpp, Ollama, vLLM, LM Studio)
//! how large a model's window is; [`LlmError::overflow_sizes`] reads the prompt and window
//! sizes of a refusal that says the request did not fit (`overflow.rs`, every family's
//! wording as data).
//!
//! **Refuses** to know what a tool does, to run one, to read artifacts or configuration files:
//! the runtime hands it a conversation and gets a turn back. The files it reads (replay
//! scripts, the window cache) are named by its caller and read through `tackle_fs::OwnFile`. Credentials come only from the
//! environment and never reach an error, a `Debug` print or a log.
//!
//! Key decision: adapters are streaming only; a non-streaming answer is the assembled stream,
//! so there is one parser per family and the byte → event path is what every test exercises.
//! Rejected alternative: one generic "OpenAI-shaped" adapter that every family is translated
//! into: thinking signatures, cache breakpoints and result placement differ too much to survive
//! a detour through another vendor's shape.

pub mod anthropic;
mod assemble;
pub mod azure;
pub mod bedrock;
pub mod catalog;
pub mod cohere;
mod connect;
mod credentials;
mod endpoint;
mod error;
mod event;
mod framing;
pub mod gemini;
mod lift;
pub mod media;
mod media_note;
pub mod openai_chat;
pub mod openai_responses;
mod overflow;
mod provider;
mod redact;
pub mod replay;
mod request;
pub mod schema;
mod token;
mod tool_names;
mod transport;
pub mod window_probe;

pub use assemble::{AssembleError, TurnAssembler};
pub use connect::connect;
pub use credentials::{ApiKey, KeySource};
pub use endpoint::{KeyHeader, Route};
pub use error::{ErrorContext, ErrorKind, LlmError};
pub use event::StreamEvent;
pub use overflow::OverflowSizes;
pub use provider::{Provider, complete};
pub use request::{ToolChoice, TurnRequest};
pub use token::{BearerToken, TokenHelp, TokenSource};
pub use tool_names::{MAX_TOOL_NAME, ToolNameMap, is_wire_safe};
pub use transport::{Transport, TransportLimits, TurnStream};
