//! `FleetBackend`: the fleet behind `tackle-store`'s storage seam ([`tackle_store::backend`]):
//! session logs in PostgreSQL under leases, artifacts in a bucket.
//!
//! **Key decision:** a session is taken by claiming its lease (a new epoch), and every batch
//! the working copy's group commit ships is appended under that epoch in one transaction with
//! the artifact references it names, so a daemon that lost the session (killed, paused, cut
//! off past its lease) can no longer write it and learns so at its next commit. Leases are
//! renewed by one task every third of their length; one that expires while its holder is
//! alive is fenced like any other. A lease another process holds is waited out once, up to
//! its length (the holder may have been killed), then reported with its holder.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};

use serde_json::Value;
use tackle_store::ArtifactId;
use tackle_store::backend::{
    ArtifactBackend, Backend, BackendError, LogBackend, LogReplica, MailBackend,
};

use crate::backend_mail::FleetMail;
use crate::io::FleetIo;
use crate::{Claim, FleetDb, FleetError, Lease, Leases, PgEventLog, S3Artifacts};

/// Events read per query when a session is taken.
const READ_PAGE: usize = 2_000;

/// How often and how long a failed batch is retried before the log gives up on it.
const RETRY_DELAYS: [Duration; 3] = [
    Duration::from_millis(100),
    Duration::from_millis(400),
    Duration::from_millis(1_600),
];

/// How long letting a session go waits for the database.
const RELEASE_WAIT: Duration = Duration::from_secs(2);

/// The fleet's stores for one process. Install it with [`tackle_store::install_backend`].
#[derive(Debug)]
pub struct FleetBackend {
    shared: Arc<Shared>,
    artifacts: Option<Arc<BucketArtifacts>>,
    mail: Arc<FleetMail>,
}

#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) io: Arc<FleetIo>,
    logs: PgEventLog,
    pub(crate) leases: Leases,
    pub(crate) owner: String,
    ttl: Duration,
    /// The leases this process holds, by session.
    held: Mutex<HashMap<String, Weak<HeldLease>>>,
    describe: String,
}

/// A lease this process holds, renewed in place.
#[derive(Debug)]
struct HeldLease {
    lease: Mutex<Lease>,
}

impl HeldLease {
    fn current(&self) -> Lease {
        self.lease
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
    }
}

impl FleetBackend {
    /// The backend on `db` (and `bucket`, when artifacts are in one), taking sessions as
    /// `owner` (one process: a restarted daemon is another owner) under leases of `ttl`.
    /// `io` must be the runtime `db` was connected on.
    pub fn new(
        io: Arc<FleetIo>,
        db: FleetDb,
        bucket: Option<S3Artifacts>,
        owner: String,
        ttl: Duration,
    ) -> Self {
        let describe = match &bucket {
            Some(b) => format!(
                "postgres {}, artifacts in {}",
                db.url().redacted(),
                b.describe()
            ),
            None => format!("postgres {}", db.url().redacted()),
        };
        let shared = Arc::new(Shared {
            logs: PgEventLog::new(&db),
            leases: Leases::new(&db),
            owner,
            ttl,
            held: Mutex::new(HashMap::new()),
            io: io.clone(),
            describe,
        });
        io.spawn(renew_loop(Arc::downgrade(&shared)));
        let mail = Arc::new(FleetMail::new(&db, shared.clone()));
        let artifacts = bucket.map(|s3| {
            Arc::new(BucketArtifacts {
                s3,
                db: db.clone(),
                io,
            })
        });
        Self {
            shared,
            artifacts,
            mail,
        }
    }

    /// Who this process is in `sessions.owner`.
    pub fn owner(&self) -> &str {
        &self.shared.owner
    }
}

impl Backend for FleetBackend {
    fn describe(&self) -> String {
        self.shared.describe.clone()
    }

    fn logs(&self) -> Option<Arc<dyn LogBackend>> {
        Some(Arc::new(FleetLogs {
            shared: self.shared.clone(),
        }))
    }

    fn artifacts(&self) -> Option<Arc<dyn ArtifactBackend>> {
        self.artifacts
            .clone()
            .map(|a| a as Arc<dyn ArtifactBackend>)
    }

