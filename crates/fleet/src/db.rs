//! `FleetDb`: the connection pool every PostgreSQL-backed piece shares, and the dedicated
//! connections a LISTEN needs.
//!
//! **Key decision:** connections go through rustls (ring provider, webpki roots) always; the
//! URL's `sslmode` decides whether TLS is used (`disable`, `prefer` (the default: TLS when the
//! server offers it) or `require`), as libpq's would. Rejected: a second, plain-TCP connector
//! type chosen at run time, which would double every generic signature for no gain.

use std::sync::Arc;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use futures::StreamExt;
use tokio::task::JoinHandle;
use tokio_postgres::AsyncMessage;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::pg_detail;
use crate::schema::{self, SchemaReport};
use crate::{DatabaseUrl, FleetError};

/// Where the fleet database is and how many pooled connections to keep.
#[derive(Debug, Clone)]
pub struct FleetDbSettings {
    /// The environment variable holding the database URL (password included); the URL is
    /// never read from a file.
    pub database_url_env: String,
    /// Pooled connections at most (a LISTEN takes one more, outside the pool).
    pub pool_size: usize,
}

/// A pool of connections to the fleet database, with the schema checked and migrated.
/// Cheap to clone: clones share the pool.
#[derive(Clone, Debug)]
pub struct FleetDb {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool,
    config: tokio_postgres::Config,
    url: DatabaseUrl,
    tls: MakeRustlsConnect,
    schema: SchemaReport,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The driver's config redacts its password itself; the URL is redacted by its type.
        f.debug_struct("FleetDb")
            .field("url", &self.url)
            .field("pool", &self.pool.status())
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl FleetDb {
    /// Reads the URL from `settings.database_url_env`, then [`FleetDb::connect_url`].
    pub async fn connect(settings: &FleetDbSettings) -> Result<Self, FleetError> {
        let url = DatabaseUrl::from_env(&settings.database_url_env)?;
        Self::connect_url(url, settings.pool_size).await
    }

    /// Connects, then applies the schema's migrations (refusing a schema newer than this
    /// binary knows, [`FleetError::SchemaTooNew`]).
    pub async fn connect_url(url: DatabaseUrl, pool_size: usize) -> Result<Self, FleetError> {
        let config = url.config()?;
        let tls = tls().map_err(|detail| FleetError::Connect {
            url: url.redacted(),
            detail,
        })?;
        let manager = Manager::from_config(
            config.clone(),
            tls.clone(),
            ManagerConfig {
                // A pooled connection is checked by its socket's state only; a statement on a
                // dead one fails and the pool drops it.
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(pool_size.max(1))
            .build()
            .map_err(|e| FleetError::Connect {
                url: url.redacted(),
                detail: e.to_string(),
            })?;
        let mut client = pool.get().await.map_err(FleetError::pool(&url))?;
        let schema = schema::migrate(&mut client).await?;
        drop(client);
        Ok(Self {
            inner: Arc::new(Inner {
                pool,
                config,
                url,
                tls,
                schema,
            }),
        })
    }

    /// What the start-up migration found and applied.
    pub fn schema(&self) -> &SchemaReport {
        &self.inner.schema
    }

    /// The URL, for printing only through its redacted forms.
    pub fn url(&self) -> &DatabaseUrl {
        &self.inner.url
    }

    /// A pooled connection.
    pub(crate) async fn client(&self) -> Result<Object, FleetError> {
        self.inner
            .pool
            .get()
            .await
            .map_err(FleetError::pool(&self.inner.url))
    }

    /// A connection of its own, outside the pool (LISTEN is session state, which a pool would
    /// hand to the next borrower), driven by a task that hands every notification to
    /// `on_notification`. The task ends when the connection does (or is aborted).
    pub(crate) async fn dedicated(
        &self,
        mut on_notification: impl FnMut(&tokio_postgres::Notification) + Send + 'static,
    ) -> Result<(tokio_postgres::Client, JoinHandle<()>), FleetError> {
        let (client, mut connection) = self
            .inner
            .config
            .connect(self.inner.tls.clone())
            .await
            .map_err(|e| FleetError::Connect {
                url: self.inner.url.redacted(),
                detail: pg_detail(&e),
            })?;
        let task = tokio::spawn(async move {
            let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
            while let Some(message) = messages.next().await {
                match message {
                    Ok(AsyncMessage::Notification(n)) => on_notification(&n),
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
        });
        Ok((client, task))
    }
}

/// rustls with the ring provider over the webpki roots.
fn tls() -> Result<MakeRustlsConnect, String> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| format!("tls setup failed: {e}"))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}
