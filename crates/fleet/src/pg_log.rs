//! `PgEventLog`: a session's event log as rows keyed `(session_id, seq)`.
//!
//! **Key decision:** the seq is taken from the session's row (`next_seq`) by the same
//! statement (one transaction) that inserts the event, and that statement locks the row only
//! while the caller's lease epoch still holds it.
//! The row lock serialises one session's appenders, a rolled-back append gives its seq back,
//! and a reader sees each session's events gapless and in commit order. A fenced daemon's
//! append matches no row and is refused ([`FleetError::Fenced`]). Rejected: a sequence or
//! `bigserial`, whose values are never rolled back and do not follow commit order, so a
//! reader that advances a cursor past a gap loses the event that fills it later.
//!
//! Retried writes carry an idempotency key, unique per session: the insert is `ON CONFLICT DO
//! NOTHING`, the seq advances only when the insert went in, and a retry answers the winner's
//! seq.

use deadpool_postgres::GenericClient;
use serde_json::Value;

use crate::canonical::checksum;
use crate::lease::{Lease, refusal};
use crate::{FleetDb, FleetError};

/// One stored event.
#[derive(Debug, Clone, PartialEq)]
pub struct PgRecord {
    /// Its seq: consecutive within the session, from 1.
    pub seq: u64,
    /// The event as stored (`jsonb`: keys may come back in another order).
    pub event: Value,
}

/// What an append did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    /// The event's seq.
    pub seq: u64,
    /// The idempotency key was already recorded: nothing was written, and `seq` is the
    /// first write's.
    pub duplicate: bool,
}

/// The event logs of the sessions in a fleet database.
#[derive(Debug, Clone)]
pub struct PgEventLog {
    db: FleetDb,
}

/// An event checked for storage, with its checksum.
#[derive(Debug)]
pub(crate) struct Checked<'a> {
    value: &'a Value,
    crc: i64,
}

impl<'a> Checked<'a> {
    pub(crate) fn new(value: &'a Value) -> Result<Self, FleetError> {
        let crc = checksum(value).map_err(|reason| FleetError::EventRefused { reason })?;
        Ok(Self {
            value,
            crc: i64::from(crc),
        })
    }
}

impl PgEventLog {
    /// The logs in the fleet database `db`.
    pub fn new(db: &FleetDb) -> Self {
        Self { db: db.clone() }
    }

    /// Creates the session's row (empty log, no owner); `false` when it existed.
    pub async fn create_session(&self, session: &str) -> Result<bool, FleetError> {
        let client = self.db.client().await?;
        let created = client
            .execute(
                "INSERT INTO sessions (id) VALUES ($1) ON CONFLICT (id) DO NOTHING",
                &[&session],
            )
            .await
            .map_err(FleetError::db("create a session"))?;
        Ok(created == 1)
    }

    /// Appends `event` to the leased session's log, durable once this returns (the commit
    /// waits for the WAL flush; concurrent committers share it). With `idem_key`, a retry of
    /// an append that committed answers the first seq with `duplicate` set.
    pub async fn append(
        &self,
        lease: &Lease,
        event: &Value,
        idem_key: Option<&str>,
    ) -> Result<Appended, FleetError> {
        let checked = Checked::new(event)?;
        let client = self.db.client().await?;
        // One statement, committed on its own (and durable when it returns).
        if let Some(seq) = append_in(&client, lease, &checked, idem_key).await? {
            return Ok(Appended {
                seq,
                duplicate: false,
            });
        }
        let seq: i64 = client
            .query_one(
                "SELECT seq FROM events WHERE session_id = $1 AND idem_key = $2",
                &[&lease.session(), &idem_key],
            )
            .await
            .map_err(FleetError::db("read a duplicate append's seq"))?
            .get(0);
        Ok(Appended {
            seq: seq as u64,
            duplicate: true,
        })
    }

