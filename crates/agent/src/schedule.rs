//! `schedule_next_turn` (seed 003, "Optional lifecycle tools"): in an autonomous run the model
//! asks to be woken later: after a sleep, at a time, when a file under the root changes, or
//! when a message arrives. The tool only records the request in [`Wakes`], keyed by session;
//! once the model has ended its turn the autonomous runner ([`crate::autonomous`]) takes it and
//! hands it to a [`crate::autonomous::Scheduler`]. The newest request of a turn wins, and a
//! repeat says so with the reserved `no_op` key set, as mark_task_done's does.
//!
//! Registered only where something will act on it (`tackle run --autonomous`); elsewhere a
//! request to be woken would be a promise nobody keeps.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_protocol::SessionId;
use tackle_tool::protocol::ErrorCode;
use tackle_tool::{
    ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

pub const NAME: &str = "schedule_next_turn";

/// The longest reason, in bytes.
pub const MAX_REASON_BYTES: usize = 2048;

/// What the model waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wake {
    /// A sleep of this long.
    After(Duration),
    /// A moment on the wall clock.
    At(SystemTime),
    /// The file (root-relative) differs from `before`; `limit` wakes anyway.
    FileChange {
        path: String,
        absolute: PathBuf,
        before: Option<FileState>,
        limit: Option<Duration>,
    },
    /// A message to the session; `limit` wakes anyway.
    Message { limit: Option<Duration> },
}

/// What a watched file looked like: a change in any of these is a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileState {
    pub len: u64,
    pub modified: Option<SystemTime>,
    pub ino: u64,
}

impl FileState {
    /// The file's state now; `None` when it does not exist.
    pub fn of(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(Self {
            len: m.len(),
            modified: m.modified().ok(),
            ino: m.ino(),
        })
    }
}

impl Wake {
    /// The wake in a few words, for people and for the model's next input.
    pub fn describe(&self) -> String {
        match self {
            Self::After(d) => format!("after {}", seconds(*d)),
            Self::At(t) => {
                let secs = t
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs() as i64);
                format!("at {}", tackle_tool::time::rfc3339_utc(secs))
            }
            Self::FileChange { path, limit, .. } => {
                format!("when {path} changes{}", limit_text(*limit))
            }
            Self::Message { limit } => format!("when a message arrives{}", limit_text(*limit)),
        }
    }
}

fn limit_text(limit: Option<Duration>) -> String {
    limit.map_or_else(String::new, |l| format!(" (or after {})", seconds(l)))
}

/// Seconds for people: whole ones from 10 s up, else to the millisecond.
fn seconds(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs >= 10.0 {
        format!("{} s", secs.round())
    } else {
        format!("{} s", (secs * 1000.0).round() / 1000.0)
    }
}

/// A wake the model asked for, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WakeRequest {
    pub wake: Wake,
    pub reason: String,
}

/// Wakes asked for and not yet taken, by session.
#[derive(Default)]
pub struct Wakes {
    pending: Mutex<HashMap<SessionId, WakeRequest>>,
}

impl Wakes {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Records the request; true when one was already pending (the newest wins).
    pub fn request(&self, session: &SessionId, request: WakeRequest) -> bool {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        pending.insert(session.clone(), request).is_some()
    }

