//! Screening: every message a client sends, over stdio or HTTP, is either handed to the SDK
//! decoded, or answered here with a JSON-RPC error that carries the request's own id.
//!
//! The SDK (`rmcp`) answers a message it cannot decode with `-32600` and **no id** (it cannot
//! read one from a message that failed to decode), ignores invalid JSON, and decodes a known
//! method with malformed params as a custom request, which it then answers "method not found".
//! No client can match such an answer to its request. Over stdio [`screen`] runs first: the
//! SDK's own decoder is tried (its result is what the SDK is handed, so a valid message costs
//! one decode), and only a message it refuses, or a known method it could decode only as a
//! custom one, is looked at as plain JSON to find its id and the right code. Over HTTP the
//! SDK's service decodes the body itself, so the screen runs only on a body it refused (see
//! `http.rs`), and a known method with bad params is answered by the server's custom-request
//! handler with [`invalid_params`]:
//!
//! | what | code | answered with |
//! |---|---|---|
//! | not JSON (or nested past serde_json's 128 levels) | -32700 | the id read from the text's start ([`prefix_id`]), else `null` |
//! | not an object, a batch, `jsonrpc` not `"2.0"`, `method` not a string, an id that is not a string or an integer in i64 | -32600 | the id when it is a string or number, else `null` |
//! | a method tackle does not serve | -32601 | the id |
//! | a known method whose params do not decode | -32602 | the id |
//!
//! A notification (no `id`) or a response that does not decode is not answered on stdio (there
//! is nobody waiting for an answer); over HTTP it gets 400 with the error and `id: null`.
//! Rejected: answering invalid JSON with silence as the SDK does to avoid an "error storm" with
//! a peer that echoes; JSON-RPC 2.0 requires the -32700 answer, and one line in gives at most
//! one line out.

pub mod prefix_id;

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorCode, JsonRpcMessage};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

pub use prefix_id::{PrefixId, prefix_id};

/// What to do with one message.
#[derive(Debug)]
pub enum Screened {
    /// Decoded: hand it to the SDK.
    Deliver(Box<ClientJsonRpcMessage>),
    /// Not for the SDK: answer (or not) as [`Rejection::reply_to`] says.
    Reject(Rejection),
}

/// Who a rejection is answered to.
#[derive(Clone, Debug, PartialEq)]
pub enum ReplyTo {
    /// The request's id, exactly as it was written (a string or a number).
    Id(Value),
    /// A request whose id cannot be read: answered with `id: null`.
    Null,
    /// A notification or a response: nobody waits for an answer.
    Nobody,
}

/// A JSON-RPC error for a message the SDK is not given.
#[derive(Clone, Debug, PartialEq)]
pub struct Rejection {
    pub reply_to: ReplyTo,
    pub code: ErrorCode,
    pub message: String,
}

impl Rejection {
    /// The error response, one JSON object with no newline. A rejection that answers nobody
    /// is written with `id: null` (HTTP answers every body).
    pub fn to_json(&self) -> Vec<u8> {
        let id = match &self.reply_to {
            ReplyTo::Id(id) => id.clone(),
            ReplyTo::Null | ReplyTo::Nobody => Value::Null,
        };
        let body = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": { "code": self.code.0, "message": self.message },
        });
        // Serializing a Value built from strings and numbers cannot fail.
        serde_json::to_vec(&body).unwrap_or_default()
    }

    /// A message over `limit` bytes, answered with the id read from its start.
    pub fn too_large(start: &[u8], limit: usize) -> Self {
        Self {
            reply_to: match prefix_id(start) {
                PrefixId::Found(id) => ReplyTo::Id(id),
                PrefixId::NotAnId | PrefixId::Unknown => ReplyTo::Null,
            },
            code: ErrorCode::INVALID_REQUEST,
            message: format!(
                "the message is over {limit} bytes, tackle's limit for one JSON-RPC message; \
                 put large content in a file and pass its path instead"
            ),
        }
    }

    /// A request refused because the session has not started (see `server::startup`).
    pub fn with(reply_to: ReplyTo, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            reply_to,
            code,
            message: message.into(),
        }
    }
}

/// The request methods the SDK decodes into a typed request (`ClientRequest`'s variants other
/// than its custom one), each with the check that names what is wrong with its params. The
/// deprecated ones (logging, legacy subscriptions) are still decoded by the SDK, so still known.
#[allow(deprecated)]
const KNOWN_REQUESTS: &[(&str, ParamsCheck)] = {
    use rmcp::model::*;
    &[
        ("ping", check::<PingRequest>),
        ("initialize", check::<InitializeRequest>),
        ("server/discover", check::<DiscoverRequest>),
        ("completion/complete", check::<CompleteRequest>),
        ("logging/setLevel", check::<SetLevelRequest>),
        ("prompts/get", check::<GetPromptRequest>),
        ("prompts/list", check::<ListPromptsRequest>),
        ("resources/list", check::<ListResourcesRequest>),
        (
            "resources/templates/list",
            check::<ListResourceTemplatesRequest>,
        ),
        ("resources/read", check::<ReadResourceRequest>),
        ("subscriptions/listen", check::<SubscriptionsListenRequest>),
        ("resources/subscribe", check::<SubscribeRequest>),
        ("resources/unsubscribe", check::<UnsubscribeRequest>),
        ("tools/call", check::<CallToolRequest>),
        ("tools/list", check::<ListToolsRequest>),
        ("tasks/get", check::<GetTaskRequest>),
        ("tasks/update", check::<UpdateTaskRequest>),
        ("tasks/cancel", check::<CancelTaskRequest>),
        ("skills/list", check::<ListSkillsRequest>),
        ("skills/get", check::<GetSkillRequest>),
        (
            "resources/directory/read",
            check::<ReadResourceDirectoryRequest>,
        ),
    ]
};

