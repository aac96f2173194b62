//! The TLS crypto provider of every HTTPS client the MCP client builds (its own connections,
//! `tackle mcp login`, and the clients rmcp's OAuth support builds inside).
//!
//! reqwest is built with rustls and no provider of its own choosing (the workspace compiles ring,
//! not aws-lc-rs), and a client built without a provider installed panics. tackle-llm hands its
//! client a provider explicitly; the clients built inside rmcp cannot be handed one, so the
//! process default is installed, once, before the first is built.

/// Installs ring as the process's rustls provider unless one is installed already.
pub fn ensure_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err means another provider was installed first, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_https_client_can_be_built() {
        super::ensure_crypto_provider();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
        assert!(reqwest::Client::builder().build().is_ok());
    }
}