    pub fn take(&self, session: &SessionId) -> Option<WakeRequest> {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        pending.remove(session)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleNextTurnArgs {
    /// What the next turn will do, e.g. "check whether the nightly build finished".
    pub reason: String,
    /// Wake after this many seconds.
    #[serde(default)]
    pub sleep_seconds: Option<f64>,
    /// Wake at this time, RFC 3339 (e.g. 2026-12-03T12:00:00Z).
    #[serde(default)]
    pub wake_at: Option<String>,
    /// Wake when this file (relative to the project root) is created, changed or removed.
    #[serde(default)]
    pub on_file_change: Option<String>,
    /// Wake when a message for this session arrives (`tackle sessions message`).
    #[serde(default)]
    pub on_message: Option<bool>,
    /// With on_file_change or on_message: wake anyway after this many seconds.
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
}

pub struct ScheduleNextTurn {
    wakes: Arc<Wakes>,
}

impl ScheduleNextTurn {
    pub fn new(wakes: Arc<Wakes>) -> Self {
        Self { wakes }
    }
}

fn invalid(text: impl Into<String>) -> ToolError {
    ToolError::new(
        ErrorCode::INVALID_ARGUMENTS,
        format!("schedule_next_turn: {}", text.into()),
    )
}

/// A positive, finite number of seconds no longer than a year.
fn duration(name: &str, secs: f64) -> Result<Duration, ToolError> {
    if !secs.is_finite() || secs <= 0.0 || secs > 365.0 * 86_400.0 {
        return Err(invalid(format!(
            "`{name}` is {secs}; give a number of seconds above 0 and at most a year"
        )));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The prepared request: the wake, with a file's path resolved but its state read at execute.
pub struct Planned {
    wake: Wake,
    reason: String,
}

impl Tool for ScheduleNextTurn {
    type Args = ScheduleNextTurnArgs;
    type Plan = Planned;

    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Ask to be woken for another turn after this one ends: give exactly one of \
             sleep_seconds, wake_at (RFC 3339), on_file_change (a path under the project root) \
             or on_message: true, and the reason (what the next turn will do). Then end your \
             turn. Use it to wait for something that takes time (a build, a deploy, a person) \
             instead of polling in a loop; if nothing needs waiting for, just end your turn. A \
             message to the session wakes you early from any wait.",
        )
    }

    fn read_only(&self) -> bool {
        true
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["read"]
    }

    fn prepare(
        &self,
        args: ScheduleNextTurnArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<Planned>, ToolError> {
        let reason = args.reason.trim().to_owned();
        if reason.is_empty() {
            return Err(invalid("`reason` is empty; say what the next turn will do"));
        }
        if reason.len() > MAX_REASON_BYTES {
            return Err(invalid(format!(
                "`reason` is {} bytes; keep it under {MAX_REASON_BYTES}",
                reason.len()
            )));
        }
        let given = [
            args.sleep_seconds.is_some(),
            args.wake_at.is_some(),
            args.on_file_change.is_some(),
            args.on_message == Some(true),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            return Err(invalid(
                "give exactly one of sleep_seconds, wake_at, on_file_change and on_message: true",
            ));
        }
        let limit = args
            .timeout_seconds
            .map(|t| duration("timeout_seconds", t))
            .transpose()?;
        let mut resources = Vec::new();
        let wake = if let Some(secs) = args.sleep_seconds {
            Wake::After(duration("sleep_seconds", secs)?)
        } else if let Some(at) = &args.wake_at {
            let secs = tackle_tool::time::parse_rfc3339(at.trim()).map_err(invalid)?;
            let secs = u64::try_from(secs)
                .map_err(|_| invalid(format!("`wake_at` {at} is before 1970")))?;
            Wake::At(UNIX_EPOCH + Duration::from_secs(secs))
        } else if let Some(path) = &args.on_file_change {
            let (rel, keys) = tackle_tools::resolve_read(NAME, cx.root, path)?;
            resources = keys;
            Wake::FileChange {
                path: rel.as_str().to_owned(),
                absolute: cx.root.join(rel.as_str()),
                before: None,
                limit,
            }
        } else {
            Wake::Message { limit }
        };
        if limit.is_some() && matches!(wake, Wake::After(_) | Wake::At(_)) {
            return Err(invalid(
                "`timeout_seconds` goes with on_file_change or on_message only",
            ));
        }
        Ok(Prepared::new(
            Routing { resources },
            Planned { wake, reason },
        ))
    }

    async fn execute(
        &self,
        plan: Planned,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let mut wake = plan.wake;
        // The file as it is now: a change from here on wakes, even one before the wait starts.
        if let Wake::FileChange {
            absolute, before, ..
        } = &mut wake
        {
            *before = FileState::of(absolute);
        }
        let described = wake.describe();
        let repeat = self.wakes.request(
            &cx.session,
            WakeRequest {
                wake,
                reason: plan.reason,
            },
        );
        let (text, metadata) = if repeat {
            (
                format!(
                    "schedule_next_turn: replaced the wake asked for earlier in this turn; you \
                     will be woken {described}. One wake is kept; end your turn now."
                ),
                json!({"scheduled": described, "replaced": true, "no_op": true}),
            )
        } else {
            (
                format!(
                    "schedule_next_turn: you will be woken {described}. End your turn now; the \
                     next one starts with what woke you."
                ),
                json!({"scheduled": described}),
            )
        };
        Ok(ToolCompletion::single(text).with_metadata(metadata))
    }
}
