//! A bound on the MCP sessions one `tackle serve --http` keeps open at once.
//!
//! Every session is a task, a channel and, at its first call, a tackle session with its own
//! event log. Without a bound a client (or anyone who can reach the port on loopback) can open
//! sessions until memory or descriptors run out. [`CappedSessions`] wraps the SDK's local
//! session manager: creating a session past [`SessionLimits::max_sessions`] is refused with an
//! error naming the limit and what to do, and a session idle for
//! [`SessionLimits::idle_expiry`] is closed by the SDK's keep-alive and removed.
//!
//! Rejected: evicting the oldest session to make room, which would let a flood of new
//! sessions end every real client's.

use std::time::Duration;

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::common::server_side_http::ServerSseMessage;
use rmcp::transport::streamable_http_server::SessionId;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use rmcp::transport::streamable_http_server::session::{RestoreOutcome, SessionManager};

/// How many sessions, and for how long an idle one is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionLimits {
    pub max_sessions: usize,
    pub idle_expiry: Duration,
}

impl SessionLimits {
    /// 64 sessions (far more than the clients one developer runs), closed after 10 idle
    /// minutes.
    pub const DEFAULT: SessionLimits = SessionLimits {
        max_sessions: 64,
        idle_expiry: Duration::from_secs(600),
    };
}

/// Why a session operation failed.
#[derive(Debug, thiserror::Error)]
pub enum CappedSessionsError {
    #[error(
        "tackle serve already has {max} open MCP sessions, its limit; close one (an HTTP DELETE \
         with its Mcp-Session-Id) or wait until an idle one expires ({idle_secs} s)"
    )]
    Full { max: usize, idle_secs: u64 },
    #[error(transparent)]
    Session(#[from] LocalSessionManagerError),
}

/// The SDK's local session manager with a bound on open sessions.
#[derive(Debug)]
pub struct CappedSessions {
    inner: LocalSessionManager,
    limits: SessionLimits,
}

impl CappedSessions {
    pub fn new(limits: SessionLimits) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(limits.idle_expiry);
        Self { inner, limits }
    }

    /// Sessions open now.
    pub async fn open_sessions(&self) -> usize {
        self.inner.sessions.read().await.len()
    }
}

impl SessionManager for CappedSessions {
    type Error = CappedSessionsError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // The count and the insertion are not one step, so concurrent creations can pass the
        // bound by at most the number of initializes in flight at that instant.
        if self.open_sessions().await >= self.limits.max_sessions {
            return Err(CappedSessionsError::Full {
                max: self.limits.max_sessions,
                idle_secs: self.limits.idle_expiry.as_secs(),
            });
        }
        Ok(self.inner.create_session().await?)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        if self.open_sessions().await >= self.limits.max_sessions {
            return Err(CappedSessionsError::Full {
                max: self.limits.max_sessions,
                idle_secs: self.limits.idle_expiry.as_secs(),
            });
        }
        Ok(self.inner.restore_session(id).await?)
    }

    fn event_store(
        &self,
    ) -> Option<std::sync::Arc<dyn rmcp::transport::streamable_http_server::session::EventStore>>
    {
        self.inner.event_store()
    }
}
