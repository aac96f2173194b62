//! The store seen through the tool crate's `ArtifactSource`: public URIs in, verified files out.
//!
//! One per call: every artifact the call opens folds its producers' label
//! ([`crate::provenance`]) into [`StoreArtifacts::read_label`], which the runtime combines into
//! the call's result label. The runtime does this, not the tool, so a tool that forgets cannot
//! hand remote text back as trusted.

use std::sync::{Arc, Mutex, PoisonError};

use tackle_protocol::{ArtifactUri, ErrorCode, Label};
use tackle_store::{ArtifactId, ArtifactStore, Manifest};
use tackle_tool::{ArtifactSource, OpenedArtifact, ToolError};

use crate::provenance::ProducerLabels;
use crate::retention::capture::store_error;

pub struct StoreArtifacts {
    store: Arc<ArtifactStore>,
    /// The combined label of everything read through this source, `None` before any read.
    read: Mutex<Option<Label>>,
}

impl StoreArtifacts {
    pub fn new(store: Arc<ArtifactStore>) -> Self {
        Self {
            store,
            read: Mutex::new(None),
        }
    }

    /// The combined label of what the call has read back, if it read anything.
    pub fn read_label(&self) -> Option<Label> {
        *self.read.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Folds `label` into what the call has read: an opened artifact's producers, or the
    /// result of a call this one made through the runtime.
    pub fn fold(&self, label: Label) {
        let mut read = self.read.lock().unwrap_or_else(PoisonError::into_inner);
        *read = Some(read.map_or(label, |l| l.combine(label)));
    }

    /// `label` combined with what the call has read.
    pub fn label_with_reads(&self, label: Label) -> Label {
        self.read_label().map_or(label, |r| label.combine(r))
    }

    fn open_id(&self, id: ArtifactId) -> Result<OpenedArtifact, ToolError> {
        // Labelled before it is opened: a read that fails after this folds in a label it did
        // not need, which costs trust, never grants it.
        self.fold(ProducerLabels::scan(&self.store).label_of(id));
        let file = self.store.open_artifact(id).map_err(store_error)?;
        let bytes = file
            .metadata()
            .map_err(|e| ToolError::io("artifact", &e))?
            .len();
        Ok(OpenedArtifact {
            file,
            digest: *id.as_bytes(),
            bytes,
        })
    }
}

impl ArtifactSource for StoreArtifacts {
    fn open(&self, uri: &ArtifactUri) -> Result<OpenedArtifact, ToolError> {
        let id = ArtifactId::from_hex(uri.digest_hex()).ok_or_else(|| {
            ToolError::new(
                ErrorCode::INVALID_ARTIFACT_URI,
                format!("bad artifact digest in {uri}"),
            )
        })?;
        let Some(stream) = uri.stream() else {
            return self.open_id(id);
        };
        let bytes = self.store.read(id).map_err(store_error)?;
        let Some(manifest) = Manifest::parse(&bytes) else {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARTIFACT_URI,
                format!(
                    "artifact {} is not a manifest of named streams, so it has no stream \
                     `{stream}`; read artifact://{} without a suffix",
                    id.to_hex(),
                    id.to_hex()
                ),
            ));
        };
        let Some(entry) = manifest.streams.iter().find(|s| s.name == stream.as_str()) else {
            let names: Vec<&str> = manifest.streams.iter().map(|s| s.name.as_str()).collect();
            return Err(ToolError::new(
                ErrorCode::NOT_FOUND,
                format!(
                    "artifact {} has no stream `{stream}`; its streams are: {}",
                    id.to_hex(),
                    names.join(", ")
                ),
            ));
        };
        self.open_id(entry.artifact)
    }
}
