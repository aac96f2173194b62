//! What the sealed posture (seed 004) records in a session's log beside the calls: the
//! references it handed the planner and what each stands for, the files a person vouched for
//! or a write tainted, the moment the planner's context met untrusted content, and the
//! answers a person gave. Replayed in order, they rebuild the posture's state, so a resumed
//! session hands out the same references.

use serde::{Deserialize, Serialize};

use crate::call::CallId;
use crate::label::Label;

/// One record of the sealed posture's state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SealedRecord {
    /// The call that caused it.
    pub call_id: CallId,
    pub change: SealedChange,
    /// Unix time in milliseconds.
    pub at_ms: u64,
}

/// What changed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum SealedChange {
    /// `ref:<reference>` now stands for `held`, labelled `label`.
    Reference {
        reference: u32,
        held: Quarantined,
        label: Label,
    },
    /// A person vouched for this file (root-relative), or a write made it untrusted.
    FileTrust { path: String, trusted: bool },
    /// The planner was shown untrusted content: from now on it may not ask the user.
    ContextMetUntrusted,
    /// A person's answer to a question, remembered for the session (`None`: skipped).
    Answer {
        question: String,
        answer: Option<String>,
    },
}

/// What a reference stands for. The planner is never told which kind, nor any of these fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Quarantined {
    /// A file of the workspace (its name and its content): read when it is used, never before.
    File { path: String },
    /// What a `run` stage printed.
    Output {
        stream: String,
        text: String,
        /// Every byte the stream produced; `text` holds at most the capture limit of them.
        total_bytes: u64,
        truncated: bool,
    },
    /// A processor's answer: `document` is the part after its document marker (`None`: it
    /// had none, and can be written nowhere); `about` the file it may be written to.
    Answer {
        about: Option<String>,
        document: Option<String>,
    },
}
