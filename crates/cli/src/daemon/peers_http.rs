//! `POST /peers` (register or renew: `{name, url, token_env?, ttl_seconds?}`) and `GET /peers`
//! (`{peers: [{name, url, token_env, expires_in_seconds}]}`) on a hub daemon.

use std::time::Instant;

use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use serde_json::json;

use super::http::{json_response, read_body, text};
use super::peers::{Registration, Registry};

/// A registration is small.
const MOST_REGISTRATION_BYTES: usize = 16 * 1024;

pub async fn handle(
    registry: &Registry,
    req: Request<Incoming>,
) -> Response<http_body_util::combinators::UnsyncBoxBody<bytes::Bytes, std::convert::Infallible>> {
    if req.method() == Method::GET {
        return json_response(
            StatusCode::OK,
            &json!({"peers": registry.live(Instant::now())}),
        );
    }
    let body = match read_body(req, MOST_REGISTRATION_BYTES).await {
        Ok((_, body)) => body,
        Err(refused) => return refused,
    };
    let registration: Registration = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return text(
                StatusCode::BAD_REQUEST,
                format!(
                    "a registration is {{\"name\", \"url\", \"token_env\"?, \"ttl_seconds\"?}}: {e}"
                ),
            );
        }
    };
    match registry.register(registration, Instant::now()) {
        Ok(peer) => json_response(StatusCode::OK, &json!({ "registered": peer })),
        Err(why) => text(StatusCode::BAD_REQUEST, why),
    }
}
