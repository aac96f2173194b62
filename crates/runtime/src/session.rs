//! A session: the context a batch runs in, the root it runs against, its store and its durable
//! event log.
//!
//! A session opened with the user's [`LogKey`] tags every line of its log; [`Session::resume`]
//! checks every line of a log before anything of it is used and refuses one this user's tackle
//! did not write unless the caller accepts it ([`ForeignLogs::Accept`]), so no front end can
//! hand a repository's log to a model as the user's own conversation without deciding to.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use std::ops::ControlFlow;
use std::sync::Mutex;

use tackle_protocol::{Event, SessionId, SessionStarted, TurnId};
use tackle_store::{ArtifactStore, Durability, EventLog, LogKey, LogOrigin, LogSeal, Opening};
use tokio::sync::OnceCell;

use crate::clock::now_ms;
use crate::error::RuntimeError;
use crate::recorder::Recorder;
use crate::session_context::{ChildOptions, Narrowing, SessionContext, SessionOptions};
use crate::tool_filter::ToolFilter;
use tackle_tool::time::compact_utc;

/// Everything a batch runs on behalf of: its [`SessionContext`], root, store and log. The MCP
/// server and `tackle call` use one implicit session per process; the agent layer creates many,
/// children among them ([`Session::open_child`]). A clone is the same session: it shares the
/// context, the store and appends to the same log.
#[derive(Clone)]
pub struct Session {
    context: Arc<SessionContext>,
    /// Canonical project root; every path resolves beneath it.
    pub root: Arc<Path>,
    pub store_dir: PathBuf,
    pub store: Arc<ArtifactStore>,
    pub(crate) recorder: Recorder,
    /// The turn the next batches belong to, when the front end knows its turns; unset, every
    /// batch is a turn of its own ([`Session::set_turn`]). Clones share it.
    turn: Arc<Mutex<Option<TurnId>>>,
    /// Set once the state tools keep for this session has been rebuilt from its log (at once
    /// for a new session; at its first batch for a resumed one).
    pub(crate) restored: Arc<OnceCell<()>>,
    /// Tags every line this session (and its children and siblings) appends; `None` writes
    /// untagged lines, which no resume counts as the user's.
    log_key: Option<LogKey>,
}

/// What [`Session::resume`] does with a log whose lines are not all tagged with the user's key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForeignLogs {
    /// Refuse it: [`RuntimeError::ForeignLog`].
    Refuse,
    /// Resume it anyway (the user said they trust it); new lines are tagged, the old ones stay
    /// as they are, so the log is still foreign to the next resume.
    Accept,
}

/// A resumed session and who wrote its log before.
pub struct Resumed {
    pub session: Session,
    /// [`LogOrigin::Own`] unless the caller accepted a foreign log.
    pub origin: LogOrigin,
}

impl Session {
    /// Open a new top-level session rooted at `root`, with its store under
    /// `<root>/.agents/store`.
    pub fn open(root: &Path) -> Result<Self, RuntimeError> {
        Self::open_with(root, SessionOptions::default())
    }

    /// Open a new session rooted at `root` as `options` describe it; its `session_started`
    /// records them.
    ///
    /// Its log is untagged: a front end that resumes sessions opens them with
    /// [`Session::open_sealed`], since [`Session::resume`] counts only tagged logs as the user's.
    pub fn open_with(root: &Path, options: SessionOptions) -> Result<Self, RuntimeError> {
        Self::open_keyed(root, options, None)
    }

    /// [`Session::open_with`], every line of the log (and of its children's and siblings')
    /// tagged with the user's `key`.
    pub fn open_sealed(
        root: &Path,
        options: SessionOptions,
        key: &LogKey,
    ) -> Result<Self, RuntimeError> {
        Self::open_keyed(root, options, Some(key.clone()))
    }

    fn open_keyed(
        root: &Path,
        options: SessionOptions,
        key: Option<LogKey>,
    ) -> Result<Self, RuntimeError> {
        let root = canonical(root)?;
        let store_dir = Self::store_dir_for(&root);
        let store = Arc::new(ArtifactStore::open(&store_dir)?);
        Self::start(root.into(), store_dir, store, options, key)
    }

    /// Open a new session working for this one (a subagent): same root and store, its own log,
    /// grants and todo list, this session as its parent, this posture, and no tool this session
    /// is not offered.
    pub fn open_child(
        &self,
        agent: Option<String>,
        tools: ToolFilter,
    ) -> Result<Self, RuntimeError> {
        self.open_subagent(ChildOptions {
            agent,
            tools,
            ..ChildOptions::default()
        })
    }

