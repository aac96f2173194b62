//! `ArtifactGc`: two-phase collection of artifacts no event references.
//!
//! **Key decision:** nothing is deleted on the pass that finds it unreferenced. A pass first
//! sweeps: each candidate marked at least one grace window ago and still unreferenced is
//! deleted from `gc_candidates` (the row stays locked by that transaction) and then from the
//! bucket, and the transaction commits. Then it marks: every object older than the grace
//! window with no reference becomes a candidate. A publisher that references an artifact
//! deletes its candidate row in the same transaction as the reference
//! ([`crate::s3_artifacts::record_reference`]), so it either clears the candidate before a
//! sweep takes it, or waits on the sweep's row lock and then finds the object gone and writes
//! it again ([`crate::S3Artifacts::publish`]). One collector runs at a time (a session
//! advisory lock, released if its connection dies). Rejected: a lock that excludes publishers
//! while a collector runs (restic's), which stalls every daemon of the fleet for the length of
//! a bucket listing; and deleting straight after one listing, which races every publisher
//! that deduplicated against an old object.

use std::time::{Duration, SystemTime};

use futures::TryStreamExt;
use object_store::ObjectStoreExt;
use tackle_store::ArtifactId;

use crate::{FleetDb, FleetError, S3Artifacts};

/// The grace window of a bucket's collection: the file backend's hour raised to a day, since
/// several daemons publish into one bucket and their clocks and the bucket's may disagree.
pub const BUCKET_GRACE: Duration = Duration::from_secs(24 * 60 * 60);

/// The advisory lock key of the collector (per schema).
const COLLECTOR_LOCK: &str = "hashtext('tackle-fleet-gc:' || current_schema())";

/// What one collection pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Another collector held the lock: this pass did nothing.
    pub skipped_collector_running: bool,
    /// Artifacts deleted from the bucket by the sweep.
    pub deleted: Vec<ArtifactId>,
    /// Artifact objects listed by the mark.
    pub listed: usize,
    /// Newly marked candidates.
    pub marked: usize,
}

/// Collects one artifact store's unreferenced artifacts.
#[derive(Debug, Clone)]
pub struct ArtifactGc {
    artifacts: S3Artifacts,
    db: FleetDb,
    grace: Duration,
}

impl ArtifactGc {
    /// A collector for `artifacts`, whose references are in `db`. `grace` must exceed the
    /// longest a publication takes from its object's write to its reference's commit, plus
    /// the clock skew between the bucket and the database (kopia uses hours; the file
    /// backend's janitor one hour).
    pub fn new(artifacts: &S3Artifacts, db: &FleetDb, grace: Duration) -> Self {
        Self {
            artifacts: artifacts.clone(),
            db: db.clone(),
            grace,
        }
    }

    /// One pass: sweep the candidates due, then mark new ones.
    pub async fn collect(&self) -> Result<GcReport, FleetError> {
        let client = self.db.client().await?;
        let locked: bool = client
            .query_one(
                &format!("SELECT pg_try_advisory_lock({COLLECTOR_LOCK})"),
                &[],
            )
            .await
            .map_err(FleetError::db("take the collector lock"))?
            .get(0);
        if !locked {
            return Ok(GcReport {
                skipped_collector_running: true,
                ..GcReport::default()
            });
        }
        let result = async {
            let deleted = self.sweep().await?;
            let (listed, marked) = self.mark().await?;
            Ok(GcReport {
                skipped_collector_running: false,
                deleted,
                listed,
                marked,
            })
        }
        .await;
        let unlocked = client
            .query_one(&format!("SELECT pg_advisory_unlock({COLLECTOR_LOCK})"), &[])
            .await;
        if unlocked.is_err() {
            // The lock lives with the connection: never hand it to another borrower.
            drop(deadpool_postgres::Object::take(client));
        }
        result
    }