    fn mail(&self) -> Option<Arc<dyn MailBackend>> {
        Some(self.mail.clone() as Arc<dyn MailBackend>)
    }

    fn close(&self) {
        let held: Vec<Lease> = self
            .shared
            .lock_held()
            .drain()
            .filter_map(|(_, held)| held.upgrade())
            .map(|held| held.current())
            .collect();
        let shared = self.shared.clone();
        let _ = self.shared.io.run(async move {
            let releases = held.into_iter().map(|lease| shared.leases.release(lease));
            let _ = tokio::time::timeout(RELEASE_WAIT, futures::future::join_all(releases)).await;
        });
    }
}

/// Session logs in PostgreSQL.
#[derive(Debug)]
struct FleetLogs {
    shared: Arc<Shared>,
}

impl LogBackend for FleetLogs {
    fn create(&self, id: &str) -> Result<Arc<dyn LogReplica>, BackendError> {
        let shared = self.shared.clone();
        let session = id.to_owned();
        let lease = self
            .shared
            .io
            .run(async move {
                shared.logs.create_session(&session).await?;
                shared
                    .leases
                    .claim(&session, &shared.owner, shared.ttl)
                    .await
            })
            .and_then(|r| r)
            .map_err(|e| unavailable(id, e))?;
        match lease {
            Claim::Granted(lease) => Ok(self.hold(lease)),
            Claim::Held { owner, until } => Err(held(id, owner, until)),
        }
    }

    fn take(&self, id: &str) -> Result<(Arc<dyn LogReplica>, Vec<Value>), BackendError> {
        let replica = match self.held_by_us(id) {
            Some(replica) => replica,
            None => self.claim(id)?,
        };
        Ok((replica, self.read_all(id)?))
    }

    fn children(&self, parent: &str) -> Result<Vec<String>, BackendError> {
        let shared = self.shared.clone();
        let id = parent.to_owned();
        self.shared
            .io
            .run(async move { shared.logs.children_of(&id).await })
            .and_then(|r| r)
            .map_err(|e| unavailable(parent, e))
    }

    fn read(&self, id: &str) -> Result<Vec<Value>, BackendError> {
        let shared = self.shared.clone();
        let session = id.to_owned();
        let known = self
            .shared
            .io
            .run(async move { shared.logs.last_seq(&session).await.map(|_| ()) })
            .and_then(|r| r);
        match known {
            Ok(()) => self.read_all(id),
            Err(FleetError::UnknownSession { .. }) => Err(BackendError::UnknownSession {
                id: id.to_owned(),
                backend: self.shared.describe.clone(),
            }),
            Err(e) => Err(unavailable(id, e)),
        }
    }
}

impl FleetLogs {
    /// Every record of session `id`, a page at a time.
    fn read_all(&self, id: &str) -> Result<Vec<Value>, BackendError> {
        let shared = self.shared.clone();
        let session = id.to_owned();
        self.shared
            .io
            .run(async move {
                let mut events = Vec::new();
                loop {
                    let page = shared
                        .logs
                        .read_from(&session, events.len() as u64 + 1, READ_PAGE)
                        .await?;
                    let done = page.len() < READ_PAGE;
                    events.extend(page.into_iter().map(|r| r.event));
                    if done {
                        return Ok::<_, FleetError>(events);
                    }
                }
            })
            .and_then(|r| r)
            .map_err(|e| unavailable(id, e))
    }
}

impl FleetLogs {
    /// A replica over a lease this process already holds (a session reopened here; the
    /// renewals go on).
    fn held_by_us(&self, id: &str) -> Option<Arc<dyn LogReplica>> {
        let held = self.shared.lock_held().get(id).and_then(Weak::upgrade)?;
        Some(Arc::new(PgReplica {
            shared: self.shared.clone(),
            session: id.to_owned(),
            held,
        }))
    }