    /// [`Session::open_child`] with a handle and rules of its own, added to this session's
    /// (so a grandchild keeps every narrowing of the sessions above it).
    pub fn open_subagent(&self, child: ChildOptions) -> Result<Self, RuntimeError> {
        let mut narrowing = self.context.narrowing().to_vec();
        for rule in child.narrowing {
            if !narrowing.contains(&rule) {
                narrowing.push(rule);
            }
        }
        let options = SessionOptions {
            parent: Some(self.id().clone()),
            agent: child.agent,
            posture: self.context.posture(),
            tools: child.tools.within(self.context.tools()),
            handle: child.handle,
            narrowing,
        };
        Self::start(
            self.root.clone(),
            self.store_dir.clone(),
            self.store.clone(),
            options,
            self.log_key.clone(),
        )
    }

    fn start(
        root: Arc<Path>,
        store_dir: PathBuf,
        store: Arc<ArtifactStore>,
        options: SessionOptions,
        log_key: Option<LogKey>,
    ) -> Result<Self, RuntimeError> {
        let id = new_session_id();
        let log_path = tackle_store::session_log_path(&store_dir, &id.0);
        let (log, _recovery) = open_log(&log_path, &id.0, log_key.as_ref(), Opening::New)?;
        let recorder = Recorder::new(Arc::new(log_syncing(log, &store)));
        // The first record says how the session resumes; a log without it resumes as a
        // top-level standard session with nothing narrowing it. A start that says exactly that
        // is written and made durable with the first synced append or by the flusher, since
        // losing it to a power failure changes nothing; any other (a subagent's, a sealed
        // session's, a narrowed one's) is synced before the session is handed out, so that no
        // later durable record can outlive it.
        let durability = if options == SessionOptions::default() {
            Durability::Written
        } else {
            Durability::Synced
        };
        let context = SessionContext::new(id.clone(), options);
        recorder.append_blocking(
            &Event::SessionStarted(SessionStarted {
                session: id,
                root: root.display().to_string(),
                posture: context.posture(),
                at_ms: now_ms(),
                parent: context.parent().cloned(),
                agent: context.agent().map(str::to_owned),
                tools: context.tools().recorded(),
                handle: context.handle().map(str::to_owned),
                narrowing: context
                    .narrowing()
                    .iter()
                    .map(Narrowing::recorded)
                    .collect(),
            }),
            durability,
        )?;
        Ok(Self {
            context: Arc::new(context),
            root,
            store_dir,
            store,
            recorder,
            turn: Arc::new(Mutex::new(None)),
            restored: Arc::new(OnceCell::new_with(Some(()))),
            log_key,
        })
    }

    /// A new top-level session opened with `options` beside this one: its own id and event log,
    /// the same root and the same artifact store. The HTTP server opens one per MCP client this
    /// way, so the clients share the store's record of what it just published, and a client
    /// refreshing an artifact does not make every other client's next publication of it check
    /// the disk again.
    pub fn open_sibling(&self, options: SessionOptions) -> Result<Self, RuntimeError> {
        Self::start(
            self.root.clone(),
            self.store_dir.clone(),
            self.store.clone(),
            options,
            self.log_key.clone(),
        )
    }

    /// Reopen the existing session `id` under `root`, appending to its event log (torn tails are
    /// recovered) with every new line tagged with `key`. Its parent, agent type, posture and tool
    /// filter are the ones its `session_started` recorded; its earlier calls stay visible to
    /// tools that read the log (`retrieve_raw`), and the state tools keep for it (the todo list)
    /// is rebuilt from them before its first batch runs.
    ///
    /// Every line of the log is checked first ([`EventLog::origin`], which reads the whole log
    /// once; a resume reads it whole again to rebuild a conversation or a todo list): a log
    /// with a line not tagged with `key` for this id is [`RuntimeError::ForeignLog`] unless
    /// `foreign` is [`ForeignLogs::Accept`], and is then left exactly as found.
    pub fn resume(
        root: &Path,
        id: &str,
        key: &LogKey,
        foreign: ForeignLogs,
    ) -> Result<Resumed, RuntimeError> {
        let root = canonical(root)?;
        let valid = !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        let store_dir = Self::store_dir_for(&root);
        let log_path = tackle_store::session_log_path(&store_dir, id);
        let backed = tackle_store::logs_are_backed();
        if !valid || (!backed && !log_path.is_file()) {
            return Err(RuntimeError::UnknownSession { id: id.to_owned() });
        }
        // A backend's copy is taken first: it replaces the working copy, tagged with this
        // user's key (the backend is the user's own, named in their config alone).
        let taken = if backed {
            Some(
                open_log(&log_path, id, Some(key), Opening::Existing).map_err(|e| match e {
                    RuntimeError::EventLog(e) if tackle_store::is_unknown_session(&e) => {
                        RuntimeError::UnknownSession { id: id.to_owned() }
                    }
                    other => other,
                })?,
            )
        } else {
            None
        };
        let origin = EventLog::origin(&log_path, &LogSeal::new(key, id))?;
        if let (LogOrigin::Foreign(first), ForeignLogs::Refuse) = (&origin, foreign) {
            return Err(RuntimeError::ForeignLog {
                id: id.to_owned(),
                first: first.clone(),
            });
        }
        let store = Arc::new(ArtifactStore::open(&store_dir)?);
        let (log, _recovery) = match taken {
            Some(taken) => taken,
            None => open_log(&log_path, id, Some(key), Opening::Existing)?,
        };
        let log = log_syncing(log, &store);
        let options = recorded_options(&log_path, id)?;
        let session = Self {
            context: Arc::new(SessionContext::new(SessionId(id.to_owned()), options)),
            root: root.into(),
            store_dir,
            store,
            recorder: Recorder::new(Arc::new(log)),
            turn: Arc::new(Mutex::new(None)),
            restored: Arc::new(OnceCell::new()),
            log_key: Some(key.clone()),
        };
        Ok(Resumed { session, origin })
    }

