//! The plans directory, `.agents/plans/`: allocating sequences, writing and revising plan
//! files, answering "does this session have a plan on file?", and revoking.
//!
//! The files are the record: a session has a plan on file exactly when a `plan-<seq>.md`
//! whose header names that session is in the directory, so the answer survives the process
//! (`tackle call --session` in a later invocation) and a revocation by another process
//! (`tackle plan revoke`) closes the gate of a running server. A remembered answer is
//! re-checked with one `stat` of the file it names. Revoked plans move to
//! `.agents/plans/archive/`, and the next sequence is one past every number in either
//! directory, so a revoked sequence is never reused; a new file is published only where none
//! exists (`tackle_fs` refuses it as a conflict otherwise), so two writers never share one.
//!
//! Every access goes through a [`Root`] handle: a hostile repository's `.agents/plans`
//! symlinked elsewhere is refused, never followed out of the project.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tackle_fs::{EntryKind, FsError, RelPath, Root};
use tackle_tool::PlanRecords;
use tackle_tool::protocol::SessionId;

use super::header::PlanHeader;
use super::message::GatedSet;
use super::outcome::{AuthorsPlan, PlanOutcome, PlanWrite, decide};

pub const PLANS_DIR: &str = ".agents/plans";
pub const ARCHIVE_DIR: &str = ".agents/plans/archive";

/// Largest plan file read back (a plan the tool wrote is at most [`super::MAX_PLAN_BYTES`]).
const READ_LIMIT: u64 = 1 << 20;

/// Who writes a plan: the (agent, session) pair its header records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanAuthor {
    pub agent: Option<String>,
    pub session: SessionId,
}

/// A plan as filed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FiledPlan {
    pub seq: u64,
    pub header: Option<PlanHeader>,
    pub body: String,
}

impl FiledPlan {
    fn by(&self, author: &PlanAuthor) -> bool {
        self.header.as_ref().is_some_and(|h| {
            h.agent == author.agent && h.session.as_deref() == Some(author.session.0.as_str())
        })
    }

    fn of_session(&self, session: &SessionId) -> bool {
        self.header
            .as_ref()
            .is_some_and(|h| h.session.as_deref() == Some(session.0.as_str()))
    }
}

/// What one `record_plan` call did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filed {
    pub outcome: PlanOutcome,
    pub seq: u64,
    /// Root-relative, `.agents/plans/plan-<seq>.md`.
    pub path: String,
    /// The session had no plan on file before this call: this call opened its gate.
    pub opened: bool,
}

/// What a revocation did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Revoked {
    /// The caller's own plans, archived.
    Own { seqs: Vec<u64> },
    /// No plan carries the caller's attribution; the newest plan had none at all, and was
    /// archived (a directory from before plans were attributed).
    Unattributed { seq: u64 },
    /// The newest plan belongs to someone else and was left alone.
    NotYours {
        seq: u64,
        agent: Option<String>,
        session: Option<String>,
    },
    /// The directory holds no plan.
    NothingOnFile,
}

/// The plans of one project root, shared by the `record_plan` tool, the plan gate and
/// `tackle plan revoke`.
#[derive(Debug)]
pub struct PlanBook {
    root: PathBuf,
    /// Serializes this process's changes; remembers, per session, the plan that opened it.
    open: Mutex<HashMap<SessionId, RelPath>>,
    gated: Mutex<GatedSet>,
}

impl PlanBook {
    pub fn new(root: &Path) -> Arc<Self> {
        Arc::new(Self {
            root: root.to_path_buf(),
            open: Mutex::new(HashMap::new()),
            gated: Mutex::new(GatedSet::Unknown),
        })
    }

    /// The host that registered the tools says which of them wait for a plan (built-ins by
    /// name, MCP servers by namespace). Never reported: [`GatedSet::Unknown`].
    pub fn report_gated(&self, names: Vec<String>) {
        *self.gated.lock().unwrap_or_else(|p| p.into_inner()) = GatedSet::Known(names);
    }

