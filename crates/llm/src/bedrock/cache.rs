//! AWS credentials kept until shortly before they expire: resolved at the first turn that needs
//! them, once however many turns wait, and again when they are about to expire or a turn was
//! refused with them.
//!
//! The cache is aws-smithy's `ExpiringCache`, the one under the SDK's lazy identity cache, with
//! that cache's defaults: refreshed ten seconds before the expiry, and credentials that carry no
//! expiry (static keys, a `credential_process` that prints none) kept fifteen minutes.

use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_smithy_runtime::expiring_cache::ExpiringCache;

use crate::error::LlmError;

/// How long before their expiry credentials are fetched again.
const REFRESH_BEFORE: Duration = Duration::from_secs(10);
/// How long credentials without an expiry are kept.
const DEFAULT_LIFETIME: Duration = Duration::from_secs(15 * 60);

pub(crate) struct CredentialsCache {
    current: Mutex<ExpiringCache<Credentials, LlmError>>,
}

impl CredentialsCache {
    pub fn new() -> Self {
        Self {
            current: Mutex::new(ExpiringCache::new(REFRESH_BEFORE)),
        }
    }

    fn cache(&self) -> ExpiringCache<Credentials, LlmError> {
        match self.current.lock() {
            Ok(cache) => cache.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The cached credentials while they are fresh, else those `load` resolves (one load at a
    /// time; a failed load is not kept).
    pub async fn get<F, Fut>(&self, load: F) -> Result<Credentials, LlmError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Credentials, LlmError>>,
    {
        let cache = self.cache();
        let now = SystemTime::now();
        if let Some(credentials) = cache.yield_or_clear_if_expired(now).await {
            return Ok(credentials);
        }
        cache
            .get_or_load(|| async move {
                let credentials = load().await?;
                let expiry = credentials.expiry().unwrap_or(now + DEFAULT_LIFETIME);
                Ok((credentials, expiry))
            })
            .await
    }

    /// Forgets the credentials (the service refused them), so the next turn resolves anew.
    pub fn invalidate(&self) {
        let fresh = ExpiringCache::new(REFRESH_BEFORE);
        match self.current.lock() {
            Ok(mut cache) => *cache = fresh,
            Err(poisoned) => *poisoned.into_inner() = fresh,
        }
    }
}

impl std::fmt::Debug for CredentialsCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CredentialsCache(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn credentials(expiry: Option<SystemTime>, n: usize) -> Credentials {
        Credentials::new(format!("AKID{n}"), "secret", None, expiry, "test")
    }

    #[tokio::test]
    async fn fresh_credentials_are_kept_and_expiring_ones_fetched_again() {
        let loads = AtomicUsize::new(0);
        let load = |expiry: Option<SystemTime>| {
            let n = loads.fetch_add(1, Ordering::SeqCst) + 1;
            async move { Ok(credentials(expiry, n)) }
        };
        let cache = CredentialsCache::new();
        let far = SystemTime::now() + Duration::from_secs(3600);
        assert_eq!(
            cache.get(|| load(Some(far))).await.unwrap().access_key_id(),
            "AKID1"
        );
        assert_eq!(
            cache.get(|| load(Some(far))).await.unwrap().access_key_id(),
            "AKID1"
        );
        cache.invalidate();
        // Inside the refresh margin: used for this turn, fetched again for the next.
        let soon = SystemTime::now() + REFRESH_BEFORE / 2;
        assert_eq!(
            cache
                .get(|| load(Some(soon)))
                .await
                .unwrap()
                .access_key_id(),
            "AKID2"
        );
        assert_eq!(
            cache.get(|| load(None)).await.unwrap().access_key_id(),
            "AKID3"
        );
        assert_eq!(
            cache.get(|| load(None)).await.unwrap().access_key_id(),
            "AKID3"
        );
        assert_eq!(loads.load(Ordering::SeqCst), 3);
        assert!(!format!("{cache:?}").contains("AKID"));
    }
}
