//! How a tool reaches retained artifacts without depending on the store.

use std::fs::File;

use tackle_protocol::ArtifactUri;

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
}