    /// Appends `events` as seqs `first_seq..` of the leased session in one transaction,
    /// recording every artifact they name as referenced (and no longer a collection
    /// candidate) in the same one: a working copy's records, numbered by the process that
    /// holds the lease. Idempotent: when the session is already past `first_seq` (a retry
    /// of a batch whose commit was not acknowledged), the stored events must be these, and
    /// nothing is written; a gap, or different events under those seqs, is refused.
    pub async fn append_batch(
        &self,
        lease: &Lease,
        first_seq: u64,
        events: &[Value],
    ) -> Result<(), FleetError> {
        if events.is_empty() {
            return Ok(());
        }
        // What `jsonb` cannot hold (U+0000) is replaced, not refused: a command's output may
        // carry one, and refusing it would end the session.
        let stored: Vec<std::borrow::Cow<'_, Value>> =
            events.iter().map(crate::canonical::storable).collect();
        let events: Vec<&Value> = stored.iter().map(|e| e.as_ref()).collect();
        let mut seqs = Vec::with_capacity(events.len());
        let mut crcs = Vec::with_capacity(events.len());
        let mut ref_hex = Vec::new();
        let mut ref_seq = Vec::new();
        let mut delivered_id = Vec::new();
        let mut delivered_seq = Vec::new();
        for (i, event) in events.iter().enumerate() {
            let seq = i64::try_from(first_seq + i as u64).unwrap_or(i64::MAX);
            seqs.push(seq);
            crcs.push(Checked::new(event)?.crc);
            for id in tackle_store::backend::artifacts_named(event) {
                ref_hex.push(id.to_hex());
                ref_seq.push(seq);
            }
            if let Some(id) = delivers(event) {
                delivered_id.push(id.to_owned());
                delivered_seq.push(seq);
            }
        }
        let first = seqs[0];
        let client = self.db.client().await?;
        // One statement, one round trip, committed on its own: the row lock (only while the
        // lease holds and the session is at `first`), the events, the advance, the references,
        // the candidates cleared and the posted messages the events deliver, all or nothing.
        // A batch that delivers no posted message (almost every one) runs the statement
        // without the mailbox's update.
        let delivering = !delivered_id.is_empty();
        let append = client
            .prepare_cached(if delivering {
                APPEND_DELIVERING
            } else {
                APPEND
            })
            .await
            .map_err(FleetError::db("prepare an append"))?;
        let payloads = &events;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 11] = [
            &lease.session(),
            &lease.owner(),
            &lease.epoch(),
            &first,
            &seqs,
            payloads,
            &crcs,
            &ref_hex,
            &ref_seq,
            &delivered_id,
            &delivered_seq,
        ];
        let row = client
            .query_one(&append, &params[..if delivering { 11 } else { 9 }])
            .await
            .map_err(FleetError::db("append events"))?;
        if row.get::<_, bool>(0) {
            return Ok(());
        }
        // Fenced, or the session is elsewhere than `first`: which, and is it a retry?
        let held = client
            .query_opt(
                "SELECT next_seq FROM sessions WHERE id = $1 AND owner = $2 AND lease_epoch = $3",
                &[&lease.session(), &lease.owner(), &lease.epoch()],
            )
            .await
            .map_err(FleetError::db("look up a session after a refused append"))?;
        let Some(held) = held else {
            return Err(refusal(&client, lease).await);
        };
        let last = seqs[seqs.len() - 1];
        already_stored(&client, lease.session(), first, last, held.get(0), &crcs).await
    }

    /// Up to `limit` events of `session` from `from_seq` on, in seq order, each checked
    /// against its checksum and the one before it.
    pub async fn read_from(
        &self,
        session: &str,
        from_seq: u64,
        limit: usize,
    ) -> Result<Vec<PgRecord>, FleetError> {
        let client = self.db.client().await?;
        let statement = client
            .prepare_cached(
                "SELECT seq, payload, crc FROM events
                  WHERE session_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3",
            )
            .await
            .map_err(FleetError::db("prepare an event read"))?;
        let from = i64::try_from(from_seq.max(1)).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = client
            .query(&statement, &[&session, &from, &limit])
            .await
            .map_err(FleetError::db("read events"))?;
        let mut out = Vec::with_capacity(rows.len());
        let mut expected = from as u64;
        for row in rows {
            let seq = row.get::<_, i64>(0) as u64;
            let event: Value = row.get(1);
            let crc: i64 = row.get(2);
            if seq != expected {
                return Err(FleetError::Gap {
                    session: session.to_owned(),
                    expected,
                    found: seq,
                });
            }
            let actual = checksum(&event).map_err(|reason| FleetError::Corrupt {
                session: session.to_owned(),
                seq,
                reason,
            })?;
            if i64::from(actual) != crc {
                return Err(FleetError::Corrupt {
                    session: session.to_owned(),
                    seq,
                    reason: format!("checksum {actual:08x}, recorded {crc:08x}"),
                });
            }
            out.push(PgRecord { seq, event });
            expected = seq + 1;
        }
        Ok(out)
    }

    /// Every session in the database, by id.
    pub async fn session_ids(&self) -> Result<Vec<String>, FleetError> {
        let client = self.db.client().await?;
        let rows = client
            .query("SELECT id FROM sessions ORDER BY id", &[])
            .await
            .map_err(FleetError::db("list sessions"))?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }

    /// Every artifact some session's event names, by digest.
    pub async fn referenced_artifacts(&self) -> Result<Vec<tackle_store::ArtifactId>, FleetError> {
        let client = self.db.client().await?;
        let rows = client
            .query("SELECT DISTINCT sha256 FROM artifact_refs ORDER BY 1", &[])
            .await
            .map_err(FleetError::db("list referenced artifacts"))?;
        Ok(rows
            .iter()
            .filter_map(|row| tackle_store::ArtifactId::from_hex(row.get(0)))
            .collect())
    }

    /// The seq of the session's last committed event (0 for an empty log).
    /// The sessions whose first record names `parent` as theirs (its subagents), by id.
    pub async fn children_of(&self, parent: &str) -> Result<Vec<String>, FleetError> {
        let client = self.db.client().await?;
        let rows = client
            .query(
                "SELECT session_id FROM events
                  WHERE seq = 1 AND payload->>'parent' = $1 ORDER BY session_id",
                &[&parent],
            )
            .await
            .map_err(FleetError::db("list a session's subagents"))?;
        Ok(rows.into_iter().map(|row| row.get(0)).collect())
    }

    pub async fn last_seq(&self, session: &str) -> Result<u64, FleetError> {
        let client = self.db.client().await?;
        let row = client
            .query_opt(
                "SELECT next_seq - 1 FROM sessions WHERE id = $1",
                &[&session],
            )
            .await
            .map_err(FleetError::db("read a session's last seq"))?
            .ok_or_else(|| FleetError::UnknownSession {
                session: session.to_owned(),
            })?;
        Ok(row.get::<_, i64>(0) as u64)
    }
}

