//! Where this process keeps session logs and artifacts besides the project's files: the
//! user's `[store]` and `[artifacts]` ([`tackle_config::storage_settings`]) turned into the
//! fleet backend and installed behind `tackle-store`'s seam before any session is opened.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow};
use tackle_config::storage_settings::{ArtifactsBackend, StorageSettings, StoreBackend};
use tackle_fleet::{
    DatabaseUrl, FleetBackend, FleetDb, FleetIo, Peers, S3Artifacts, S3Credentials, S3Settings,
};

/// The fleet's database and bucket, connected (the schema checked and migrated).
pub struct Fleet {
    pub io: Arc<FleetIo>,
    pub db: FleetDb,
    pub bucket: Option<S3Artifacts>,
    pub lease: Duration,
}

/// Connects to what `settings` name; `None` when logs are kept in files alone.
pub fn connect(settings: &StorageSettings) -> anyhow::Result<Option<Fleet>> {
    let StoreBackend::Postgres {
        database_url_env,
        pool_size,
        lease,
    } = &settings.store
    else {
        return Ok(None);
    };
    let url = DatabaseUrl::from_env(database_url_env).map_err(|e| anyhow!("[store]: {e}"))?;
    let io = Arc::new(FleetIo::start().map_err(|e| anyhow!("[store]: {e}"))?);
    let db = io
        .run(FleetDb::connect_url(url, *pool_size))
        .and_then(|r| r)
        .map_err(|e| anyhow!("[store]: {e}"))?;
    let bucket = match &settings.artifacts {
        ArtifactsBackend::Files => None,
        ArtifactsBackend::S3 {
            endpoint,
            bucket,
            region,
            prefix,
            allow_http,
        } => Some(
            S3Artifacts::connect(&S3Settings {
                endpoint: endpoint.clone(),
                bucket: bucket.clone(),
                region: region.clone(),
                prefix: prefix.clone(),
                allow_http: *allow_http,
                credentials: S3Credentials::Environment,
            })
            .map_err(|e| anyhow!("[artifacts]: {e}"))?,
        ),
    };
    Ok(Some(Fleet {
        io,
        db,
        bucket,
        lease: *lease,
    }))
}

/// A backend installed: what it is, and the fleet's peer registry.
pub struct Installed {
    pub described: String,
    pub io: Arc<FleetIo>,
    pub peers: Peers,
}

/// Installs the backend `settings` name, if any, and says what it is. `name` tells this
/// process apart in the database (a daemon's `--name`); a random part is always added, so a
/// restarted process is another owner and waits out its predecessor's lease.
pub fn install(
    settings: &StorageSettings,
    name: Option<&str>,
) -> anyhow::Result<Option<Installed>> {
    let Some(fleet) = connect(settings)? else {
        return Ok(None);
    };
    let owner = format!(
        "{}:{}:{}",
        name.map_or_else(host_name, str::to_owned),
        std::process::id(),
        &tackle_runtime::unguessable::unguessable_id("")[1..9]
    );
    let peers = Peers::new(&fleet.db);
    let io = fleet.io.clone();
    let backend = FleetBackend::new(fleet.io, fleet.db, fleet.bucket, owner, fleet.lease);
    let described = format!(
        "{} (as {})",
        tackle_store::backend::Backend::describe(&backend),
        backend.owner()
    );
    tackle_store::install_backend(Arc::new(backend))
        .map_err(|_| anyhow!("a storage backend is installed already in this process"))
        .context("[store]")?;
    Ok(Some(Installed {
        described,
        io,
        peers,
    }))
}

/// A name for this process in `sessions.owner` when it is not a daemon (`tackle store
/// migrate`).
pub fn owner_for(what: &str) -> String {
    format!("{}:{what}:{}", host_name(), std::process::id())
}

/// This machine's name, for telling daemons apart in the database.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "host".to_owned())
}
