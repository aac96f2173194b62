//! The store seen through the tool crate's `ArtifactSource`: public URIs in, verified files out.
//!
//! One per call: every artifact the call opens folds its producers' label
//! ([`crate::provenance`]) into [`StoreArtifacts::read_label`], which the runtime combines into
//! the call's result label, and its producers' `read:` keys into [`StoreArtifacts::read_keys`],
//! which the call's `call_finished` records beside its own. The runtime does this, not the
//! tool, so a tool that forgets cannot hand remote text back as trusted, nor a denied file's
//! copy back as a fresh artifact.
//!
//! A call opens only the artifacts it declared in `prepare` (`read:artifact://<digest>`, the
//! streams of a manifest so declared included): those are the ones the gate asked about, with
//! their producers. Anything else is refused, so no tool can serve bytes past the gate.

use std::collections::{BTreeSet, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use tackle_protocol::{ArtifactUri, ErrorCode, Label};
use tackle_store::{ArtifactId, ArtifactStore, MANIFEST_READ_LIMIT, Manifest};
use tackle_tool::{Action, ArtifactSource, OpenedArtifact, PermissionResource, ToolError};

use crate::gate::ArtifactRead;
use crate::provenance::{Producers, listed_streams};
use crate::retention::capture::store_error;

pub struct StoreArtifacts {
    store: Arc<ArtifactStore>,
    /// The combined label of everything read through this source, `None` before any read.
    read: Mutex<Option<Label>>,
    /// The `read:` keys behind what the call read: those it was admitted under, its walk's
    /// listed files, and the producers' keys of every artifact it opened.
    read_keys: Mutex<BTreeSet<String>>,
    /// The artifacts the gate was asked about for this call: the only ones it may open.
    declared: Mutex<HashSet<ArtifactId>>,
}

impl StoreArtifacts {
    pub fn new(store: Arc<ArtifactStore>) -> Self {
        Self {
            store,
            read: Mutex::new(None),
            read_keys: Mutex::new(BTreeSet::new()),
            declared: Mutex::new(HashSet::new()),
        }
    }

    /// What the call was admitted under: its `read:` keys are recorded as its sources, and the
    /// artifacts the gate was asked about (with the streams a manifest among them lists) become
    /// the ones it may open.
    pub(crate) fn admitted(&self, resources: &[PermissionResource], artifacts: &[ArtifactRead]) {
        self.note_reads(
            resources
                .iter()
                .filter(|r| r.action == Action::Read)
                .map(PermissionResource::key),
        );
        let mut declared = self.declared.lock().unwrap_or_else(PoisonError::into_inner);
        for read in artifacts {
            if let Some(id) = ArtifactId::from_hex(&read.digest) {
                declared.insert(id);
                declared.extend(listed_streams(&self.store, id));
            }
        }
    }

    /// Adds `keys` to the `read:` keys behind what the call produces.
    pub(crate) fn note_reads(&self, keys: impl IntoIterator<Item = String>) {
        self.read_keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(keys);
    }

    /// The `read:` keys behind what the call produced, sorted.
    pub(crate) fn read_keys(&self) -> Vec<String> {
        self.read_keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
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
        let declared = self
            .declared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&id);
        if !declared {
            return Err(ToolError::new(
                ErrorCode::PERMISSION_DENIED,
                format!(
                    "artifact {} was not declared when the call was prepared, so the gate was \
                     not asked about it; declare read:artifact://{} in prepare",
                    id.to_hex(),
                    id.to_hex()
                ),
            ));
        }
        // Labelled before it is opened: a read that fails after this folds in a label it did
        // not need, which costs trust, never grants it. Its sources likewise.
        let producers = Producers::scan(&self.store);
        self.fold(producers.label_of(id));
        if let Some(keys) = producers.reads_of(id) {
            self.note_reads(keys.iter().cloned());
        }
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
    fn derived_from(&self, label: Label, read_keys: &[String]) {
        self.fold(label);
        self.note_reads(read_keys.iter().cloned());
    }

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
        let opened = self.open_id(id)?;
        let bytes = if opened.bytes <= MANIFEST_READ_LIMIT {
            let mut bytes = Vec::with_capacity(opened.bytes as usize);
            std::io::Read::read_to_end(&mut &opened.file, &mut bytes)
                .map_err(|e| ToolError::io("artifact", &e))?;
            bytes
        } else {
            // Larger than any manifest: the gate saw no streams in it either.
            Vec::new()
        };
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