    /// Deletes every candidate marked a grace window ago and still unreferenced, each in a
    /// transaction that holds its row until the object is gone.
    async fn sweep(&self) -> Result<Vec<ArtifactId>, FleetError> {
        let grace = self.grace.as_secs_f64();
        let mut client = self.db.client().await?;
        // Candidates a reference reached without clearing them (none should) are dropped.
        client
            .execute(
                "DELETE FROM gc_candidates c
                  WHERE EXISTS (SELECT 1 FROM artifact_refs r WHERE r.sha256 = c.sha256)",
                &[],
            )
            .await
            .map_err(FleetError::db("drop referenced candidates"))?;
        let due: Vec<String> = client
            .query(
                "SELECT sha256 FROM gc_candidates
                  WHERE marked_at <= clock_timestamp() - make_interval(secs => $1)
                  ORDER BY sha256",
                &[&grace],
            )
            .await
            .map_err(FleetError::db("list due candidates"))?
            .into_iter()
            .map(|row| row.get(0))
            .collect();
        let mut deleted = Vec::new();
        for hex in due {
            let Some(id) = ArtifactId::from_hex(&hex) else {
                continue;
            };
            let tx = client
                .transaction()
                .await
                .map_err(FleetError::db("begin a sweep"))?;
            let taken = tx
                .query_opt(
                    "DELETE FROM gc_candidates c
                      WHERE c.sha256 = $1
                        AND c.marked_at <= clock_timestamp() - make_interval(secs => $2)
                        AND NOT EXISTS (SELECT 1 FROM artifact_refs r WHERE r.sha256 = c.sha256)
                  RETURNING sha256",
                    &[&hex, &grace],
                )
                .await
                .map_err(FleetError::db("take a candidate"))?;
            if taken.is_none() {
                tx.rollback().await.map_err(FleetError::db("end a sweep"))?;
                continue;
            }
            let key = self.artifacts.key(id);
            match self.artifacts.store().delete(&key).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => {
                    // Rolled back: the candidate stays for the next pass.
                    let _ = tx.rollback().await;
                    return Err(FleetError::object_store("delete", &key)(e));
                }
            }
            tx.commit()
                .await
                .map_err(FleetError::db("commit a sweep"))?;
            deleted.push(id);
        }
        Ok(deleted)
    }

    /// Marks every artifact object older than the grace window that nothing references;
    /// returns (objects listed, candidates added).
    async fn mark(&self) -> Result<(usize, usize), FleetError> {
        let client = self.db.client().await?;
        let now: SystemTime = client
            .query_one("SELECT clock_timestamp()", &[])
            .await
            .map_err(FleetError::db("read the database clock"))?
            .get(0);
        let cutoff = now
            .checked_sub(self.grace)
            .unwrap_or(SystemTime::UNIX_EPOCH);
        let prefix = self.artifacts.cas_prefix();
        let objects: Vec<_> = self
            .artifacts
            .store()
            .list(Some(&prefix))
            .try_collect()
            .await
            .map_err(FleetError::object_store("list", &prefix))?;
        let old: Vec<String> = objects
            .iter()
            .filter(|meta| SystemTime::from(meta.last_modified) <= cutoff)
            .filter_map(|meta| self.artifacts.id_of_key(&meta.location))
            .map(|id| id.to_hex())
            .collect();
        let marked = client
            .execute(
                "INSERT INTO gc_candidates (sha256)
                 SELECT h FROM unnest($1::text[]) AS h
                  WHERE NOT EXISTS (SELECT 1 FROM artifact_refs r WHERE r.sha256 = h)
                 ON CONFLICT (sha256) DO NOTHING",
                &[&old],
            )
            .await
            .map_err(FleetError::db("mark candidates"))?;
        Ok((objects.len(), marked as usize))
    }
}

/// Takes `ids` off the collection candidates, waiting for a sweep that holds one of them:
/// what a publisher does before it writes objects it will reference.
pub(crate) async fn clear_candidates(db: &FleetDb, ids: &[ArtifactId]) -> Result<(), FleetError> {
    if ids.is_empty() {
        return Ok(());
    }
    let hex: Vec<String> = ids.iter().map(|id| id.to_hex()).collect();
    db.client()
        .await?
        .execute("DELETE FROM gc_candidates WHERE sha256 = ANY($1)", &[&hex])
        .await
        .map_err(FleetError::db("clear collection candidates"))?;
    Ok(())
}
