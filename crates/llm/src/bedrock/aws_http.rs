//! The HTTP client aws-config's credential providers send through (STS for assumed roles and
//! web identity, the SSO portal, the container and instance metadata endpoints): the provider's
//! own `reqwest` client, so credentials travel over the same rustls-with-ring configuration and
//! webpki roots as the turns, and no second TLS stack is built.
//!
//! Rejected alternative: `aws-smithy-http-client` with its `rustls-ring` feature, which brings
//! hyper's legacy client, tower and the system's root store beside the client this crate
//! already has.

use std::time::Duration;

use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_runtime_api::http::StatusCode;
use aws_smithy_types::body::SdkBody;
use http::{HeaderName, HeaderValue};

/// Headers whose values are credentials (SigV4 of an STS call, the SSO portal's bearer token,
/// the instance metadata session token).
const SENSITIVE: [&str; 4] = [
    "authorization",
    "x-amz-security-token",
    "x-amz-sso_bearer_token",
    "x-aws-ec2-metadata-token",
];

/// aws-smithy's [`HttpClient`] over a `reqwest` client.
#[derive(Clone, Debug)]
pub(crate) struct ReqwestClient {
    client: reqwest::Client,
}

impl ReqwestClient {
    pub fn new(client: reqwest::Client) -> Self {
        Self { client }
    }
}

impl HttpClient for ReqwestClient {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        _components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        // reqwest's connect timeout is the client's; the two the SDK asks for bound the whole
        // exchange instead (the metadata endpoints' one-second timeouts matter off EC2).
        let timeout = settings
            .connect_timeout()
            .zip(settings.read_timeout())
            .map(|(connect, read)| connect + read);
        SharedHttpConnector::new(Connector {
            client: self.client.clone(),
            timeout,
        })
    }
}

#[derive(Debug)]
struct Connector {
    client: reqwest::Client,
    timeout: Option<Duration>,
}

impl HttpConnector for Connector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let client = self.client.clone();
        let timeout = self.timeout;
        HttpConnectorFuture::new(async move { send(&client, request, timeout).await })
    }
}

async fn send(
    client: &reqwest::Client,
    request: HttpRequest,
    timeout: Option<Duration>,
) -> Result<HttpResponse, ConnectorError> {
    let other = |why: String| ConnectorError::other(why.into(), None);
    let method = reqwest::Method::from_bytes(request.method().as_bytes())
        .map_err(|e| other(format!("request method: {e}")))?;
    let body = request
        .body()
        .bytes()
        .ok_or_else(|| other("a streaming request body is not supported here".into()))?
        .to_vec();
    let mut builder = client.request(method, request.uri()).body(body);
    for (name, value) in request.headers() {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| other(format!("request header name: {e}")))?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|_| other(format!("request header `{name}` is not a header value")))?;
        value.set_sensitive(SENSITIVE.contains(&name.as_str()));
        builder = builder.header(name, value);
    }
    if let Some(timeout) = timeout {
        builder = builder.timeout(timeout);
    }
    let response = builder.send().await.map_err(connector_error)?;
    let status = StatusCode::try_from(response.status().as_u16())
        .map_err(|e| other(format!("response status: {e}")))?;
    let headers: Vec<(String, String)> = response
        .headers()
        .iter()
        .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
        .collect();
    let bytes = response.bytes().await.map_err(connector_error)?;
    let mut out = HttpResponse::new(status, SdkBody::from(bytes));
    for (name, value) in headers {
        out.headers_mut().append(name, value);
    }
    Ok(out)
}

fn connector_error(e: reqwest::Error) -> ConnectorError {
    if e.is_timeout() {
        ConnectorError::timeout(e.into())
    } else if e.is_connect() || e.is_request() || e.is_body() {
        ConnectorError::io(e.into())
    } else {
        ConnectorError::other(e.into(), None)
    }
}
