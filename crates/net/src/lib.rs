//! The HTTP pieces tackle's network clients share: the server-sent-events decoder
//! ([`SseDecoder`]) and the retry policy ([`RetryPolicy`]).
//!
//! **Refuses** to know any vendor's JSON, to send requests or to sleep: the decoder is bytes in,
//! events out, and the policy is a pure function from an attempt's outcome to a decision, so
//! both are tested as tables and the caller owns the clock and the connection.
//!
//! Rejected alternative: `eventsource-stream`/`reqwest-eventsource`. The latter reconnects and
//! retries on its own, which would replay a non-idempotent model generation; the former has no
//! bound on one event's size, and a hostile endpoint could grow it without limit.

mod retry;
mod sse;

pub use retry::{Attempt, GiveUp, RetryDecision, RetryHints, RetryPolicy};
pub use sse::{SseDecoder, SseError, SseEvent, SseTail};
