//! MCP for tackle: the server that publishes a [`tackle_runtime::Runtime`]'s gated catalog to
//! any MCP client (`tackle serve`, over stdio or Streamable HTTP), and the client that offers
//! third-party MCP servers' tools as tackle tools ([`client`]).
//!
//! Owns: everything JSON-RPC (DESIGN.md §2: only this crate knows it), the mapping between
//! tackle's results and MCP's content blocks, tool annotations derived from declarations, MCP
//! progress and cancellation, elicitation as an [`tackle_runtime::Approver`], and the HTTP
//! front door (loopback by default, `Host`/`Origin` checks, bearer token, size limits).
//!
//! Refuses to own: policy (the runtime's gate decides every call exactly as for `tackle call`),
//! output shaping (retention and truncation already happened in the runtime), configuration
//! loading (the binary builds the runtime and hands it over).
//!
//! Key decision: the MCP SDK (`rmcp`) is touched only under [`server`] and [`http`], and the
//! SDK-free decisions (annotations, rendering rules) are plain functions beside them, so a
//! change of SDK version stays in two files. Each `tools/call` is a batch of one through
//! [`tackle_runtime::Runtime::run_batch`]; concurrent requests run concurrently, one implicit
//! session per server process. Rejected: a hand-written JSON-RPC loop, which would have to
//! track two protocol generations (`initialize` and 2026-07-28 `server/discover`) by itself.

pub mod annotations;
pub mod client;
pub mod http;
mod http_body;
mod http_sessions;
pub mod screen;
pub mod server;

pub use http::{HttpOptions, HttpServeError, serve_http};
pub use http_sessions::SessionLimits;
pub use server::{
    LISTING_REQUEST_KEY, McpServer, RESULT_META_KEY, ServerOptions, serve_io, serve_stdio,
};

/// The largest JSON-RPC message accepted, on stdio (one line) and over HTTP (one body).
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