    pub fn id(&self) -> &SessionId {
        self.context.id()
    }

    /// The session's identity, posture, tool filter and grants.
    pub fn context(&self) -> &SessionContext {
        &self.context
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
        tackle_store::session_log_path(&self.store_dir, &self.id().0)
    }

    /// Copies into this store the working copies of this session's descendants that the
    /// installed backend holds and the store lacks (a tree taken on another machine), tagged
    /// as this session's own log is; how many. See [`tackle_store::copy_descendants`].
    pub fn copy_descendants(&self) -> Result<usize, RuntimeError> {
        let key = self.log_key.clone();
        Ok(tackle_store::copy_descendants(
            &self.store_dir,
            &self.id().0,
            &|id| key.as_ref().map(|k| LogSeal::new(k, id)),
        )?)
    }

    /// Whether session `id`'s log in this store was written by the same user as this one:
    /// every line tagged with this session's key for `id`. A session opened without a key
    /// (tests, `tackle call`) counts every readable log as its own, as it counts its own.
    pub fn owns_log_of(&self, id: &str) -> bool {
        let path = tackle_store::session_log_path(&self.store_dir, id);
        match &self.log_key {
            None => path.is_file(),
            Some(key) => matches!(
                EventLog::origin(&path, &LogSeal::new(key, id)),
                Ok(LogOrigin::Own)
            ),
        }
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

/// The log at `path` of session `id`, its appends tagged when there is a key.
/// Through the installed storage backend, if any ([`tackle_store::open_session_log`]).
fn open_log(
    path: &Path,
    id: &str,
    key: Option<&LogKey>,
    opening: Opening,
) -> Result<(EventLog, tackle_store::Recovery), RuntimeError> {
    let seal = key.map(|key| LogSeal::new(key, id));
    Ok(tackle_store::open_session_log(path, id, seal, opening)?)
}

fn canonical(root: &Path) -> Result<PathBuf, RuntimeError> {
    root.canonicalize().map_err(|source| RuntimeError::Root {
        path: root.to_path_buf(),
        source,
    })
}

/// How the session of the log at `path` was opened, from its first record, `session_started`
/// (a log that begins otherwise is a top-level standard session's).
fn recorded_options(path: &Path, id: &str) -> Result<SessionOptions, RuntimeError> {
    let mut first = None;
    EventLog::visit_records(path, |record| {
        first = Some(record.event);
        ControlFlow::Break(())
    })?;
    let Some(first) = first.filter(|e| e["type"] == "session_started") else {
        return Ok(SessionOptions::default());
    };
    match serde_json::from_value(first) {
        Ok(Event::SessionStarted(started)) => Ok(SessionOptions {
            parent: started.parent,
            agent: started.agent,
            posture: started.posture,
            tools: ToolFilter::from_recorded(started.tools),
            handle: started.handle,
            narrowing: recorded_narrowing(id, &started.narrowing)?,
        }),
        Ok(_) => Ok(SessionOptions::default()),
        Err(e) => Err(RuntimeError::SessionStarted {
            id: id.to_owned(),
            reason: e.to_string(),
        }),
    }
}

/// The rules a `session_started` recorded; one that does not read back is an error rather
/// than a rule quietly lost, since losing it would widen the session.
fn recorded_narrowing(id: &str, recorded: &[String]) -> Result<Vec<Narrowing>, RuntimeError> {
    recorded
        .iter()
        .map(|text| {
            Narrowing::from_recorded(text).ok_or_else(|| RuntimeError::SessionStarted {
                id: id.to_owned(),
                reason: format!("the recorded rule `{text}` is neither `deny …` nor `ask …`"),
            })
        })
        .collect()
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