    /// Claims the session, waiting out a lease that expires within one lease's length.
    fn claim(&self, id: &str) -> Result<Arc<dyn LogReplica>, BackendError> {
        let mut waited = false;
        let mut own_retries = 50;
        loop {
            let shared = self.shared.clone();
            let session = id.to_owned();
            let claim = self
                .shared
                .io
                .run(async move {
                    shared
                        .leases
                        .claim(&session, &shared.owner, shared.ttl)
                        .await
                })
                .and_then(|r| r)
                .map_err(|e| match e {
                    FleetError::UnknownSession { .. } => BackendError::UnknownSession {
                        id: id.to_owned(),
                        backend: self.shared.describe.clone(),
                    },
                    e => unavailable(id, e),
                })?;
            match claim {
                Claim::Granted(lease) => return Ok(self.hold(lease)),
                // Our own lease, given up by a replica just dropped: its release is on its way.
                Claim::Held { owner, .. } if owner == self.shared.owner && own_retries > 0 => {
                    own_retries -= 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                Claim::Held { owner, until } => {
                    let left = until
                        .duration_since(SystemTime::now())
                        .unwrap_or(Duration::ZERO);
                    if waited || left > self.shared.ttl {
                        return Err(held(id, owner, until));
                    }
                    waited = true;
                    // The database's clock decides; a little past its expiry by ours.
                    std::thread::sleep(left + Duration::from_millis(250));
                }
            }
        }
    }

    fn hold(&self, lease: Lease) -> Arc<dyn LogReplica> {
        let session = lease.session().to_owned();
        let held = Arc::new(HeldLease {
            lease: Mutex::new(lease),
        });
        self.shared
            .lock_held()
            .insert(session.clone(), Arc::downgrade(&held));
        Arc::new(PgReplica {
            shared: self.shared.clone(),
            session,
            held,
        })
    }
}

impl Shared {
    /// The current lease of `session`, when this process holds it.
    pub(crate) fn lease_of(&self, session: &str) -> Option<Lease> {
        let held = self.lock_held().get(session).and_then(Weak::upgrade)?;
        Some(held.current())
    }

