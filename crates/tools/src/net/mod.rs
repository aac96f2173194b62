//! What the network tools (`fetch_url`, `alert`) share: the SSRF guard ([`guard`]) and the
//! HTTP client that dials only what the guard approved ([`client`]).
//!
//! Refuses to own: tool arguments, output formats and permission keys; those belong to the
//! tools. The runtime's gate checks a fetch's first URL; this module checks every hop.

pub mod client;
pub mod guard;

pub use client::{ClientError, Dialer, DirectDialer, Guarded, Hops, HttpClient, Request, Response};
pub use guard::{Blocked, GuardError, PrivateHost, Reach, Resolver, SsrfGuard, SystemResolver};
