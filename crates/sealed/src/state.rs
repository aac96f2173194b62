//! The session's sealed state: the reference table and what a person or a write changed.
//!
//! One function ([`Inner::apply`]) applies a change, live and on replay alike, so a resumed
//! session hands out the same references as the one that wrote the log.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use tackle_protocol::{CallId, Event, Label, Quarantined, SealedChange, SealedRecord};

use crate::recorder::Recorder;
use crate::reference::RefId;

/// What a reference stands for, and its label.
#[derive(Clone, Debug, PartialEq)]
pub struct Held {
    pub held: Quarantined,
    pub label: Label,
}

#[derive(Default)]
struct Inner {
    refs: Vec<Held>,
    /// The reference already handed out for a file, so a file keeps one reference.
    file_refs: HashMap<String, RefId>,
    /// Per-file trust a person (vouched) or a write (tainted) set.
    file_trust: HashMap<String, bool>,
    met_untrusted: bool,
    answers: HashMap<String, Option<String>>,
}

impl Inner {
    fn apply(&mut self, change: &SealedChange) {
        match change {
            SealedChange::Reference {
                reference,
                held,
                label,
            } => {
                let index = *reference as usize;
                if index != self.refs.len() {
                    // A log is written in order; a gap means a damaged log, and a reference
                    // must never come to name something other than it did.
                    return;
                }
                if let Quarantined::File { path } = held {
                    self.file_refs.insert(path.clone(), RefId(*reference));
                }
                self.refs.push(Held {
                    held: held.clone(),
                    label: *label,
                });
            }
            SealedChange::FileTrust { path, trusted } => {
                self.file_trust.insert(path.clone(), *trusted);
            }
            SealedChange::ContextMetUntrusted => self.met_untrusted = true,
            SealedChange::Answer { question, answer } => {
                self.answers.insert(question.clone(), answer.clone());
            }
        }
    }
}

/// The sealed state of one planner session.
pub struct SealedState {
    inner: Mutex<Inner>,
    recorder: Arc<dyn Recorder>,
    /// Held from numbering a reference until it is recorded and applied, so two calls never
    /// number the same one.
    adding: tokio::sync::Mutex<()>,
}

impl SealedState {
    pub fn new(recorder: Arc<dyn Recorder>) -> Arc<Self> {
        Arc::new(Self {
            inner: Mutex::new(Inner::default()),
            recorder,
            adding: tokio::sync::Mutex::new(()),
        })
    }

    /// The state a session's log at `log` recorded, with changes recorded from now on by
    /// `recorder`. A log that cannot be read restores what could be read before the damage.
    pub fn restore(log: &Path, recorder: Arc<dyn Recorder>) -> Arc<Self> {
        let mut inner = Inner::default();
        let _ = tackle_store_visit(log, |record| inner.apply(&record.change));
        Arc::new(Self {
            inner: Mutex::new(inner),
            recorder,
            adding: tokio::sync::Mutex::new(()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records `change` for `call`, then applies it.
    async fn change(&self, call: &CallId, change: SealedChange) -> Result<(), String> {
        let record = SealedRecord {
            call_id: call.clone(),
            change: change.clone(),
            at_ms: now_ms(),
        };
        self.recorder.record(record).await?;
        self.lock().apply(&change);
        Ok(())
    }

    /// A new reference for `held` (a file keeps the one it was given first).
    pub async fn add(
        &self,
        call: &CallId,
        held: Quarantined,
        label: Label,
    ) -> Result<RefId, String> {
        let _adding = self.adding.lock().await;
        if let Quarantined::File { path } = &held
            && let Some(existing) = self.lock().file_refs.get(path)
        {
            return Ok(*existing);
        }
        let reference = self.lock().refs.len() as u32;
        self.change(
            call,
            SealedChange::Reference {
                reference,
                held,
                label,
            },
        )
        .await?;
        Ok(RefId(reference))
    }

    /// What `id` stands for, if the table has it.
    pub fn get(&self, id: RefId) -> Option<Held> {
        self.lock().refs.get(id.0 as usize).cloned()
    }

    /// How many references have been handed out.
    pub fn len(&self) -> usize {
        self.lock().refs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Per-file trust set by a vouch or a write, if any.
    pub fn file_trust(&self, path: &str) -> Option<bool> {
        self.lock().file_trust.get(path).copied()
    }

    pub async fn set_file_trust(
        &self,
        call: &CallId,
        path: &str,
        trusted: bool,
    ) -> Result<(), String> {
        if self.file_trust(path) == Some(trusted) {
            return Ok(());
        }
        self.change(
            call,
            SealedChange::FileTrust {
                path: path.to_owned(),
                trusted,
            },
        )
        .await
    }

    /// Whether the planner has been shown untrusted content.
    pub fn met_untrusted(&self) -> bool {
        self.lock().met_untrusted
    }

    pub async fn mark_met_untrusted(&self, call: &CallId) -> Result<(), String> {
        if self.met_untrusted() {
            return Ok(());
        }
        self.change(call, SealedChange::ContextMetUntrusted).await
    }

    /// The answer remembered for `question` (`Some(None)`: it was skipped).
    pub fn answer(&self, question: &str) -> Option<Option<String>> {
        self.lock().answers.get(question).cloned()
    }

    pub async fn remember_answer(
        &self,
        call: &CallId,
        question: &str,
        answer: Option<String>,
    ) -> Result<(), String> {
        self.change(
            call,
            SealedChange::Answer {
                question: question.to_owned(),
                answer,
            },
        )
        .await
    }
}

/// Every `sealed` record of the log at `path`, in order.
fn tackle_store_visit(path: &Path, mut each: impl FnMut(SealedRecord)) -> Result<(), String> {
    tackle_store::EventLog::visit_records(path, |record| {
        let event = record.event;
        if event.get("type").and_then(|t| t.as_str()) == Some("sealed")
            && let Ok(Event::Sealed(record)) = serde_json::from_value::<Event>(event)
        {
            each(record);
        }
        ControlFlow::Continue(())
    })
    .map_err(|e| e.to_string())
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