    fn lock_held(&self) -> std::sync::MutexGuard<'_, HashMap<String, Weak<HeldLease>>> {
        // Entries are independent; a panic elsewhere cannot leave the map inconsistent.
        self.held
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// A taken session's log in PostgreSQL.
#[derive(Debug)]
struct PgReplica {
    shared: Arc<Shared>,
    session: String,
    held: Arc<HeldLease>,
}

impl LogReplica for PgReplica {
    fn replicate(&self, first_seq: u64, events: &[&[u8]]) -> Result<(), BackendError> {
        let events: Vec<Value> = events
            .iter()
            .map(|bytes| serde_json::from_slice(bytes))
            .collect::<Result<_, _>>()
            .map_err(|e| BackendError::Unavailable(format!("an event is not JSON: {e}")))?;
        let events = Arc::new(events);
        let mut delays = RETRY_DELAYS.iter();
        loop {
            let shared = self.shared.clone();
            let lease = self.held.current();
            let batch = events.clone();
            let result = self
                .shared
                .io
                .run(async move { shared.logs.append_batch(&lease, first_seq, &batch).await })
                .and_then(|r| r);
            match result {
                Ok(()) => return Ok(()),
                Err(FleetError::Fenced { owner, .. }) => {
                    return Err(BackendError::Fenced {
                        id: self.session.clone(),
                        holder: owner,
                    });
                }
                Err(e @ (FleetError::Connect { .. } | FleetError::Database { .. })) => {
                    match delays.next() {
                        Some(delay) => std::thread::sleep(*delay),
                        None => return Err(unavailable(&self.session, e)),
                    }
                }
                Err(e) => return Err(unavailable(&self.session, e)),
            }
        }
    }
}

impl Drop for PgReplica {
    fn drop(&mut self) {
        // The last replica of a lease gives the session up, so another daemon need not wait
        // out its expiry; the lease map forgets it once no replica upgrades it.
        if Arc::strong_count(&self.held) == 1 {
            self.shared.lock_held().remove(&self.session);
            let shared = self.shared.clone();
            let lease = self.held.current();
            // Waited for (a daemon stopping lets its sessions go before it exits), briefly:
            // with the database away, the lease simply expires.
            let _ = self.shared.io.run(async move {
                let _ = tokio::time::timeout(RELEASE_WAIT, shared.leases.release(lease)).await;
            });
        }
    }
}

/// Renews every held lease each third of a lease's length, until the backend is gone.
async fn renew_loop(shared: Weak<Shared>) {
    loop {
        let Some(every) = shared.upgrade().map(|s| s.ttl / 3) else {
            return;
        };
        tokio::time::sleep(every.max(Duration::from_millis(100))).await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let held: Vec<Arc<HeldLease>> = shared
            .lock_held()
            .values()
            .filter_map(Weak::upgrade)
            .collect();
        for lease in held {
            let current = lease.current();
            // Fenced: the next commit says so. Unreachable: the next renewal tries again.
            if let Ok(renewed) = shared.leases.renew(&current, shared.ttl).await {
                *lease
                    .lease
                    .lock()
                    .unwrap_or_else(|poison| poison.into_inner()) = renewed;
            }
        }
    }
}

/// Artifacts in a bucket.
///
/// An upload first takes its artifacts off the collector's candidates, then puts them
/// create-only: a collection sweeping one of them holds its candidate row, so the clearing
/// waits for the sweep to finish and the put then writes the object again. From then on a new
/// mark needs a full grace window to become a sweep, longer than the batch that references the
/// artifacts takes to commit.
#[derive(Debug)]
struct BucketArtifacts {
    s3: S3Artifacts,
    db: FleetDb,
    io: Arc<FleetIo>,
}

impl ArtifactBackend for BucketArtifacts {
    fn upload(&self, artifacts: &[(ArtifactId, &Path)]) -> Result<(), BackendError> {
        let jobs: Vec<(ArtifactId, std::path::PathBuf)> = artifacts
            .iter()
            .map(|(id, path)| (*id, path.to_path_buf()))
            .collect();
        let s3 = self.s3.clone();
        let db = self.db.clone();
        self.io
            .run(async move {
                let ids: Vec<ArtifactId> = jobs.iter().map(|(id, _)| *id).collect();
                crate::artifact_gc::clear_candidates(&db, &ids)
                    .await
                    .map_err(|e| BackendError::Unavailable(e.to_string()))?;
                let uploads = jobs.into_iter().map(|(id, path)| {
                    let s3 = s3.clone();
                    async move {
                        let mut file = tokio::fs::File::open(&path).await.map_err(|e| {
                            BackendError::Unavailable(format!(
                                "artifact {}: reading {} to upload it: {e}",
                                id.public_uri(),
                                path.display()
                            ))
                        })?;
                        let put = s3.put_stream(&mut file).await.map_err(|e| {
                            BackendError::Unavailable(format!(
                                "artifact {}: {e}",
                                id.public_uri()
                            ))
                        })?;
                        if put.id != id {
                            return Err(BackendError::Unavailable(format!(
                                "artifact {}: the file changed while it was uploaded (it hashes to {})",
                                id.public_uri(),
                                put.id.public_uri()
                            )));
                        }
                        Ok(())
                    }
                });
                futures::future::try_join_all(uploads).await.map(drop)
            })
            .map_err(|e| BackendError::Unavailable(e.to_string()))?
    }

    fn download(&self, id: ArtifactId) -> Result<Option<Vec<u8>>, BackendError> {
        let s3 = self.s3.clone();
        let got = self
            .io
            .run(async move { s3.get(id).await })
            .map_err(|e| BackendError::Unavailable(e.to_string()))?;
        match got {
            Ok(bytes) => Ok(Some(Vec::from(bytes))),
            Err(FleetError::ArtifactMissing { .. }) => Ok(None),
            Err(e) => Err(BackendError::Unavailable(e.to_string())),
        }
    }
}

pub(crate) fn unavailable(id: &str, e: FleetError) -> BackendError {
    BackendError::Unavailable(format!("session {id}: {e}"))
}

fn held(id: &str, owner: String, until: SystemTime) -> BackendError {
    let left = until.duration_since(SystemTime::now()).map_or_else(
        |_| "now".to_owned(),
        |d| format!("{}s from now", d.as_secs()),
    );
    BackendError::Held {
        id: id.to_owned(),
        holder: owner,
        until: left,
    }
}
