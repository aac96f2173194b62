//! `tackle store migrate`: a project's sessions and artifacts moved between its files and the
//! fleet's database and bucket, each record checked against its checksum and each artifact
//! against its digest on both sides.
//!
//! Files to the database: only logs whose every line this user's tackle tagged (a log a
//! repository shipped would otherwise come back from the database as the user's own); a
//! session the database has already is compared record by record and completed if it holds
//! a prefix, refused if it differs. The database to files: the same the other way, the working
//! copy written whole under the user's key. Runs again safely: what is there already is
//! checked and left.

use std::ops::ControlFlow;
use std::sync::Arc;

use anyhow::anyhow;
use serde_json::{Value, json};
use tackle_config::Config;
use tackle_fleet::{Claim, FleetDb, FleetIo, Leases, PgEventLog, S3Artifacts};
use tackle_store::{ArtifactId, ArtifactStore, EventLog, LogKey, LogOrigin, LogSeal};

use crate::args::StoreKind;
use crate::commands::Failure;
use crate::exit;
use crate::storage::Fleet;

/// Events appended per transaction.
const BATCH: usize = 500;

/// What happened to one session.
#[derive(Debug)]
enum Outcome {
    Moved { events: usize },
    Completed { events: usize, had: usize },
    AlreadyThere { events: usize },
    Skipped(String),
    Failed(String),
}

pub fn migrate(config: &Config, from: StoreKind, to: StoreKind, json: bool) -> Result<u8, Failure> {
    if from == to {
        return Err(Failure::Usage(anyhow!(
            "--from and --to are both {from:?}: name two backends (files and postgres)"
        )));
    }
    let fleet = crate::storage::connect(&config.storage)
        .map_err(|e| Failure::Usage(anyhow!("{e:#}")))?
        .ok_or_else(|| {
            Failure::Usage(anyhow!(
                "your config keeps sessions in files alone: set [store] backend = \"postgres\" (and database_url_env) in {} to name the database",
                tackle_config::user_config_path()
                    .map_or_else(|| "your user config".to_owned(), |p| p.display().to_string())
            ))
        })?;
    let key = crate::own_sessions::key().map_err(|why| {
        Failure::Usage(anyhow!(
            "cannot tell which logs are yours without your log key: {why}"
        ))
    })?;
    let store_dir = tackle_runtime::Session::store_dir_for(&config.root);
    let store = ArtifactStore::open(&store_dir).map_err(|e| Failure::Engine(e.into()))?;
    let move_ = Move {
        fleet: &fleet,
        logs: PgEventLog::new(&fleet.db),
        store: &store,
        key: &key,
        owner: crate::storage::owner_for("migrate"),
    };
    let (sessions, artifacts) = match to {
        StoreKind::Postgres => (move_.sessions_up(json), move_.artifacts_up(json)),
        StoreKind::Files => (move_.sessions_down(json), move_.artifacts_down(json)),
    };
    let sessions = sessions.map_err(Failure::Engine)?;
    let artifacts = artifacts.map_err(Failure::Engine)?;
    let failed = sessions
        .iter()
        .filter(|(_, o)| matches!(o, Outcome::Failed(_)))
        .count()
        + artifacts.failed;
    let count = |f: fn(&Outcome) -> bool| sessions.iter().filter(|(_, o)| f(o)).count();
    let moved = count(|o| matches!(o, Outcome::Moved { .. } | Outcome::Completed { .. }));
    let there = count(|o| matches!(o, Outcome::AlreadyThere { .. }));
    let skipped = count(|o| matches!(o, Outcome::Skipped(_)));
    if json {
        println!(
            "{}",
            json!({
                "summary": {
                    "from": format!("{from:?}").to_lowercase(),
                    "to": format!("{to:?}").to_lowercase(),
                    "sessions_moved": moved,
                    "sessions_already_there": there,
                    "sessions_skipped": skipped,
                    "sessions_failed": failed - artifacts.failed,
                    "artifacts_moved": artifacts.moved,
                    "artifacts_already_there": artifacts.there,
                    "artifacts_failed": artifacts.failed,
                }
            })
        );
    } else {
        println!(
            "sessions: {moved} moved, {there} already there (checked), {skipped} skipped, {} failed; artifacts: {} moved, {} already there, {} failed",
            failed - artifacts.failed,
            artifacts.moved,
            artifacts.there,
            artifacts.failed
        );
    }
    Ok(if failed > 0 { exit::ENGINE } else { exit::OK })
}

