//! What stdio hands the SDK before a session has started.
//!
//! Until `initialize` (or a 2026-07-28 request that carries its protocol version and client
//! capabilities in `_meta`), the SDK's start-up loop takes only requests: a notification or a
//! response there ends it ("expected initialize request"), and with it `tackle serve`. A client
//! that sends `notifications/initialized` or `notifications/cancelled` early, or a stray
//! response, must not be able to end the server, so [`Startup::admit`] holds them back until the
//! session starts, and answers a request that cannot start one (no `_meta` protocol version)
//! with an error that says to initialize first. Ping, `server/discover` and requests with
//! 2026-07-28 metadata go to the SDK, which answers them itself.
//!
//! Pure: no I/O, so the rules are tested as a table.

use std::borrow::Cow;

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorCode, GetMeta, JsonRpcMessage, ProtocolVersion,
};

use crate::screen::{Rejection, ReplyTo};

/// Whether a session has started, and what can start one.
#[derive(Debug)]
pub struct Startup {
    started: bool,
    /// The protocol versions the server accepts in a request's `_meta`.
    versions: Cow<'static, [ProtocolVersion]>,
}

/// What to do with one decoded message.
#[derive(Debug, PartialEq)]
pub enum Admission {
    Deliver,
    /// Held back: a notification or a response before the session started.
    Ignore,
    /// Answered here, not delivered.
    Refuse(Rejection),
}

impl Startup {
    pub fn new(versions: Cow<'static, [ProtocolVersion]>) -> Self {
        Self {
            started: false,
            versions,
        }
    }

    pub fn admit(&mut self, message: &ClientJsonRpcMessage) -> Admission {
        if self.started {
            return Admission::Deliver;
        }
        let JsonRpcMessage::Request(request) = message else {
            return Admission::Ignore;
        };
        match &request.request {
            ClientRequest::InitializeRequest(_) => {
                self.started = true;
                Admission::Deliver
            }
            ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => Admission::Deliver,
            other => {
                let meta = other.get_meta();
                let Some(version) = meta.protocol_version() else {
                    return Admission::Refuse(Rejection::with(
                        ReplyTo::Id(request.id.clone().into_json_value()),
                        ErrorCode::INVALID_REQUEST,
                        format!(
                            "`{}` came before `initialize`: send `initialize` first (or, under \
                             protocol 2026-07-28, give the request `_meta` with protocolVersion \
                             and clientCapabilities)",
                            other.method()
                        ),
                    ));
                };
                // The SDK starts a stateless session exactly when the metadata is complete and
                // names a version it serves; otherwise it answers the request and keeps waiting.
                if meta
                    .missing_required_keys(&ProtocolVersion::V_2026_07_28)
                    .is_empty()
                    && self.versions.contains(&version)
                {
                    self.started = true;
                }
                Admission::Deliver
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(v: serde_json::Value) -> ClientJsonRpcMessage {
        serde_json::from_value(v).unwrap()
    }

    fn init() -> serde_json::Value {
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}})
    }

    fn stateless(version: &str) -> serde_json::Value {
        json!({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    }

    /// One row per sequence: the messages in order and what each becomes.
    #[test]
    fn only_requests_reach_the_sdk_before_the_session_starts() {
        use Admission::{Deliver, Ignore};
        let initialized = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        let cancelled =
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}});
        let response = json!({"jsonrpc":"2.0","id":9,"result":{}});
        let ping = json!({"jsonrpc":"2.0","id":2,"method":"ping"});
        let list = json!({"jsonrpc":"2.0","id":4,"method":"tools/list"});
        type Row = (
            &'static str,
            Vec<(serde_json::Value, fn(&Admission) -> bool)>,
        );
        let refused: fn(&Admission) -> bool = |a| {
            matches!(a, Admission::Refuse(r) if r.reply_to == ReplyTo::Id(json!(4))
                && r.code == ErrorCode::INVALID_REQUEST)
        };
        let delivered: fn(&Admission) -> bool = |a| *a == Deliver;
        let ignored: fn(&Admission) -> bool = |a| *a == Ignore;
        let table: Vec<Row> = vec![
            (
                "notifications before initialize are held back, then delivered",
                vec![
                    (initialized.clone(), ignored),
                    (cancelled.clone(), ignored),
                    (response.clone(), ignored),
                    (init(), delivered),
                    (initialized.clone(), delivered),
                    (cancelled.clone(), delivered),
                ],
            ),
            (
                "a request before initialize is answered; ping goes to the SDK",
                vec![
                    (list.clone(), refused),
                    (ping.clone(), delivered),
                    (init(), delivered),
                    (list.clone(), delivered),
                ],
            ),
            (
                "a complete 2026-07-28 request starts the session",
                vec![
                    (stateless(ProtocolVersion::V_2026_07_28.as_str()), delivered),
                    (initialized.clone(), delivered),
                ],
            ),
            (
                "an unsupported version is the SDK's to refuse; the session has not started",
                vec![
                    (stateless("1999-01-01"), delivered),
                    (initialized.clone(), ignored),
                ],
            ),
        ];
        for (what, steps) in table {
            let mut startup = Startup::new(Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS));
            for (i, (m, ok)) in steps.into_iter().enumerate() {
                let got = startup.admit(&message(m.clone()));
                assert!(ok(&got), "{what}: step {i} ({m}) gave {got:?}");
            }
        }
    }
}
