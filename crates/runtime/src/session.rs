//! A session: the root a batch runs against, its store and its durable event log.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use std::sync::Mutex;

use tackle_protocol::{Event, SessionId, SessionStarted, TurnId};
use tackle_store::{ArtifactStore, Durability, EventLog};

use crate::clock::now_ms;
use crate::error::RuntimeError;
use crate::recorder::Recorder;
use tackle_tool::time::compact_utc;

/// Everything a batch runs on behalf of. The MCP server and `tackle call` use one implicit
/// session per process; the agent layer will create many (with parents, for delegation).
/// A clone is the same session: it shares the store and appends to the same log.
#[derive(Clone)]
pub struct Session {
    pub id: SessionId,
    /// Canonical project root; every path resolves beneath it.
    pub root: Arc<Path>,
    pub store_dir: PathBuf,
    pub store: Arc<ArtifactStore>,
    pub(crate) recorder: Recorder,
    /// `standard`, `gated` or `sealed`.
    pub posture: String,
    /// The agent this session runs for, when it has a name (a subagent); recorded as the
    /// author of the plans it files.
    pub agent: Option<String>,
    /// The turn the next batches belong to, when the front end knows its turns; unset, every
    /// batch is a turn of its own ([`Session::set_turn`]). Clones share it.
    turn: Arc<Mutex<Option<TurnId>>>,
}

impl Session {
    /// Open a new session rooted at `root`, with its store under `<root>/.agents/store`.
    pub fn open(root: &Path) -> Result<Self, RuntimeError> {
        let root = root.canonicalize().map_err(|source| RuntimeError::Root {
            path: root.to_path_buf(),
            source,
        })?;
        let store_dir = Self::store_dir_for(&root);
        let store = Arc::new(ArtifactStore::open(&store_dir)?);
        let id = new_session_id();
        let log_path = tackle_store::session_log_path(&store_dir, &id.0);
        let (log, _recovery) = EventLog::open(&log_path)?;
        let recorder = Recorder::new(Arc::new(log_syncing(log, &store)));
        let posture = "standard".to_owned();
        recorder.append_blocking(
            &Event::SessionStarted(SessionStarted {
                session: id.clone(),
                root: root.display().to_string(),
                posture: posture.clone(),
                at_ms: now_ms(),
            }),
            Durability::Synced,
        )?;
        Ok(Self {
            id,
            root: root.into(),
            store_dir,
            store,
            recorder,
            posture,
            agent: None,
            turn: Arc::new(Mutex::new(None)),
        })
    }

    /// Reopen the existing session `id` under `root`, appending to its event log (torn tails are
    /// recovered). Its earlier calls stay visible to tools that read the log (`retrieve_raw`).
    pub fn resume(root: &Path, id: &str) -> Result<Self, RuntimeError> {
        let root = root.canonicalize().map_err(|source| RuntimeError::Root {
            path: root.to_path_buf(),
            source,
        })?;
        let valid = !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        let store_dir = Self::store_dir_for(&root);
        let log_path = tackle_store::session_log_path(&store_dir, id);
        if !valid || !log_path.is_file() {
            return Err(RuntimeError::UnknownSession { id: id.to_owned() });
        }
        let store = Arc::new(ArtifactStore::open(&store_dir)?);
        let (log, _recovery) = EventLog::open(&log_path)?;
        let log = log_syncing(log, &store);
        Ok(Self {
            id: SessionId(id.to_owned()),
            root: root.into(),
            store_dir,
            store,
            recorder: Recorder::new(Arc::new(log)),
            posture: "standard".to_owned(),
            agent: None,
            turn: Arc::new(Mutex::new(None)),
        })
    }

    /// Every batch from now on belongs to `turn` (the agent loop sets it per model turn;
    /// `tackle call --turn` names one so separate invocations can share it).
    pub fn set_turn(&self, turn: TurnId) {
        *self.turn.lock().unwrap_or_else(|p| p.into_inner()) = Some(turn);
    }

    /// The turn a batch starting now belongs to: the one set, or a fresh one for this batch
    /// alone (random, so batches of separate processes resuming one session never collide).
    pub(crate) fn turn_for_batch(&self) -> TurnId {
        let set = self.turn.lock().unwrap_or_else(|p| p.into_inner()).clone();
        set.unwrap_or_else(|| TurnId(crate::unguessable::unguessable_id("turn")))
    }

    /// Where the store of a session rooted at `root` lives: `<root>/.agents/store`.
    pub fn store_dir_for(root: &Path) -> PathBuf {
        root.join(".agents").join("store")
    }

    pub fn event_log_path(&self) -> PathBuf {
        tackle_store::session_log_path(&self.store_dir, &self.id.0)
    }

    /// The arguments a `call_started` of this session's log records: inline, or read back from
    /// the artifact store (verified against their digest) when they were too large for the log
    /// ([`crate::ARGUMENTS_INLINE_LIMIT`]).
    pub fn recorded_arguments(
        &self,
        started: &tackle_protocol::CallStarted,
    ) -> Result<serde_json::Value, RuntimeError> {
        crate::stored_arguments::recorded_arguments(&self.store, started)
    }

    /// Appends an event that is not a call's (the agent's conversation records) and waits
    /// until it is on the device. Call events are the dispatcher's alone: a `call_started` or
    /// `call_finished` is refused, so every call keeps exactly one of each.
    pub async fn append_event(&self, event: &Event) -> Result<u64, RuntimeError> {
        let kind = match event {
            Event::CallStarted(_) => Some("call_started"),
            Event::CallFinished(_) => Some("call_finished"),
            _ => None,
        };
        if let Some(kind) = kind {
            return Err(RuntimeError::CallEventRefused { kind });
        }
        self.recorder.append(event, Durability::Synced).await
    }

    /// Waits until every event recorded so far is durable (events of read-only calls are
    /// acknowledged once written and synced in the background).
    pub fn sync(&self) -> Result<(), RuntimeError> {
        self.recorder.sync()
    }

    /// The seq of the last event on the device (survives a power loss).
    pub fn durable_seq(&self) -> u64 {
        self.recorder.durable_seq()
    }

    /// The seq of the last event in the file (survives the process being killed).
    pub fn written_seq(&self) -> u64 {
        self.recorder.written_seq()
    }
}

/// The log syncs the artifacts of read-only calls before itself, so a durable event never
/// names an artifact that is not.
fn log_syncing(log: EventLog, store: &Arc<ArtifactStore>) -> EventLog {
    let store = Arc::clone(store);
    log.set_before_sync(move || store.sync_written());
    log
}

fn new_session_id() -> SessionId {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    // Sortable by time, and apart by 64 random bits: two sessions started in the same
    // second (an HTTP server's clients) never share a log.
    let random = crate::unguessable::unguessable_id("");
    SessionId(format!(
        "{}-{}",
        compact_utc(now.as_secs() as i64),
        &random[1..17]
    ))
}