struct Move<'a> {
    fleet: &'a Fleet,
    logs: PgEventLog,
    store: &'a ArtifactStore,
    key: &'a LogKey,
    owner: String,
}

#[derive(Default)]
struct ArtifactCounts {
    moved: usize,
    there: usize,
    failed: usize,
}

impl Move<'_> {
    fn io(&self) -> &Arc<FleetIo> {
        &self.fleet.io
    }

    fn db(&self) -> &FleetDb {
        &self.fleet.db
    }

    /// Every session log of the project, into the database.
    fn sessions_up(&self, json: bool) -> anyhow::Result<Vec<(String, Outcome)>> {
        let dir = self.store.sessions_dir();
        let mut ids: Vec<String> = match std::fs::read_dir(&dir) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|id| tackle_store::session_log_path(self.store.root(), id).is_file())
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(anyhow!("listing {}: {e}", dir.display())),
        };
        ids.sort();
        let mut out = Vec::new();
        for id in ids {
            let outcome = self.session_up(&id);
            report(json, &id, &outcome);
            out.push((id, outcome));
        }
        Ok(out)
    }

    fn session_up(&self, id: &str) -> Outcome {
        let path = tackle_store::session_log_path(self.store.root(), id);
        match EventLog::origin(&path, &LogSeal::new(self.key, id)) {
            Ok(LogOrigin::Own) => {}
            Ok(LogOrigin::Foreign(first)) => {
                return Outcome::Skipped(format!(
                    "its log is not yours ({first}); a repository's log is not moved into the fleet"
                ));
            }
            Err(e) => return Outcome::Failed(e.to_string()),
        }
        // Every line's checksum is checked as it is read; each event is compared and written
        // as the database keeps it (a U+0000 it cannot hold replaced).
        let events: Vec<Value> = match EventLog::read_records(&path) {
            Ok(records) => records
                .into_iter()
                .map(|r| tackle_fleet::storable(&r.event).into_owned())
                .collect(),
            Err(e) => return Outcome::Failed(e.to_string()),
        };
        let logs = self.logs.clone();
        let session = id.to_owned();
        let stored = self.io().run(async move {
            logs.create_session(&session).await?;
            read_all(&logs, &session).await
        });
        let stored = match stored.and_then(|r| r) {
            Ok(stored) => stored,
            Err(e) => return Outcome::Failed(e.to_string()),
        };
        if stored.len() > events.len() || events[..stored.len()] != stored[..] {
            return Outcome::Failed(format!(
                "the database holds {} events for it that do not match this log's first ones; move one copy aside first",
                stored.len()
            ));
        }
        if stored.len() == events.len() {
            return Outcome::AlreadyThere {
                events: events.len(),
            };
        }
        if let Err(e) = self.append_rest(id, stored.len(), &events) {
            return Outcome::Failed(e);
        }
        // Read back and compared whole: what the database now holds is this log.
        let logs = self.logs.clone();
        let session = id.to_owned();
        match self
            .io()
            .run(async move { read_all(&logs, &session).await })
            .and_then(|r| r)
        {
            Ok(back) if back == events => {}
            Ok(back) => {
                return Outcome::Failed(format!(
                    "read back {} events that do not match the {} written",
                    back.len(),
                    events.len()
                ));
            }
            Err(e) => return Outcome::Failed(e.to_string()),
        }
        if stored.is_empty() {
            Outcome::Moved {
                events: events.len(),
            }
        } else {
            Outcome::Completed {
                events: events.len(),
                had: stored.len(),
            }
        }
    }

    /// Appends `events[had..]` under a lease of this process's, given up after.
    fn append_rest(&self, id: &str, had: usize, events: &[Value]) -> Result<(), String> {
        let leases = Leases::new(self.db());
        let logs = self.logs.clone();
        let (session, owner, ttl) = (id.to_owned(), self.owner.clone(), self.fleet.lease);
        let rest: Vec<Value> = events[had..].to_vec();
        self.io()
            .run(async move {
                let lease = match leases.claim(&session, &owner, ttl).await? {
                    Claim::Granted(lease) => lease,
                    Claim::Held { owner, .. } => {
                        return Ok(Err(format!(
                            "a daemon runs it now ({owner}); stop it there first"
                        )));
                    }
                };
                for (i, chunk) in rest.chunks(BATCH).enumerate() {
                    let first = (had + i * BATCH) as u64 + 1;
                    logs.append_batch(&lease, first, chunk).await?;
                }
                leases.release(lease).await?;
                Ok::<_, tackle_fleet::FleetError>(Ok(()))
            })
            .and_then(|r| r)
            .map_err(|e| e.to_string())?
    }

    /// Every artifact of the project, into the bucket (when there is one).
    fn artifacts_up(&self, json: bool) -> anyhow::Result<ArtifactCounts> {
        let mut counts = ArtifactCounts::default();
        let Some(bucket) = &self.fleet.bucket else {
            return Ok(counts);
        };
        for info in self.store.list()? {
            let id = info.id;
            // Read through the store: the bytes are hashed and checked against the digest.
            let result = self
                .store
                .read(id)
                .map_err(|e| e.to_string())
                .and_then(|bytes| {
                    let bucket = bucket.clone();
                    self.io()
                        .run(async move { bucket.put(bytes.into()).await })
                        .and_then(|r| r)
                        .map_err(|e| e.to_string())
                });
            match result {
                Ok(put) if put.created => counts.moved += 1,
                Ok(_) => counts.there += 1,
                Err(e) => {
                    counts.failed += 1;
                    report_artifact(json, id, &e);
                }
            }
        }
        Ok(counts)
    }

    /// Every session of the database, into the project's files.
    fn sessions_down(&self, json: bool) -> anyhow::Result<Vec<(String, Outcome)>> {
        let logs = self.logs.clone();
        let ids = self
            .io()
            .run(async move { logs.session_ids().await })
            .and_then(|r| r)?;
        let mut out = Vec::new();
        for id in ids {
            let outcome = self.session_down(&id);
            report(json, &id, &outcome);
            out.push((id, outcome));
        }
        Ok(out)
    }

    fn session_down(&self, id: &str) -> Outcome {
        let valid = !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !valid {
            return Outcome::Skipped("its id is not a session id tackle writes".to_owned());
        }
        let logs = self.logs.clone();
        let session = id.to_owned();
        // Every event's checksum is checked as it is read.
        let stored = match self
            .io()
            .run(async move { read_all(&logs, &session).await })
            .and_then(|r| r)
        {
            Ok(stored) => stored,
            Err(e) => return Outcome::Failed(e.to_string()),
        };
        let path = tackle_store::session_log_path(self.store.root(), id);
        let mut had = 0;
        if path.exists() {
            let mut local = Vec::new();
            let read = EventLog::visit_records(&path, |r| {
                local.push(r.event);
                ControlFlow::Continue(())
            });
            if let Err(e) = read {
                return Outcome::Failed(e.to_string());
            }
            if local.len() > stored.len() || stored[..local.len()] != local[..] {
                return Outcome::Failed(format!(
                    "{} holds {} events that do not match the database's first ones; move it aside first",
                    path.display(),
                    local.len()
                ));
            }
            if local.len() == stored.len() {
                return Outcome::AlreadyThere {
                    events: stored.len(),
                };
            }
            had = local.len();
        }
        let seal = LogSeal::new(self.key, id);
        if let Err(e) = tackle_store::write_working_copy(&path, Some(seal), &stored) {
            return Outcome::Failed(e.to_string());
        }
        match EventLog::read_records(&path) {
            Ok(back) if back.iter().map(|r| &r.event).eq(stored.iter()) => {}
            Ok(_) => return Outcome::Failed("the log written does not read back".to_owned()),
            Err(e) => return Outcome::Failed(e.to_string()),
        }
        if had == 0 {
            Outcome::Moved {
                events: stored.len(),
            }
        } else {
            Outcome::Completed {
                events: stored.len(),
                had,
            }
        }
    }

    /// Every artifact the database's sessions name, from the bucket into the project's store.
    fn artifacts_down(&self, json: bool) -> anyhow::Result<ArtifactCounts> {
        let mut counts = ArtifactCounts::default();
        let Some(bucket) = &self.fleet.bucket else {
            return Ok(counts);
        };
        let logs = self.logs.clone();
        let ids = self
            .io()
            .run(async move { logs.referenced_artifacts().await })
            .and_then(|r| r)?;
        for id in ids {
            if self.store.read(id).is_ok() {
                counts.there += 1;
                continue;
            }
            let result = fetch(self.io(), bucket, id)
                .and_then(|bytes| self.store.put(&bytes).map(drop).map_err(|e| e.to_string()));
            match result {
                Ok(()) => counts.moved += 1,
                Err(e) => {
                    counts.failed += 1;
                    report_artifact(json, id, &e);
                }
            }
        }
        Ok(counts)
    }
}

