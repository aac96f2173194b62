//! The HTTP pieces tackle's network clients share: the SSRF guard ([`guard`]) and the client
//! that dials only what it approved ([`client`]), for model-directed requests (`fetch_url`,
//! `alert`); the server-sent-events decoder ([`SseDecoder`]) and the retry policy
//! ([`RetryPolicy`]), for model providers.
//!
//! **Refuses** to know any vendor's JSON, tool arguments or permission keys. The decoder is
//! bytes in, events out, and the policy is a pure function from an attempt's outcome to a
//! decision, so both are tested as tables and the caller owns the clock and the connection.
//! Provider endpoints, which the operator configures, go through `reqwest` in `tackle-llm`;
//! anything a model points at goes through the guarded client here.
//!
//! Rejected alternative: `eventsource-stream`/`reqwest-eventsource`. The latter reconnects and
//! retries on its own, which would replay a non-idempotent model generation; the former has no
//! bound on one event's size, and a hostile endpoint could grow it without limit.

pub mod client;
pub mod guard;
mod retry;
pub mod server_guard;
mod sse;

pub use client::{ClientError, Dialer, DirectDialer, Guarded, Hops, HttpClient, Request, Response};
pub use guard::{Blocked, GuardError, PrivateHost, Reach, Resolver, SsrfGuard, SystemResolver};

pub use retry::{Attempt, GiveUp, RetryDecision, RetryHints, RetryPolicy};
pub use sse::{SseDecoder, SseError, SseEvent, SseTail};
