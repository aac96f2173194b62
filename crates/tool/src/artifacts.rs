//! How a tool reaches retained artifacts without depending on the store.

use std::fs::File;

use tackle_protocol::{ArtifactUri, Label};

use crate::ToolError;

/// An opened, verified artifact (or one stream of a manifest).
pub struct OpenedArtifact {
    pub file: File,
    /// SHA-256 of the opened content (the stream's own artifact when a suffix selected one).
    pub digest: [u8; 32],
    pub bytes: u64,
}

/// Access to the project's artifact store, provided by the runtime. Errors are tool errors with
/// stable codes (`artifact_missing`, `artifact_corrupt`, `not_found` for an unknown stream).
pub trait ArtifactSource: Send + Sync {
    fn open(&self, uri: &ArtifactUri) -> Result<OpenedArtifact, ToolError>;

    /// The call's output carries content that did not come through this source: what the
    /// calls of a child session it ran read (an agentic wrapper's subtask). Folds `label` into
    /// the call's result label and `read_keys` into the `read:` keys behind its output, as
    /// opening an artifact with those producers would.
    ///
    /// Safe to hand to a tool: labels only ever combine (less trusted, more private) and keys
    /// only narrow who may read the output later, so nothing a tool says here can widen
    /// anything. Required: a source that dropped it would let a child's remote text come back
    /// labelled as the tool's own.
    fn derived_from(&self, label: Label, read_keys: &[String]);
}
