//! rmcp's `CredentialStore` over one token file of [`super::store`]: what the authorization
//! manager loads before a request and saves after a code exchange or a refresh.
//!
//! Key decision: every load reads the file again (a refresh made by another tackle process, or
//! a `tackle mcp logout`, is seen at once), and a refresh holds the file's lock from load to
//! save, so two processes never spend one single-use refresh token.

use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};

use super::store::{TokenDir, TokenRecord};

/// The store of one login: its directory and the record it writes back.
pub struct FileCredentialStore {
    dir: TokenDir,
    record: std::sync::Mutex<TokenRecord>,
}

impl FileCredentialStore {
    pub fn new(dir: TokenDir, record: TokenRecord) -> Self {
        Self {
            dir,
            record: std::sync::Mutex::new(record),
        }
    }

    fn current(&self) -> TokenRecord {
        match self.record.lock() {
            Ok(r) => r.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn store(&self, record: TokenRecord) -> Result<(), AuthError> {
        self.dir
            .save(&record)
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        match self.record.lock() {
            Ok(mut r) => *r = record,
            Err(poisoned) => *poisoned.into_inner() = record,
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl CredentialStore for FileCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let mine = self.current();
        let on_disk = self
            .dir
            .load(&mine.server, &mine.url)
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        Ok(match on_disk {
            Some(r) => r.credentials,
            // Not written yet (a login in progress) or removed by `tackle mcp logout`.
            None => None,
        })
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let mut record = self.current();
        record.credentials = Some(credentials);
        self.store(record)
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let mine = self.current();
        let dir = self.dir.clone();
        let file = tokio::task::spawn_blocking(move || dir.lock_refresh(&mine.server, &mine.url))
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        Ok(Some(CredentialRefreshGuard::new(file)))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let mine = self.current();
        self.dir
            .remove(&mine.server, &mine.url)
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        Ok(())
    }
}