/// Why `{"method": …, "params": …}` does not decode as one request type; `None` when it does.
type ParamsCheck = fn(Value) -> Option<String>;

fn check<T: DeserializeOwned>(request: Value) -> Option<String> {
    serde_json::from_value::<T>(request)
        .err()
        .map(|e| e.to_string())
}

fn known_request(method: &str) -> Option<ParamsCheck> {
    KNOWN_REQUESTS
        .iter()
        .find(|(m, _)| *m == method)
        .map(|(_, c)| *c)
}

/// Screens one message (a line without its newline, or an HTTP body).
pub fn screen(text: &[u8]) -> Screened {
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    match serde_json::from_slice::<ClientJsonRpcMessage>(text) {
        Ok(JsonRpcMessage::Request(request))
            if matches!(&request.request, ClientRequest::CustomRequest(c)
                if known_request(&c.method).is_some()) => {}
        Ok(message) => return Screened::Deliver(Box::new(message)),
        Err(_) => {}
    }
    Screened::Reject(explain(text))
}

/// Why a message the SDK refused (or could decode only as a custom request) is not a request
/// tackle can serve.
fn explain(text: &[u8]) -> Rejection {
    let value: Value = match serde_json::from_slice(text) {
        Ok(v) => v,
        Err(e) => {
            let reply_to = match prefix_id(text) {
                PrefixId::Found(id) => ReplyTo::Id(id),
                PrefixId::NotAnId | PrefixId::Unknown => ReplyTo::Null,
            };
            return Rejection::with(
                reply_to,
                ErrorCode::PARSE_ERROR,
                format!("the message is not valid JSON ({e}); send one JSON-RPC object"),
            );
        }
    };
    let object = match value {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Rejection::with(
                ReplyTo::Null,
                ErrorCode::INVALID_REQUEST,
                "JSON-RPC batches are not accepted (MCP dropped them in 2025-06-18); send each \
                 message on its own",
            );
        }
        other => {
            return Rejection::with(
                ReplyTo::Null,
                ErrorCode::INVALID_REQUEST,
                format!("a JSON-RPC message is an object, not {}", kind_of(&other)),
            );
        }
    };
    explain_object(object)
}

fn explain_object(mut object: Map<String, Value>) -> Rejection {
    let invalid =
        |reply_to, message: String| Rejection::with(reply_to, ErrorCode::INVALID_REQUEST, message);
    let is_response = object.contains_key("result") || object.contains_key("error");
    let reply_to = match object.get("id") {
        None => ReplyTo::Nobody,
        Some(id @ (Value::String(_) | Value::Number(_))) => ReplyTo::Id(id.clone()),
        Some(_) => ReplyTo::Null,
    };
    let Some(method) = object.get("method") else {
        if is_response {
            // A client's answer to one of our requests that does not decode: answering an
            // answer would start a loop.
            return invalid(
                ReplyTo::Nobody,
                "the response does not decode as a JSON-RPC result or error".to_owned(),
            );
        }
        let reply_to = if reply_to == ReplyTo::Nobody {
            ReplyTo::Null
        } else {
            reply_to
        };
        return invalid(
            reply_to,
            "the message has no `method` (a request), `result` or `error` (a response)".to_owned(),
        );
    };
    if is_response {
        return invalid(
            reply_to,
            "a message has a `method` or a `result`/`error`, not both".to_owned(),
        );
    }
    if object.get("jsonrpc") != Some(&Value::String("2.0".to_owned())) {
        return invalid(reply_to, "`jsonrpc` must be the string \"2.0\"".to_owned());
    }
    let Value::String(method) = method else {
        return invalid(
            reply_to,
            format!("`method` must be a string, not {}", kind_of(method)),
        );
    };
    let method = method.clone();
    match object.get("id") {
        None => {
            return invalid(
                ReplyTo::Nobody,
                format!("the notification `{method}` does not decode"),
            );
        }
        Some(Value::Number(n)) if !is_request_id(n) => {
            return invalid(
                reply_to,
                format!(
                    "`id` {n} is not an integer between -2^63 and 2^63; use a string or a \
                     smaller integer"
                ),
            );
        }
        Some(Value::String(_) | Value::Number(_)) => {}
        Some(other) => {
            return invalid(
                ReplyTo::Null,
                format!(
                    "`id` must be a string or an integer, not {}",
                    kind_of(other)
                ),
            );
        }
    }
    match invalid_params(&method, object.remove("params")) {
        Some(message) => Rejection::with(reply_to, ErrorCode::INVALID_PARAMS, message),
        None => Rejection::with(
            reply_to,
            ErrorCode::METHOD_NOT_FOUND,
            format!("tackle does not serve the method `{method}`"),
        ),
    }
}

/// For a method the SDK knows that reached it as a custom request (its params did not decode),
/// the -32602 message that says what is wrong with them; `None` for a method tackle does not
/// serve (-32601).
pub fn invalid_params(method: &str, params: Option<Value>) -> Option<String> {
    let check = known_request(method)?;
    let mut request = Map::new();
    request.insert("method".to_owned(), Value::String(method.to_owned()));
    if let Some(params) = params {
        request.insert("params".to_owned(), params);
    }
    let why = check(Value::Object(request))
        .unwrap_or_else(|| "they do not match the method's schema".to_owned());
    Some(format!("invalid params for `{method}`: {why}"))
}

/// Whether the SDK can carry `n` as a request id: an i64, or an integer written as a float
/// that an f64 holds exactly (as `rmcp::model::NumberOrString` reads them).
fn is_request_id(n: &serde_json::Number) -> bool {
    n.is_i64()
        || n.as_f64()
            .is_some_and(|f| !n.is_u64() && f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0)
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests;