/// Appends in one statement (its own transaction, or part of the caller's: `tx` is a
/// connection or a transaction): lock the session's row if the lease's owner and epoch still
/// hold it, insert the event at its `next_seq` unless `idem_key` is recorded, and advance
/// `next_seq` only if the event went in. `None` when `idem_key` was already recorded (nothing
/// changed).
///
/// One statement is one round trip: `WITH` runs the row lock, the insert and the advance as
/// one unit, the advance seeing the insert's `RETURNING`.
pub(crate) async fn append_in(
    tx: &impl GenericClient,
    lease: &Lease,
    event: &Checked<'_>,
    idem_key: Option<&str>,
) -> Result<Option<u64>, FleetError> {
    let append = tx
        .prepare_cached(
            "WITH s AS (
                 SELECT next_seq FROM sessions
                  WHERE id = $1 AND owner = $2 AND lease_epoch = $3
                    FOR UPDATE
             ), ins AS (
                 INSERT INTO events (session_id, seq, idem_key, payload, crc)
                 SELECT $1, next_seq, $4, $5, $6 FROM s
                 ON CONFLICT (session_id, idem_key) DO NOTHING
                 RETURNING seq
             ), advance AS (
                 UPDATE sessions SET next_seq = next_seq + 1
                  WHERE id = $1 AND EXISTS (SELECT 1 FROM ins)
                 RETURNING next_seq
             )
             SELECT (SELECT seq FROM ins),
                    EXISTS (SELECT 1 FROM s),
                    (SELECT count(*) FROM advance)",
        )
        .await
        .map_err(FleetError::db("prepare an append"))?;
    let row = tx
        .query_one(
            &append,
            &[
                &lease.session(),
                &lease.owner(),
                &lease.epoch(),
                &idem_key,
                event.value,
                &event.crc,
            ],
        )
        .await
        .map_err(FleetError::db("append an event"))?;
    let seq: Option<i64> = row.get(0);
    let leased: bool = row.get(1);
    if !leased {
        return Err(refusal(tx, lease).await);
    }
    Ok(seq.map(|seq| seq as u64))
}