/// The artifact's bytes from the bucket, checked against the digest by the client.
fn fetch(io: &FleetIo, bucket: &S3Artifacts, id: ArtifactId) -> Result<Vec<u8>, String> {
    let bucket = bucket.clone();
    io.run(async move { bucket.get(id).await })
        .and_then(|r| r)
        .map(Vec::from)
        .map_err(|e| e.to_string())
}

/// Every event of `session`, each checked against its checksum.
async fn read_all(
    logs: &PgEventLog,
    session: &str,
) -> Result<Vec<Value>, tackle_fleet::FleetError> {
    let mut events = Vec::new();
    loop {
        let page = logs
            .read_from(session, events.len() as u64 + 1, 2_000)
            .await?;
        let done = page.len() < 2_000;
        events.extend(page.into_iter().map(|r| r.event));
        if done {
            return Ok(events);
        }
    }
}

fn report(json: bool, id: &str, outcome: &Outcome) {
    let (state, detail) = match outcome {
        Outcome::Moved { events } => ("moved", format!("{events} events")),
        Outcome::Completed { events, had } => {
            ("completed", format!("{events} events, {had} there before"))
        }
        Outcome::AlreadyThere { events } => ("already_there", format!("{events} events, checked")),
        Outcome::Skipped(why) => ("skipped", why.clone()),
        Outcome::Failed(why) => ("failed", why.clone()),
    };
    if json {
        println!(
            "{}",
            json!({"session": id, "state": state, "detail": detail})
        );
    } else if matches!(outcome, Outcome::Failed(_) | Outcome::Skipped(_)) {
        eprintln!("tackle store migrate: session {id}: {state}: {detail}");
    } else {
        eprintln!("session {id}: {state} ({detail})");
    }
}

fn report_artifact(json: bool, id: ArtifactId, why: &str) {
    if json {
        println!(
            "{}",
            json!({"artifact": id.public_uri(), "state": "failed", "detail": why})
        );
    } else {
        eprintln!("tackle store migrate: artifact {}: {why}", id.public_uri());
    }
}
