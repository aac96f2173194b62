//! The HTTP client under the S3 store: reqwest over rustls with the ring provider.
//!
//! **Key decision:** object_store's batteries-included `aws` feature brings rustls with
//! aws-lc-rs, a second crypto stack with a C build; the workspace builds ring only (as
//! tackle-llm does). So the S3 client gets this connector: reqwest configured by hand with
//! rustls, ring and the webpki roots.

use std::sync::Arc;
use std::time::Duration;

use object_store::ClientOptions;
use object_store::client::{HttpClient, HttpConnector};

/// Builds the reqwest client object_store's S3 store sends through.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RingConnector {
    /// Plain `http://` endpoints are allowed (a store on loopback); otherwise HTTPS only.
    pub(crate) allow_http: bool,
}

impl HttpConnector for RingConnector {
    fn connect(&self, _options: &ClientOptions) -> object_store::Result<HttpClient> {
        let generic = |reason: String| object_store::Error::Generic {
            store: "S3",
            source: reason.into(),
        };
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| generic(format!("tls setup failed: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .https_only(!self.allow_http)
            .connect_timeout(Duration::from_secs(10))
            .pool_idle_timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| generic(format!("http client setup failed: {e}")))?;
        Ok(HttpClient::new(client))
    }
}