/// A batch for `first..=last` found the session's next seq at `next`: a retry whose first
/// attempt committed is fine when every seq holds the same checksum; anything else is a gap
/// or a divergence, refused.
async fn already_stored(
    tx: &impl GenericClient,
    session: &str,
    first: i64,
    last: i64,
    next: i64,
    crcs: &[i64],
) -> Result<(), FleetError> {
    if next > last {
        let stored = tx
            .query(
                "SELECT crc FROM events WHERE session_id = $1 AND seq BETWEEN $2 AND $3
                  ORDER BY seq",
                &[&session, &first, &last],
            )
            .await
            .map_err(FleetError::db("read back a retried append"))?;
        let stored: Vec<i64> = stored.iter().map(|row| row.get(0)).collect();
        if stored == crcs {
            return Ok(());
        }
    }
    Err(FleetError::Diverged {
        session: session.to_owned(),
        first: first as u64,
        next: next as u64,
    })
}

/// A batch's statement with `$more` CTEs after the common ones: the row lock (only while the
/// lease holds and the session is at `$4`), the events, the advance, the references and the
/// collection candidates cleared.
macro_rules! append_sql {
    ($more:literal) => {
        concat!(
            "WITH s AS (
                 SELECT next_seq FROM sessions
                  WHERE id = $1 AND owner = $2 AND lease_epoch = $3 AND next_seq = $4
                    FOR UPDATE
             ), ins AS (
                 INSERT INTO events (session_id, seq, payload, crc)
                 SELECT $1, r.s, r.p, r.c
                   FROM s, unnest($5::bigint[], $6::jsonb[], $7::bigint[]) AS r(s, p, c)
                 RETURNING seq
             ), adv AS (
                 UPDATE sessions SET next_seq = $4 + cardinality($5::bigint[])
                  WHERE id = $1 AND EXISTS (SELECT 1 FROM s)
                 RETURNING next_seq
             ), refs AS (
                 INSERT INTO artifact_refs (sha256, session_id, seq)
                 SELECT x.h, $1, x.q FROM s, unnest($8::text[], $9::bigint[]) AS x(h, q)
                 ON CONFLICT DO NOTHING
             ), cand AS (
                 DELETE FROM gc_candidates
                  WHERE sha256 = ANY($8::text[]) AND EXISTS (SELECT 1 FROM s)
             )",
            $more,
            " SELECT EXISTS (SELECT 1 FROM s), (SELECT count(*) FROM ins)"
        )
    };
}

/// One batch's statement.
const APPEND: &str = append_sql!("");

/// [`APPEND`], and the posted messages the batch's `message_accepted` records deliver
/// (`$10`, at the seqs `$11`) marked consumed.
const APPEND_DELIVERING: &str = append_sql!(
    ", took AS (
         UPDATE messages m
            SET consumed_at = clock_timestamp(), consumed_seq = d.q
           FROM s, unnest($10::text[], $11::bigint[]) AS d(id, q)
          WHERE m.message_id = d.id AND m.recipient = $1 AND m.consumed_at IS NULL
     )"
);

/// The posted message an event delivers: a `message_accepted` record names it. A message
/// accepted within one process has no posted row, and marks nothing.
fn delivers(event: &Value) -> Option<&str> {
    if event.get("type")?.as_str()? != "message_accepted" {
        return None;
    }
    event.get("message_id")?.as_str()
}