    pub fn gated(&self) -> GatedSet {
        self.gated.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn root(&self) -> Result<Arc<Root>, FsError> {
        Root::open_shared(&self.root)
    }

    /// Records `body` for `author` in `turn` (see [`decide`]).
    pub fn record(&self, author: &PlanAuthor, turn: &str, body: &str) -> Result<Filed, FsError> {
        let root = self.root()?;
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let plans = list(&root, PLANS_DIR)?;
        let opened = !plans.iter().any(|p| p.of_session(&author.session));
        let own = plans.iter().filter(|p| p.by(author)).max_by_key(|p| p.seq);
        let own = own.map(|p| AuthorsPlan {
            seq: p.seq,
            turn: p.header.as_ref().and_then(|h| h.turn.as_deref()),
            body: &p.body,
        });
        let write = decide(own.as_ref(), turn, body);
        let header = |seq| PlanHeader {
            plan: seq,
            agent: author.agent.clone(),
            session: Some(author.session.0.clone()),
            turn: Some(turn.to_owned()),
        };
        let seq = match write {
            PlanWrite::Nothing(seq) => seq,
            PlanWrite::Overwrite(seq) => {
                let rel = plan_rel(&root, PLANS_DIR, seq)?;
                let staged = root.stage_write(&rel, file_text(&header(seq), body))?;
                root.commit(staged)?;
                seq
            }
            PlanWrite::New => {
                let archived = list_seqs(&root, ARCHIVE_DIR)?;
                let mut seq = plans
                    .iter()
                    .map(|p| p.seq)
                    .chain(archived)
                    .max()
                    .unwrap_or(0)
                    + 1;
                loop {
                    let rel = plan_rel(&root, PLANS_DIR, seq)?;
                    let staged = root.stage_write(&rel, file_text(&header(seq), body))?;
                    match root.commit(staged) {
                        Ok(_) => break seq,
                        // Another process took this number since the listing: take the next.
                        Err(FsError::Conflict { .. }) if staged_was_new(&root, &rel) => seq += 1,
                        Err(e) => return Err(e),
                    }
                }
            }
        };
        let rel = plan_rel(&root, PLANS_DIR, seq)?;
        open.insert(author.session.clone(), rel.clone());
        Ok(Filed {
            outcome: write.outcome(),
            seq,
            path: rel.as_str().to_owned(),
            opened,
        })
    }

    /// Archives the caller's own plans (all of `session`'s, or only `agent`'s among them when
    /// an agent is named); with none, the newest plan if it carries no attribution; a plan of
    /// someone else is left alone. Either way `session` has no plan on file afterwards.
    pub fn revoke(
        &self,
        agent: Option<&str>,
        session: Option<&SessionId>,
    ) -> Result<Revoked, FsError> {
        let root = self.root()?;
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = session {
            open.remove(s);
        }
        let plans = list(&root, PLANS_DIR)?;
        let own: Vec<&FiledPlan> = plans
            .iter()
            .filter(|p| {
                session.is_some_and(|s| p.of_session(s))
                    && agent.is_none_or(|a| {
                        p.header.as_ref().and_then(|h| h.agent.as_deref()) == Some(a)
                    })
            })
            .collect();
        if !own.is_empty() {
            let mut seqs = Vec::new();
            for p in own {
                archive(&root, p.seq)?;
                seqs.push(p.seq);
            }
            return Ok(Revoked::Own { seqs });
        }
        let Some(newest) = plans.iter().max_by_key(|p| p.seq) else {
            return Ok(Revoked::NothingOnFile);
        };
        match &newest.header {
            Some(h) if !h.unattributed() => Ok(Revoked::NotYours {
                seq: newest.seq,
                agent: h.agent.clone(),
                session: h.session.clone(),
            }),
            _ => {
                archive(&root, newest.seq)?;
                Ok(Revoked::Unattributed { seq: newest.seq })
            }
        }
    }

    fn on_file_checked(&self, session: &SessionId) -> Result<bool, FsError> {
        let root = self.root()?;
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(rel) = open.get(session)
            && root
                .metadata(rel)?
                .is_some_and(|m| m.kind == EntryKind::File)
        {
            return Ok(true);
        }
        open.remove(session);
        let plans = list(&root, PLANS_DIR)?;
        match plans.iter().rev().find(|p| p.of_session(session)) {
            Some(p) => {
                open.insert(session.clone(), plan_rel(&root, PLANS_DIR, p.seq)?);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

impl PlanRecords for PlanBook {
    /// A plans directory that cannot be read holds no plan: the gate stays closed (fails
    /// closed), and `record_plan` reports the error itself.
    fn on_file(&self, session: &SessionId) -> bool {
        self.on_file_checked(session).unwrap_or(false)
    }
}

/// The file: header, then the plan text.
fn file_text(header: &PlanHeader, body: &str) -> Vec<u8> {
    format!("{}{body}", header.render()).into_bytes()
}

fn plan_rel(root: &Root, dir: &str, seq: u64) -> Result<RelPath, FsError> {
    root.resolve(&format!("{dir}/plan-{seq}.md"))
}

/// After a conflict: whether a file now exists where the staged write expected none.
fn staged_was_new(root: &Root, rel: &RelPath) -> bool {
    matches!(root.metadata(rel), Ok(Some(_)))
}

/// `plan-<n>.md` → `n`.
fn seq_of(name: &str) -> Option<u64> {
    let n = name.strip_prefix("plan-")?.strip_suffix(".md")?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || n.starts_with('0') {
        return None;
    }
    n.parse().ok()
}

fn entries(root: &Root, dir: &str) -> Result<Vec<(u64, RelPath)>, FsError> {
    let rel = root.resolve(dir)?;
    let listed = match root.read_dir(&rel) {
        Ok(l) => l,
        Err(FsError::NotFound { .. }) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for entry in listed {
        let Some(seq) = entry.name.to_str().and_then(seq_of) else {
            continue;
        };
        if entry.kind == EntryKind::File {
            out.push((seq, plan_rel(root, dir, seq)?));
        }
    }
    out.sort_by_key(|(seq, _)| *seq);
    Ok(out)
}

fn list_seqs(root: &Root, dir: &str) -> Result<Vec<u64>, FsError> {
    Ok(entries(root, dir)?.into_iter().map(|(s, _)| s).collect())
}

/// The plans on file, by sequence. A file that cannot be read as text is skipped: it is no
/// one's plan.
pub(crate) fn list(root: &Root, dir: &str) -> Result<Vec<FiledPlan>, FsError> {
    let mut plans = Vec::new();
    for (seq, rel) in entries(root, dir)? {
        let Ok(bytes) = root.read_capped(&rel, READ_LIMIT) else {
            continue;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let (header, body) = PlanHeader::parse(&text);
        let body = body.to_owned();
        plans.push(FiledPlan { seq, header, body });
    }
    Ok(plans)
}

/// Moves `plan-<seq>.md` into the archive: written there first, then removed here, so a crash
/// between the two leaves both (the plan stays on file) rather than neither.
fn archive(root: &Root, seq: u64) -> Result<(), FsError> {
    let from = plan_rel(root, PLANS_DIR, seq)?;
    let to = plan_rel(root, ARCHIVE_DIR, seq)?;
    let bytes = root.read_capped(&from, READ_LIMIT)?;
    let staged = root.stage_write(&to, bytes)?;
    root.commit(staged)?;
    let staged = root.stage_delete(&from)?;
    root.commit_delete(staged)?;
    Ok(())
}
